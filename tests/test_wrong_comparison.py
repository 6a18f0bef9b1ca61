"""When the comparison itself is the wrong one, hlodiff says so before answering.

Each case is a mistake a user makes with real dumps: handing over the folder
that holds both runs, a file before optimizations against one after, dumps
of two frameworks, or two programs that share nothing but being the largest.
"""

from __future__ import annotations

import json

from conftest import CORPUS, run_cli


def test_a_folder_holding_both_runs_is_an_error_naming_the_run_folders():
    result = run_cli("diff", str(CORPUS / "jax_seed"), str(CORPUS / "jax_learning_rate"), expect=2)
    message = result.stderr.strip()
    assert len(message.splitlines()) == 1
    assert "jax_seed: holds the dumps of 2 runs (run_a/, run_b/)" in message
    assert f"hlodiff diff {CORPUS / 'jax_seed' / 'run_a'} {CORPUS / 'jax_seed' / 'run_b'}" in message


def test_a_file_before_optimizations_against_one_after_is_an_error():
    run_a, run_b = CORPUS / "jax_learning_rate" / "run_a", CORPUS / "jax_learning_rate" / "run_b"
    before = next(run_a.glob("*jit_train_step.before_optimizations.txt"))
    after = next(run_b.glob("*jit_train_step.cpu_after_optimizations.txt"))
    message = run_cli("diff", str(before), str(after), expect=2).stderr
    assert "is the compile input (before optimizations)" in message
    assert "is the optimized program (after optimizations)" in message
    assert "Traceback" not in message


def test_a_file_named_by_hand_is_told_optimized_or_not_by_its_header(tmp_path):
    # The compile input and the optimized program of one run, copied to
    # a.hlo and b.hlo: the names say no stage, and hlodiff read "Recompiles
    # (jit_train_step), different executables. Top cause: constant 0 ->
    # 0.125", exit 1. Only the optimized one is scheduled.
    run = CORPUS / "jax_learning_rate" / "run_a"
    a, b = tmp_path / "a.hlo", tmp_path / "b.hlo"
    a.write_text(next(run.glob("*jit_train_step.before_optimizations.txt")).read_text())
    b.write_text(next(run.glob("*jit_train_step.cpu_after_optimizations.txt")).read_text())
    for x, y in ((a, b), (b, a)):
        message = run_cli("diff", str(x), str(y), expect=2).stderr
        assert message.startswith(f"hlodiff: error: {b} is scheduled, as XLA's optimized program")
        assert f"and {a} is not, as a compile input is" in message
        assert message.count("\n") == 1
    # the same stage named by XLA on the other side: one program
    dumped = next(run.glob("*jit_train_step.before_optimizations.txt"))
    assert run_cli("diff", str(a), str(dumped), expect=0).stdout.startswith("Same executable")


def test_dumps_of_two_frameworks_are_warned_about_before_the_verdict():
    result = run_cli("diff", str(CORPUS / "jax_learning_rate" / "run_a"),
                     str(CORPUS / "tf_learning_rate" / "run_a"), expect=1)
    lines = result.stdout.splitlines()
    assert lines[0].startswith("warning: run a was compiled by JAX and run b by TensorFlow")
    document = json.loads(run_cli("diff", str(CORPUS / "jax_learning_rate" / "run_a"),
                                  str(CORPUS / "tf_learning_rate" / "run_a"), "--format", "json",
                                  expect=1).stdout)
    warnings = document["warnings"]
    assert any("JAX" in w and "TensorFlow" in w for w in warnings)
    # the two main programs share nothing but their size rank: said too
    assert any("jit_train_step and a_inference_train_step" in w and "largest" in w
               for w in warnings)


def test_the_same_framework_and_paired_programs_give_no_warning():
    case = CORPUS / "tf_learning_rate"
    document = json.loads(run_cli("diff", str(case / "run_a"), str(case / "run_b"),
                                  "--format", "json", expect=1).stdout)
    assert document["warnings"] == []
