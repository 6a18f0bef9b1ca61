"""A computation's lines with the names put aside, found without parsing.

Cut at every '%', the lines of a computation are its skeleton (the text
between names: opcodes, shapes, attributes, metadata) and its names. Each
name stands for a place: an instruction for the line that defines it, a
called computation for itself. Two computations whose skeletons are equal
and whose names stand for the same places are the same computation, whatever
their names: that is how XLA's renumbering is seen through.

The same cut tells whether the names are sound, as the parser would check
them: each instruction defined once, at the start of its line, and read only
after it.

Everything here runs over all the names of a computation at once (``map``,
``zip``, ``accumulate`` of C functions), never a Python statement per name:
most of a big dump goes through here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate, compress, count, islice, repeat
from operator import lt, not_

# A name: '%' and the characters of an HLO name.
_NAME = re.compile(r"%([A-Za-z0-9_.\-]*)")
# What follows the name an instruction line defines.
_DEFINES = " = "
# What precedes a definition: the start of a line (the first line's has no newline).
_LINE_STARTS = ("\n  ", "\n  ROOT ")
_FIRST_LINE_STARTS = ("  ", "  ROOT ")
# What precedes a name an attribute names: ``calls=%f``, ``branch_computations={%a, %b}``.
_ATTRIBUTE_STARTS = ("=", "={")
_LIST_GOES_ON = ", "
CALLED = -1  # the place of a called computation


@dataclass(frozen=True)
class Skeleton:
    """The lines of one computation cut at their names."""

    between: list[str]  # between[k] precedes names[k]; between[-1] ends the text
    names: list[str]
    defines: list[bool]  # does names[k] define the instruction of its line?

    @classmethod
    def of(cls, lines: str) -> Skeleton:
        """The skeleton of ``lines`` (instruction lines, as a body's text): one
        regular expression cuts them at their names."""
        pieces = _NAME.split(lines)  # between, name, between, name, ...
        between = pieces[0::2]
        defines = list(map(str.startswith, islice(between, 1, None), repeat(_DEFINES)))
        return cls(between, pieces[1::2], defines)

    def text(self) -> str:
        """The lines with the names taken out (each '%' left)."""
        return "%".join(self.between)

    def definitions(self) -> list[str]:
        return list(compress(self.names, self.defines))

    def places(self, computations: frozenset[str]) -> list[int] | None:
        """For each name, the definition it stands for (counted in order) or
        CALLED for a computation; None when a name is defined twice, or is
        neither defined here nor a computation of the module."""
        definitions = self.definitions()
        index = dict(zip(definitions, count()))
        if len(index) != len(definitions):
            return None
        called = set(self.names).difference(index)
        if not called.issubset(computations):
            return None
        if called:
            index.update(dict.fromkeys(called, CALLED))
        return list(map(index.__getitem__, self.names))

    def sound(self, places: list[int], lines: int) -> bool:
        """Are the names as the parser wants them: one definition at the start
        of each line, what a line reads defined on a line before it, and
        computations named only by attributes (``to_apply=%f``)?"""
        if sum(self.defines) != lines or not self.lines_start_with_definitions():
            return False
        # Definitions come in line order, so the latest place seen is the
        # line being read: what a line reads must lie strictly before it.
        latest = accumulate(places, max)
        if list(map(lt, places, latest)) != list(map(not_, self.defines)):
            return False
        return CALLED not in places or set(self._calls(places)).issubset(self.in_attributes)

    @cached_property
    def in_attributes(self) -> list[int]:
        """Where a name is named by an attribute (``to_apply=%f``,
        ``control-predecessors={%a, %b}``) and not as an operand."""
        out = []
        last = len(self.names) - 1
        for k in compress(count(), map(str.endswith, self.between, repeat(_ATTRIBUTE_STARTS))):
            if k > last:
                break
            out.append(k)  # a few per line at most
            while k < last and self.between[k + 1] == _LIST_GOES_ON:
                k += 1
                out.append(k)
        return out

    def named_by_attributes(self, places: list[int]) -> tuple[str, ...]:
        """Instructions attributes name (``control-predecessors={%a}``), as printed."""
        return tuple(self.names[k] for k in self.in_attributes if places[k] != CALLED)

    def _calls(self, places: list[int]) -> Iterator[int]:
        return compress(count(), map(int.__eq__, places, repeat(CALLED)))

    def lines_start_with_definitions(self) -> bool:
        before = list(compress(self.between, self.defines))
        return bool(before) and before[0] in _FIRST_LINE_STARTS and \
            all(map(str.endswith, islice(before, 1, None), repeat(_LINE_STARTS)))
