"""hlodiff.compare on what a framework hands you: a capture is explained as its dump is.

tests/programs/jax_train_step.py lowers and compiles one training step in
its own process, with XLA dumping it, and writes what ``hlodiff.capture``
made of the same lowered and compiled program. The report of two captures
must be the report of the two dumps: the same findings, values, origins,
source lines and call stacks, the same verdicts.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import hlodiff
from hlodiff.integrations.capture import Capture

PROGRAM = Path(__file__).parent / "programs" / "jax_train_step.py"


def _run(folder: Path, lr: str, batch: str) -> tuple[Path, Capture]:
    """One process: the dump of the step in ``folder/dump`` and its capture."""
    dump, out = folder / "dump", folder / "capture.json"
    env = {**os.environ, "XLA_FLAGS": f"--xla_dump_to={dump}", "JAX_PLATFORMS": "cpu"}
    subprocess.run([sys.executable, str(PROGRAM), lr, batch, str(out)], env=env, check=True,
                   capture_output=True)
    return dump, Capture(**json.loads(out.read_text()))


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three runs: the baseline, the learning rate doubled, the batch doubled."""
    made = {}
    for name, lr, batch in (("base", "0.01", "16"), ("lr", "0.02", "16"), ("batch", "0.01", "32")):
        made[name] = _run(tmp_path_factory.mktemp(name), lr, batch)
    return made


def _said(finding) -> tuple:
    """Everything a user reads in a finding, and what follows from it."""
    return (finding.kind, finding.stage, finding.old, finding.new, finding.count,
            finding.summary, finding.detail, finding.affects, finding.program, finding.origins,
            tuple(_said(d) for d in finding.derived))


def _verdicts(report) -> tuple:
    return (report.recompiles, report.same_executable, report.hashes,
            [(p.program, p.recompiles, p.same_executable, p.hashes) for p in report.programs])


@pytest.mark.parametrize("change", ["lr", "batch"])
def test_two_captures_explain_exactly_what_their_dumps_explain(runs, change):
    (dump_a, capture_a), (dump_b, capture_b) = runs["base"], runs[change]
    from_dumps = hlodiff.compare(dump_a, dump_b)
    from_captures = hlodiff.compare(capture_a, capture_b)
    assert [_said(f) for f in from_captures.findings] == [_said(f) for f in from_dumps.findings]
    assert _verdicts(from_captures) == _verdicts(from_dumps)
    assert from_captures.recompiles is True and from_captures.same_executable is False


def test_the_learning_rate_shows_both_values_and_the_line_that_wrote_it(runs):
    report = hlodiff.compare(runs["base"][1], runs["lr"][1])
    top = report.top
    line = next(n for n, text in enumerate(PROGRAM.read_text().splitlines(), 1)
                if "p - lr * g" in text)
    assert (top.kind, top.old, top.new, top.stage) == ("constant", "0.01", "0.02", "both")
    assert top.origin.location == f"{PROGRAM}:{line}"
    assert top.origin.op_name == "jit(train_step)/sgd/mul"


def test_the_batch_size_is_one_parameter_finding(runs):
    report = hlodiff.compare(runs["base"][1], runs["batch"][1])
    assert report.top.kind == "parameter"
    assert report.top.summary.startswith("batch 16 -> 32 in x f32[16,8] and y f32[16,4]")


def _program_module():
    spec = importlib.util.spec_from_file_location("jax_train_step", PROGRAM)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_lowered_programs_in_this_process_give_the_dumps_cause(runs):
    program = _program_module()
    ours = hlodiff.compare(program.lowered(0.01, 16), program.lowered(0.02, 16))
    theirs = hlodiff.compare(*(runs[name][0] for name in ("base", "lr")))
    # Traced from here, not from the script's main: the outer stack frames differ, not the cause.
    mine, dumped = ours.top, theirs.top
    assert (mine.kind, mine.old, mine.new, mine.origin.op_name, mine.origin.location) == \
        (dumped.kind, dumped.old, dumped.new, dumped.origin.op_name, dumped.origin.location)
    assert ours.recompiles is True
    assert ours.same_executable is None  # the compile input only: XLA might still agree
    assert "jit_train_step (jax.stages.Lowered)" == ours.a == ours.modules[0].a


def test_a_compiled_program_is_the_optimized_stage(runs):
    program = _program_module()
    report = hlodiff.compare(program.lowered(0.01, 16).compile(),
                             program.lowered(0.02, 16).compile())
    assert report.top.stage == "after_optimizations"
    assert report.same_executable is False
    assert "0.02" in report.top.new


def test_text_a_module_and_a_path_of_one_program_are_the_same_program(runs, tmp_path):
    dump = runs["base"][0]
    path = next(dump.glob("*.before_optimizations.txt"))
    text = path.read_text()
    for other in (text, hlodiff.parse(text), str(path), path):
        report = hlodiff.compare(text, other)
        assert (report.recompiles, report.same_executable, report.findings) == (False, True, ())


def test_a_string_is_hlo_text_only_when_it_looks_like_hlo(tmp_path):
    one_line = "ENTRY e { ROOT c = f32[] constant(1) }"
    two = "ENTRY e { ROOT c = f32[] constant(2) }"
    assert hlodiff.compare(one_line, two).top.new == "2"
    with pytest.raises(hlodiff.HlodiffError, match="no such file or directory"):
        hlodiff.compare(str(tmp_path / "missing"), one_line)


def test_a_capture_says_what_it_could_not_read():
    with pytest.raises(TypeError, match="hlodiff cannot read a builtins.int"):
        hlodiff.compare(1, 2)
    with pytest.raises(TypeError, match="capture\\(\\) takes HLO text"):
        hlodiff.capture("train.py")


def test_a_lowered_program_takes_no_arguments():
    program = _program_module()
    with pytest.raises(TypeError, match="give it without arguments"):
        hlodiff.capture(program.lowered(0.01, 16), 3)


def test_a_jitted_function_with_its_arguments_is_captured_lowered():
    import jax
    import numpy as np

    program = _program_module()
    step = jax.jit(program.train_step, static_argnames="lr")
    params = {"w1": np.zeros((8, 16), np.float32), "w2": np.zeros((16, 4), np.float32)}
    x, y = np.ones((4, 8), np.float32), np.ones((4, 4), np.float32)
    captured = hlodiff.capture(step, params, x, y, lr=0.5, optimized=True)
    assert captured.program == "jit_train_step"
    assert "constant(0.5)" in captured.before and captured.after and captured.mlir
    assert captured.framework == f"jax {jax.__version__}"


def test_importing_hlodiff_imports_no_framework_parser_or_matcher():
    probe = ("import sys, hlodiff; hlodiff.compare; hlodiff.capture; "
             "print(sorted({m.split('.')[0] for m in sys.modules} & "
             "{'jax', 'tensorflow', 'torch', 'torch_xla', 'lark', 'rapidfuzz'}))")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                         text=True).stdout
    assert out.strip() == "[]"


def test_pytest_loading_the_plugin_loads_no_dump_reader_or_model():
    # pytest imports the plugin (so hlodiff) in every project where hlodiff is
    # installed; the public names still all resolve, each on first use.
    probe = ("import sys, hlodiff.pytest_plugin; "
             "print(sorted(m for m in sys.modules if m.startswith('hlodiff.') and "
             "m not in ('hlodiff.errors', 'hlodiff.pytest_plugin'))); "
             "print(all(getattr(hlodiff, name) for name in hlodiff.__all__)); "
             "import hlodiff.dumps as dumps; "
             "print(set(hlodiff.__all__) <= set(dir(hlodiff)), "
             "set(dumps.__all__) <= set(dir(dumps)))")  # what completion offers
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True,
                         text=True).stdout
    assert out.split("\n")[:3] == ["[]", "True", "True True"]


def test_a_capture_compares_with_a_dump_directory(runs):
    """The compile input JAX lowers has no compile options yet; XLA writes two of
    them into the header of the module it dumps. Those two header attributes
    are all that a capture and the dump of its own program differ in (the
    README says so); the user's change still comes first."""
    dump, captured = runs["lr"]
    report = hlodiff.compare(runs["base"][1], dump)
    assert (report.top.old, report.top.new) == ("0.01", "0.02")
    assert report.b == str(dump)
    same = hlodiff.compare(captured, dump)
    assert [(f.kind, f.old, f.detail) for f in same.findings] == [
        ("attribute", None, "module header: allow_spmd_sharding_propagation_to_parameters"),
        ("attribute", None, "module header: allow_spmd_sharding_propagation_to_output")]
    assert same.same_executable is True
