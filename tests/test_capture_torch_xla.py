"""PyTorch/XLA captures, for real: the graph pending on some tensors.

Marked ``torch_xla``: not in the default run (the test extra does not
install torch-xla); run with ``python -m pytest -m torch_xla`` where it is
installed (.ci/run does when it can install ``.[torch-xla]``). The graph
carries op names and source lines only with ``XLA_HLO_DEBUG=1``, set here
before torch_xla loads.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import hlodiff
from hlodiff.integrations import snapshot

pytestmark = pytest.mark.torch_xla


@pytest.fixture(scope="module")
def torch():
    os.environ.setdefault("PJRT_DEVICE", "CPU")
    os.environ.setdefault("XLA_HLO_DEBUG", "1")
    pytest.importorskip("torch_xla")
    import torch
    return torch


def _step(torch, batch: int = 16, relu: bool = False):
    import torch_xla
    device = torch_xla.device()
    w, x = torch.zeros(8, 4, device=device), torch.ones(batch, 8, device=device)
    h = x @ w
    if relu:
        h = torch.relu(h)  # the added op
    return w - 0.01 * torch.tanh(h).mean() * torch.ones_like(w)


def _line(needle: str) -> int:
    return next(n for n, line in enumerate(Path(__file__).read_text().splitlines(), 1)
                if needle in line)


def test_an_op_added_to_a_torch_xla_graph_is_found_at_its_line(torch):
    report = hlodiff.compare(_step(torch), _step(torch, relu=True))
    top = report.top
    assert report.recompiles is True
    assert top.kind == "op_added" and top.origin.op_name == "aten__relu"
    assert top.origin.location == f"{__file__}:{_line('# the added op')}"


def test_a_torch_xla_snapshot_passes_unchanged_and_fails_on_another_batch(torch, tmp_path):
    path = tmp_path / "step.hlo"
    snapshot.write(snapshot.taken(hlodiff.capture(_step(torch)), "t", tmp_path), path)
    same = snapshot.check(path, snapshot.taken(hlodiff.capture(_step(torch)), "t", tmp_path))
    assert same.outcome == "same"
    bigger = snapshot.check(path, snapshot.taken(hlodiff.capture(_step(torch, batch=32)), "t",
                                                 tmp_path))
    assert bigger.outcome == "changed"
    assert (bigger.report.top.old, bigger.report.top.new) == ("64", "128")  # the mean's 1/N


def test_only_tensors_on_an_xla_device_have_a_graph(torch):
    with pytest.raises(TypeError, match="only tensors on an XLA device"):
        hlodiff.capture(torch.ones(3))
