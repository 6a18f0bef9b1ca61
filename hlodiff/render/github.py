"""GitHub Actions workflow commands: one annotation per finding that moves a cache key.

GitHub shows ``::error file=F,line=L,title=T::message`` lines of a job's
log on the pull request's diff at F:L; without a file it shows them on the
run summary. Values are escaped as the runner expects (``%``, CR and LF in
messages; also ``:`` and ``,`` in properties; see ``escape``), so text from
a dump can never end an annotation and start a command of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import TextIO

from ..analysis.explain import Report
from .escape import annotation_data, annotation_property
from .report import describe, verdict_line


def annotations(report: Report, stream: TextIO, *, subject: str) -> None:
    """Annotations for ``report``; ``subject`` says what was checked against what."""
    if report.same_executable is True:
        message = annotation_data(subject + ": " + verdict_line(report))
        stream.write(f"::notice title=hlodiff::{message}\n")
        return
    moving = [f for f in report.findings if f.moves_a_hash or f.kind == "elided_constant"]
    for finding in moving or report.findings[:1]:
        origin = finding.origin
        where = []
        if origin.source_file:
            where.append(f"file={annotation_property(_in_workspace(origin.source_file))}")
            if origin.source_line:
                where.append(f"line={origin.source_line}")
        level = "error" if finding.moves_a_hash else "warning"
        moves = ", ".join(finding.affects) or "no cache key for certain"
        message = f"{subject}: {describe(finding)}; moves {moves}"
        if finding.count > 1:
            message += f" ({finding.count} places)"
        props = ",".join(where + ["title=hlodiff: executable changed"])
        stream.write(f"::{level} {props}::{annotation_data(message)}\n")


def _in_workspace(path: str) -> str:
    """GitHub places annotations by paths relative to the checkout (the working directory)."""
    try:
        return str(Path(path).relative_to(Path.cwd()))
    except ValueError:
        return path
