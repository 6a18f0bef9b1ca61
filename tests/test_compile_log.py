"""hlodiff log on real JAX, TensorFlow and PyTorch/XLA logs (corpus/logs).

Each ``corpus/logs/NAME.truth.json`` counts compilations per program from
the framework's own bookkeeping (never from the log; see
corpus/gen/README.md), so what hlodiff reads from the log is checked
against what really happened. The two Graphcore logs are hand-written to
the backend's message formats (no IPU here); their truth files say so.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from conftest import CORPUS, run_cli

from hlodiff.dumps import load_dump
from hlodiff.dumps.naming import is_framework_helper
from hlodiff.integrations.compile_log import Program, scan, summarise

LOGS = CORPUS / "logs"
TRUTHS = sorted(LOGS.glob("*.truth.json"))


def programs(*names: str, dump: Path | None = None) -> dict[str, Program]:
    found = summarise(scan([LOGS / n for n in names]), load_dump(dump) if dump else None)
    return {p.name: p for p in found}


def _by_name(found: dict[str, Program], truth: dict) -> None:
    """JAX and Graphcore: one program per XLA module name (Graphcore's cluster without .N)."""
    assert sorted(found) == sorted(truth["programs"])
    for name, expected in truth["programs"].items():
        program = found[name]
        assert (len(program.compilations), program.loads) == \
            (expected["compilations"], expected["cache_loads"]), name
        assert program.user == expected["user_program"], name


def _tensorflow(found: dict[str, Program], truth: dict) -> None:
    """TensorFlow: counts per concrete function when the log names them, per tf.function else."""
    functions = {name: f for name, f in truth["functions"].items()
                 if f["compilations"] + f["cache_loads"]}  # the rest never reached XLA
    compiled = {name: p for name, p in truth["programs"].items()
                if p["compilations"] + p["cache_loads"]}
    named = {concrete: count for p in found.values() for concrete, count in p.concrete_functions}
    if named:
        assert sorted(named) == sorted(compiled)
        for concrete, expected in compiled.items():
            assert named[concrete] == expected["compilations"], concrete
        for function in functions.values():
            owner = {p.name for p in found.values()
                     if {c for c, _ in p.concrete_functions} & set(function["concrete_functions"])}
            assert len(owner) == 1, f"{function['concrete_functions']} split over {owner}"
            program = found[owner.pop()]
            assert {c for c, _ in program.concrete_functions} == set(function["concrete_functions"])
            assert (len(program.compilations), program.loads) == \
                (function["compilations"], function["cache_loads"])
    elif "" in found:  # device_compiler=1: compilations TensorFlow does not name
        assert list(found) == [""]
        total = sum(p["compilations"] + p["cache_loads"] for p in truth["programs"].values())
        assert len(found[""].compilations) == total
    else:  # default logging: only the retracing warning, which counts traces
        assert sorted(found) == sorted(functions)
        for name, function in functions.items():
            assert found[name].traces == function["traces"] and not found[name].compilations


def _pytorch(found: dict[str, Program], truth: dict) -> None:
    """PyTorch/XLA: one program per sync point, named by the user's line that triggered it.

    The truth file books compilations per sync point by role; torch_debug.py
    calls ``after_sync("ROLE", ...)`` on the line after each sync point.
    Truth files read from torch-xla's own printout instead book each graph
    hash to its program: each program holds those graphs and compiled each once.
    """
    if "graphs" in truth:
        _by_name(found, truth)
        for name, program in found.items():
            assert set(program.keys) == {h for h, g in truth["graphs"].items()
                                         if g["program"] == name}, name
        return
    source = (LOGS / "torch_debug.py").read_text().splitlines()
    per_role = {}
    for name, program in found.items():
        line = int(re.search(r":(\d+)$", name)[1])
        role = re.search(r'after_sync\("(\w+)"', source[line])[1]  # the next line, 0-based
        per_role[role] = len(program.compilations)
    assert per_role == {role: sum(g["compilations"] for g in point["graphs"].values())
                        for role, point in truth["sync_points"].items()}
    assert sum(per_role.values()) == truth["programs"]["SyncTensorsGraph"]["compilations"]


_CHECKS = {"jax": _by_name, "graphcore-tensorflow": _by_name, "tensorflow": _tensorflow,
           "pytorch": _pytorch}
DUMPS = [t for t in TRUTHS if (LOGS / f"{t.name.split('.')[0]}_dump").is_dir()]


@pytest.mark.parametrize("truth_file", TRUTHS, ids=[t.name.split(".")[0] for t in TRUTHS])
def test_every_log_counts_what_its_framework_counted(truth_file):
    truth = json.loads(truth_file.read_text())
    found = programs(truth["log"])
    _CHECKS[truth["framework"]](found, truth)
    recompiled = {p.name for p in found.values() if p.recompiled}
    if truth["framework"] == "tensorflow":
        owners = {name: {p.name for p in found.values()
                         if {c for c, _ in p.concrete_functions} & set(f["concrete_functions"])}
                  or {name} for name, f in truth["functions"].items()}
        expected = set().union(*(owners[n] for n in truth["recompiled_user_programs"]))
        if "" in found:
            expected = {""}  # unnamed: cannot tell one program's recompile from two programs
    elif truth["framework"] == "pytorch":
        expected = {p.name for p in found.values() if len(p.compilations) > 1}
        assert bool(expected) == bool(truth["recompiled_user_programs"])
    else:
        expected = set(truth["recompiled_user_programs"])
    assert recompiled == expected
    run_cli("log", str(LOGS / truth["log"]), expect=0 if truth["healthy"] else 1)


@pytest.mark.parametrize("truth_file", DUMPS, ids=[t.name.split(".")[0] for t in DUMPS])
def test_with_its_dump_every_compilation_finds_its_module(truth_file):
    """The dump names what the log does not (TensorFlow at device_compiler=1) and gives
    each compilation its module, by program name and order."""
    truth = json.loads(truth_file.read_text())
    found = programs(truth["log"], dump=LOGS / f"{truth_file.name.split('.')[0]}_dump")
    _CHECKS[truth["framework"]](found, truth)
    modules = [m for p in found.values() for m in p.modules]
    assert None not in modules and len(modules) == len({m.module_id for m in modules}) == \
        sum(len(p.compilations) for p in found.values())


def test_warm_persistent_caches_compile_nothing():
    for log in ("jax_persistent_warm.log", "tf_persistent_warm.log"):
        found = programs(log)
        assert found and not any(p.compilations for p in found.values())
        assert all(p.loads for p in found.values())


def test_jax_explain_blocks_name_each_cause_whole():
    found = programs("jax_explain_cache_misses.log")
    power = found["jit_power"].compilations[1]
    assert power.where == "corpus/logs/jax_explain_cache_misses.py:54"
    assert "Static(val=3)" in power.cause and "Static(val=2)" in power.cause
    lam = found["jit__lambda"].compilations[2]
    assert lam.cause.endswith("maybe the function is\n  being re-defined repeatedly, preventing "
                              "caching?")
    out = run_cli("log", str(LOGS / "jax_explain_cache_misses.log"), expect=1).stdout
    assert "being re-defined repeatedly, preventing caching?" in out  # whole, under the table


def test_an_xla_fingerprint_line_is_the_same_compilation():
    found = programs("jax_xla_vlog.log")
    step = found["jit_train_step"]
    assert len(step.compilations) == 2 and all(c.fingerprint for c in step.compilations)
    assert all(c.framework == "jax" for p in found.values() for c in p.requests)


def test_an_xla_compiling_line_inside_a_jax_compilation_is_not_counted_again(tmp_path):
    """``Compiling [NAME] for PLATFORM``, as issue 15 quotes XLA's VLOG, inside JAX's request."""
    log = tmp_path / "run.log"
    log.write_text("Compiling jit(train_step) with global shapes and types (). Argument mapping: ().\n"
                   "Compiling [jit_train_step] for CPU\n"
                   "Finished XLA compilation of jit(train_step) in 0.1 sec\n")
    found = summarise(scan([log]))
    assert [(p.name, len(p.compilations)) for p in found] == [("jit_train_step", 1)]


def test_jax_set_up_ops_are_not_user_programs():
    assert is_framework_helper("jit_convert_element_type") and \
        is_framework_helper("jit__threefry_seed")
    assert not is_framework_helper("jit_train_step") and not is_framework_helper("jit_step")
    run_cli("log", str(LOGS / "jax_persistent_cold.log"), expect=0)  # set-up ops compiled, healthy


def test_a_log_with_its_dump_names_each_compilations_module():
    step = programs("jax_log_compiles.log", dump=LOGS / "jax_log_compiles_dump")["jit_train_step"]
    assert [m.label for m in step.modules] == ["module_0008.jit_train_step",
                                               "module_0010.jit_train_step"]
    step = programs("tf_device_compiler_v3.log",
                    dump=LOGS / "tf_device_compiler_v3_dump")["train_step"]
    assert [m.module_id for m in step.modules] == [0, 1]


def test_pytorch_xla_programs_are_named_by_the_users_sync_line():
    found = programs("torch_debug_level2.log")
    step = found["SyncTensorsGraph at corpus/logs/torch_debug.py:66"]
    assert [c.cause for c in step.compilations] == ["user torch_xla.sync"] * 3
    assert len(set(step.keys)) == 3
    readback = found["SyncTensorsGraph at corpus/logs/torch_debug.py:70"].compilations[0]
    assert readback.cause == "most likely user code trying to access tensor value before " \
                             "torch_xla.sync"


def test_a_pytorch_log_cut_off_inside_a_block_still_counts_it(tmp_path):
    text = (LOGS / "torch_debug_level1.log").read_text().splitlines()
    last = max(n for n, line in enumerate(text) if "Compilation Cause" in line)
    cut = tmp_path / "crashed.log"
    cut.write_text("\n".join(text[:last + 3]) + "\n")  # the crash came inside the last block
    assert sum(len(p.compilations) for p in summarise(scan([cut]))) == 5


def test_graphcore_end_lines_are_not_compilations():
    """Hand-written to the backend's formats (see the log's header), not a real IPU log."""
    found = programs("graphcore_synthetic_cache.log")
    assert sum(len(p.requests) for p in found.values()) == 4  # four Begin lines, four End
    first = found["cluster_5007650843385306307__XlaCompiledKernel_true__XlaNumConstantArgs_0__"
                  "XlaNumResourceArgs_2_"]
    assert [c.cache for c in first.requests] == ["hit", "miss"]
    assert first.keys == ("0x91a0c2e4b6d35f17",)


def test_log_command_json():
    document = json.loads(run_cli("log", str(LOGS / "tf_device_compiler_v3.log"),
                                  str(LOGS / "torch_debug_level1.log"), "--format", "json",
                                  expect=1).stdout)
    counts = {p["program"]: (p["compilations"], p["recompilations"]) for p in document["programs"]}
    assert counts == {"train_step": (2, 1),
                      "SyncTensorsGraph at corpus/logs/torch_debug.py:66": (3, 2),
                      "SyncTensorsGraph at corpus/logs/torch_debug.py:54": (1, 0),
                      "SyncTensorsGraph at corpus/logs/torch_debug.py:70": (1, 0)}
    train = next(p for p in document["programs"] if p["program"] == "train_step")
    assert [c["concrete_function"] for c in train["concrete_functions"]] == \
        ["__inference_train_step_38", "__inference_train_step_75"]


def test_a_log_without_recompiles_exits_0(tmp_path):
    quiet = tmp_path / "quiet.log"
    quiet.write_text("Compiling jit(f) with global shapes and types (). Argument mapping: ().\n")
    assert "jit_f" in run_cli("log", str(quiet), expect=0).stdout


def test_a_log_with_nothing_compiled_says_how_to_log_and_cannot_pass(tmp_path):
    # A run always compiles or loads something: a log that shows neither was
    # written with logging off (or is another file), and a gate on it passed,
    # exit 0 (a new user's check). Cannot tell: exit 1; an empty file: exit 2.
    quiet = tmp_path / "quiet.log"
    quiet.write_text("epoch 1 loss 0.3\n")
    assert "No compilations found" in run_cli("log", str(quiet), expect=1).stdout
    empty = tmp_path / "empty.log"
    empty.write_text("\n")
    result = run_cli("log", str(empty), expect=2)
    assert result.stderr == f"hlodiff: error: {empty}: empty: no log lines to read (hlodiff " \
                            "log reads the text a framework writes to stderr)\n"


def test_compilations_a_log_does_not_show_are_not_counted_as_none(tmp_path):
    # TF's default logging: only the retracing warning; the truth (the dump)
    # has 6 compilations of each function, so "0 compilations" would be false
    result = run_cli("log", str(LOGS / "tf_default_logging.log"), expect=1)
    title = " ".join(result.stdout.split("\n")[:4])
    assert "0 compilations," not in title and "0 compilations logged" in title
    document = json.loads(run_cli("log", str(LOGS / "tf_default_logging.log"), "--format", "json",
                                  expect=1).stdout)
    assert [(p["program"], p["compilations"], p["traces_at_least"])
            for p in document["programs"]] == [("normalise", None, 6), ("scale", None, 6)]


def test_a_parameter_that_changed_size_and_dtype_says_both():
    # jit_affine's third compilation: x s32[3] -> f32[5]; "batch 3 -> 5" alone
    # would hide the dtype JAX's own cache-miss text names
    result = run_cli("log", str(LOGS / "jax_explain_cache_misses.log"), "--dump",
                     str(LOGS / "jax_explain_cache_misses_dump"), expect=1)
    assert "batch 3 -> 5 and s32 -> f32 in x" in " ".join(result.stdout.split())


def test_a_binary_file_is_no_log(tmp_path):
    binary = tmp_path / "run.log"
    binary.write_bytes(bytes(range(256)) * 8)
    result = run_cli("log", str(binary), expect=2)
    assert result.stderr.strip() == f"hlodiff: error: {binary}: a binary file, not a log " \
        "(hlodiff log reads the text a framework writes to stderr)"


@pytest.mark.parametrize("truth_file", TRUTHS, ids=[t.name.split(".")[0] for t in TRUTHS])
def test_the_table_and_the_json_count_the_same_recompilations(truth_file):
    # tf_retrace_python_scalar: TensorFlow's warning counts 5 traces; the
    # table showed "4 retraces" on a row of 4 logged compilations (the fifth,
    # with a tensor argument, was grouped apart) while the JSON said 3.
    log = str(LOGS / json.loads(truth_file.read_text())["log"])
    expect = None  # the exit code is test_every_log_counts_what_its_framework_counted's
    report = json.loads(run_cli("log", log, "--format", "json", expect=expect).stdout)
    text = run_cli("log", log, expect=expect).stdout
    if not report["programs"]:
        return
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("─")) + 1
    # a row a line, in the JSON's order: cells two spaces apart, names shortened in the middle
    rows = [re.split(r"\s{2,}", line.strip())
            for line in lines[start:start + len(report["programs"])]]
    for program, cells in zip(report["programs"], rows, strict=True):
        named = program["program"] or "(not named in the log)"
        assert named.startswith(cells[0].removesuffix(" (framework set-up)").split("…")[0]), \
            (named, cells)
        shown = cells[2]
        if program["program"] is None:  # which program recompiled is not known
            assert shown == "?"
        elif program["compilations"] is None:  # none logged: TensorFlow's warning counts
            assert shown == f"{program['traces_at_least'] - 1} retraces"
        else:
            assert shown == str(program["recompilations"])


def test_the_table_fits_80_columns_without_breaking_a_word(monkeypatch):
    # At 80 columns the table split its headers ("compilation/s",
    # "recompilati/ons") and program names over lines (a helper session's
    # Keras log): counts keep their width, long names are shortened (a
    # TensorFlow cluster after its counter, as everywhere else), one row a line.
    monkeypatch.setenv("COLUMNS", "80")
    text = run_cli("log", str(LOGS / "graphcore_published_format.log"), expect=None).stdout
    lines = text.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("program "))
    assert lines[header].split() == ["program", "compiled", "recompiled", "loads", "keys"]
    row = lines[header + 2]
    assert all(len(line) <= 80 for line in lines[header:header + 3])
    name, *counts = row.split()
    assert name == "cluster_5007650843385306307…"
    assert counts == ["2", "1", "1", "2"]


def test_a_log_that_names_nothing_does_not_claim_a_user_program_recompiled():
    # TensorFlow at device_compiler=1 logs two compilations and names neither:
    # the table says "?", the README "cannot tell", and the headline said
    # "1 user program recompiled" (a new user's run).
    text = " ".join(run_cli("log", str(LOGS / "tf_device_compiler_v1.log"),
                            expect=None).stdout.split())
    assert "0 user programs recompiled, 1 compiled more than once unnamed: cannot tell" in text


def test_with_its_dump_default_logging_counts_and_explains_every_compilation():
    # TF's default logging only warns that normalise retraced; its dump holds
    # the 6 compilations of each tf.function. `log --dump` said "not logged |
    # 5 retraces" with no explanation, and the JSON "recompilations": 0 beside
    # "recompiled": true (a helper session's raw tf.function run).
    log, dump = str(LOGS / "tf_default_logging.log"), str(LOGS / "tf_default_logging_dump")
    text = " ".join(run_cli("log", log, "--dump", dump, expect=1).stdout.split())
    assert "12 compilations counted from the dump (TensorFlow's default logging shows none" in text
    assert "normalise 6 (dump) 5 0" in text
    assert "normalise #2 (not in the log: counted from the dump) the dump says: #2 batch 1 -> 2" \
        in text
    document = json.loads(run_cli("log", log, "--dump", dump, "--format", "json",
                                  expect=1).stdout)
    assert [(p["program"], p["compilations"], p["recompilations"], p["counted_from"])
            for p in document["programs"]] == [("normalise", 6, 5, "dump"), ("scale", 6, 5, "dump")]
    assert [(e["program"], e["number"], e["counted_from"], e["log"], e["dump"] is not None)
            for e in document["recompilations"]][:2] == \
        [("normalise", 2, "dump", None, True), ("normalise", 3, "dump", None, True)]
    assert len(document["recompilations"]) == 10
    # without the dump nothing is counted: the warning's traces, never "0 recompilations"
    alone = json.loads(run_cli("log", log, "--format", "json", expect=1).stdout)
    assert [(p["compilations"], p["recompilations"], p["traces_at_least"])
            for p in alone["programs"]] == [(None, None, 6), (None, None, 6)]
