"""The pre-merge gate: hlodiff baseline, hlodiff check, and the files users copy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import CORPUS, ROOT, run_cli

LR = CORPUS / "jax_learning_rate"
JAX_PYTHON = Path("/root/venvs/jax/bin/python")


@pytest.fixture
def baseline(tmp_path: Path) -> Path:
    path = tmp_path / "hlo-baseline.json"
    out = run_cli("baseline", str(LR / "run_a"), "-o", str(path)).stdout
    assert "recorded 1 module (jit_train_step)" in out
    return path


def test_baseline_records_enough_to_explain_without_the_dump(baseline: Path):
    module, = json.loads(baseline.read_text())["modules"]
    assert module["program"] == "jit_train_step"
    from hlodiff.analysis.hashes import HASHES
    assert set(module["fingerprints"]) == {h.name for h in HASHES}
    assert module["parameters"][0] == {"number": 0, "shape": "f32[32,64]{1,0}"}
    lr = [c for c in module["constants"] if c["value"] == "0.01"]
    assert len(lr) == 4 and lr[0]["op_name"].endswith("adam_update/mul")
    stored = {f["path"]: f["encoding"] for f in module["files"]}
    assert stored["module_0006.jit_train_step.before_optimizations.txt"] == "zlib+base64"
    assert "module_0006.jit_train_step/module.mlir" in stored


def test_check_passes_on_the_same_program(baseline: Path):
    out = run_cli("check", "--baseline", str(baseline), str(LR / "run_a"), expect=0).stdout
    assert "Same executable" in out


def test_check_explains_a_change_as_diff_does(baseline: Path):
    checked = run_cli("check", "--baseline", str(baseline), str(LR / "run_b"), "--format", "json",
                      expect=1)
    diffed = run_cli("diff", str(LR / "run_a"), str(LR / "run_b"), "--format", "json", expect=1)
    assert json.loads(checked.stdout)["findings"] == json.loads(diffed.stdout)["findings"]


def test_check_annotates_github_at_the_users_line(baseline: Path):
    out = run_cli("check", "--baseline", str(baseline), str(LR / "run_b"), "--format", "github",
                  expect=1).stdout
    assert out.startswith("::error file=corpus/gen/jax_cases.py,line=168,"
                          "title=hlodiff: executable changed::")
    assert "constant 0.01 -> 0.02" in out and "moves jax_cache_key, xla_executable_fingerprint" in out


def test_check_writes_a_markdown_pr_comment(baseline: Path):
    out = run_cli("check", "--baseline", str(baseline), str(LR / "run_b"), "--format",
                  "markdown", expect=1).stdout
    assert out.startswith("### ❌ hlodiff: Recompiles (`jit_train_step`), different executables")


def test_update_accepts_the_change(baseline: Path):
    run_cli("check", "--baseline", str(baseline), str(LR / "run_b"), "--update", expect=0)
    run_cli("check", "--baseline", str(baseline), str(LR / "run_b"), expect=0)
    run_cli("check", "--baseline", str(baseline), str(LR / "run_a"), expect=1)


def test_all_modules_baseline_lists_extra_compilations_as_diff_does(tmp_path: Path):
    """jax_extra_compilations: run_b compiles helpers run_a did not; the step is unchanged."""
    case = CORPUS / "jax_extra_compilations"
    path = tmp_path / "all.json"
    run_cli("baseline", str(case / "run_a"), "--all", "-o", str(path))
    assert len(json.loads(path.read_text())["modules"]) > 1
    out = run_cli("check", "--baseline", str(path), str(case / "run_b"), "--format", "json",
                  expect=0).stdout
    extra = json.loads(out)["extra_compilations"]
    assert extra and {e["run"] for e in extra} == {"b"}


def test_a_bad_baseline_is_one_error_line(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    err = run_cli("check", "--baseline", str(bad), str(LR / "run_a"), expect=2).stderr
    assert err.startswith("hlodiff: error:") and "not an hlodiff baseline" in err


@pytest.mark.parametrize("damage", [
    lambda d: d.update(modules=[1]),
    lambda d: d["modules"][0].update(files=None),
    lambda d: d["modules"][0].update(files="x"),
    lambda d: d["modules"][0]["files"][0].update(path=None),
    lambda d: d["modules"][0]["files"][0].update(text=[]),
])
def test_a_baseline_damaged_in_a_field_is_one_error_line(baseline: Path, damage):
    # A bad merge or a hand edit: valid JSON, a field of the wrong type, gave
    # TypeError or AttributeError tracebacks (a helper session's run).
    document = json.loads(baseline.read_text())
    damage(document)
    baseline.write_text(json.dumps(document))
    err = run_cli("check", "--baseline", str(baseline), str(LR / "run_b"), expect=2).stderr
    assert err.startswith(f"hlodiff: error: {baseline}: not a baseline (modules[0]")
    assert err.count("\n") == 1


def test_a_baseline_that_cannot_be_written_is_one_error_line(tmp_path: Path):
    for target in (tmp_path / "missing" / "b.json", tmp_path):
        err = run_cli("baseline", str(LR / "run_a"), "-o", str(target), expect=2).stderr
        assert err.startswith(f"hlodiff: error: {target}: cannot write:") and err.count("\n") == 1


def test_pre_commit_hook_runs_hlodiff_check():
    hook, = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "hlodiff-check" and hook["entry"] == "hlodiff check"
    assert hook["pass_filenames"] is False


@pytest.mark.skipif(not JAX_PYTHON.exists(), reason="needs the JAX virtualenv")
def test_the_github_actions_example_end_to_end(tmp_path: Path):
    """The workflow's own steps, run here: dump with JAX, record, change the model, check."""
    workflow = yaml.safe_load((ROOT / "examples/github-actions/hlo-check.yml").read_text())
    steps = " ".join(s.get("run", "") for s in workflow["jobs"]["hlo-check"]["steps"])
    assert "XLA_FLAGS=--xla_dump_to=hlo-dump" in steps and "--format github" in steps
    shutil.copytree(ROOT / "examples", tmp_path / "examples")

    def dump(rate: str) -> None:
        shutil.rmtree(tmp_path / "hlo-dump", ignore_errors=True)
        subprocess.run([str(JAX_PYTHON), "examples/github-actions/dump_model.py"], cwd=tmp_path,
                       check=True, env={**os.environ, "LEARNING_RATE": rate,
                                        "XLA_FLAGS": "--xla_dump_to=hlo-dump"})

    dump("0.01")
    os.chdir(tmp_path)
    try:
        run_cli("baseline", "hlo-dump", "-o", "hlo-baseline.json")
        dump("0.01")
        run_cli("check", "--baseline", "hlo-baseline.json", "hlo-dump", "--format", "github")
        dump("0.05")
        out = run_cli("check", "--baseline", "hlo-baseline.json", "hlo-dump", "--format",
                      "github", expect=1).stdout
    finally:
        os.chdir(ROOT)
    assert out.startswith("::error file=examples/github-actions/dump_model.py,line=20,")
    assert "constant 0.01 -> 0.05" in out
