"""A program's snapshot file, for the ``hlo_snapshot`` pytest fixture.

A snapshot is the program as XLA prints it, under a header of ``//``
comments, so it is at once a file for code review and an HLO file: XLA's
parser and ``hlodiff diff`` read it as it is. The header says what wrote it
(the schema version, the test, the program, its stage, the framework), and
for JAX the sha256 of every constant with more than one element, taken from
JAX's StableHLO: XLA prints a constant of more than 10 elements as
``{...}``, and these digests are what decides later whether its values
changed, as a dump's module.mlir does, without putting megabytes of values
into the file. Source paths and call stacks are made machine-independent
(hlodiff/integrations/portable.py), so a snapshot written on one machine
checks on another, and under any test runner.

``check`` compares a snapshot with a fresh capture of the program the way
``hlodiff diff`` compares two dumps (hlodiff/integrations/inputs.py).
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from ..analysis.explain import Finding, Report
from ..dumps import AFTER, BEFORE, normalise_program
from ..dumps.mlir import constants_in
from ..errors import HlodiffError, HloSyntaxError
from .capture import Capture
from .inputs import compare
from .portable import portable

SCHEMA_VERSION = 1
_FIRST = re.compile(r"// hlodiff snapshot, schema (\d+)\b")
_CONSTANT = re.compile(r"tensor<([^<>]+)> sha256:([0-9a-f]{64})")
_HEADER_LINE = re.compile(r"(\s*HloModule\s+)([^\s,]+)")
_CONSTANTS_HEADING = "constants of more than one element, by sha256 of their values in " \
                     "JAX's StableHLO"


class SnapshotError(HlodiffError):
    """A snapshot file that cannot be used: never overwritten, the user decides."""


@dataclass(frozen=True)
class Snapshot:
    """One snapshot file's content.

    ``constants`` holds (tensor type, sha256) pairs, by type and in StableHLO
    order within a type, or None when the framework gave no StableHLO (then
    constants printed as ``{...}`` cannot be compared).
    """

    test: str
    program: str
    stage: str
    framework: str
    constants: tuple[tuple[str, str], ...] | None
    hlo: str

    @property
    def text(self) -> str:
        """The file as written: the header, then the HLO."""
        lines = [f"// hlodiff snapshot, schema {SCHEMA_VERSION}: written by pytest "
                 "--hlo-snapshot-update; review it like code",
                 f"// test: {self.test}", f"// program: {self.program}",
                 f"// stage: {self.stage}", f"// framework: {self.framework}"]
        if self.constants is not None:
            lines.append(f"// {_CONSTANTS_HEADING}: {len(self.constants)}")
            lines += [f"// tensor<{tensor}> sha256:{digest}" for tensor, digest in self.constants]
        return "\n".join(lines) + "\n" + self.hlo

    @property
    def mlir(self) -> str | None:
        """The digests as StableHLO constants: what hlodiff reads from a module.mlir."""
        if self.constants is None:
            return None
        return "".join(f'%c{n} = stablehlo.constant dense<"0x{digest}"> : tensor<{tensor}>\n'
                       for n, (tensor, digest) in enumerate(self.constants))

    def as_capture(self) -> Capture:
        """The snapshot as a program to compare, its stage as recorded."""
        return _staged(self.program, self.stage, self.text, self.mlir, self.framework)


def _staged(program: str, stage: str, text: str, mlir: str | None, framework: str) -> Capture:
    field = {BEFORE: "before", AFTER: "after"}.get(stage, "text")
    return Capture(program, mlir=mlir, framework=framework, **{field: text})


def taken(captured: Capture, test: str, root: Path) -> Snapshot:
    """The snapshot of ``captured`` for ``test``: its earliest stage, made the
    same on every machine (hlodiff/integrations/portable.py), constants by digest."""
    stage, text = captured.first
    constants = None
    if captured.mlir is not None:
        constants = tuple((tensor, _digest(value))
                          for tensor, values in constants_in(captured.mlir).items()
                          if _elements(tensor) > 1 for value in values)
    return Snapshot(test, captured.program, stage or "hlo", captured.framework or "unknown",
                    constants, portable(text, root))


def _digest(value: str) -> str:
    return hashlib.sha256(" ".join(value.split()).encode()).hexdigest()


def _elements(tensor: str) -> int:
    count = 1
    for dimension in tensor.split("x")[:-1]:
        count *= int(dimension) if dimension.isdigit() else 2  # a dynamic size: not a scalar
    return count


def read(path: Path) -> Snapshot:
    """The snapshot at ``path``; SnapshotError when it is not one this hlodiff
    reads, its header or its HLO (a merge conflict left in it, a cut-off file)."""
    from ..syntax.parser import parse as parse_hlo
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise SnapshotError(f"{path}: cannot read the snapshot ({err})") from None
    recorded = _parse(text, path)
    try:
        parse_hlo(text, path=str(path), strict=True)
    except HloSyntaxError as err:
        raise SnapshotError(f"corrupt snapshot: {err}\ndelete it and run pytest "
                            "--hlo-snapshot-update to write it anew") from None
    return recorded


def _parse(text: str, path: Path) -> Snapshot:
    lines = text.split("\n")
    first = _FIRST.match(lines[0])
    if first is None:
        raise SnapshotError(f"{path}: not an hlodiff snapshot (its first line should be "
                            f"'// hlodiff snapshot, schema {SCHEMA_VERSION}'); "
                            "delete it and run pytest --hlo-snapshot-update to write it anew")
    if int(first.group(1)) > SCHEMA_VERSION:
        raise SnapshotError(f"{path}: written by a newer hlodiff (snapshot schema "
                            f"{first.group(1)}; this hlodiff reads schema {SCHEMA_VERSION}): "
                            "upgrade hlodiff")
    fields: dict[str, str] = {}
    constants: list[tuple[str, str]] | None = None
    count = 0
    n = 1
    while n < len(lines) and lines[n].startswith("// "):
        line = lines[n][3:]
        digest = _CONSTANT.fullmatch(line)
        if line.startswith(_CONSTANTS_HEADING + ": "):
            constants, count = [], _number(line.rpartition(": ")[2], path, n)
        elif digest is not None and constants is not None:
            constants.append((digest.group(1), digest.group(2)))
        else:
            key, sep, value = line.partition(": ")
            if not sep:
                raise _corrupt(path, n, f"unexpected header line {lines[n]!r}")
            fields[key] = value
        n += 1
    missing = [k for k in ("test", "program", "stage", "framework") if k not in fields]
    if missing:
        raise _corrupt(path, n, f"the header has no {', '.join(missing)}")
    if constants is not None and len(constants) != count:
        raise _corrupt(path, n, f"the header lists {len(constants)} of {count} constants")
    return Snapshot(fields["test"], fields["program"], fields["stage"], fields["framework"],
                    None if constants is None else tuple(constants), "\n".join(lines[n:]))


def _number(text: str, path: Path, n: int) -> int:
    if not text.isdigit():
        raise _corrupt(path, n, f"{text!r} is not a count")
    return int(text)


def _corrupt(path: Path, index: int, what: str) -> SnapshotError:
    return SnapshotError(f"{path}:{index + 1}: corrupt snapshot: {what}; delete it and run "
                         "pytest --hlo-snapshot-update to write it anew")


def write(snapshot: Snapshot, path: Path) -> None:
    """Write atomically: a parallel worker or an interrupted run never leaves half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as f:
            f.write(snapshot.text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


@dataclass(frozen=True)
class Checked:
    """A program checked against its snapshot.

    ``outcome`` is ``changed`` when there are ``causes`` (the findings the
    compiler sees, and with ``metadata`` op_name and source-line changes
    too), else ``undecided`` when some findings are constants XLA printed as
    ``{...}`` whose values nothing recorded (``undecided``), else ``same``:
    metadata alone (a renamed scope, a moved line) passes by default.
    """

    outcome: str
    report: Report
    snapshot: Snapshot
    now: Snapshot
    causes: tuple[Finding, ...] = ()
    undecided: tuple[Finding, ...] = ()


def check(path: Path, current: Snapshot, *, metadata: bool = False) -> Checked:
    """``current`` against the snapshot at ``path``, explained as ``hlodiff diff`` would."""
    recorded = read(path)
    if current.stage != recorded.stage:
        raise SnapshotError(f"{path}: the snapshot holds the {recorded.stage} program, this "
                            f"check gives {current.stage}: run pytest --hlo-snapshot-update")
    if normalise_program(current.program) == normalise_program(recorded.program):
        # TensorFlow and PyTorch/XLA number programs by what the process traced before
        current = replace(current, program=recorded.program,
                          hlo=_HEADER_LINE.sub(lambda m: m.group(1) + recorded.program,
                                               current.hlo, count=1))
    report, _, _ = compare(recorded.as_capture(), current.as_capture(),
                           labels=(f"snapshot {path.name}", "this run"))
    undecided = [f for f in report.findings if f.kind == "elided_constant" and not f.moves_a_hash]
    causes = [f for f in report.findings
              if f not in undecided and (metadata or f.kind != "metadata")]
    outcome = "changed" if causes else "undecided" if undecided else "same"
    return Checked(outcome, report, recorded, current, tuple(causes), tuple(undecided))
