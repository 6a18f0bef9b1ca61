"""Lines of two computations of the same name, paired by name.

When both runs define the same computations in the same order (a learning
rate changed, no op was added), a computation that changed is compared with
its namesake and a line with the line of the same name, byte for byte: no
line is even cut at its names. This is the usual recompile, and the cheapest
case.
"""

from __future__ import annotations

from bisect import bisect_right
from itertools import accumulate, compress, count, repeat
from operator import eq

from .checks import Lines
from .outline import LINE_STARTS, Body, names_as_printed
from .plan import LinePairs, Plan, Skip, runs

_ELIDED = "{...}"


def pair_lines(found: Plan, skips: list[Skip], text_a: str, a: Body, text_b: str, b: Body,
               original_b: str, original: Body) -> bool:
    """Pair the equal lines of ``a`` and ``b`` into ``found`` (what may be
    skipped of them into ``skips``); False when they do not define the same
    instructions in the same order. ``text_b`` is run b's text as compared
    (its stack frames numbered as run a's), ``original_b`` as it is."""
    lines_a, lines_b = a.lines(text_a)[0], b.lines(text_b)[0]
    if not (_instruction_lines(lines_a) and _instruction_lines(lines_b)):
        return False
    names_a, names_b = names_as_printed(lines_a), names_as_printed(lines_b)
    if names_a is None or names_a != names_b:  # not as XLA prints them: parsed in full
        return False
    same = compress(count(), map(eq, lines_a, lines_b))
    pairs = [k for k in same if _ELIDED not in lines_a[k]]
    if not pairs:
        return True
    paired = list(map(names_a.__getitem__, pairs))
    # Lines that read a changed instruction are parsed: the aligner pairs
    # the changed ones through them.
    readers = _readers(lines_a, pairs, set(names_a).difference(paired))
    found.seed.lines[a.name] = LinePairs(b.name, dict(zip(paired, paired)),
                                         frozenset(map(names_a.__getitem__, readers)))
    skipped = set(pairs).difference(readers)
    texts_a, starts_a = a.lines(text_a)
    texts_b, starts_b = original.lines(original_b)
    skips.append(Skip(runs(texts_a, starts_a, skipped), runs(texts_b, starts_b, skipped),
                      len(skipped), [Lines(text_a, a)], [Lines(original_b, original)]))
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
