"""Helpers shared by the hostile-input tests: stable copies of corpus cases
and the one-line error every bad input must produce."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

from conftest import CORPUS, CliResult, run_cli

ERROR_LINE = re.compile(r"hlodiff: error: (?P<where>.+?)(?::(?P<line>\d+):(?P<col>\d+))?: (?P<what>.+)")


def copy_case(case: str, destination: Path) -> Path:
    """Copy ``corpus/<case>`` to ``destination`` (retrying while the corpus is
    being regenerated) and return the copy."""
    source = CORPUS / case
    for _ in range(60):
        if all(any((source / run).glob("*.txt")) for run in ("run_a", "run_b")):
            break
        time.sleep(1)
    target = destination / case
    shutil.copytree(source, target, symlinks=True)
    return target


def main_file(run: Path) -> Path:
    """The largest before_optimizations HLO file of a run directory (or the largest
    after_optimizations one, in a dump that holds only those)."""
    files = list(run.glob("*.before_optimizations.txt")) or \
        list(run.glob("*after_optimizations.txt"))
    return max(files, key=lambda p: p.stat().st_size)


def assert_error(result: CliResult, path: Path | str, line: int | None = None,
                 column: int | None = None, what: str = "") -> re.Match:
    """Exit 2 and exactly one stderr line ``hlodiff: error: PATH[:LINE:COL]: what``."""
    assert result.exit_code == 2, result.stderr + result.stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    m = ERROR_LINE.fullmatch(lines[0])
    assert m is not None, lines[0]
    assert m["where"] == str(path), lines[0]
    if line is not None:
        assert (int(m["line"]), int(m["col"])) == (line, column), lines[0]
    assert what in m["what"], lines[0]
    return m


def error_of(*args: str) -> CliResult:
    return run_cli(*args, expect=2)
