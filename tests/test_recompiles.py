"""hlodiff recompiles on real single-run dumps, checked against their truth files.

Each ``corpus/<case>/truth.json`` of kind ``single_run`` says which module
recompiled against which, what changed (kind, old, new) and the source
line when the dump records one. Where it records none (a new input shape
has no line in the HLO), the line is the call site JAX's own
``TRACING CACHE MISS`` names in the run's log (``run.log``), and none for
TensorFlow, which records only its own frames.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import CORPUS, run_cli

from hlodiff.dumps import load_dump
from hlodiff.integrations.compile_log import concrete_function, scan, summarise
from hlodiff.integrations.recompiles import explain_log, find_recompilations

CASES = sorted(t.parent for t in CORPUS.glob("*/truth.json")
               if json.loads(t.read_text()).get("kind") == "single_run")


def test_the_corpus_has_the_three_kinds_of_single_run_recompile():
    assert {c.name for c in CASES} >= {"jax_recompile_last_batch", "jax_recompile_python_float",
                                       "tf_recompile_new_shape"}


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_each_recompilation_is_explained_with_its_true_cause_and_line(case):
    truth = json.loads((case / "truth.json").read_text())
    found = find_recompilations(load_dump(case / "run"))
    user = [p for p in found if p.user]
    assert [p.program for p in user] == [truth["main_program"]]
    program = user[0]
    assert len(program.recompilations) == len(truth["recompilations"])
    log = {p.name: p for p in summarise(scan([case / "run.log"]))}
    logged = next(p for p in log.values() if p.recompiled)
    for recompilation, expected in zip(program.recompilations, truth["recompilations"]):
        assert recompilation.after.label == expected["module"]
        assert recompilation.before.label == expected["against"]
        cause = expected["cause"]
        top = recompilation.report.top
        assert top.kind == cause["kind"]
        places = [top.where[0]] + list(top.where[1:])  # a finding of several places shows one
        assert any(cause["old"] in (w.old or "") and cause["new"] in (w.new or "")
                   for w in places), places
        if cause["source_line"] is not None:
            assert recompilation.where == f"{cause['source_file']}:{cause['source_line']}"
        else:
            assert recompilation.where == logged.compilations[recompilation.number - 1].where
        assert recompilation.line in program.summary


def test_last_batch_reads_as_a_batch_change_at_the_call():
    found = find_recompilations(load_dump(CORPUS / "jax_recompile_last_batch" / "run"))
    assert found[0].summary == ("jit_train_step compiled 2 times: #2 batch 32 -> 4 (x, y) at "
                                "corpus/gen/jax_library_cases.py:93 (smaller: the last batch?)")


def test_recompiles_command_text_json_and_exit_codes():
    case = CORPUS / "jax_recompile_python_float" / "run"
    out = run_cli("recompiles", str(case), expect=1).stdout
    assert out.startswith("jit_train_step compiled 3 times: #2 constant -0.01 -> -0.005 "
                          "(jit(train_step)/mul) at corpus/gen/jax_library_cases.py:123; #3 ")
    assert "jit_train_step #3: module_0015.jit_train_step -> module_0018.jit_train_step" in out
    document = json.loads(run_cli("recompiles", str(case), "--format", "json", expect=1).stdout)
    (program,) = document["programs"]
    assert [r["after"] for r in program["recompilations"]] == ["module_0015.jit_train_step",
                                                               "module_0018.jit_train_step"]
    assert program["recompilations"][1]["report"]["findings"][0]["old"] == "-0.005"
    quiet = run_cli("recompiles", str(CORPUS / "jax_learning_rate" / "run_a"), expect=0).stdout
    assert "No program was compiled more than once" in quiet


def test_two_compilations_of_one_run_are_said_so():
    # tf_recompile_new_shape: both compilations are of one run, compared as
    # run a and run b. A helper session's run read "the dump numbers this
    # program 0 in run a and 2 in run b: run b built 2 more modules before
    # it", as if there were two runs, one busier than the other.
    case = CORPUS / "tf_recompile_new_shape" / "run"
    lines = run_cli("recompiles", str(case), expect=1).stdout.splitlines()
    # under the section's title, which names both modules
    title = next(n for n, line in enumerate(lines) if line.startswith("a_inference_score #2: "))
    said = " ".join(lines[title:title + 4])
    assert "module_0000.a_inference_score_15" in said and "module_0001.a_inference_score_27" \
        in said
    assert "run a below is compilation #1, run b compilation #2, both of this run" in said
    document = json.loads(run_cli("recompiles", str(case), "--format", "json", expect=1).stdout)
    findings = document["programs"][0]["recompilations"][0]["report"]["findings"]
    numbers = [d["detail"] for f in findings for d in [f, *f["derived"]]
               if d["kind"] == "module_number"]
    assert numbers and all(n.startswith("this run's dump numbers the program 0 in run a and 1 "
                                        "in run b: XLA numbers every module the process builds")
                           for n in numbers)
    assert "more module" not in json.dumps(document)


def test_framework_set_up_ops_compiled_twice_do_not_fail_the_run():
    out = run_cli("recompiles", str(CORPUS / "logs" / "jax_log_compiles_dump"), expect=1).stdout
    assert "jit_broadcast_in_dim compiled 2 times" in out and "framework set-up op" in out
    found = find_recompilations(load_dump(CORPUS / "logs" / "jax_log_compiles_dump"))
    assert [p.program for p in found if p.user] == ["jit_train_step"]


def test_keras_train_test_and_predict_steps_are_three_programs():
    """All three are ``one_step_on_data``; the truth file groups their concrete functions."""
    truth = json.loads((CORPUS / "logs" / "tf_keras_fit_v3.truth.json").read_text())
    found = find_recompilations(load_dump(CORPUS / "logs" / "tf_keras_fit_v3_dump"))
    grouped = sorted(sorted({concrete_function(m.program) for m in p.modules}) for p in found)
    assert grouped == sorted(sorted(f["concrete_functions"]) for f in truth["functions"].values()
                             if f["compilations"] > 1)
    assert [r.cause for p in found for r in p.recompilations] == [
        "batch 4 -> 2 (arg0, arg1)", "batch 4 -> 2 (arg0, arg1)", "batch 4 -> 1 (arg0)"]


def test_pytorch_graphs_of_different_inputs_are_different_programs():
    """Every PyTorch/XLA graph is SyncTensorsGraph: the initialiser is not a recompiled step."""
    assert find_recompilations(load_dump(CORPUS / "torch_batch_size" / "run_a")) == []


TORCH_LOGS = ("torch_compile", "torch_opt_adam")


@pytest.mark.parametrize("name", TORCH_LOGS)
def test_pytorch_recompiles_and_log_count_what_torch_xla_compiled(name):
    """Each graph hash torch-xla printed is booked to its program: Adam's first step and the
    steps after it are one program compiled twice at one sync point (8 more inputs: Adam's
    state); torch.compile's four graphs of one step are four programs."""
    truth = json.loads((CORPUS / "logs" / f"{name}.truth.json").read_text())
    dump = CORPUS / "logs" / f"{name}_dump"
    expected = sorted(p["compilations"] for p in truth["programs"].values()
                      if p["compilations"] > 1)
    assert sorted(len(p.modules) for p in find_recompilations(load_dump(dump))) == expected
    status = 0 if truth["healthy"] else 1
    run_cli("recompiles", str(dump), expect=status)
    run_cli("log", str(CORPUS / "logs" / truth["log"]), expect=status)
    run_cli("log", str(CORPUS / "logs" / truth["log"]), "--dump", str(dump), expect=status)


def test_adams_first_step_reads_as_its_state_becoming_inputs():
    (program,) = find_recompilations(load_dump(CORPUS / "logs" / "torch_opt_adam_dump"))
    assert program.summary == "SyncTensorsGraph compiled 2 times: #2 14 -> 22 inputs"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_log_and_dump_of_one_run_side_by_side(case):
    truth = json.loads((case / "truth.json").read_text())
    programs = summarise(scan([case / "run.log"]), load_dump(case / "run"))
    logged = explain_log(programs)
    assert [e.explained.after.label for e in logged] == [r["module"] for r in truth["recompilations"]]
    text = run_cli("log", str(case / "run.log"), "--dump", str(case / "run"), expect=1).stdout
    for entry in logged:
        assert f"the dump says: {entry.explained.line}" in text
        if entry.logged.cause:
            # the log's own words, wrapped at spaces to the page
            assert " ".join(entry.logged.cause.splitlines()[-1].split()) in " ".join(text.split())


def test_the_log_says_why_jax_traced_and_the_dump_what_changed():
    case = CORPUS / "jax_recompile_last_batch"
    (entry,) = explain_log(summarise(scan([case / "run.log"]), load_dump(case / "run")))
    assert "* at x, now f32[4,16] and before f32[32,16]" in entry.logged.cause
    assert entry.explained.cause == "batch 32 -> 4 (x, y)"
    document = json.loads(run_cli("log", str(case / "run.log"), "--dump", str(case / "run"),
                                  "--format", "json", expect=1).stdout)
    (recompilation,) = document["recompilations"]
    assert recompilation["dump"]["before"] == "module_0012.jit_train_step"
    assert recompilation["log"]["where"] == "corpus/gen/jax_library_cases.py:93"


def test_recompiles_and_log_leave_the_dump_as_it_was():
    case = CORPUS / "jax_recompile_last_batch"
    before = {f: (f.stat().st_mtime_ns, f.stat().st_size) for f in case.rglob("*")}
    run_cli("recompiles", str(case / "run"), expect=1)
    run_cli("log", str(case / "run.log"), "--dump", str(case / "run"), expect=1)
    assert {f: (f.stat().st_mtime_ns, f.stat().st_size) for f in case.rglob("*")} == before


def test_diff_with_one_directory_points_to_recompiles():
    case = CORPUS / "jax_recompile_python_float" / "run"
    err = run_cli("diff", str(case), expect=2).stderr
    assert f"hlodiff recompiles {case}" in err and "jit_train_step (3 times)" in err
    err = run_cli("diff", str(CORPUS / "jax_learning_rate" / "run_a"), expect=2).stderr
    assert "diff compares two runs (A B), got one, which compiled each program once" in err


def test_library_functions_called_eagerly_are_not_user_programs_that_recompiled(tmp_path):
    # jax.nn.relu, jnp.multiply and jax.nn.softmax outside jit compile jit_relu,
    # jit_multiply, jit_subtract, jit_true_divide... once per shape: a helper
    # session's run reported "4 user programs recompiled" (exit 1) for them. JAX
    # leaves its own code out of the frames it records, so no function of their
    # name is in the tables; the user's jitted scale is.
    program = Path(__file__).parent / "programs" / "jax_eager_ops.py"
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--xla_dump_to={tmp_path}"}
    subprocess.run([sys.executable, str(program)], env=env, check=True, capture_output=True)
    programs = find_recompilations(load_dump(tmp_path))
    users = sorted(p.program for p in programs if p.user)
    helpers = {p.program for p in programs if not p.user}
    assert users == ["jit_scale"]
    assert {"jit_relu", "jit_multiply"} <= helpers


LIBRARY_TRAINER = '''
import jax


def fit(step, state, batches):
    """What a training library does: jit the user's step and call it per batch."""
    jitted = jax.jit(step)
    for x in batches:
        state = jitted(state, x)
    return state
'''

USER_SCRIPT = '''
import jax.numpy as jnp
from trainer import fit


def train_step(w, x):
    return w - 0.01 * jnp.mean(x @ w)


w = fit(train_step, jnp.ones((4, 4)), [jnp.ones((8, 4)), jnp.ones((8, 4)), jnp.ones((3, 4))])
print(float(w[0, 0]))
'''


def test_a_recompile_is_placed_at_the_users_line_not_the_library_that_called_the_step(tmp_path):
    # Keras' trainer calls the jitted step for the user's model.fit: the line
    # shown was keras/src/backend/jax/trainer.py:257 (a helper session's run),
    # where the user's fit line was in the stack. Here the library is a module
    # under site-packages, the user's script beside it calls fit at line 10.
    library = tmp_path / "site-packages"
    library.mkdir()
    (library / "trainer.py").write_text(LIBRARY_TRAINER)
    script = tmp_path / "train.py"
    script.write_text(USER_SCRIPT)
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "PYTHONPATH": str(library),
           "XLA_FLAGS": f"--xla_dump_to={tmp_path / 'dump'}"}
    subprocess.run([sys.executable, str(script)], env=env, check=True, capture_output=True)
    out = " ".join(run_cli("recompiles", str(tmp_path / "dump"), expect=1).stdout.split())
    assert f"#2 batch 8 -> 3 (x) at {script}:10" in out


def test_functions_that_share_a_name_are_not_one_program_compiled_twice(tmp_path):
    # Two lambdas (jit__lambda), a closure and a module-level function (both
    # jit_step) read "compiled 2 times: #2 opcode add -> reduce", exit 1: JAX
    # names a program after its function, and the dump held one name twice.
    # The frame tables name which function each traced.
    program = Path(__file__).parent / "programs" / "jax_same_names.py"
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--xla_dump_to={tmp_path}"}
    subprocess.run([sys.executable, str(program)], env=env, check=True, capture_output=True)
    users = {p.program: p for p in find_recompilations(load_dump(tmp_path)) if p.user}
    assert len([m for m in load_dump(tmp_path).modules if m.program == "jit__lambda"]) == 3
    assert sorted(users) == ["jit__lambda", "jit_step"]
    scaler, = users["jit_step"].recompilations  # the closure, made again with 4.0
    assert (scaler.report.top.old, scaler.report.top.new) == ("3", "4")
    lam, = users["jit__lambda"].recompilations  # the first lambda, at another shape
    assert lam.cause == "batch 8 -> 4 (v)"
    assert len(users["jit__lambda"].modules) == len(users["jit_step"].modules) == 2


def test_programs_loaded_from_the_persistent_cache_were_not_compiled_again(tmp_path):
    # A step jitted anew each iteration, with JAX's persistent cache on: XLA
    # compiled it once and JAX loaded it twice (those modules have only an
    # optimized file named without a platform). `recompiles` said "compiled
    # 3 times", exit 1, while the cache held one entry (a helper session's run).
    program = Path(__file__).parent / "programs" / "jax_fresh_jit.py"
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--xla_dump_to={tmp_path / 'dump'}",
           "JAX_COMPILATION_CACHE_DIR": str(tmp_path / "cache"),
           "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
           "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "0"}
    subprocess.run([sys.executable, str(program)], env=env, check=True, capture_output=True)
    assert len(list((tmp_path / "cache").glob("jit__lambda-*"))) == 1
    lambdas = [m for m in load_dump(tmp_path / "dump").modules if m.program == "jit__lambda"]
    assert [m.loaded_from_cache for m in lambdas] == [False, True, True]
    assert not [p for p in find_recompilations(load_dump(tmp_path / "dump")) if p.user]
    run_cli("recompiles", str(tmp_path / "dump"), expect=0)


def test_a_module_cut_short_is_an_error_not_a_program_compiled_once(tmp_path):
    # The second train step's compile input cut at 3,000 bytes (its optimized
    # file whole): recompiles read which function it traced from the cut
    # head, found another, and said "No program was compiled more than once",
    # exit 0, where ls said the module does not parse (a new user's check).
    run = tmp_path / "run"
    shutil.copytree(CORPUS / "jax_recompile_last_batch" / "run", run)
    (cut,) = run.glob("module_0015.jit_train_step.before_optimizations.txt")
    cut.write_bytes(cut.read_bytes()[:3000])
    result = run_cli("recompiles", str(run), expect=2)
    assert result.stdout == ""
    assert result.stderr.startswith(f"hlodiff: error: {cut}:") and result.stderr.count("\n") == 1


def test_jax_0_4_30s_modules_ending_with_the_entrys_name_are_whole():
    """jax 0.4.30 ends each module with ``} // main.9`` (XLA prints the name
    of a computation of more than five lines after its '}'): recompiles
    took every such module for one cut short, "hlodiff: error: ...: the
    file ends inside a computation: it was cut short", exit 2, on any real
    dump of that version."""
    result = run_cli("recompiles", str(CORPUS / "jax_version_upgrade" / "run_a"), expect=0)
    assert "jit__normal compiled 2 times" in result.stdout and result.stderr == ""


@pytest.mark.parametrize("tail", ["// written by hand\n", "\n" * 300])
def test_a_module_that_parses_is_whole_whatever_follows_its_last_brace(tmp_path, tail):
    # A comment after the last '}', or more blank lines than the check reads:
    # the module parses, so it is whole, and the recompilation is explained.
    run = tmp_path / "run"
    shutil.copytree(CORPUS / "jax_recompile_last_batch" / "run", run)
    (module,) = run.glob("module_0015.jit_train_step.before_optimizations.txt")
    module.write_text(module.read_text() + tail)
    result = run_cli("recompiles", str(run), expect=1)
    assert "jit_train_step compiled 2 times" in result.stdout and result.stderr == ""
