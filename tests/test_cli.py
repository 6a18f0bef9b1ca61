"""The diff and constants commands as a user runs them: exit codes, formats, errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from conftest import CORPUS, run_cli

LR = CORPUS / "jax_learning_rate"
CONTROL = CORPUS / "jax_extra_compilations"


def test_diff_text_says_different_and_names_the_constant_and_its_line():
    result = run_cli("diff", str(LR / "run_a"), str(LR / "run_b"), expect=1)
    assert result.stderr == ""  # no progress display when stderr is not a terminal
    first = result.stdout.splitlines()[0]
    assert first.startswith("Recompiles (jit_train_step), different executables")
    assert "constant 0.01 -> 0.02" in first
    assert "adam_update" in result.stdout and "jax_cases.py:" in result.stdout


def test_diff_exits_1_for_a_recompile_of_the_same_executable():
    # TensorFlow's persistent key hashes op_names: a renamed scope recompiles,
    # though XLA makes the same executable. A gate that reads the exit code
    # must hear it (it exited 0; two helper sessions' gates missed such runs).
    # A rename JAX's key does not see still exits 0.
    renamed = CORPUS / "tf_name_scope_rename"
    result = run_cli("diff", str(renamed / "run_a"), str(renamed / "run_b"), expect=1)
    assert result.stdout.startswith(
        "Recompiles (a_inference_train_step), but XLA produces the same executable")
    jax_renamed = CORPUS / "jax_named_scope_rename"
    result = run_cli("diff", str(jax_renamed / "run_a"), str(jax_renamed / "run_b"), expect=0)
    assert result.stdout.startswith("Same executable, no recompile")


def test_diff_json_follows_the_documented_schema():
    doc = json.loads(run_cli("diff", str(LR / "run_a"), str(LR / "run_b"), "--format", "json",
                             expect=1).stdout)
    assert doc["schema_version"] == 2
    assert doc["recompiles"] is True and doc["same_executable"] is False
    main = [p for p in doc["programs"] if p["main"]]
    assert [p["program"] for p in main] == ["jit_train_step"]
    assert main[0]["hashes"] == {"jax_cache_key": True, "xla_executable_fingerprint": True}
    top = doc["findings"][0]
    assert set(top) >= {"program", "kind", "stage", "old", "new", "summary", "advice", "count",
                        "affects", "origin", "where", "derived", "optimized"}
    assert set(top["origin"]) == {"op_name", "op_type", "source_file", "source_line", "stack"}
    assert (top["program"], top["kind"], top["old"], top["new"]) == (
        "jit_train_step", "constant", "0.01", "0.02")
    assert "jnp.asarray" in top["advice"]  # a Python float baked in: pass it as an array
    assert top["affects"] == ["jax_cache_key", "xla_executable_fingerprint"]
    assert {h["name"]: h["changed"] for h in doc["hashes"]} == {
        "xla_executable_fingerprint": True, "jax_cache_key": True}
    assert all(set(f["where"]) == {"a", "b", "computation", "line_a", "line_b"}
               for f in doc["findings"] if f["where"])


def test_diff_markdown_is_a_pr_comment():
    text = run_cli("diff", str(LR / "run_a"), str(LR / "run_b"), "--format", "markdown",
                   expect=1).stdout
    assert text.startswith("### ❌ hlodiff: Recompiles (`jit_train_step`), different executables")
    assert "| # | kind | stage |" in text and "`0.01` → `0.02`" in text


def test_diff_of_a_control_exits_0():
    result = run_cli("diff", str(CONTROL / "run_a"), str(CONTROL / "run_b"), expect=0)
    assert result.stdout.startswith("Same executable, no recompile")


def test_diff_of_single_files():
    a = next((LR / "run_a").glob("*jit_train_step.before_optimizations.txt"))
    b = next((LR / "run_b").glob("*jit_train_step.before_optimizations.txt"))
    doc = json.loads(run_cli("diff", str(a), str(b), "--format", "json", expect=1).stdout)
    assert doc["findings"][0]["kind"] == "constant"
    assert list(doc["stages"]) == ["before_optimizations"]


def test_diff_of_a_missing_directory_is_one_line_exit_2(tmp_path):
    result = run_cli("diff", str(tmp_path / "nope"), str(LR / "run_b"), expect=2)
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("hlodiff: error: ")


def test_constants_across_runs_lists_only_what_varies():
    result = run_cli("constants", str(LR / "run_a"), str(LR / "run_b"), "--format", "json", expect=1)
    doc = json.loads(result.stdout)
    values = {tuple(c["values"]) for c in doc["constants"]}
    assert values == {("0.01", "0.02")}
    assert all("adam_update" in c["origin"]["op_name"] for c in doc["constants"])


def test_constants_of_one_run_lists_every_constant_with_origin():
    doc = json.loads(run_cli("constants", str(LR / "run_a"), "--format", "json").stdout)
    lr = [c for c in doc["constants"] if c["value"] == "0.01"]
    assert lr and all(c["origin"]["source_line"] for c in lr)
    assert all(c["origin_from_users"] for c in lr)  # scalars carry no metadata of their own


def test_constants_of_identical_runs_exits_0():
    run_cli("constants", str(LR / "run_a"), str(LR / "run_a"), expect=0)


def test_a_side_program_that_differs_gets_its_verdict(tmp_path):
    """The main program is identical, but jit_init_params changed: the run's
    verdict covers every program, and the headline names the one that differs."""
    from dump_trees import jax_dump
    a = jax_dump(tmp_path / "a")
    b = jax_dump(tmp_path / "b", helpers=(("jit_convert_element_type", 1), ("jit_init_params", 9)))
    result = run_cli("diff", str(a), str(b), expect=1)
    assert result.stdout.startswith("Recompiles (jit_init_params)")
    doc = json.loads(run_cli("diff", str(a), str(b), "--format", "json", expect=1).stdout)
    verdicts = {p["program"]: (p["recompiles"], p["same_executable"]) for p in doc["programs"]}
    assert verdicts["jit_init_params"] == (True, False)
    assert verdicts["jit_train_step"] == (False, True)
    assert {f["program"] for f in doc["findings"] if f["affects"]} == {"jit_init_params"}


def test_header_and_flag_changes_are_causes():
    donation = json.loads(run_cli("diff", str(CORPUS / "jax_donation" / "run_a"),
                                  str(CORPUS / "jax_donation" / "run_b"), "--format", "json",
                                  expect=1).stdout)["findings"][0]
    assert (donation["kind"], donation["detail"]) == ("attribute", "module header: input_output_alias")
    flag = json.loads(run_cli("diff", str(CORPUS / "jax_xla_flag" / "run_a"),
                              str(CORPUS / "jax_xla_flag" / "run_b"), "--format", "json",
                              expect=1).stdout)["findings"][0]
    assert (flag["kind"], flag["detail"], flag["new"], flag["affects"]) == (
        "environment", "XLA flag xla_cpu_enable_fast_math: (default) -> true (5 of 5 programs)",
        "xla_cpu_enable_fast_math: true", ["jax_cache_key"])


def test_a_pipe_a_byte_order_mark_and_a_file_named_otherwise_read_as_the_module(tmp_path):
    # A new user's session: `hlodiff diff <(git show HEAD:model.hlo) model.hlo`
    # said "/dev/fd/63:1:1: ... the input is empty" (the diff reads a file more
    # than once, a pipe gives its text once); a file saved with a UTF-8
    # byte-order mark failed at 1:1; and the program was named after the file
    # ("Recompiles (old_step)") where both files say HloModule jit_train_step.
    module = CORPUS / "jax_learning_rate" / "run_b" / \
        "module_0006.jit_train_step.before_optimizations.txt"
    old = (CORPUS / "jax_learning_rate" / "run_a" / module.name).read_bytes()
    (tmp_path / "old_step.hlo").write_bytes(b"\xef\xbb\xbf" + old)
    script = (f"{sys.executable} -m hlodiff diff <(cat {tmp_path / 'old_step.hlo'}) {module}; "
              f"echo rc=$?")
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(tmp_path)})
    assert "Recompiles (jit_train_step), different executables" in done.stdout, done.stderr
    assert done.stdout.rstrip().endswith("rc=1") and not done.stderr
    assert [p.name for p in tmp_path.iterdir()] == ["old_step.hlo"]  # its copy is gone
    named = run_cli("diff", str(tmp_path / "old_step.hlo"), str(module), expect=1)
    assert named.stdout.startswith("Recompiles (jit_train_step), different executables")


def test_output_in_a_locale_that_cannot_spell_it_is_no_traceback():
    # Under an ISO-8859-1 or ASCII locale the ellipsis and a Markdown table's
    # cross raised UnicodeEncodeError: a traceback, exit 1 (a helper session's run).
    case = CORPUS / "tf_keras_batch_size"
    env = {**os.environ, "PYTHONIOENCODING": "ascii"}
    for extra in ([], ["--format", "markdown"]):
        done = subprocess.run([sys.executable, "-m", "hlodiff", "diff", str(case / "run_a"),
                               str(case / "run_b"), "--no-cache", *extra],
                              capture_output=True, text=True, env=env)
        assert (done.returncode, done.stderr) == (1, "")
        assert "batch 32 -> 48" in done.stdout
    done = subprocess.run([sys.executable, "-m", "hlodiff", "constants", str(case / "run_a")],
                          capture_output=True, text=True, env=env)
    assert (done.returncode, done.stderr) == (0, "")


def test_a_run_without_its_optimized_program_is_said_to_be_judged_by_its_input(tmp_path):
    # Run b without the main program's optimized file read "Same executable ...
    # XLA executable fingerprint: unchanged" with no word that its executable
    # was never seen (a helper session's run).
    run_b = tmp_path / "run_b"
    shutil.copytree(LR / "run_a", run_b)
    (run_b / "module_0006.jit_train_step.cpu_after_optimizations.txt").unlink()
    result = run_cli("diff", str(LR / "run_a"), str(run_b), "--no-cache", expect=0)
    assert result.stdout.startswith("Same executable, no recompile")
    assert ("note: run b dumped no optimized program for jit_train_step: its executable is "
            "told from its compile input") in " ".join(result.stdout.split())


def test_one_run_given_twice_is_said(tmp_path):
    # "diff X X", or X against a link to it, said "Same executable" with no
    # word that both paths are one folder (a helper session's run).
    link = tmp_path / "link"
    link.symlink_to(LR / "run_a")
    result = run_cli("diff", str(LR / "run_a"), str(link), expect=0)
    assert result.stderr == (f"hlodiff: note: {LR / 'run_a'} and {link} are the same folder: "
                             "one run against itself\n")


def test_an_option_jax_sets_from_the_program_itself_is_no_flag_difference(tmp_path):
    # JAX turns xla_detailed_logging on for modules of many ops
    # (jax/_src/compiler.py, use_detailed_logging): a helper session's
    # nn.scan run had "XLA flag xla_detailed_logging: (default) -> false" as
    # the run's top cause, with the advice to set the same XLA_FLAGS.
    run_b = tmp_path / "run_b"
    shutil.copytree(LR / "run_a", run_b)
    options = run_b / "module_0006.jit_train_step.debug_options"
    options.write_text(options.read_text() + "xla_detailed_logging: false\n")
    result = run_cli("diff", str(LR / "run_a"), str(run_b), "--no-cache", expect=0)
    assert result.stdout.startswith("Same executable, no recompile")


def test_a_run_that_never_compiled_the_other_runs_main_program_is_no_same_executable(tmp_path):
    # Run b stopped before compiling jit_train_step (a helper session's GPT-2
    # run raised after init): its helpers matched run a's, and the diff said
    # "Same executable, no recompile", exit 0.
    run_b = tmp_path / "run_b"
    shutil.copytree(LR / "run_a", run_b)
    for step in run_b.glob("module_0006.jit_train_step*"):
        shutil.rmtree(step) if step.is_dir() else step.unlink()
    result = run_cli("diff", str(LR / "run_a"), str(run_b), "--no-cache", expect=1)
    assert result.stdout.startswith(
        "warning: run a's main program, jit_train_step, has no counterpart in run b")
    assert "Same executable" not in result.stdout


def test_constants_across_runs_does_not_say_none_varies_of_values_it_never_saw():
    # A frozen f32[64,32] printed as {...} in both runs, all 2048 values
    # changed: `diff` says so (from module.mlir), `constants` said "No constant
    # varies", exit 0 (a new user's run).
    case = CORPUS / "jax_frozen_large"
    result = run_cli("constants", str(case / "run_a"), str(case / "run_b"), expect=1)
    said = " ".join(result.stdout.split())
    assert said.startswith("No printed constant varies across the 2 runs.")
    assert "1 constant was printed as {...} in every run and not compared" in said
    doc = json.loads(run_cli("constants", str(case / "run_a"), str(case / "run_b"), "--format",
                             "json", expect=1).stdout)
    assert doc["constants"] == [] and [c["shape"] for c in doc["undecided"]] == ["f32[64,32]{1,0}"]


def test_the_text_says_how_many_instructions_xla_then_optimized_differently():
    # The README, the JSON and the page count what differs only after
    # optimization under its cause; the text never said it (a new user's run).
    case = CORPUS / "jax_dtype"
    doc = json.loads(run_cli("diff", str(case / "run_a"), str(case / "run_b"), "--format", "json",
                             expect=1).stdout)
    optimized = doc["findings"][0]["optimized"]
    assert optimized > 1
    text = " ".join(run_cli("diff", str(case / "run_a"), str(case / "run_b"),
                            expect=1).stdout.split())
    assert f"XLA then optimized {optimized} instructions differently because of it" in text


def test_a_constant_settled_from_module_mlir_is_not_advised_to_be_dumped_again():
    # The values of a frozen f32[64,32] printed as {...} came from module.mlir,
    # and the advice still said to dump again to compare them (a new user's run).
    case = CORPUS / "jax_frozen_large"
    top = json.loads(run_cli("diff", str(case / "run_a"), str(case / "run_b"), "--format",
                             "json", expect=1).stdout)["findings"][0]
    assert top["kind"] == "elided_constant" and "module.mlir shows different values" in top["detail"]
    assert "dump again" not in top["advice"] and "as arguments" in top["advice"]


def test_metadata_carried_into_the_optimized_program_is_not_optimized_differently():
    # tf_concat_vs_stack: XLA makes the same executable, and the report said
    # "XLA then optimized 1 instruction differently" for an op_name the
    # optimized program carried over (a new user's page).
    case = CORPUS / "tf_concat_vs_stack"
    doc = json.loads(run_cli("diff", str(case / "run_a"), str(case / "run_b"), "--format",
                             "json", expect=1).stdout)
    assert doc["same_executable"] is True
    assert [f["optimized"] for f in doc["findings"]] == [0, 0]


def test_the_markdown_counts_what_xla_then_optimized_differently():
    # Text, JSON and the page say it; the PR comment did not (a new user's run).
    case = CORPUS / "jax_dtype"
    doc = json.loads(run_cli("diff", str(case / "run_a"), str(case / "run_b"), "--format", "json",
                             expect=1).stdout)
    top = doc["findings"][0]
    markdown = run_cli("diff", str(case / "run_a"), str(case / "run_b"), "--format", "markdown",
                       expect=1).stdout
    row = next(line for line in markdown.splitlines() if line.startswith("| 1 |"))
    assert f"| {top['count']}, then {top['optimized']} optimized differently |" in row


def test_a_usage_error_is_one_line_that_says_where_help_is():
    # click printed three lines (Usage:, Try ..., Error: ...) and a blank one;
    # every other error is one line (a new user's session).
    for args, said in ((["diff", "--foo", "a", "b"], "no such option '--foo'"),
                       (["diff"], "missing argument 'A B'"),
                       (["diff", "a", "b", "--format", "x"], "invalid value for '--format'"),
                       (["log", "--dump"], "option '--dump' requires an argument"),
                       (["check", "x"], "missing option '--baseline'"),
                       (["nosuch"], "no such command 'nosuch'")):
        result = run_cli(*args, expect=2)
        command = "hlodiff" if args[0] == "nosuch" else f"hlodiff {args[0]}"
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1, result.stderr
        assert result.stderr.startswith(f"hlodiff: error: {said}"), result.stderr
        assert result.stderr.endswith(f" (see {command} --help)\n"), result.stderr
