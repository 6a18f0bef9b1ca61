"""Diffing the compile input in a worker process (hlodiff/analysis/compare.py,
``_diffed_elsewhere``) must give the report diffing it here gives, byte for
byte, errors included, and survive a worker that dies."""

from __future__ import annotations

import shutil

import pytest

from conftest import CORPUS, run_cli
from hlodiff.analysis import compare
from hlodiff.dumps import pool
from hlodiff.syntax import unchanged

# Cases of every framework, a model change and a renumbered loop among them.
CASES = ["jax_learning_rate", "bench_model_change", "jax_flax_batch_size", "torch_loop_trip_count",
         "tf_keras_batch_size", "torch_layernorm_added", "jax_fp8_elided"]


def _send_away(monkeypatch) -> list:
    """From now on every pair with both stages diffs its compile input in a
    worker; what this returns lists, for each call a worker was given, its
    function's name, its arguments and the outcome the worker delivered
    (None when it delivered none, or was not asked)."""
    monkeypatch.setattr(compare, "ELSEWHERE_BYTES", 0)
    monkeypatch.setattr(compare.os, "cpu_count", lambda: 2)
    calls: list = []
    real = pool.elsewhere

    def sent(*given):
        pending = real(*given)
        mine = [[function.__name__, args, None] for function, args in given]
        calls.extend(mine)
        delivered = pending.outcome

        def outcome(k=0):
            mine[k][2] = delivered(k)
            return mine[k][2]

        pending.outcome = outcome
        return pending

    monkeypatch.setattr(pool, "elsewhere", sent)
    return calls


def _diff(case, *options, expect=None):
    return run_cli("diff", "--no-cache", str(CORPUS / case / "run_a"), str(CORPUS / case / "run_b"),
                   "--format", "json", *options, expect=expect)


@pytest.mark.parametrize("case", CASES)
def test_a_stage_diffed_in_a_worker_reads_as_one_diffed_here(case, monkeypatch):
    here = _diff(case)
    calls = _send_away(monkeypatch)
    away = _diff(case)
    assert calls, "no stage was diffed in a worker"
    assert [name for name, _, _ in calls] == ["failing_computations", "diff_stage_files"] * \
        (len(calls) // 2)  # a worker for each program with both stages
    for (_, checked, checks), (_, diffed, diff) in zip(calls[::2], calls[1::2]):
        assert "after_optimizations" in checked[0] and "before_optimizations" in str(diffed[0])
        assert diff is not None and diff[1] is None  # the worker's diff was the one used
        assert checks is None or checks == (frozenset(), None)  # asked for only on big files
    assert (away.exit_code, away.stdout, away.stderr) == (here.exit_code, here.stdout, here.stderr)


def test_a_dead_worker_leaves_its_stage_to_this_process(monkeypatch):
    here = _diff("bench_model_change", expect=1)
    calls = _send_away(monkeypatch)
    monkeypatch.setattr(pool.sys, "executable", "/bin/false")  # a worker that exits at once
    assert _diff("bench_model_change", expect=1).stdout == here.stdout
    assert calls and all(outcome is None for _, _, outcome in calls)


def _broken(tmp_path, *stages):
    """jax_learning_rate with run_b's files of ``stages`` cut off mid-line."""
    shutil.copytree(CORPUS / "jax_learning_rate", tmp_path / "case")
    for stage in stages:
        for path in (tmp_path / "case" / "run_b").glob(f"*jit_train_step*{stage}.txt"):
            text = path.read_text()
            path.write_text(text[:len(text) // 2])
    return tmp_path / "case"


@pytest.mark.parametrize("stages", [("before_optimizations",), ("after_optimizations",),
                                    ("before_optimizations", "after_optimizations")])
def test_errors_are_those_of_a_diff_made_here(stages, tmp_path, monkeypatch):
    case = _broken(tmp_path, *stages)
    args = ("diff", "--no-cache", str(case / "run_a"), str(case / "run_b"))
    here = run_cli(*args, expect=2)
    calls = _send_away(monkeypatch)
    away = run_cli(*args, expect=2)
    assert calls and away.stderr == here.stderr
    assert stages[0] in here.stderr  # the compile input's error first, when both are broken


def test_small_dumps_and_one_core_start_no_worker(monkeypatch):
    calls = []
    monkeypatch.setattr(pool, "elsewhere", lambda *given: calls.append(given))
    _diff("jax_learning_rate", expect=1)  # below ELSEWHERE_BYTES
    monkeypatch.setattr(compare, "ELSEWHERE_BYTES", 0)
    monkeypatch.setattr(compare.os, "cpu_count", lambda: 1)
    _diff("jax_learning_rate", expect=1)
    assert calls == []


@pytest.mark.parametrize("how", ["unknown opcode", "brackets nested too deep"])
@pytest.mark.parametrize("where", ["computation", "entry"])
def test_checks_made_in_the_worker_reject_what_the_parser_rejects(how, where, tmp_path,
                                                                   monkeypatch):
    # Lines both runs share are skipped unparsed on big files, after the
    # checks the parser would make; the worker makes run a's. A line broken
    # the same way in both runs must be the same error either way.
    from test_unchanged import MAIN, _broken_pair, _padding
    text_a, text_b, line = _broken_pair("jax_learning_rate", how, False, where)
    padding = _padding(unchanged.MIN_BYTES // 2)
    case = tmp_path / "case"
    shutil.copytree(CORPUS / "jax_learning_rate", case)
    (case / "run_a" / MAIN).write_text(text_a + padding)
    (case / "run_b" / MAIN).write_text(text_b + padding)
    args = ("diff", "--no-cache", str(case / "run_a"), str(case / "run_b"))
    here = run_cli(*args, expect=2)
    calls = _send_away(monkeypatch)
    away = run_cli(*args, expect=2)
    assert away.stderr == here.stderr
    assert f"{MAIN}:{line}:" in here.stderr
    asked = [(args[0], outcome) for name, args, outcome in calls
             if name == "failing_computations" and outcome is not None]
    assert len(asked) == 1 and asked[0][0].endswith(MAIN)  # only the big file's checks
    answer, error = asked[0][1]
    assert error is None and len(answer) == 1  # the broken computation, found by the worker
