"""The unchanged pass: what two runs share, found before anything is parsed.

Two dumps that should have shared an executable are nearly the same text: a
learning-rate change alters a few thousand of 350,000 lines. Reading and
aligning every instruction costs far more than comparing lines, so, as
difftastic does before its structural diff, this pass first finds what is
textually unchanged and hands only the rest to the parser and the aligner.

A computation is matched with the computation of the same name in the other
run, and inside it an instruction line with the line of the same name. That
is sound only where names are stable: XLA's are, between runs whose programs
differ in values, shapes, attributes or metadata, the usual recompiles. So
the pass runs only when both texts define the same computations, each with
the same instruction names; an instruction added or removed anywhere (which
renumbers the rest) sends both texts whole to the parser and the aligner.
Two matched lines that are equal byte for byte are unchanged: they can take
part in no change the differ reports.
They are

* left unparsed, as ``Unparsed`` instructions (a run of them is one token
  for the parser), unless
* they read an instruction that changed: those are parsed, so that the
  aligner can pair the changed instruction by its place among their
  operands, as it pairs everything else;

and either way handed to the aligner already paired (the ``seed``). A line
holding ``{...}`` is never unchanged: equal elided text says nothing about
the values. Computations not laid out one instruction per line, as XLA
prints them, are parsed whole.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import accumulate, compress, count, repeat

from .errors import Source
from .model import Module, Unparsed
from .parser import parse

# Below this (both texts together) parsing everything is quick anyway, and
# every line is checked for syntax.
MIN_BYTES = 2_000_000


_LINE_NAMES = re.compile(r"\n  (?:ROOT )?%([^ ]+) = ")  # "\n" and not "^": a literal is found fast
_AT_MARGIN = re.compile(r"[^ \t]")  # a line that starts at column 0
_INSTRUCTION_LINE = ("  %", "  ROOT %")
_ELIDED = "{...}"
_NAME_CHAR = re.compile(r"[\w.\-]").match  # a character that continues a name


@dataclass(frozen=True)
class Run:
    """Consecutive unchanged lines of one computation, as the scanner skips them.

    Only where they are is kept: the lines are read from the text when the
    instructions are asked for, which for a computation unchanged as a whole
    may be never.
    """

    first: int  # 0-based index of the first line
    start: int  # where the first line starts
    end: int  # the newline that ends the last line
    whole: bool = False  # the whole body of a computation unchanged line for line

    def instructions(self, source: Source) -> list[Unparsed]:
        texts = source.text[self.start:self.end].split("\n")
        names = _names(texts)
        roots = map(str.startswith, texts, repeat("  ROOT"))
        parameters = map(str.__contains__, texts, repeat(" parameter("))
        lines = range(self.first + 1, self.first + 1 + len(texts))
        offsets = accumulate((len(text) + 1 for text in texts[:-1]), initial=self.start)
        return list(map(Unparsed, names, roots, parameters, lines, repeat(source), offsets))


@dataclass
class Seed:
    """Instructions the pass paired, by computation (the same name on both sides)."""

    identical: set[str] = field(default_factory=set)  # computations unchanged line for line
    names: dict[str, frozenset[str]] = field(default_factory=dict)  # the others

    def paired(self, computation: str) -> frozenset[str] | None:
        """Names paired in ``computation``; None when all of them are."""
        if computation in self.identical:
            return None
        return self.names.get(computation, frozenset())

    def __bool__(self) -> bool:
        return bool(self.identical or self.names)


@dataclass
class Plan:
    """What the pass found: runs to skip in each text, by the offset of the
    newline before their first line, and the instructions paired by it."""

    runs_a: dict[int, Run] = field(default_factory=dict)
    runs_b: dict[int, Run] = field(default_factory=dict)
    seed: Seed = field(default_factory=Seed)
    unchanged_lines: int = 0  # left unparsed, on each side


def parse_pair(text_a: str, text_b: str, path_a: str | None = None,
               path_b: str | None = None, *, min_bytes: int = MIN_BYTES
               ) -> tuple[Module, Module, Seed]:
    """Both modules, with what the two texts share left unparsed, and the seed."""
    plan = plan_pair(text_a, text_b) if len(text_a) + len(text_b) >= min_bytes else None
    if plan is None:
        return parse(text_a, path=path_a), parse(text_b, path=path_b), Seed()
    return (parse(text_a, path=path_a, unchanged=plan.runs_a),
            parse(text_b, path=path_b, unchanged=plan.runs_b), plan.seed)


# --- the outline of a text -----------------------------------------------------------------

@dataclass
class _Outline:
    text: str
    lines: list[str]
    ends: list[int]  # running total of line lengths, newlines not counted
    bodies: dict[str, tuple[int, int]]  # computation -> [first, end) line indices of its body

    def start(self, i: int) -> int:
        """Offset of line ``i`` (0-based) in the text."""
        return (self.ends[i - 1] if i else 0) + i

    def text_of(self, first: int, end: int) -> str:
        return self.text[self.start(first):self.start(end)]


def _outline(text: str) -> _Outline | None:
    """Computations laid out as XLA prints them: a header line ending in '{',
    one instruction per line (``  %name = ...`` or ``  ROOT %name = ...``),
    and a line starting with '}'. Those that are not are left out; None when
    the text cannot be read this way at all (it is then parsed whole)."""
    if "\r" in text:
        return None
    lines = text.split("\n")
    edges = list(compress(count(), map(_AT_MARGIN.match, lines)))  # all in C: 350,000 lines
    bodies: dict[str, tuple[int, int]] = {}
    for at, i in enumerate(edges):
        header = lines[i]
        if not header.rstrip().endswith("{") or header.startswith(("HloModule", "}")):
            continue
        end = edges[at + 1] if at + 1 < len(edges) else len(lines)
        if end >= len(lines) or not lines[end].startswith("}"):
            continue
        words = header.split()
        name = (words[1] if words[0] == "ENTRY" and len(words) > 1 else words[0]).lstrip("%")
        body = lines[i + 1:end]
        if name in bodies or not all(map(str.startswith, body, repeat(_INSTRUCTION_LINE))):
            bodies.pop(name, None)
            continue
        bodies[name] = (i + 1, end)
    if not bodies:
        return None
    return _Outline(text, lines, list(accumulate(map(len, lines))), bodies)


def _name(line: str) -> str:
    """The instruction name of a line the outline accepted."""
    return line[line.index("%") + 1:line.index(" = ")].rstrip()


# --- the pass ------------------------------------------------------------------------------

def plan_pair(text_a: str, text_b: str) -> Plan | None:
    """The unchanged lines of two texts, or None when there is nothing to skip."""
    a, b = _outline(text_a), _outline(text_b)
    if a is None or b is None or a.bodies.keys() != b.bodies.keys():
        return None
    plan = Plan()
    for name, (first_a, end_a) in a.bodies.items():
        span_b = b.bodies.get(name)
        if span_b is None:
            continue
        first_b, end_b = span_b
        body_a, body_b = a.lines[first_a:end_a], b.lines[first_b:end_b]
        if body_a == body_b and _ELIDED not in a.text_of(first_a, end_a):
            plan.seed.identical.add(name)
            plan.unchanged_lines += len(body_a)
            _add_run(plan.runs_a, a, first_a, end_a, whole=True)
            _add_run(plan.runs_b, b, first_b, end_b, whole=True)
            continue
        names_a, names_b = _names(body_a), _names(body_b)
        if len(names_a) != len(names_b):
            return None  # an instruction added or removed: names may have moved
        index_b = dict(zip(names_b, range(len(names_b))))
        pairs = {}  # index in body_a -> index in body_b
        for k, line in enumerate(body_a):
            j = index_b.get(names_a[k])
            if j is not None and body_b[j] == line and _ELIDED not in line:
                pairs[k] = j
        if not pairs:
            continue
        changed = {n for k, n in enumerate(names_a) if k not in pairs}
        changed.update(names_b[j] for j in set(range(len(body_b))) - set(pairs.values()))
        plan.seed.names[name] = frozenset(names_a[k] for k in pairs)
        # Lines that read a changed instruction are parsed: the aligner pairs
        # the changed ones through them.
        readers = _readers([body_a[k] for k in pairs], changed)
        skipped = [k for n, k in enumerate(pairs) if n not in readers]
        plan.unchanged_lines += len(skipped)
        for (start, end) in _consecutive(skipped):
            _add_run(plan.runs_a, a, first_a + start, first_a + end)
        for (start, end) in _consecutive(sorted(pairs[k] for k in skipped)):
            _add_run(plan.runs_b, b, first_b + start, first_b + end)
    return plan if plan.unchanged_lines else None


def _names(lines: list[str]) -> list[str]:
    """The instruction name of each line (lines the outline accepted)."""
    names = _LINE_NAMES.findall("\n" + "\n".join(lines))  # one regex over them all, in C
    return names if len(names) == len(lines) else [_name(line) for line in lines]


def _readers(lines: list[str], names: set[str]) -> set[int]:
    """Indices of the lines that mention any of ``names`` as %name."""
    if not names:
        return set()
    text = "\n".join(lines)
    ends = list(accumulate(len(line) + 1 for line in lines))
    found = set()
    for name in names:  # a few changed names in a long body: str.find, not a regex
        mention = "%" + name
        at = text.find(mention)
        while at >= 0:
            after = at + len(mention)
            if after == len(text) or not _NAME_CHAR(text[after]):
                found.add(bisect_right(ends, at))
            at = text.find(mention, after)
    return found


def _consecutive(indices: list[int]) -> list[tuple[int, int]]:
    """Ascending indices as [start, end) ranges of consecutive ones."""
    ranges: list[tuple[int, int]] = []
    for i in indices:
        if ranges and ranges[-1][1] == i:
            ranges[-1] = (ranges[-1][0], i + 1)
        else:
            ranges.append((i, i + 1))
    return ranges


def _add_run(runs: dict[int, Run], outline: _Outline, start: int, end: int,
             whole: bool = False) -> None:
    """Lines [start, end) of the outline's text as one run."""
    offset = outline.start(start)  # start >= 1: the header line comes first
    runs[offset - 1] = Run(start, offset, outline.start(end) - 1, whole)
