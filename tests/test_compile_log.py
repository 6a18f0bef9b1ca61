"""hlodiff log on real JAX, TensorFlow and PyTorch/XLA logs (corpus/logs, made by make_logs.sh).

The Graphcore log is hand-written following Graphcore's published logging
format (no IPU hardware here); its tests say so.
"""

from __future__ import annotations

import json

from conftest import CORPUS, run_cli

from hlodiff.integrations.compile_log import scan, summarise
from hlodiff.dumps import load_dump

LOGS = CORPUS / "logs"


def programs(*names: str, dump=None) -> dict:
    found = summarise(scan([LOGS / n for n in names]), dump)
    return {s.program: s for s in found}


def test_jax_log_counts_the_train_step_recompiles_and_their_causes():
    step = programs("jax.log")["jit_train_step"]
    assert len(step.compilations) == 5 and step.recompilations == 4
    assert len(step.keys) == 4  # lr 0.01 twice shares a persistent cache key
    assert step.cache_hits == 1
    assert "tracing cache miss at corpus/logs/jax_recompile.py:29" in step.compilations[1].cause
    assert "at x, now f32[3,4] and before f32[2,4]" in step.compilations[-1].cause
    assert all(c.fingerprint for c in step.compilations if c.cache != "hit")


def test_jax_log_with_its_dump_names_the_modules_to_diff_next():
    step = programs("jax.log", dump=load_dump(LOGS / "jax_dump"))["jit_train_step"]
    assert [i for i, _ in step.modules] == [9, 15, 18, 24]
    first, second = step.diff_next
    out = run_cli("diff", first, second, expect=1).stdout
    assert "constant 0.01 -> 0.02" in out  # the first recompile: a new learning rate


def test_tensorflow_log_counts_signatures_and_skips_cache_hits():
    step = programs("tf.log")["a_inference_train_step"]
    assert len(step.compilations) == 3 and step.recompilations == 2
    assert step.keys[-1].endswith("float [4,4],float [3,4]")


def test_pytorch_xla_log_reads_compilation_causes_and_graph_hashes():
    graph = programs("torch.log")["SyncTensorsGraph"]
    assert len(graph.compilations) == 4 and len(graph.keys) == 4
    assert graph.compilations[0].cause == "user torch_xla.sync"
    assert graph.compilations[0].where == "corpus/logs/torch_recompile.py:14"


def test_graphcore_lines_written_to_its_published_format():
    """Hand-written lines (see the file's header), not a real IPU log."""
    cluster = programs("graphcore_published_format.log")["cluster"]
    assert len(cluster.compilations) == 3 and cluster.recompilations == 2
    assert cluster.keys == ("0x2cdd9f8fc7ab8da4", "0x91a0c2e4b6d35f17")
    assert [c.cache for c in cluster.compilations] == ["miss", "miss", "hit"]


def test_log_command_text_and_json():
    text = run_cli("log", str(LOGS / "jax.log"), "--dump", str(LOGS / "jax_dump"), expect=1).stdout
    assert "jit_train_step" in text and "diff next: hlodiff diff" in text
    document = json.loads(run_cli("log", str(LOGS / "tf.log"), str(LOGS / "torch.log"),
                                  "--format", "json", expect=1).stdout)
    counts = {p["program"]: p["recompilations"] for p in document["programs"]}
    assert counts == {"SyncTensorsGraph": 3, "a_inference_train_step": 2}


def test_a_log_without_recompiles_exits_0(tmp_path):
    quiet = tmp_path / "quiet.log"
    quiet.write_text("Compiling jit(f) with global shapes and types (). Argument mapping: ().\n")
    assert "jit_f" in run_cli("log", str(quiet), expect=0).stdout
