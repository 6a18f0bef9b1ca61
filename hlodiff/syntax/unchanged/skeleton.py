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

import string
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from itertools import accumulate, compress, count, repeat
from operator import lt, not_

# The characters of an HLO name.
_NAME_CHARS = string.ascii_letters + string.digits + "_.-"
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
        """The skeleton of ``lines`` (instruction lines, as a body's text)."""
        parts = lines.split("%")
        between = list(map(str.lstrip, parts, repeat(_NAME_CHARS)))
        between[0] = parts[0]  # what starts the text follows no '%'
        names = list(map(str.removesuffix, parts[1:], between[1:]))
        defines = list(map(str.startswith, between[1:], repeat(" = ")))
        return cls(between, names, defines)

    def definitions(self) -> list[str]:
        return list(compress(self.names, self.defines))

    def places(self, lines: int, computations: set[str] | frozenset[str]) -> list[int] | None:
        """For each name, the line that defines it, or CALLED for a computation
        it calls; None when the names are not sound: a line that does not
        start with its definition, a name defined twice, read before its
        definition (or on its own line), or neither an instruction of this
        computation nor a computation of the module, named where an
        attribute does not name it."""
        definitions = self.definitions()
        if len(definitions) != lines or not self._definitions_start_lines():
            return None
        index = dict(zip(definitions, count()))
        if len(index) != lines:
            return None  # a name defined twice
        called = set(self.names).difference(index)
        if not called.issubset(computations):
            return None
        if called:
            index.update(dict.fromkeys(called, CALLED))
        places = list(map(index.__getitem__, self.names))
        # Definitions come in line order, so the latest place seen is the
        # line being read: what a line reads must lie strictly before it.
        latest = accumulate(places, max)
        if list(map(lt, places, latest)) != list(map(not_, self.defines)):
            return None
        if called and not set(self._calls(places)).issubset(self.in_attributes):
            return None
        return places

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

    def _calls(self, places: list[int]) -> Iterator[int]:
        return compress(count(), map(int.__eq__, places, repeat(CALLED)))

    def _definitions_start_lines(self) -> bool:
        before = list(compress(self.between, self.defines))
        return before[0] in _FIRST_LINE_STARTS and all(map(str.endswith, before[1:],
                                                            repeat(_LINE_STARTS)))
