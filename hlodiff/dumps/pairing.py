"""Pairing modules across two runs: which module of run B is run A's program.

Module ids and name counters differ between runs (JAX ids shift when one
more helper compiles, TensorFlow and PyTorch/XLA number their functions and
graphs), so modules are paired on evidence, cheapest first:

1. the same normalised program name (``dumps.normalise_program``), one
   module each: ``NAME``;
2. the same name but several modules each (six ``jit_convert_element_type``
   compilations): identical HLO text first, then the closest structure,
   then compile order: ``IDENTICAL`` or ``NAME_STRUCTURE``;
3. different names but nearly the same structure (opcode histogram and
   entry opcode sequence compared with rapidfuzz, sizes as a tie-break):
   ``STRUCTURE``.

What is left was compiled in one run only: an extra compilation, which the
report lists apart from the findings and the verdicts (README, "What the
verdicts mean"). The differ consumes ``pair_dumps``.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from rapidfuzz.distance import Indel

from .catalogue import Dump, DumpModule, computes_gradients
from ..errors import HlodiffError
from .pool import read_files

IDENTICAL = "identical"
NAME = "name"
NAME_STRUCTURE = "name+structure"
STRUCTURE = "structure"
LARGEST = "largest"

# Modules of different names pair only when their structures are this alike.
STRUCTURE_THRESHOLD = 0.85
# Comparing structure parses every leftover module: past this many
# candidate pairs, leave them unpaired and say so rather than crawl.
STRUCTURE_BUDGET = 10_000
# Entry opcode sequences longer than this are compared on their first part.
SEQUENCE_LIMIT = 5_000


@dataclass(frozen=True)
class ModulePair:
    """Module ``a`` of the first run and ``b`` of the second, taken as one program.

    ``how`` says on what evidence (IDENTICAL, NAME, NAME_STRUCTURE,
    STRUCTURE, or LARGEST when the two main programs were paired for lack
    of anything better). ``score`` (0..1) is how alike they looked: the
    structural similarity where structure was compared, else the ratio of
    their HLO text sizes (1.0 for identical text).
    """

    a: DumpModule
    b: DumpModule
    how: str
    score: float


@dataclass(frozen=True)
class Pairing:
    """The chosen module pairs of two dumps, and the modules of one run only.

    ``pairs`` holds what the caller asked for (by default the main
    program's pair, first), ordered by run A's module id otherwise.
    ``only_a`` / ``only_b`` always list every unpaired module of each run,
    whatever was selected: a compilation that happened in one run only can
    be the recompile the user is looking for. ``notes`` say where the
    matcher gave up or could not read a module.
    """

    pairs: tuple[ModulePair, ...]
    only_a: tuple[DumpModule, ...]
    only_b: tuple[DumpModule, ...]
    notes: tuple[str, ...] = ()
    others: tuple[ModulePair, ...] = ()  # pairs found but not selected
    main_pair: ModulePair | None = None  # the main programs' pair, selected or not

    @property
    def main(self) -> ModulePair | None:
        """The main programs' pair when it was selected, else the first selected pair."""
        if self.main_pair is not None and self.main_pair in self.pairs:
            return self.main_pair
        return self.pairs[0] if self.pairs else None


@dataclass(frozen=True)
class Signature:
    """What a module's structure looks like, independent of names and ids."""

    histogram: Counter[str]
    entry: tuple[str, ...]  # opcodes of the entry computation, in order
    interface: tuple[str, ...]  # the entry's parameter shapes, then its result's
    size: int

    def similarity(self, other: Signature) -> float:
        """0..1: opcode histograms and entry sequences alike, sizes as a small tie-break."""
        shared = sum((self.histogram & other.histogram).values())
        total = sum((self.histogram | other.histogram).values())
        histogram = shared / total if total else 1.0
        sequence = Indel.normalized_similarity(self.entry, other.entry)
        return 0.45 * histogram + 0.45 * sequence + 0.1 * _size_ratio(self.size, other.size)


def _size_ratio(a: int, b: int) -> float:
    return min(a, b) / max(a, b) if max(a, b) else 1.0


def structure(path: Path) -> tuple[Counter[str], tuple[str, ...], tuple[str, ...]]:
    """The opcode histogram of the module at ``path``, its entry computation's
    opcodes and its interface: a ``Signature`` but for the size, read in a
    worker where the dump is big (hlodiff/dumps/pool.py)."""
    from ..syntax.parser import parse_file
    module = parse_file(path)
    histogram = Counter(instruction.opcode for _, instruction in module.instructions())
    entry = module.entry
    interface = tuple(str(i.shape) for i in (*entry.parameters, entry.root))
    return histogram, tuple(i.opcode for i in entry.instructions[:SEQUENCE_LIMIT]), interface


class _Matcher:
    """The pairing algorithm behind ``pair_dumps``; holds what is still unpaired."""

    def __init__(self, dump_a: Dump, dump_b: Dump):
        self.free_a = [m for m in dump_a.modules if m.primary is not None]
        self.free_b = [m for m in dump_b.modules if m.primary is not None]
        self.pairs: list[ModulePair] = []
        self.notes: list[str] = []
        self.signatures: dict[int, Signature | None] = {}  # by id(): each module read once

    def run(self) -> None:
        for name in dict.fromkeys(m.normalised for m in self.free_a):
            group_a = [m for m in self.free_a if m.normalised == name]
            group_b = [m for m in self.free_b if m.normalised == name]
            if len(group_a) == 1 and len(group_b) == 1:
                self._take(group_a[0], group_b[0], NAME,
                           _size_ratio(group_a[0].size, group_b[0].size))
            elif group_b:
                self._match_group(group_a, group_b)
        self._match_structure(self.free_a, self.free_b, STRUCTURE, STRUCTURE_THRESHOLD)

    def _take(self, a: DumpModule, b: DumpModule, how: str, score: float) -> None:
        self.free_a.remove(a)
        self.free_b.remove(b)
        self.pairs.append(ModulePair(a, b, how, score))

    def _match_group(self, group_a: list[DumpModule], group_b: list[DumpModule]) -> None:
        """Several modules of one name in each run: identical text, then structure."""
        for a in group_a:
            twin = next((b for b in group_b if b in self.free_b and _same_text(a, b)), None)
            if twin is not None:
                self._take(a, twin, IDENTICAL, 1.0)
        rest_a = [m for m in group_a if m in self.free_a]
        rest_b = [m for m in group_b if m in self.free_b]
        if len(rest_a) == 1 and len(rest_b) == 1:
            self._take(rest_a[0], rest_b[0], NAME, _size_ratio(rest_a[0].size, rest_b[0].size))
        else:
            self._match_structure(rest_a, rest_b, NAME_STRUCTURE, 0.0)

    def _match_structure(self, modules_a: list[DumpModule], modules_b: list[DumpModule],
                         how: str, threshold: float) -> None:
        """Greedy: the most alike pair first; equal scores in compile order.
        Modules of one name (NAME_STRUCTURE) pair first with one of the same
        interface, then of the most alike one: a function jitted for two
        shapes is two programs, and their structures, alike, would be told
        apart by file size alone, which a longer checkout path in the metadata
        changes (and jax_enable_x64, retyping every scalar argument, leaves
        each program's shapes as they were)."""
        if not modules_a or not modules_b:
            return
        if len(modules_a) * len(modules_b) > STRUCTURE_BUDGET:
            self.notes.append(f"{len(modules_a)} and {len(modules_b)} modules left unpaired: "
                              "too many to compare by structure")
            return
        self._read_signatures([*modules_a, *modules_b])
        signatures = {m: self.signatures[id(m)] for m in (*modules_a, *modules_b)}
        candidates = []
        for i, a in enumerate(modules_a):
            for j, b in enumerate(modules_b):
                if signatures[a] is None or signatures[b] is None:
                    continue
                score = signatures[a].similarity(signatures[b])
                if score >= threshold:
                    other_interface = _interface_distance(signatures[a].interface,
                                                          signatures[b].interface) \
                        if how == NAME_STRUCTURE else 0
                    # within a hundredth, alike: a Keras step traced again for a
                    # short last batch scored 0.98261 against the first
                    # compilation's 0.98246 (a few ops of its own, a file
                    # size), so compile order decides, not that noise
                    candidates.append((other_interface, -round(score, 2), abs(i - j), i + j,
                                       min(i, j), i, j, score, a, b))
        # best first; ties by closeness in compile order, the same whichever run is a
        for *_, score, a, b in sorted(candidates, key=lambda c: c[:7]):
            if a in self.free_a and b in self.free_b:
                self._take(a, b, how, score)

    def _read_signatures(self, modules: list[DumpModule]) -> None:
        """The signatures not read yet (on every core, for big dumps); a module
        that cannot be read gets None and a note."""
        unread = [m for m in modules if id(m) not in self.signatures]
        readable = [m for m in unread if m.path is not None]
        outcomes = dict(zip(map(id, readable), read_files(structure, [m.path for m in readable])))
        for module in unread:
            answer, error = outcomes.get(
                id(module), (None, f"{module.root}: module {module.label} has no HLO text file"))
            self.signatures[id(module)] = None if answer is None else Signature(*answer, module.size)
            if error is not None:
                self.notes.append(f"{module.label} was not compared by structure: {error}")


def _interface_distance(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    """How many of two interfaces' shapes differ, place by place (0: the same)."""
    return sum(x != y for x, y in zip(a, b)) + abs(len(a) - len(b))


def _same_text(a: DumpModule, b: DumpModule) -> bool:
    if a.size != b.size:
        return False
    return a.path.read_bytes() == b.path.read_bytes()


def pair_dumps(dump_a: Dump, dump_b: Dump, *, select: str | None = None,
               all: bool = False) -> Pairing:
    """Pair the modules of two dumps of the same program.

    By default ``pairs`` holds one pair: run A's main program and its
    partner (or, when A's main found none, run B's main and its partner; or
    the two main programs as LARGEST). ``all`` keeps every pair, the main
    one first; ``select`` keeps the pairs where either module's program
    name, as written or normalised, matches the regular expression. Raises
    HlodiffError for a bad expression or one that matches no pair.
    """
    matcher = _Matcher(dump_a, dump_b)
    matcher.run()
    pairs = sorted(matcher.pairs, key=lambda p: (p.a.module_id or 0, p.a.program))
    only_a, only_b = list(matcher.free_a), list(matcher.free_b)
    main_a, main_b = dump_a.main_program(), dump_b.main_program()
    main_pair = _main_pair(pairs, main_a, main_b)
    largest = None
    if main_pair is None and select is None and (
            len(dump_a.modules) == 1 or len(dump_b.modules) == 1
            or _may_be_one_program(main_a, main_b)):
        # the two main programs, for lack of better
        largest = ModulePair(main_a, main_b, LARGEST, _size_ratio(main_a.size, main_b.size))
        only_a.remove(main_a)
        only_b.remove(main_b)
    if select is not None:
        chosen = _selected(pairs, select)
    elif all:
        chosen = ([largest] if largest else []) + pairs
    else:
        chosen = [p for p in (main_pair or largest,) if p is not None]
    others = tuple(p for p in pairs if p not in chosen)
    return Pairing(tuple(chosen), tuple(only_a), tuple(only_b), tuple(matcher.notes), others,
                   main_pair or largest)


def _may_be_one_program(a: DumpModule, b: DumpModule) -> bool:
    """Can two main programs nothing else pairs be one program? Not a
    training step and a program that runs no backward pass: Keras with
    jit_compile=False ran its step op by op, and run b's largest program, a
    jitted add, was paired with run a's jit_train_step and read as "batch
    16 -> 32 in argument 0". (A run given as one file is the program the
    user chose: it is paired whatever it computes.)"""
    return computes_gradients(a) == computes_gradients(b)


def _main_pair(pairs: Iterable[ModulePair], main_a: DumpModule,
               main_b: DumpModule) -> ModulePair | None:
    pairs = list(pairs)
    return (next((p for p in pairs if p.a == main_a), None)
            or next((p for p in pairs if p.b == main_b), None))


def _selected(pairs: list[ModulePair], select: str) -> list[ModulePair]:
    try:
        pattern = re.compile(select)
    except re.error as err:
        raise HlodiffError(f"--module {select!r}: not a regular expression: {err}") from None
    chosen = [p for p in pairs
              if any(pattern.search(name) for name in (p.a.program, p.a.normalised,
                                                       p.b.program, p.b.normalised))]
    if not chosen:
        programs = ", ".join(sorted({p.a.normalised for p in pairs})) or "none"
        raise HlodiffError(f"--module {select!r} matches no module in both runs "
                           f"(paired programs: {programs})")
    return chosen
