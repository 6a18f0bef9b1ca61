"""What the unchanged pass hands on: where the scanner skips text, and what it paired."""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from itertools import repeat

from ...model import Unparsed
from ..reader import TextReader as Reader
from .outline import Body, line_starts, names_of


@dataclass(frozen=True)
class Run:
    """Consecutive unchanged lines of one computation, as the scanner skips them.

    Only where they are is kept: the lines are read from the text when the
    instructions are asked for.
    """

    start: int  # where the first line starts
    end: int  # the newline that ends the last line

    def instructions(self, reader: Reader, line: int) -> list[Unparsed]:
        """Its lines as instructions; ``line`` is the number of the first."""
        texts = reader.text[self.start:self.end].split("\n")
        names = names_of(texts)
        roots = map(str.startswith, texts, repeat("  ROOT"))
        parameters = map(str.__contains__, texts, repeat(" parameter("))
        lines = range(line, line + len(texts))
        return list(map(Unparsed, names, roots, parameters, lines, repeat(reader),
                        line_starts(texts, self.start)))


@dataclass(frozen=True)
class SkippedComputation:
    """A computation the other run has line for line, header and '}' too:
    the scanner skips it whole, and the parser makes it an
    UnchangedComputation, whose instructions are made only if asked for
    (which for most of them is never)."""

    name: str
    is_entry: bool
    name_at: int  # where its name (with the '%') starts in the header
    body: Run
    end: int  # just after its '}'


@dataclass
class Seed:
    """What the pass paired, computation a -> computation b, each name as its
    own run prints it."""

    # Computations equal but for names: each instruction pairs with the one
    # at its place in the other. ``kin`` holds, for each, a key its twin
    # shares (and any other computation equal to it): what it is, not what
    # it is called.
    identical: dict[str, str] = field(default_factory=dict)
    kin: dict[str, Hashable] = field(default_factory=dict)
    # The others with lines the pass paired: (computation b, {instruction a: instruction b}).
    lines: dict[str, tuple[str, dict[str, str]]] = field(default_factory=dict)

    def computation_pairs(self) -> Iterator[tuple[str, str]]:
        """Every computation pair the pass found."""
        yield from self.identical.items()
        for a, (b, _) in self.lines.items():
            yield a, b

    def instruction_pairs(self, a: str, b: str) -> dict[str, str] | None:
        """Instructions paired in computations ``a`` and ``b``; None when the
        two are equal but for names (every instruction pairs)."""
        if self.identical.get(a) == b:
            return None
        found = self.lines.get(a)
        return found[1] if found is not None and found[0] == b else {}

    def side(self, which: str) -> SeedSide:
        """The seed as run ``which`` ("a" or "b") names things."""
        if which == "a":
            return SeedSide({a: ("unchanged", self.kin.get(a, a)) for a in self.identical},
                            {a: {x: x for x in pairs} for a, (_, pairs) in self.lines.items()})
        return SeedSide({b: ("unchanged", self.kin.get(a, a)) for a, b in self.identical.items()},
                        {b: {y: x for x, y in pairs.items()} for b, pairs in self.lines.values()})

    def __bool__(self) -> bool:
        return bool(self.identical or self.lines)


@dataclass(frozen=True)
class SeedSide:
    """What the seed says about the computations of one run, by that run's names."""

    identical: dict[str, Hashable]  # computation -> a key its twin in the other run shares
    # computation -> {paired instruction: a key its twin shares (its name in run a)}
    paired: dict[str, dict[str, str]]


@dataclass
class Plan:
    """What the pass found: what the scanner skips in each text, and what it paired."""

    # A Run by the offset of the newline before its first line; a
    # SkippedComputation by the offset of its header.
    runs_a: dict[int, Run | SkippedComputation] = field(default_factory=dict)
    runs_b: dict[int, Run | SkippedComputation] = field(default_factory=dict)
    seed: Seed = field(default_factory=Seed)
    unchanged_lines: int = 0  # left unparsed, on each side


def skipped_computation(body: Body) -> SkippedComputation:
    """``body`` skipped whole, header to '}'."""
    return SkippedComputation(body.name, body.is_entry, body.name_at, Run(body.start, body.end),
                              body.closed)


def runs(lines: list[str], starts: list[int], skipped: set[int]) -> dict[int, Run]:
    """The runs of consecutive ``skipped`` lines (indices into ``lines``, which
    start at ``starts``), by the offset of the newline before each."""
    out = {}
    start = 0
    for left_out in sorted(set(range(len(lines))).difference(skipped)) + [len(lines)]:
        if left_out > start:
            last = left_out - 1
            out[starts[start] - 1] = Run(starts[start], starts[last] + len(lines[last]))
        start = left_out + 1
    return out
