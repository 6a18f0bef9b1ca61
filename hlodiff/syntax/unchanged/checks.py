"""The checks the parser makes, made cheaply on lines the unchanged pass leaves unparsed.

A line left unparsed is never read by the parser, yet a file must be
rejected for the same errors, at the same place, whatever its size. So every
computation the pass would skip is first checked here, over all its lines at
once: its names are sound (hlodiff/syntax/unchanged/skeleton.py), its opcodes
known, its brackets closed on their line and nested no deeper than the
scanner allows. What fails is not skipped: the parser reads it and reports
the error as it would in a small file. (A check here may fail where the
parser finds nothing wrong, a '%' inside a string say; that only costs the
time of parsing it.)
"""

from __future__ import annotations

import re
from itertools import compress

from ..lexer import MAX_NESTING
from ..opcodes import is_opcode
from .skeleton import Skeleton

# A definition's skeleton starts " = SHAPE OPCODE(": an array shape has no
# space; a tuple shape is in parentheses.
_HEAD = re.compile(r" = (?:\([^\n]*?\)|[^ \n]+?) ([a-z][a-z0-9\-]*)\(")
_QUOTED = re.compile(rb'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"|\'[^\'\\\n]*+(?:\\.[^\'\\\n]*+)*+\'|/\*.*?\*/')
_NOT_BRACKETS = bytes(set(range(256)).difference(b"()[]{}\n"))


def sound(lines: str, skeleton: Skeleton, line_count: int,
          computations: set[str] | dict) -> list[int] | None:
    """The places of the names of ``lines`` (see Skeleton.places) when the
    parser would find nothing wrong with them as far as these checks go;
    else None."""
    places = skeleton.places(line_count, computations)
    if places is None or not opcodes_known(skeleton) or not brackets_closed(lines):
        return None
    return places


def opcodes_known(skeleton: Skeleton) -> bool:
    """Is each line's opcode one the scanner knows?"""
    heads = set(compress(skeleton.between[1:], skeleton.defines))  # few distinct: shapes x opcodes
    return all(is_opcode(opcode_of(head) or "") for head in heads)


def opcode_of(definition: str) -> str | None:
    """The opcode of a line, from what follows its name (`` = f32[2] add(``)."""
    m = _HEAD.match(definition)
    return m.group(1) if m is not None else None


def brackets_closed(lines: str) -> bool:
    """Does every line close the brackets it opens, in order and at most
    MAX_NESTING deep? Strings and comments aside, innermost pairs are taken
    away until none is left."""
    data = _QUOTED.sub(b"", lines.encode()).translate(None, _NOT_BRACKETS)
    for _ in range(MAX_NESTING):
        shorter = data.replace(b"()", b"").replace(b"[]", b"").replace(b"{}", b"")
        if len(shorter) == len(data):
            break
        data = shorter
    return data.count(b"\n") == len(data)
