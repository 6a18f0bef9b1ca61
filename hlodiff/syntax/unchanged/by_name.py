"""The unchanged pass where names are stable: a line is compared with its namesake.

XLA's names stay put between runs whose programs differ in values, shapes,
attributes or metadata, the usual recompiles. When both texts define the
same computations, each with the same instructions, and the same stack
frames, a computation is compared with the computation of the same name,
and a line with the line of the same name, byte for byte: no line is even
split unless its computation changed.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate, compress, count, repeat
from operator import eq

from .checks import Lines
from .frames import frame_tables
from .outline import Body, LINE_STARTS, Outline, names_of
from .plan import LinePairs, Plan, Skip, runs, skipped_computation

_ELIDED = "{...}"


def plan(text_a: str, outline_a: Outline, text_b: str, outline_b: Outline, skipping: bool
         ) -> Plan | None:
    """What is unchanged, found by name; None when names do not say what
    pairs. Lines are skipped only when ``skipping``."""
    if list(outline_a.by_name) != list(outline_b.by_name) or \
            frame_tables(outline_a.preamble) != frame_tables(outline_b.preamble):
        return None
    found = Plan()
    skips: list[Skip] = []
    for a in outline_a.bodies:
        b = outline_b.by_name[a.name]
        if _equal_whole(text_a, a, text_b, b):
            found.seed.identical[a.name] = a.name
            # b's lines are a's: checking a's checks both
            skips.append(Skip({a.header: skipped_computation(a)}, {b.header: skipped_computation(b)},
                              a.line_count(text_a), [Lines(a.text(text_a), a.line_count(text_a))]))
        elif not _pair_lines(found, skips, text_a, a, text_b, b):
            return None
    if skipping:
        found.skip(skips, outline_a.names, outline_b.names)
    return found


def _equal_whole(text_a: str, a: Body, text_b: str, b: Body) -> bool:
    """The same text header to '}', nothing after the '}', one instruction a
    line and no elided constant."""
    return text_a[a.header:a.closed] == text_b[b.header:b.closed] and a.ends_alone(text_a) \
        and b.ends_alone(text_b) and a.one_instruction_per_line(text_a) \
        and text_a.find(_ELIDED, a.start, a.end) < 0


def _pair_lines(found: Plan, skips: list[Skip], text_a: str, a: Body, text_b: str, b: Body
                ) -> bool:
    """Pair the equal lines of two computations of the same name into
    ``found`` (and what may be skipped of them into ``skips``); False when
    their instructions are not the same names (one was added or removed, and
    names may have moved)."""
    (lines_a, starts_a), (lines_b, starts_b) = a.lines(text_a), b.lines(text_b)
    if not (_instruction_lines(lines_a) and _instruction_lines(lines_b)):
        return True  # parsed whole
    names_a, names_b = names_of(lines_a), names_of(lines_b)
    if len(names_a) != len(names_b) or set(names_a) != set(names_b):
        return False
    if names_a == names_b:  # the usual: only values, shapes or attributes changed
        same = list(compress(count(), map(eq, lines_a, lines_b)))
        pairs = dict(zip(same, same))  # index in lines_a -> index in lines_b
    else:
        index_b = dict(zip(names_b, count()))
        pairs = {k: index_b[n] for k, n in enumerate(names_a) if lines_b[index_b[n]] == lines_a[k]}
    if text_a.find(_ELIDED, a.start, a.end) >= 0:
        pairs = {k: j for k, j in pairs.items() if _ELIDED not in lines_a[k]}
    if not pairs:
        return True
    paired = list(map(names_a.__getitem__, pairs))
    # Lines that read a changed instruction are parsed: the aligner pairs
    # the changed ones through them.
    readers = _readers(lines_a, list(pairs), set(names_a).difference(paired))
    found.seed.lines[a.name] = LinePairs(b.name, dict(zip(paired, paired)),
                                         frozenset(map(names_a.__getitem__, readers)))
    skipped = set(pairs).difference(readers)
    skips.append(Skip(runs(lines_a, starts_a, skipped),
                      runs(lines_b, starts_b, set(map(pairs.__getitem__, skipped))), len(skipped),
                      [Lines(a.text(text_a), len(lines_a))], [Lines(b.text(text_b), len(lines_b))]))
    return True


def _instruction_lines(lines: list[str]) -> bool:
    return all(map(str.startswith, lines, repeat(LINE_STARTS)))


def _readers(lines: list[str], candidates: list[int], names: set[str]) -> set[int]:
    """Those of the ``candidates`` of ``lines`` that mention any of ``names`` as %name."""
    if not names:
        return set()
    texts = list(map(lines.__getitem__, candidates))
    text = "\n".join(texts)
    ends = list(accumulate(len(line) + 1 for line in texts))
    found = set()
    for name in names:  # a few changed names in a long body: str.find, not a regex
        mention = "%" + name
        at = text.find(mention)
        while at >= 0:
            after = at + len(mention)
            if after == len(text) or not _continues_name(text[after]):
                found.add(candidates[bisect_right(ends, at)])
            at = text.find(mention, after)
    return found


def _continues_name(character: str) -> bool:
    return character.isalnum() or character in "_.-"
