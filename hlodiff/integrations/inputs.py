"""Two programs from anywhere compared as ``hlodiff diff`` compares two dumps.

``compare`` takes, for each side, a dump directory or HLO file (a path),
HLO text, an ``hlodiff.Module``, a framework object ``capture`` reads, or a
``Capture``. A capture is written into a private temporary directory laid
out as XLA lays out a dump (``module_0000.NAME.before_optimizations.txt``,
``...after_optimizations.txt``, ``module_0000.NAME/module.mlir``) and read
back by the same code that reads dumps: a capture and a dump of one program
give the same findings, with the same origins and source lines.
"""

from __future__ import annotations

import os
import re
import tempfile
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Iterator

from ..analysis.compare import compare_dumps
from ..analysis.explain import Report
from ..dumps import AFTER, BEFORE, Dump, file_dump, load_dump, load_target
from .capture import Capture, capture, looks_like_hlo

_UNSAFE = re.compile(r"[^\w.\-]")


@dataclass(frozen=True)
class Side:
    """One side of a comparison: what the caller gave, said shortly, and its dump."""

    label: str
    dump: Dump
    is_directory: bool
    capture: Capture | None = None


def describe(program: Any, captured: Capture | None = None) -> str:
    """What a user gave, in a few words: a path as written; else the program's
    name and where it came from (``jit_step (jax.stages.Lowered)``)."""
    if captured is None:
        return os.fspath(program)
    if isinstance(program, Capture):
        source = f"{program.framework} capture" if program.framework else "capture"
    elif isinstance(program, str):
        source = "HLO text"
    else:  # a framework object, or a list of tensors
        kind = type(program[0] if isinstance(program, (list, tuple)) and program else program)
        source = f"{kind.__module__}.{kind.__qualname__}".replace("jax._src.stages.",
                                                                  "jax.stages.")
    return f"{captured.program} ({source})"


def is_path(program: Any) -> bool:
    """A path names a dump or file; a string is a path unless it looks like HLO text
    (``capture.looks_like_hlo``)."""
    return isinstance(program, os.PathLike) or isinstance(program, str) and \
        not looks_like_hlo(program)


@contextmanager
def opened(program: Any, label: str | None = None) -> Iterator[Side]:
    """``program`` as a dump that lives for the ``with`` block (a path is read in
    place), named ``label`` or as ``describe`` says."""
    if is_path(program):
        path = Path(program)
        yield Side(label or describe(program), load_target(path), path.is_dir())
        return
    captured = capture(program)
    with tempfile.TemporaryDirectory(prefix="hlodiff-capture-") as folder:
        yield Side(label or describe(program, captured), written(captured, Path(folder)), False,
                   captured)


def written(captured: Capture, root: Path) -> Dump:
    """``captured`` written into ``root`` the way XLA writes a dump, read back as one."""
    name = _UNSAFE.sub("_", captured.program).lstrip(".") or "program"
    if captured.text is not None and captured.before is None and captured.after is None:
        path = root / f"{name}.hlo"  # no stage known: a lone HLO file, as `hlodiff diff FILE` reads
        path.write_text(captured.text, encoding="utf-8")
        return file_dump(path)
    stem = f"module_0000.{name}"
    for stage, text in ((BEFORE, captured.before), (AFTER, captured.after)):
        if text is not None:
            (root / f"{stem}.{stage}.txt").write_text(text, encoding="utf-8")
    if captured.mlir is not None:
        (root / stem).mkdir()
        (root / stem / "module.mlir").write_text(captured.mlir, encoding="utf-8")
    return load_dump(root)


def compare(a: Any, b: Any, *, select: str | None = None, context: bool = False,
            labels: tuple[str | None, str | None] = (None, None)) -> tuple[Report, str, str]:
    """The report for ``a`` against ``b``, and how each side is named (by
    ``labels`` where given, else as ``describe`` says). ``context`` adds each
    finding's lines and neighbourhood, read while the captures' files exist.

    Two dump directories are compared as ``hlodiff diff`` does (modules
    compiled in one run only are reported); anything else pairs the main
    programs. File paths in the report that point into a capture's
    temporary directory are replaced by what was captured.
    """
    with ExitStack() as stack:
        side_a, side_b = (stack.enter_context(opened(x, label)) for x, label in zip((a, b), labels))
        report = compare_dumps(side_a.dump, side_b.dump, select=select, context=context,
                               unpaired=side_a.is_directory and side_b.is_directory)
        return _named(report, side_a, side_b), side_a.label, side_b.label


def _named(report: Report, *sides: Side) -> Report:
    """A capture's temporary files and module labels said as what was captured
    (``jit_step (jax.stages.Lowered)``)."""
    roots = [(str(side.dump.root), side.label) for side in sides if side.capture is not None]
    name_a, name_b = ({module.label: side.label for module in side.dump.modules}
                      if side.capture is not None else {} for side in sides)

    def path(value):
        return next((label for root, label in roots
                     if isinstance(value, str) and value.startswith(root)), value)

    stages = {stage: {key: path(value) if key in ("a", "b") else value
                      for key, value in info.items()}
              for stage, info in report.stages.items()}
    modules = tuple(replace(m, a=name_a.get(m.a, m.a), b=name_b.get(m.b, m.b))
                    for m in report.modules)
    programs = tuple(replace(p, a=name_a.get(p.a, p.a), b=name_b.get(p.b, p.b))
                     for p in report.programs)
    return replace(report, stages=stages, modules=modules, programs=programs)
