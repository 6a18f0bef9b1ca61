"""What the unchanged pass hands on: where the scanner skips text, and what it paired."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from itertools import repeat
from typing import Protocol

from ...model import Unparsed
from ..reader import TextReader as Reader
from .checks import Lines, failing
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
        # What aligning asks of each first (opcode, operands), read at once.
        return list(map(Unparsed, names, roots, parameters, lines, repeat(reader),
                        line_starts(texts, self.start), reader.heads(texts)))


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


@dataclass(frozen=True)
class LinePairs:
    """Instructions the pass paired in two computations not equal as a whole."""

    b: str  # the computation of run b
    pairs: dict[str, str]  # instruction a -> instruction b
    # Those of ``pairs`` (by their a name) that read a changed instruction:
    # read in full, and what they read paired through them by the aligner.
    readers: frozenset[str] = frozenset()


@dataclass
class Seed:
    """What the pass paired, computation a -> computation b, each name as its
    own run prints it. The same whether lines are skipped or not: what is
    paired never depends on the size of the files."""

    # Computations equal but for names: each instruction pairs with the one
    # at its place in the other. ``kin`` holds, for each, a key its twin
    # shares (and any other computation equal to it): what it is, not what
    # it is called.
    identical: dict[str, str] = field(default_factory=dict)
    kin: dict[str, Hashable] = field(default_factory=dict)
    lines: dict[str, LinePairs] = field(default_factory=dict)  # by computation a
    # Tells, for two computations, which pairs of lines hold the same text
    # but for names (see pairing.LineTexts).
    texts: SameText | None = None

    def same_text(self, a: str, b: str) -> Callable[[str, str], bool] | None:
        """Whether instruction x of computation ``a`` and y of ``b`` are the
        same text but for names (so the differ has nothing to say of them)."""
        return None if self.texts is None else self.texts.same(a, b)

    def computation_pairs(self) -> Iterator[tuple[str, str]]:
        """Every computation pair the pass found."""
        yield from self.identical.items()
        for a, found in self.lines.items():
            yield a, found.b

    def instruction_pairs(self, a: str, b: str) -> LinePairs | None:
        """Instructions paired in computations ``a`` and ``b``; None when the
        two are equal but for names (every instruction pairs)."""
        if self.identical.get(a) == b:
            return None
        found = self.lines.get(a)
        return found if found is not None and found.b == b else LinePairs(b, {})

    def side(self, which: str) -> SeedSide:
        """The seed as run ``which`` ("a" or "b") names things."""
        if which == "a":
            return SeedSide({a: ("unchanged", self.kin.get(a, a)) for a in self.identical},
                            {a: {x: x for x in found.pairs} for a, found in self.lines.items()})
        return SeedSide({b: ("unchanged", self.kin.get(a, a)) for a, b in self.identical.items()},
                        {found.b: {y: x for x, y in found.pairs.items()}
                         for found in self.lines.values()})

    def __bool__(self) -> bool:
        return bool(self.identical or self.lines)


class SameText(Protocol):
    def same(self, a: str, b: str) -> Callable[[str, str], bool] | None: ...


@dataclass(frozen=True)
class SeedSide:
    """What the seed says about the computations of one run, by that run's names."""

    identical: dict[str, Hashable]  # computation -> a key its twin in the other run shares
    # computation -> {paired instruction: a key its twin shares (its name in run a)}
    paired: dict[str, dict[str, str]]


# The names of run a's computations that fail the checks, found elsewhere
# (asked for only when needed), or None: check them here.
Checked = Callable[[], "frozenset[str] | None"] | None


@dataclass
class Plan:
    """What the pass found: what it paired, and what the scanner skips in
    each text (nothing when the texts are small)."""

    seed: Seed = field(default_factory=Seed)
    # A Run by the offset of the newline before its first line; a
    # SkippedComputation by the offset of its header.
    runs_a: dict[int, Run | SkippedComputation] = field(default_factory=dict)
    runs_b: dict[int, Run | SkippedComputation] = field(default_factory=dict)
    unchanged_lines: int = 0  # left unparsed, on each side
    # Run a's computations skipped on the word of checks made elsewhere, not
    # yet heard (see ``skip``), and those checks.
    on_faith: frozenset[str] = frozenset()
    failing_a: Checked = None

    def skip(self, skips: list[Skip], computations_a: frozenset[str],
             computations_b: frozenset[str], failing_a: Checked = None,
             on_faith: bool = False) -> None:
        """Skip what ``skips`` say, but what fails the parser's checks
        (hlodiff/syntax/unchanged/checks.py): the parser reads that, and
        reports the error. ``failing_a``, when it gives a set, names the
        computations of run a that fail them, checked elsewhere. With
        ``on_faith``, run a's lines are skipped before that set is asked
        for, so that nothing waits for it: ``checks_held`` says afterwards
        whether it was right to."""
        blocks_a = [block for skip in skips for block in skip.check_a]
        blocks_b = [block for skip in skips for block in skip.check_b]
        if on_faith and failing_a is not None:
            bad_a: set[int] = set()
            self.failing_a = failing_a
        else:
            names_a = failing_a() if failing_a is not None else None
            bad_a = failing(blocks_a, computations_a) if names_a is None else \
                {k for k, block in enumerate(blocks_a) if block.body.name in names_a}
        bad_b = failing(blocks_b, computations_b)
        trusted: set[str] = set()
        at_a = at_b = 0
        for skip in skips:
            ends_a, ends_b = at_a + len(skip.check_a), at_b + len(skip.check_b)
            if bad_a.isdisjoint(range(at_a, ends_a)) and bad_b.isdisjoint(range(at_b, ends_b)):
                self.runs_a.update(skip.runs_a)
                self.runs_b.update(skip.runs_b)
                self.unchanged_lines += skip.lines
                trusted.update(block.body.name for block in skip.check_a)
            at_a, at_b = ends_a, ends_b
        if self.failing_a is not None:
            self.on_faith = frozenset(trusted)

    def checks_held(self) -> bool:
        """Did run a's computations skipped on faith pass the checks made
        elsewhere? (True when nothing was skipped so.) False when those
        checks gave no answer."""
        if self.failing_a is None:
            return True
        names = self.failing_a()
        return names is not None and self.on_faith.isdisjoint(names)


@dataclass
class Skip:
    """What may be skipped of one pair of computations, if their lines pass the checks."""

    runs_a: dict[int, Run | SkippedComputation]
    runs_b: dict[int, Run | SkippedComputation]
    lines: int  # unchanged lines left unparsed on each side
    check_a: list[Lines]  # the lines to check first, of run a's computation
    check_b: list[Lines] = field(default_factory=list)  # of run b's, when they differ


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
