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
as many instructions in both; an instruction added or removed anywhere
(which renumbers the rest) sends both texts whole to the parser and the
aligner. Two matched lines that are equal byte for byte are unchanged: they
can take part in no change the differ reports. So

* a computation unchanged as a whole, header to '}', is skipped by the
  scanner as one token and becomes an ``UnchangedComputation``: its lines
  are not even split until something asks for its instructions, and the
  aligner and the differ never do (most computations of a big dump);
* elsewhere, unchanged lines are left unparsed, as ``Unparsed``
  instructions (a run of them is one token for the parser), unless they
  read an instruction that changed: those are parsed, so that the aligner
  can pair the changed instruction by its place among their operands, as
  it pairs everything else;

and either way they are handed to the aligner already paired (the
``seed``). A line holding ``{...}`` is never unchanged: equal elided text
says nothing about the values. Computations not laid out one instruction
per line, as XLA prints them, are parsed whole. Nothing here looks at a
line more than once, and most lines only through ``str.find`` and
``str.count``.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator
from dataclasses import dataclass, field
from itertools import accumulate, compress, count, repeat
from operator import add, eq

from ..model import Module, Unparsed
from .parser import parse
from .reader import TextReader as Reader

# Below this (both texts together) parsing everything is quick anyway, and
# every line is checked for syntax.
MIN_BYTES = 2_000_000


_LINE_NAMES = re.compile(r"\n  (?:ROOT )?%([^ ]+) = ")  # "\n" and not "^": a literal is found fast
_ELIDED = "{...}"
_NAME_CHAR = re.compile(r"[\w.\-]").match  # a character that continues a name


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
        names = _names(texts)
        roots = map(str.startswith, texts, repeat("  ROOT"))
        parameters = map(str.__contains__, texts, repeat(" parameter("))
        lines = range(line, line + len(texts))
        return list(map(Unparsed, names, roots, parameters, lines, repeat(reader),
                        _starts(texts, self.start)))


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
    """What the pass found: what the scanner skips in each text, and the
    instructions paired by it."""

    # A Run by the offset of the newline before its first line; a
    # SkippedComputation by the offset of its header.
    runs_a: dict[int, Run | SkippedComputation] = field(default_factory=dict)
    runs_b: dict[int, Run | SkippedComputation] = field(default_factory=dict)
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

@dataclass(frozen=True)
class _Body:
    """Where one computation is: its header line, its lines and its '}'."""

    header: int  # where the header line starts
    start: int  # where its first line starts
    end: int  # the newline that ends its last line (the '}' follows it)

    def lines(self, text: str) -> tuple[list[str], list[int]]:
        """Its lines, and where each starts."""
        lines = text[self.start:self.end].split("\n")
        return lines, list(_starts(lines, self.start))


def _starts(lines: list[str], start: int) -> Iterator[int]:
    """Where each of ``lines`` starts, the first at ``start`` (a newline after each)."""
    return map(add, accumulate(map(len, lines), initial=start), count())  # in C: no Python per line


def _outline(text: str) -> dict[str, _Body] | None:
    """The computations as XLA prints them: a line at the margin ending in
    '{', lines, and a line starting with '}'. Those with a name seen twice
    are left out; None when there is none (the text is then parsed whole).

    Found by jumping from one '{' line end to the next: nothing here looks
    at the lines in between (see _instruction_lines).
    """
    if "\r" in text:
        return None
    bodies: dict[str, _Body] = {}
    repeated: set[str] = set()
    at = text.find("{\n")
    while at >= 0:
        header = text.rfind("\n", 0, at) + 1
        close = text.find("\n}", at + 1)
        if close < 0:
            break
        if text[header] in " \t" or text.startswith(("HloModule", "}"), header):
            at = text.find("{\n", at + 2)  # not a computation header: look further
            continue
        if close > at + 1:
            words = text[header:at].split()
            name = (words[1] if words[0] == "ENTRY" and len(words) > 1 else words[0]).lstrip("%")
            if name in bodies:
                repeated.add(name)
            bodies[name] = _Body(header, at + 2, close)
        at = text.find("{\n", close + 2)
    for name in repeated:
        del bodies[name]
    return bodies or None


def _instruction_lines(text: str, body: _Body) -> int | None:
    """How many lines the body has, if every one is an instruction as XLA
    prints it (``  %name = ...`` or ``  ROOT %name = ...``); else None."""
    lines = text.count("\n", body.start, body.end) + 1
    instructions = text.count("\n  %", body.start - 1, body.end) + \
        text.count("\n  ROOT %", body.start - 1, body.end)
    return lines if instructions == lines else None


def _name(line: str) -> str:
    """The instruction name of a line the outline accepted."""
    return line[line.index("%") + 1:line.index(" = ")].rstrip()


# --- the pass ------------------------------------------------------------------------------

def plan_pair(text_a: str, text_b: str) -> Plan | None:
    """The unchanged lines of two texts, or None when there is nothing to skip."""
    bodies_a, bodies_b = _outline(text_a), _outline(text_b)
    if bodies_a is None or bodies_b is None or bodies_a.keys() != bodies_b.keys():
        return None
    plan = Plan()
    for name, a in bodies_a.items():
        b = bodies_b[name]
        if text_a[a.header:a.end + 3] == text_b[b.header:b.end + 3] \
                and text_a.startswith("\n}\n", a.end) and text_b.startswith("\n}\n", b.end):
            lines = _instruction_lines(text_a, a)
            if lines is not None and text_a.find(_ELIDED, a.start, a.end) < 0:
                plan.seed.identical.add(name)
                plan.unchanged_lines += lines
                plan.runs_a[a.header] = _skipped(text_a, name, a)
                plan.runs_b[b.header] = _skipped(text_b, name, b)
                continue
        (body_a, starts_a), (body_b, starts_b) = a.lines(text_a), b.lines(text_b)
        if not (_all_instructions(body_a) and _all_instructions(body_b)):
            continue
        names_a, names_b = _names(body_a), _names(body_b)
        if len(names_a) != len(names_b):
            return None  # an instruction added or removed: names may have moved
        if names_a == names_b:  # the usual: only values, shapes or attributes changed
            same = list(compress(count(), map(eq, body_a, body_b)))
            pairs = dict(zip(same, same))  # index in body_a -> index in body_b
        else:
            index_b = dict(zip(names_b, count()))
            pairs = {k: index_b[n] for k, n in enumerate(names_a)
                     if n in index_b and body_b[index_b[n]] == body_a[k]}
        if text_a.find(_ELIDED, a.start, a.end) >= 0:
            pairs = {k: j for k, j in pairs.items() if _ELIDED not in body_a[k]}
        if not pairs:
            continue
        paired = frozenset(map(names_a.__getitem__, pairs))
        plan.seed.names[name] = paired
        # Lines that read a changed instruction are parsed: the aligner pairs
        # the changed ones through them.
        readers = _readers(body_a, list(pairs), set(names_a).union(names_b) - paired)
        skipped = set(pairs).difference(readers)
        plan.unchanged_lines += len(skipped)
        for (start, end) in _ranges(len(body_a), skipped):
            plan.runs_a[starts_a[start] - 1] = Run(starts_a[start], _line_end(body_a, starts_a, end))
        for (start, end) in _ranges(len(body_b), set(map(pairs.__getitem__, skipped))):
            plan.runs_b[starts_b[start] - 1] = Run(starts_b[start], _line_end(body_b, starts_b, end))
    return plan if plan.unchanged_lines else None


def _skipped(text: str, name: str, body: _Body) -> SkippedComputation:
    is_entry = text.startswith("ENTRY", body.header)
    after = body.header + (len("ENTRY") if is_entry else 0)
    rest = text[after:body.start]
    name_at = after + len(rest) - len(rest.lstrip())
    return SkippedComputation(name, is_entry, name_at, Run(body.start, body.end), body.end + 2)


def _all_instructions(lines: list[str]) -> bool:
    return all(map(str.startswith, lines, repeat(("  %", "  ROOT %"))))


def _line_end(lines: list[str], starts: list[int], end: int) -> int:
    """The newline that ends line ``end - 1``."""
    return starts[end - 1] + len(lines[end - 1])


def _names(lines: list[str]) -> list[str]:
    """The instruction name of each line (lines the outline accepted)."""
    names = _LINE_NAMES.findall("\n" + "\n".join(lines))  # one regex over them all, in C
    return names if len(names) == len(lines) else [_name(line) for line in lines]


def _readers(body: list[str], candidates: list[int], names: set[str]) -> set[int]:
    """Those of the ``candidates`` lines of ``body`` that mention any of
    ``names`` as %name."""
    if not names:
        return set()
    lines = list(map(body.__getitem__, candidates))
    text = "\n".join(lines)
    ends = list(accumulate(len(line) + 1 for line in lines))
    found = set()
    for name in names:  # a few changed names in a long body: str.find, not a regex
        mention = "%" + name
        at = text.find(mention)
        while at >= 0:
            after = at + len(mention)
            if after == len(text) or not _NAME_CHAR(text[after]):
                found.add(candidates[bisect_right(ends, at)])
            at = text.find(mention, after)
    return found


def _ranges(n: int, kept: set[int]) -> list[tuple[int, int]]:
    """[start, end) ranges of consecutive indices in ``kept`` (a subset of
    range(n)), found from the few left out."""
    ranges = []
    start = 0
    for left_out in sorted(set(range(n)).difference(kept)) + [n]:
        if left_out > start:
            ranges.append((start, left_out))
        start = left_out + 1
    return ranges
