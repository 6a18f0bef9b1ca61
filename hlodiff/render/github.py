"""GitHub Actions workflow commands: one annotation per finding that moves a cache key.

GitHub shows ``::error file=F,line=L,title=T::message`` lines of a job's
log on the pull request's diff at F:L; without a file it shows them on the
run summary. Values are escaped as the runner expects (``%``, CR and LF in
messages; also ``:`` and ``,`` in properties).
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from ..analysis.explain import Report
from .report import describe, verdict_line


def annotations(report: Report, stream: TextIO, *, subject: str) -> None:
    """Annotations for ``report``; ``subject`` says what was checked against what."""
    if report.same_executable is True:
        stream.write(f"::notice title=hlodiff::{_data(subject + ': ' + verdict_line(report))}\n")
        return
    moving = [f for f in report.findings if f.moves_a_hash or f.kind == "elided_constant"]
    for finding in moving or report.findings[:1]:
        origin = finding.origin
        where = []
        if origin.source_file:
            where.append(f"file={_property(_in_workspace(origin.source_file))}")
            if origin.source_line:
                where.append(f"line={origin.source_line}")
        level = "error" if finding.moves_a_hash else "warning"
        moves = ", ".join(finding.affects) or "no cache key for certain"
        message = f"{subject}: {describe(finding)}; moves {moves}"
        if finding.count > 1:
            message += f" ({finding.count} places)"
        props = ",".join(where + ["title=hlodiff: executable changed"])
        stream.write(f"::{level} {props}::{_data(message)}\n")


def _in_workspace(path: str) -> str:
    """GitHub places annotations by paths relative to the checkout (the working directory)."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")
