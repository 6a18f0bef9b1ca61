"""The same inputs give byte-identical output, run after run and whatever
PYTHONHASHSEED is (set and dict orders, hash() ties must not leak into it)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT, run_cli
from hostile import copy_case, main_file

SEEDS = ("0", "1", "12345")


def hlodiff_output(*args: str, seed: str) -> bytes:
    env = dict(os.environ, PYTHONHASHSEED=seed)
    done = subprocess.run([sys.executable, "-m", "hlodiff", *args], capture_output=True, env=env,
                          cwd=ROOT, timeout=300)
    assert done.returncode in (0, 1), done.stderr.decode()
    return done.stdout


@pytest.mark.parametrize("case", ["jax_dtype", "tf_seed", "torch_loop_trip_count"])
def test_diff_json_is_the_same_for_every_hash_seed(tmp_path: Path, case: str) -> None:
    root = copy_case(case, tmp_path)
    args = ("diff", str(root / "run_a"), str(root / "run_b"), "--format", "json", "--all")
    outputs = {seed: hlodiff_output(*args, seed=seed) for seed in SEEDS}
    assert len(set(outputs.values())) == 1, "output depends on PYTHONHASHSEED"
    assert b'"findings"' in outputs["0"]


def test_constants_and_ls_json_are_the_same_for_every_hash_seed(tmp_path: Path) -> None:
    root = copy_case("jax_two_causes", tmp_path)
    for args in (("constants", str(root / "run_a"), str(root / "run_b"), "--format", "json"),
                 ("ls", str(root / "run_a"), "--explain", "--format", "json"),
                 ("diff", str(main_file(root / "run_a")), str(main_file(root / "run_b")),
                  "--format", "markdown")):
        assert len({hlodiff_output(*args, seed=seed) for seed in SEEDS}) == 1, args


def test_repeated_runs_in_one_process_are_identical(tmp_path: Path) -> None:
    """Caches (parsed shapes and values) must not change a later answer."""
    root = copy_case("jax_dtype", tmp_path)
    args = ("diff", str(root / "run_a"), str(root / "run_b"), "--format", "json")
    first = run_cli(*args, expect=1).stdout
    run_cli("diff", str(root / "run_b"), str(root / "run_a"), "--format", "json", expect=1)
    assert run_cli(*args, expect=1).stdout == first
