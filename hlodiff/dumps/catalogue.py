"""Dump directories: find the files, group them by module and stage, pick the main program.

A dump holds a module per compilation and several files per module
(hlodiff/dumps/naming.py reads their names). This module lists the files,
groups them, and says which module a user most likely means, reading sizes
first and parsing HLO only when a caller asks for a module.

Nothing here writes into a dump directory.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..errors import HlodiffError
from ..model import Module, runs_backward
from .naming import (AFTER, BEFORE, FOLDER_FILES, HLO_TEXT, IN_PASS, PASS, UNKNOWN, DumpFile,
                     ProgramName, classify, is_framework_helper, jax_module_name, program_name,
                     settle_program, stage_in_name)


# --- modules ----------------------------------------------------------------------

def human_size(size: int) -> str:
    """Bytes in SI units as people read them: ``1.2 MB``, ``40 kB``, ``312 B``."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if size >= scale:
            value = size / scale
            return f"{value:.1f} {unit}" if value < 10 else f"{value:.0f} {unit}"
    return f"{size} B"


@dataclass(frozen=True)
class DumpModule:
    """Every file of one compiled module: one module id and program in one dump.

    ``path`` is the HLO text a caller should read: before_optimizations
    (the program as the user's code built it, where recompile causes show),
    else after_optimizations, else the earliest pass snapshot. Parsing is
    lazy and cached: ``module()`` reads a file on first use only.
    """

    module_id: int | None
    program: str
    timestamp: int | None
    files: tuple[DumpFile, ...]
    root: Path
    _parsed: dict[str, Module] = field(default_factory=dict, compare=False, repr=False)

    @cached_property
    def name(self) -> ProgramName:
        return program_name(self.program)

    @property
    def normalised(self) -> str:
        """The program name with run-dependent counters stripped."""
        return self.name.normalised

    @property
    def hlo_files(self) -> tuple[DumpFile, ...]:
        return tuple(f for f in self.files if f.is_hlo_text)

    def stage_file(self, stage: str) -> DumpFile | None:
        """The HLO text at BEFORE or AFTER, or None when it was not dumped."""
        return next((f for f in self.hlo_files if f.stage is not None and f.stage.name == stage),
                    None)

    @property
    def loaded_from_cache(self) -> bool:
        """Did JAX load this executable from its persistent cache instead of
        compiling it? Such a process dumps the optimized text alone, named
        without a platform (``module_0041.jit_f.after_optimizations.txt``,
        where a compilation writes ``cpu_after_optimizations``), and the
        flags, but no compile input (corpus/gen/HASHES.md, exp. cache_hit)."""
        after = self.stage_file(AFTER)
        return (after is not None and after.stage.platform is None
                and self.stage_file(BEFORE) is None
                and self.program.startswith(("jit_", "pjit_"))
                and any(f.kind == "debug_options" for f in self.files))

    @property
    def passes(self) -> tuple[DumpFile, ...]:
        """HLO text snapshots between passes, in the order XLA took them."""
        steps = [f for f in self.hlo_files
                 if f.stage is not None and f.stage.name in (PASS, IN_PASS)]
        return tuple(sorted(steps, key=lambda f: f.stage.step))

    @property
    def files_by_stage(self) -> dict[str, tuple[DumpFile, ...]]:
        """Files grouped by stage label; files with no stage under ''."""
        groups: dict[str, list[DumpFile]] = {}
        for f in self.files:
            groups.setdefault(f.stage.label if f.stage else "", []).append(f)
        return {label: tuple(files) for label, files in groups.items()}

    @property
    def primary(self) -> DumpFile | None:
        before, after = self.stage_file(BEFORE), self.stage_file(AFTER)
        others = self.passes or self.hlo_files
        return before or after or (others[0] if others else None)

    @property
    def path(self) -> Path | None:
        primary = self.primary
        return None if primary is None else self.root / primary.relative

    def head(self) -> str:
        """The first characters of ``path`` (its compile input where it has
        one), and on to the end of its first line, the ``HloModule`` header: a
        train step's restates every parameter's layout, tens of kB. What the
        environment's traits and the stack frame tables are read from; "" when
        it cannot be read."""
        path = self.path
        if path is None:
            return ""
        try:
            with open(path, encoding="utf-8", errors="replace") as stream:
                head = stream.read(_HEAD_CHARACTERS)
                return head if "\n" in head else head + stream.readline()
        except OSError:
            return ""

    def check_whole(self) -> None:
        """Raise HlodiffError where ``path`` ends inside a computation, as a
        file cut short does: what is read of a module from its head alone
        (which function it traced, its inputs) must not be trusted then, and
        the error is the parser's. XLA ends every module with a computation's
        '}' line (``} // main.9`` in jax 0.4.30's dumps); a file that ends
        otherwise is parsed, and is whole if it parses."""
        path = self.path
        if path is None:
            return
        try:
            with open(path, "rb") as stream:
                stream.seek(max(0, path.stat().st_size - 256))
                tail = stream.read()
        except OSError as err:
            raise HlodiffError(f"{path}: cannot read: {err.strerror}") from None
        if _CLOSED.search(tail):
            return
        from ..syntax.parser import parse_file
        parse_file(path)  # raises the error a diff of it would, at its line and column

    @property
    def size(self) -> int:
        """Bytes of HLO text of ``path``: a cheap measure of how big the program is."""
        primary = self.primary
        return 0 if primary is None else primary.size

    @property
    def stages(self) -> tuple[str, ...]:
        """What was dumped, shortly: ("before", "after", "12 passes")."""
        out = [short for short, stage in (("before", BEFORE), ("after", AFTER))
               if self.stage_file(stage)]
        if self.passes:
            out.append(f"{len(self.passes)} pass" + ("es" if len(self.passes) > 1 else ""))
        return tuple(out)

    def file(self, stage: str | None = None) -> DumpFile:
        """The HLO text file at ``stage`` (BEFORE or AFTER), by default ``path``'s."""
        file = self.primary if stage is None else self.stage_file(stage)
        if file is None:
            raise HlodiffError(f"{self.root}: module {self.label} has no "
                               f"{stage or 'HLO text'} file")
        return file

    def module(self, stage: str | None = None) -> Module:
        """The parsed HLO at ``stage`` (BEFORE or AFTER), by default of ``path``."""
        file = self.file(stage)
        if file.relative not in self._parsed:
            from ..syntax.parser import parse_file
            self._parsed[file.relative] = parse_file(self.root / file.relative)
        return self._parsed[file.relative]

    def parsed(self, stage: str | None = None) -> Module | None:
        """The module at ``stage`` if it was parsed already, else None."""
        return self._parsed.get(self.file(stage).relative)

    @property
    def entry_parameters(self) -> int:
        """How many arguments the program takes, read from the header's
        entry_computation_layout (0 when the header does not say)."""
        return len(self.argument_shapes)

    @cached_property
    def argument_shapes(self) -> tuple[str, ...]:
        """The shape of each argument the program takes, as the header's
        entry_computation_layout prints it (none when it does not say)."""
        if self.path is None:
            return ()
        try:
            with open(self.path, encoding="utf-8", errors="replace") as f:
                head = f.read(_HEADER_BYTES)
        except OSError:
            return ()
        return _argument_shapes(head)

    @property
    def instruction_count(self) -> int:
        """Instructions in ``path`` (parses it on first use)."""
        return self.module().instruction_count

    @property
    def label(self) -> str:
        """``module_0028.jit_train_step`` as users see it in file names; a file
        not named the way XLA names dumps goes by its own name."""
        if self.module_id is None:
            return self.primary.name if self.primary else self.program
        return f"module_{self.module_id:04d}" + (f".{self.program}" if self.program else "")


_HEADER_BYTES = 1 << 20  # a header's entry_computation_layout, even for thousands of arguments
_LAYOUT = "entry_computation_layout={("


def _argument_shapes(head: str) -> tuple[str, ...]:
    """The top-level entries of the parameter tuple of the header's
    ``entry_computation_layout`` (the ``HloModule`` line)."""
    header = head.find("HloModule")
    start = head.find(_LAYOUT, header) if header >= 0 else -1
    if start < 0 or head.find("\n", header, start) >= 0:
        return ()
    start += len(_LAYOUT)
    end = head.find("\n", start)  # the header is one line
    depth, shapes, at = 1, [], start
    for k in range(start, len(head) if end < 0 else end):
        char = head[k]
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
            if depth == 0:
                last = head[at:k].strip()
                return tuple(shapes + [last]) if last or shapes else ()
        elif char == "," and depth == 1:
            shapes.append(head[at:k].strip())
            at = k + 1
    return ()


# How much of a module's text ``DumpModule.head`` reads: the header, the
# stack frame tables and the first instructions.
_HEAD_CHARACTERS = 200_000
# How XLA ends a module: a computation's '}', then its thread and the name
# jax 0.4.30 prints after it (``}, execution_thread="x" // main.9``).
_CLOSED = re.compile(rb'(?:^|\n)\}(?:, execution_thread="[^"\n]*")?(?: //[^\n]*)?\s*$')


@dataclass(frozen=True)
class MainProgram:
    """The module a user most likely means, and why it was picked."""

    module: DumpModule
    reason: str


_FUNCTION_NAMES = re.compile(r"^FunctionNames\n((?:\d+ \".*\"\n)*)", re.M)
_FILE_NAMES = re.compile(r"^FileNames\n((?:\d+ \".*\"\n)*)", re.M)
_TABLE_ROW = re.compile(r'^(\d+) "(.*)"$', re.M)
_LOCATIONS = re.compile(r"^(\d+) \{file_name_id=(\d+) function_name_id=(\d+) line=(\d+)", re.M)


def _functions_of_program(module: DumpModule, head: str) -> dict[int, str] | None:
    """The functions of a jit_ or pjit_ program's frame tables that JAX would
    name the program after (``step``, ``make_scaler.<locals>.step`` for
    ``jit_step``), by their id; None where ``head`` holds no FunctionNames
    table or the program is not named as JAX names its programs."""
    table = _FUNCTION_NAMES.search(head)
    if table is None or not module.program.startswith(("jit_", "pjit_")):
        return None
    api, program = module.program.split("_", 1)[0], module.program.split(".", 1)[0]
    return {int(n): name for n, name in _TABLE_ROW.findall(table.group(1))
            if jax_module_name(api, name.rsplit(".", 1)[-1]) == program}


def compiled_by_framework(module: DumpModule) -> bool:
    """Did JAX compile this program for itself (an eager op, jax.nn.relu or
    jax.random.normal outside jit)? The name says first
    (naming.is_framework_helper: ``jit__normal``, ``jit_concatenate``). But a
    user's function can have such a name (``self._train_step`` is
    ``jit__train_step``), and JAX leaves its own code out of the stack frames
    it records: where a module has frame tables and they hold a function of
    the program's name, the program is the user's. (A library's program can
    be missing from them: flax leaves its own frames out too, so its
    ``jit_init`` is told by its name, as a user's.)"""
    if not is_framework_helper(module.program):  # which also says it is jit_ or pjit_
        return False
    return not _functions_of_program(module, module.head())


def traced_function(module: DumpModule) -> frozenset[tuple[str, str, int]] | None:
    """Which Python function a JAX program traced, as its frame tables name
    it: (file, qualified name, 0) for each function of the program's name,
    the line instead of 0 for a lambda (every lambda is ``<lambda>``). Two
    modules named ``jit_step`` or ``jit__lambda`` are one program compiled
    twice only where this agrees: ``make_scaler.<locals>.step`` and a
    module-level ``step`` are two functions, as are two lambdas. None where
    the module has no frame tables or none holds such a function."""
    head = module.head()
    functions = _functions_of_program(module, head)
    if not functions:
        return None
    files_table = _FILE_NAMES.search(head)
    files = dict(_TABLE_ROW.findall(files_table.group(1))) if files_table else {}
    found = {(files.get(file_id, "?"), functions[int(function_id)],
              int(line) if functions[int(function_id)].endswith("<lambda>") else 0)
             for _, file_id, function_id, line in _LOCATIONS.findall(head)
             if int(function_id) in functions}
    return frozenset(found) or None


def computes_gradients(module: DumpModule) -> bool:
    """Does the module's compile input (else its only file) run a backward pass?"""
    return runs_backward(module.path)


@dataclass(frozen=True)
class Dump:
    """A dump directory (or one HLO file) read by name: its files and modules.

    ``modules`` are ordered by module id; ``unknown`` are files whose names
    XLA does not write, kept so a listing can show them. ``root`` is the
    folder files are named relative to; ``file`` the one HLO text file read
    where a file stands for the dump.
    """

    root: Path
    files: tuple[DumpFile, ...]
    modules: tuple[DumpModule, ...]
    file: Path | None = None

    @property
    def path(self) -> Path:
        """What was read, as the user named it: the dump folder, or the one file."""
        return self.file or self.root

    @property
    def unknown(self) -> tuple[DumpFile, ...]:
        return tuple(f for f in self.files if f.kind == UNKNOWN)

    @cached_property
    def main(self) -> MainProgram:
        """The program a user most likely means: the step that takes the most
        arguments among the programs the user jitted, the largest of those.

        Programs the framework compiles for itself (JAX's eager primitives
        and private helpers: jit_convert_element_type, jit__normal) are never
        the main program while a function the user jitted is there. Among
        the user's, one that computes gradients is a training step, the
        program a recompile costs most (an EMA of the weights can take more
        arguments). Then a training or inference step takes the model's
        parameters (and optimizer state, and a batch) as arguments, where an
        initialiser takes a key and returns them: the most entry parameters
        first. An initialiser's program can be the largest text (flax's
        model.init is), so size only breaks ties, as the Graphcore guide
        advises for finding the model. Sizes compare before_optimizations
        text where a module has it.
        """
        candidates = [m for m in self.modules if m.primary is not None]
        for module in candidates:  # what cannot be read cannot be ranked: said, not passed over
            _readable(module.path)
        own = {id(m) for m in candidates if compiled_by_framework(m)}
        users = [m for m in candidates if id(m) not in own]
        # read only where it can decide: between programs of the user's
        learning = {id(m) for m in users if computes_gradients(m)} if len(users) > 1 else set()
        ranked = sorted(candidates, key=lambda m: (id(m) not in own,
                                                   id(m) in learning, m.entry_parameters,
                                                   m.stage_file(BEFORE) is not None, m.size),
                        reverse=True)
        best = ranked[0]
        what = best.primary.stage.name if best.primary.stage else "HLO"
        what = "pass snapshot" if what in (PASS, IN_PASS) else what
        if len(ranked) == 1:
            return MainProgram(best, f"the only module with HLO text ({human_size(best.size)})")
        users = [m for m in ranked if id(m) not in own]
        helpers = len(ranked) - len(users)
        not_counted = f"; {helpers} program{'s' if helpers != 1 else ''} JAX compiled for " \
                      "itself not counted" if helpers and users else ""
        runner_up = (users if users and best in users else ranked)[1:2]
        if not runner_up:
            return MainProgram(best, f"the only program the user compiled "
                                     f"({human_size(best.size)}){not_counted}")
        other = runner_up[0]
        if id(best) in learning and id(other) not in learning:
            return MainProgram(best, f"computes gradients, a training step ({what} text "
                                     f"{human_size(best.size)}, {best.entry_parameters} "
                                     f"arguments); next {other.normalised or other.label}, "
                                     f"which does not{not_counted}")
        if best.entry_parameters != other.entry_parameters:
            return MainProgram(best, f"takes the most arguments ({best.entry_parameters}), "
                                     f"{what} text {human_size(best.size)}; next "
                                     f"{other.normalised or other.label} with "
                                     f"{other.entry_parameters}{not_counted}")
        tie = " (a tie: the first compiled was chosen)" if other.size == best.size else ""
        return MainProgram(best, f"largest {what} text: {human_size(best.size)}, next "
                                 f"{other.normalised or other.label} "
                                 f"{human_size(other.size)}{tie}{not_counted}")

    def main_program(self) -> DumpModule:
        """The module a user most likely means (see ``main``)."""
        return self.main.module

    @property
    def main_reason(self) -> str:
        return self.main.reason


def _readable(path: Path) -> None:
    """Raise the one-line error for a file that cannot be opened (mode 000:
    the training step lost the main program's place to jit_init_params,
    read as taking no arguments, and baseline recorded that, exit 0)."""
    try:
        with open(path, "rb"):
            pass
    except OSError as err:
        raise HlodiffError(f"{path}: cannot read: {err.strerror}") from None


def _walk(root: Path) -> Iterator[tuple[str, int]]:
    """(path relative to root, size) of every file under root.

    Symlinked folders are not entered: XLA never writes links, and one can
    point anywhere, even back at a parent (a loop).
    """
    pending = [""]
    while pending:
        relative = pending.pop()
        try:
            entries = sorted(os.scandir(root / relative), key=lambda e: e.name)
        except OSError as err:
            if not relative:
                raise HlodiffError(f"{root}: cannot read: {err.strerror}") from None
            continue
        for entry in entries:
            inner = f"{relative}/{entry.name}" if relative else entry.name
            try:
                if entry.is_dir(follow_symlinks=False):
                    pending.append(inner)
                elif entry.is_file():
                    yield inner, entry.stat().st_size
            except OSError:
                continue  # vanished or dangling while we looked: not part of the dump


def _group(files: Iterable[DumpFile], root: Path) -> tuple[DumpModule, ...]:
    """Files of one module id and program together.

    Not keyed by timestamp: XLA prefixes HLO files with it but writes
    ``debug_options`` and the module folder without.
    """
    files = list(files)
    known: dict[int, set[str]] = {}
    for f in files:
        if f.module_id is not None and (f.stage is not None or f.kind in FOLDER_FILES):
            known.setdefault(f.module_id, set()).add(f.program)
    groups: dict[tuple[int, str], list[DumpFile]] = {}
    for f in files:
        if f.module_id is None:
            continue
        if f.stage is None and f.kind not in FOLDER_FILES:
            f = settle_program(f, known.get(f.module_id, set()))
        groups.setdefault((f.module_id, f.program or ""), []).append(f)
    return tuple(DumpModule(module_id, program,
                            next((f.timestamp for f in members if f.timestamp), None),
                            tuple(members), root)
                 for (module_id, program), members in sorted(groups.items()))


def _require_hlo(dump: Dump, what: str) -> Dump:
    if not any(m.primary is not None for m in dump.modules):
        raise HlodiffError(f"{dump.root}: no HLO text among {len(dump.files)} files {what}"
                           " (expected names like module_0001.jit_f.before_optimizations.txt)")
    return dump


def load_dump(path: str | Path) -> Dump:
    """Read a ``--xla_dump_to`` directory by file name (no HLO is parsed here).

    Raises HlodiffError for a missing path, a file, an empty directory and
    a directory with no HLO text. ``load_target`` also accepts one file.
    """
    root = Path(path)
    if not root.exists():
        raise HlodiffError(f"{root}: no such file or directory")
    if not root.is_dir():
        raise HlodiffError(f"{root}: not a directory (expected an --xla_dump_to directory)")
    files = tuple(classify(relative, size) for relative, size in _walk(root))
    if not files:
        raise HlodiffError(f"{root}: empty directory (expected files written by "
                           "XLA_FLAGS=--xla_dump_to)")
    _one_run(root, files)
    return _require_hlo(Dump(root, files, _group(files, root)), "in this directory")


def _one_run(root: Path, files: Iterable[DumpFile]) -> None:
    """A dump is one run: XLA writes its HLO files side by side. HLO files in
    several folders are several runs (a case folder with run_a/ and run_b/),
    whose modules would mix; say which folders to give instead."""
    folders = sorted({f.relative.rpartition("/")[0] for f in files
                      if f.kind == HLO_TEXT and f.module_id is not None})
    if len(folders) < 2:
        return
    shown = ", ".join(f"{folder or '.'}/" for folder in folders[:4])
    more = f" and {len(folders) - 4} more" if len(folders) > 4 else ""
    example = " ".join(str(root / folder) for folder in folders[:2])
    raise HlodiffError(f"{root}: holds the dumps of {len(folders)} runs ({shown}{more}), not "
                       f"one: give one folder per run, e.g. hlodiff diff {example}")


def file_dump(path: str | Path) -> Dump:
    """One HLO text file seen as a dump of one module, for commands that take files too."""
    path = Path(path)
    if not path.exists():
        raise HlodiffError(f"{path}: no such file or directory")
    if path.is_dir():
        raise HlodiffError(f"{path}: is a directory, expected an HLO text file")
    file = classify(path.name, path.stat().st_size)
    if file.kind != HLO_TEXT:  # not named as XLA names dump files; its stage may still be
        file = DumpFile(path.name, HLO_TEXT, program=_module_name(path) or path.name.split(".")[0],
                        stage=stage_in_name(path.name), size=file.size)
    module = DumpModule(file.module_id, file.program or "", file.timestamp, (file,), path.parent)
    return Dump(path.parent, (file,), (module,), file=path)


_HLO_MODULE = re.compile(r"\s*HloModule\s+([^\s,]+)")


def _module_name(path: Path) -> str | None:
    """The name a file's ``HloModule`` header gives its program (``jit_train_step``
    in a ``model.hlo``), or None where it has none (the file's name stands in)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            found = _HLO_MODULE.match(stream.readline(4096).lstrip("\ufeff"))
    except OSError:
        return None
    return found.group(1) if found else None


def load_target(path: str | Path) -> Dump:
    """A dump directory, or a single HLO text file, as a Dump."""
    path = Path(path)
    return load_dump(path) if path.is_dir() else file_dump(path)


# --- listing ------------------------------------------------------------------------

@dataclass(frozen=True)
class ListedModule:
    """One row of ``hlodiff ls``: a module, its size and (when counted) instructions."""

    module: DumpModule
    is_main: bool
    instructions: int | None = None
    error: str | None = None  # why the instructions could not be counted


@dataclass(frozen=True)
class Listing:
    """What ``hlodiff ls`` shows: every module of a dump and which is the main program."""

    dump: Dump
    rows: tuple[ListedModule, ...]
    main: MainProgram


def count_instructions(path: Path) -> int:
    """Instructions in the HLO text file at ``path``: a pool reader (hlodiff/dumps/pool.py)."""
    from ..syntax.parser import parse_file
    return parse_file(path).instruction_count


def list_dump(dump: Dump, *, count: bool = True,
              on_module: Callable[[DumpModule], None] | None = None) -> Listing:
    """Rows for every module; with ``count`` each module's HLO is parsed once.

    ``on_module`` is called after each module is read, for a progress bar.
    A module that does not parse keeps its row with the error instead of a
    count: one bad file must not hide the rest of a listing.
    """
    main = dump.main
    counted = [m for m in dump.modules if count and m.primary is not None]
    outcomes: dict[int, tuple] = {}
    if counted:
        from .pool import read_files  # big dumps: on every core
        done = None if on_module is None else (lambda i: on_module(counted[i]))
        answers = read_files(count_instructions, [m.path for m in counted], on_read=done)
        outcomes = {id(m): outcome for m, outcome in zip(counted, answers)}
    rows = [ListedModule(module, module is main.module, *outcomes.get(id(module), (None, None)))
            for module in dump.modules]
    return Listing(dump, tuple(rows), main)
