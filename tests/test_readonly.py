"""No command changes, adds or removes anything in what it reads: every file
and folder keeps its content and its mtime."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from conftest import run_cli
from hostile import copy_case, main_file


def state(root: Path) -> dict[str, tuple[int, str]]:
    """Every path under ``root`` and root itself: (mtime in ns, content hash)."""
    out = {".": (root.lstat().st_mtime_ns, "dir")}
    for p in sorted(root.rglob("*")):
        kind = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() and not p.is_symlink() \
            else "dir" if p.is_dir() else "link"
        out[str(p.relative_to(root))] = (p.lstat().st_mtime_ns, kind)
    return out


def commands(root: Path) -> list[tuple[str, ...]]:
    a, b = root / "run_a", root / "run_b"
    fa, fb = main_file(a), main_file(b)
    return [
        ("diff", str(a), str(b)), ("diff", str(a), str(b), "--format", "json"),
        ("diff", str(a), str(b), "--format", "markdown", "--all"),
        ("diff", str(fa), str(fb)), ("diff", str(a), str(a)),
        ("constants", str(a)), ("constants", str(fa), "--format", "json"),
        ("constants", str(a), str(b)), ("constants", str(fa), str(fb), "--format", "json"),
        ("ls", str(a)), ("ls", str(b), "--explain", "--format", "json"), ("ls", str(fa)),
    ]


@pytest.mark.parametrize("case", ["jax_learning_rate", "tf_batch_size", "torch_op_added"])
def test_no_command_changes_what_it_reads(tmp_path: Path, case: str) -> None:
    root = copy_case(case, tmp_path)
    before = state(root)
    for args in commands(root):
        run_cli(*args, expect=None)
        assert state(root) == before, f"hlodiff {' '.join(args)} changed {root}"


def test_errors_change_nothing_either(tmp_path: Path) -> None:
    root = copy_case("jax_learning_rate", tmp_path)
    broken = root / "run_b" / main_file(root / "run_b").name
    broken.write_text(broken.read_text()[:5000])
    before = state(root)
    for args in commands(root):
        run_cli(*args, expect=None)
    assert state(root) == before
