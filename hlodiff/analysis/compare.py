"""The whole job for two runs: pair modules, diff each stage, explain.

``compare(a, b)`` takes two dump directories or two HLO files and returns
the ``Report`` the ``diff`` command renders. Parsing, pairing and aligning
are imported when a diff is computed: a repeated diff, read back from the
cache, costs only start-up, and they (Lark, rapidfuzz) are most of it.
"""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from .diff import Change, diff_modules
from ..dumps import AFTER, BEFORE, HLO_TEXT, Dump, DumpModule, load_target
from .explain import ModulePairing, Report, StageDiff, explain
from ..dumps.mlir import describe_difference, mlir_type, read_constants
from ..model import Module, Origin

if TYPE_CHECKING:
    from ..syntax.unchanged import Seed

Step = Callable[[str], None]  # told what compare is about to do, for a progress display


def _quiet(_: str) -> None:
    """The default progress callback: nothing to say."""


def compare(a: str | Path, b: str | Path, *, select: str | None = None,
            all: bool = False, cache: bool = False, step: Step = _quiet,
            say: Step = _quiet) -> Report:
    """Why the programs in ``a`` and ``b`` differ (see ``explain.Report``).

    With ``cache``, a diff of files already diffed once is read back from
    the user's cache (see hlodiff/cache.py) instead of being redone; ``say``
    hears why a cache entry was not used.
    """
    dump_a, dump_b = load_target(a), load_target(b)
    unpaired = Path(a).is_dir() and Path(b).is_dir()
    if not cache:
        return compare_dumps(dump_a, dump_b, select=select, all=all, unpaired=unpaired, step=step)
    from .. import cache as results
    named, by_content = _cache_inputs([dump_a, dump_b])
    entry = results.key("compare", (select, all, unpaired), named, by_content)
    report = results.load(entry, Report, say)
    if report is None:
        report = compare_dumps(dump_a, dump_b, select=select, all=all, unpaired=unpaired,
                               step=step)
        results.store(entry, report)
    return report


# Files a diff reads: by content. Other files take part in pairing only: by name and size.
_READ_BY_CONTENT = frozenset({HLO_TEXT, "module.mlir", "debug_options"})


def _cache_inputs(dumps: list[Dump]) -> tuple[list[str], list[Path]]:
    """What a diff of ``dumps`` depends on, as plain data for the cache key:
    every file's name and size, and the files it reads, to hash by content."""
    named: list[str] = []
    by_content: list[Path] = []
    for dump in dumps:
        named.append("\0dump")
        for file in sorted(dump.files, key=lambda f: f.relative):
            read = file.kind in _READ_BY_CONTENT
            named.append(f"{file.relative}\0{file.size}\0{int(read)}")
            if read:
                by_content.append(dump.root / file.relative)
    return named, by_content


def compare_dumps(dump_a: Dump, dump_b: Dump, *, select: str | None = None, all: bool = False,
                  unpaired: bool = True, step: Step = _quiet) -> Report:
    """``compare`` for dumps already loaded (a baseline rebuilds one from text).

    ``unpaired`` reports modules compiled in one run only; off when one
    side holds only the modules a caller chose to keep.
    """
    from ..dumps.pairing import pair_dumps
    pairing = pair_dumps(dump_a, dump_b, select=select, all=all)
    stages: list[StageDiff] = []
    extra: list[Change] = []
    for pair in pairing.pairs:
        stages.extend(_decide_elided(_stage_diffs(pair.a, pair.b, step), pair.a, pair.b))
        extra += _debug_option_changes(pair.a, pair.b)
    if unpaired:
        extra += [_module_change("module_removed", m) for m in pairing.only_a]
        extra += [_module_change("module_added", m) for m in pairing.only_b]
    modules = tuple(ModulePairing(p.a.label, p.b.label, p.how) for p in pairing.pairs)
    step("explaining")
    report = explain(stages, extra, modules)
    return replace(report, notes=tuple(_other_modules_differ(pairing.others)))


def _other_modules_differ(others) -> list[str]:
    """Modules compared by nobody that differ anyway: the recompile may be there.

    Only the text is compared (byte for byte, before optimization where
    dumped), which is cheap: modules left out are the smaller ones.
    """
    notes = []
    for pair in others:
        file_a = pair.a.stage_file(BEFORE) or pair.a.primary
        file_b = pair.b.stage_file(BEFORE) or pair.b.primary
        if file_a is None or file_b is None:
            continue
        try:
            same = (pair.a.root / file_a.relative).read_bytes() == \
                (pair.b.root / file_b.relative).read_bytes()
        except OSError:
            continue
        if not same:
            notes.append(f"{pair.a.normalised or pair.a.label} also differs between the runs: "
                         f"hlodiff diff --module '{pair.a.normalised}' to explain it")
    return notes


def _stage_diffs(a: DumpModule, b: DumpModule, step: Step) -> list[StageDiff]:
    """Diffs at every stage both modules were dumped at (or their only files)."""
    from .align import align
    shared = [s for s in (BEFORE, AFTER) if a.stage_file(s) and b.stage_file(s)]
    out = []
    for stage in shared or [None]:
        what = stage or "HLO"
        step(f"reading {a.label} and {b.label} {what}")
        ma, mb, seed = _read_pair(a, b, stage)
        step(f"aligning and diffing {what}")
        if stage is None:
            stage = a.primary.stage.name if a.primary and a.primary.stage else "hlo"
        out.append(StageDiff(stage, ma, mb, diff_modules(ma, mb, align(ma, mb, seed))))
    return out


def _read_pair(a: DumpModule, b: DumpModule, stage: str | None) -> tuple[Module, Module, Seed]:
    """Both modules at ``stage``; on big files, what they share left unparsed
    and paired already (see hlodiff/syntax/unchanged.py)."""
    from ..syntax import unchanged
    from ..syntax.parser import read_text
    from ..syntax.unchanged import Seed, parse_pair
    ma, mb = a.parsed(stage), b.parsed(stage)
    if ma is not None or mb is not None:  # read whole already (to pair the modules)
        return a.module(stage), b.module(stage), Seed()
    path_a, path_b = a.root / a.file(stage).relative, b.root / b.file(stage).relative
    return parse_pair(read_text(path_a), read_text(path_b), str(path_a), str(path_b),
                      min_bytes=unchanged.MIN_BYTES)



def _decide_elided(stages: list[StageDiff], a: DumpModule, b: DumpModule) -> list[StageDiff]:
    """Settle constants both runs printed as ``{...}`` where the dumps allow it.

    After optimization such constants are folded from the compile input, so
    when the before_optimizations stage was compared they add nothing. Before
    optimization, JAX's module.mlir (when both runs have it) holds the values.
    """
    has_before = any(s.stage == BEFORE for s in stages)
    mlir_a, mlir_b = _mlir_constants(a), _mlir_constants(b)
    for stage in stages:
        kept = []
        for change in stage.changes:
            if change.kind != "elided_constant":
                kept.append(change)
            elif stage.stage == AFTER and has_before or _same_file(stage):
                continue  # folded from the compared input / one file against itself
            elif mlir_a is not None and mlir_b is not None:
                shape = stage.b.computation(change.computation).by_name[change.b].shape
                tensor = mlir_type(shape)
                difference = describe_difference(tensor, mlir_a.get(tensor, []),
                                                 mlir_b.get(tensor, []))
                if difference:
                    kept.append(replace(change, values_differ=True, detail=difference))
            else:
                kept.append(change)
        stage.changes = kept
    return stages


def _same_file(stage: StageDiff) -> bool:
    """Both sides read from one file: whatever its {...} hold, they are equal."""
    try:
        return stage.a.path is not None and stage.b.path is not None and \
            Path(stage.a.path).samefile(stage.b.path)
    except OSError:
        return False


def _mlir_constants(module: DumpModule) -> dict[str, list[str]] | None:
    sidecar = next((f for f in module.files if f.kind == "module.mlir"), None)
    if sidecar is None:
        return None
    try:
        return read_constants(module.root / sidecar.relative)
    except OSError:  # unreadable: decide as if it were not there
        return None


# Options that say where and how to dump, which differ between any two runs.
_DUMP_OPTIONS = re.compile(r"^xla_dump_")


def _debug_option_changes(a: DumpModule, b: DumpModule) -> list[Change]:
    """XLA flags (the ``.debug_options`` sidecar) that differ between the runs.

    The HLO can be identical while the executable is not: XLA_FLAGS change how
    it is compiled. Only the non-default options are written, one per line.
    """
    old, new = _debug_options(a), _debug_options(b)
    if old is None or new is None or old == new:
        return []
    out = []
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            out.append(Change("attribute", old.get(key), new.get(key), "", None, None, Origin(),
                              f"debug_options: {key}"))
    return out


def _debug_options(module: DumpModule) -> dict[str, str] | None:
    sidecar = next((f for f in module.files if f.kind == "debug_options"), None)
    if sidecar is None:
        return None
    try:
        text = (module.root / sidecar.relative).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    options = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and not _DUMP_OPTIONS.match(key.strip()):
            options[key.strip()] = value.strip()
    return options


def _module_change(kind: str, module: DumpModule) -> Change:
    text = f"{module.label} ({module.normalised})"
    old, new = (text, None) if kind == "module_removed" else (None, text)
    return Change(kind, old, new, "", module.label if kind == "module_removed" else None,
                  module.label if kind == "module_added" else None, Origin(),
                  "compiled in one run only: an extra compilation is itself a recompile")
