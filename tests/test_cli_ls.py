"""``hlodiff ls``: which file is my program, and what do these names mean."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import dump_runs, run_cli
import pytest

from dump_trees import hlo_text, jax_dump, snapshot, tf_dump, torch_dump, write_tree
from hlodiff.dumps import load_dump
from hlodiff.render import text as render_text


def test_ls_marks_the_main_program_and_says_why(tmp_path):
    jax_dump(tmp_path)
    out = run_cli("ls", str(tmp_path)).stdout
    rows = [line for line in out.splitlines() if "jit_" in line and "main program" not in line
            and "module_" not in line]
    assert [("main" in row) for row in rows] == [False, False, True]
    assert "jit_train_step" in rows[2] and "before, after" in rows[2] and "41" in rows[2]
    assert "main program: module 4, jit_train_step (largest before_optimizations text" in out
    assert "next jit_init_params" in out


def test_ls_shows_names_without_counters(tmp_path):
    tf_dump(tmp_path, 128, 5)
    out = run_cli("ls", str(tmp_path)).stdout
    assert "a_inference_train_step " in out and "_128" not in out.split("main program")[0]


def test_ls_json_is_one_document(tmp_path):
    jax_dump(tmp_path)
    write_tree(tmp_path, {"README.md": "notes"})
    doc = json.loads(run_cli("ls", str(tmp_path), "--format", "json").stdout)
    assert [m["program"] for m in doc["modules"]] == [
        "jit_convert_element_type", "jit_init_params", "jit_train_step"]
    assert [m["main"] for m in doc["modules"]] == [False, False, True]
    assert doc["main_program"]["reason"].startswith("largest before_optimizations text")
    assert doc["modules"][2]["instructions"] == 41
    assert doc["modules"][2]["stages"] == ["before", "after"]
    assert [f["path"] for f in doc["unknown_files"]] == ["README.md"]


def test_ls_explain_spells_out_each_kind_of_name_once(tmp_path):
    jax_dump(tmp_path, first_id=28, helpers=(("jit_init_params", 8),))
    out = run_cli("ls", "--explain", str(tmp_path)).stdout
    legend = out.split("What the file names mean")[1]
    explained = " ".join(legend.split())  # undo the wrapping
    assert "module_NNNN module id: XLA's counter of the HLO modules this process created, " \
           "dumped or not, so ids can skip numbers; not stable across runs; here 28, 30" in explained
    assert "jit_init_params program name: the JAX function compiled with jax.jit, jit_FUNCTION" \
        in explained
    assert "cpu_after_optimizations stage: after all of XLA's optimization passes for the cpu " \
           "backend: what actually ran" in explained
    assert "-memory-usage-report.txt memory usage report" in explained
    assert "module.mlir the StableHLO program" in explained
    assert "obj-file.KERNEL.o machine code the backend compiled for a kernel, one per kernel; " \
           "2 of them here" in explained
    # each kind once, though two modules have one of each
    for name in ("module_NNNN", "before_optimizations", ".txt", "-live-range.txt", "module.mlir",
                 "program name:"):
        assert f" {explained} ".count(f" {name} ") == 1, name


@pytest.mark.parametrize("make, fact", [
    (lambda root: tf_dump(root, 128, 5), "here 0, 3"),
    (lambda root: torch_dump(root, 3, 7), "here 0, 1"),
])
def test_ls_explain_tells_only_what_the_dump_shows_of_module_ids(tmp_path, make, fact):
    """JAX's ids step by 2 in recent versions, by 1 in older ones and in TF's
    and PyTorch/XLA's: the legend says what the counter is and which ids this
    dump has, and claims no step."""
    make(tmp_path)
    out = " ".join(run_cli("ls", "--explain", str(tmp_path)).stdout.split())
    assert fact in out and "step by" not in out and "steps by" not in out


def test_ls_explain_fits_80_columns_and_says_tf_names_shortly(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    tf_dump(tmp_path, 128, 5)
    out = run_cli("ls", "--explain", str(tmp_path)).stdout
    lines = out.splitlines()
    path = [line for line in lines if line.startswith("  ") and "module_0003." in line]
    assert all(len(line) <= 80 for line in lines if line not in path)
    assert "a_inference_init_values_58…" in out and "XlaMustCompile" not in out.replace(path[0], "")


def test_ls_explain_in_json_gives_parts(tmp_path):
    jax_dump(tmp_path)
    doc = json.loads(run_cli("ls", "--explain", "--format", "json", str(tmp_path)).stdout)
    parts = doc["modules"][0]["files"][0]["parts"]
    assert [p["text"] for p in parts] == ["module_0000", "jit_convert_element_type",
                                          "before_optimizations", ".txt"]


def test_ls_lists_unknown_files(tmp_path):
    jax_dump(tmp_path)
    write_tree(tmp_path, {"notes.md": "x"})
    out = run_cli("ls", str(tmp_path)).stdout
    assert "1 file not named the way XLA names dumps (listed, not read): notes.md" in out


def test_ls_no_count_parses_nothing(tmp_path, monkeypatch):
    jax_dump(tmp_path)

    def no_parse(*_args, **_kwargs):
        raise AssertionError("parsed")
    monkeypatch.setattr("hlodiff.syntax.parser.parse_file", no_parse)
    doc = json.loads(run_cli("ls", "--no-count", "--format", "json", str(tmp_path)).stdout)
    assert [m["instructions"] for m in doc["modules"]] == [None, None, None]


def test_ls_shows_an_unreadable_module_and_goes_on(tmp_path):
    jax_dump(tmp_path)
    (tmp_path / "module_0002.jit_init_params.before_optimizations.txt").write_text("HloModule x\n{")
    out = run_cli("ls", str(tmp_path), expect=2).stdout  # listed, and the exit says so
    assert "unreadable" in out
    assert "module_0002.jit_init_params.before_optimizations.txt:" in out


def test_ls_a_single_file(tmp_path):
    path = write_tree(tmp_path, {"prog.hlo": hlo_text("prog")}) / "prog.hlo"
    out = run_cli("ls", str(path)).stdout
    assert "1 module in" in out and "the only module with HLO text" in out


@pytest.mark.parametrize("name", ["prog.hlo", "module_0007.jit_prog.before_optimizations.txt"])
def test_ls_a_single_file_heads_its_listing_with_that_file(tmp_path, monkeypatch, name):
    # The head named the file's folder ("1 module in /tmp/x"), as though the
    # folder had been listed; `ls DIR` heads with what it was given.
    monkeypatch.setenv("COLUMNS", "400")  # the path on the head's line, however long
    other = "module_0003.jit_other.before_optimizations.txt"
    path = write_tree(tmp_path, {name: hlo_text("prog"), other: hlo_text("other")}) / name
    head = run_cli("ls", str(path)).stdout.splitlines()[0]
    assert head == f"1 module in {path}"
    assert run_cli("ls", str(tmp_path)).stdout.splitlines()[0].endswith(f" in {tmp_path}")


def test_ls_writes_nothing_into_the_dump(tmp_path):
    jax_dump(tmp_path)
    before = snapshot(tmp_path)
    run_cli("ls", "--explain", str(tmp_path))
    assert snapshot(tmp_path) == before


def test_ls_errors_are_one_line_with_exit_2(tmp_path):
    write_tree(tmp_path / "no_hlo", {"README.md": "x"})
    (tmp_path / "empty").mkdir()
    for target, message in ((tmp_path / "missing", "no such file or directory"),
                            (tmp_path / "empty", "empty directory"),
                            (tmp_path / "no_hlo", "no HLO text among 1 files")):
        result = run_cli("ls", str(target), expect=2)
        assert result.stdout == ""
        assert result.stderr.count("\n") == 1
        assert result.stderr.startswith(f"hlodiff: error: {target}: {message}")


def test_constants_of_a_dump_reads_its_main_program(tmp_path):
    jax_dump(tmp_path)
    out = run_cli("constants", str(tmp_path)).stdout
    assert "module_0004.jit_train_step.before_optimizations.txt" in "".join(out.split())


def test_progress_is_silent_off_a_terminal(tmp_path):
    files = {}
    for i in range(render_text.PROGRESS_MIN_ITEMS + 1):
        files[f"module_{i:04d}.jit_f{i}.before_optimizations.txt"] = hlo_text(f"jit_f{i}")
    write_tree(tmp_path, files)
    assert run_cli("ls", str(tmp_path)).stderr == ""


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_on_a_terminal_for_many_items():
    shown, quiet = _Terminal(), _Terminal()
    with render_text.progress(render_text.PROGRESS_MIN_ITEMS + 1, "reading", shown) as advance:
        advance()
    with render_text.progress(3, "reading", quiet) as advance:
        advance()
    assert "reading" in shown.getvalue()
    assert quiet.getvalue() == ""


def test_the_training_step_is_the_main_program_though_an_ema_takes_more_arguments(tmp_path):
    # An EMA of the weights takes them twice; the step, once and a batch. "The
    # most arguments" made the EMA the main program of a helper session's flax
    # run, so `ls` and `constants` showed its 0.99 instead of the step's.
    program = Path(__file__).parent / "programs" / "jax_ema_step.py"
    env = {**os.environ, "JAX_PLATFORMS": "cpu", "XLA_FLAGS": f"--xla_dump_to={tmp_path}"}
    subprocess.run([sys.executable, str(program)], env=env, check=True, capture_output=True)
    main = load_dump(tmp_path).main
    assert main.module.program == "jit_train_step"
    assert main.reason.startswith("computes gradients, a training step")
    assert "next jit_ema_update, which does not" in main.reason


def test_a_step_jitted_as_a_private_method_is_the_users_not_jaxs(tmp_path):
    # jax.jit(self._train_step) is jit__train_step, named like JAX's own
    # jit__normal; the name rule took it for JAX's, so jit_concatenate (four
    # shards of a batch, eager) became the main program, and `baseline` then
    # `check` said "Same executable", exit 0, for a learning rate that moved
    # the step's JAX key. JAX's frame tables name the user's functions.
    dump_runs(tmp_path, "jax_private_step", "0.01", "0.02")
    main = load_dump(tmp_path / "0.01").main
    assert main.module.program == "jit__train_step"
    baseline = tmp_path / "baseline.json"
    run_cli("baseline", str(tmp_path / "0.01"), "-o", str(baseline))
    checked = run_cli("check", "--baseline", str(baseline), str(tmp_path / "0.02"), expect=1)
    assert "Top cause: constant 0.01 -> 0.02" in " ".join(checked.stdout.split())
