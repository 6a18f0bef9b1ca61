"""The diff and constants commands as a user runs them: exit codes, formats, errors."""

from __future__ import annotations

import json

from conftest import CORPUS, run_cli

LR = CORPUS / "jax_learning_rate"
CONTROL = CORPUS / "torch_extra_compilations"


def test_diff_text_says_different_and_names_the_constant_and_its_line():
    result = run_cli("diff", str(LR / "run_a"), str(LR / "run_b"), expect=1)
    assert result.stderr == ""  # no progress display when stderr is not a terminal
    first = result.stdout.splitlines()[0]
    assert first.startswith("Different executables")
    assert "constant 0.01 -> 0.02" in first
    assert "adam_update" in result.stdout and "jax_cases.py:" in result.stdout


def test_diff_json_follows_the_documented_schema():
    doc = json.loads(run_cli("diff", str(LR / "run_a"), str(LR / "run_b"), "--format", "json",
                             expect=1).stdout)
    assert doc["schema_version"] == 1 and doc["same_executable"] is False
    assert set(doc["stages"]) == {"before_optimizations", "after_optimizations"}
    top = doc["findings"][0]
    assert set(top) >= {"kind", "stage", "old", "new", "count", "affects", "origin", "where"}
    assert set(top["origin"]) == {"op_name", "op_type", "source_file", "source_line", "stack"}
    assert (top["kind"], top["old"], top["new"]) == ("constant", "0.01", "0.02")
    assert top["affects"] == ["jax_cache_key", "graphcore_hlo_hash"]
    assert {h["name"]: h["changed"] for h in doc["hashes"]} == {
        "xla_fingerprint": False, "jax_cache_key": True, "graphcore_hlo_hash": True}
    assert all(set(f["where"]) == {"a", "b", "computation"} for f in doc["findings"] if f["where"])


def test_diff_markdown_is_a_pr_comment():
    text = run_cli("diff", str(LR / "run_a"), str(LR / "run_b"), "--format", "markdown",
                   expect=1).stdout
    assert text.startswith("### ❌ hlodiff: Different executables")
    assert "| # | kind | stage |" in text and "`0.01` → `0.02`" in text


def test_diff_of_a_control_exits_0():
    result = run_cli("diff", str(CONTROL / "run_a"), str(CONTROL / "run_b"), expect=0)
    assert result.stdout.startswith("Same executable")


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


def test_a_side_module_that_differs_is_pointed_out(tmp_path):
    """The main program is identical, but jit_init_params changed: say where to look."""
    from dump_trees import jax_dump
    a = jax_dump(tmp_path / "a")
    b = jax_dump(tmp_path / "b", helpers=(("jit_convert_element_type", 1), ("jit_init_params", 9)))
    doc = json.loads(run_cli("diff", str(a), str(b), "--format", "json", expect=0).stdout)
    assert doc["same_executable"] is True
    assert doc["notes"] == ["jit_init_params also differs between the runs: "
                            "hlodiff diff --module 'jit_init_params' to explain it"]


def test_header_and_flag_changes_are_causes():
    donation = json.loads(run_cli("diff", str(CORPUS / "jax_donation" / "run_a"),
                                  str(CORPUS / "jax_donation" / "run_b"), "--format", "json",
                                  expect=1).stdout)["findings"][0]
    assert (donation["kind"], donation["detail"]) == ("attribute", "module header: input_output_alias")
    flag = json.loads(run_cli("diff", str(CORPUS / "jax_xla_flag" / "run_a"),
                              str(CORPUS / "jax_xla_flag" / "run_b"), "--format", "json",
                              expect=1).stdout)["findings"][0]
    assert (flag["detail"], flag["new"], flag["affects"]) == (
        "debug_options: xla_cpu_enable_fast_math", "true", ["jax_cache_key"])
