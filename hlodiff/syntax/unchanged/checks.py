"""The checks the parser makes, made cheaply on lines the unchanged pass leaves unparsed.

A line left unparsed is never read by the parser, yet a file must be
rejected for the same errors, at the same place, whatever its size. So the
computations whose lines the pass would skip are first checked here, all at
once: their names are sound (hlodiff/syntax/unchanged/skeleton.py), their
opcodes known, their brackets closed on their line and nested no deeper than
the scanner allows. What fails is not skipped: the parser reads it and
reports the error as it would in a small file. (A check here may fail where
the parser finds nothing wrong, a '%' inside a string say; that only costs
the time of parsing it.)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import compress, islice

from ..lexer import MAX_NESTING
from ..opcodes import is_opcode
from .outline import Body, outline_of
from .skeleton import Skeleton

# A definition's skeleton starts " = SHAPE OPCODE(": an array shape has no
# space; a tuple shape is in parentheses.
_HEAD = re.compile(r" = (?:\([^\n]*?\)|[^ \n]+?) ([a-z][a-z0-9\-]*)\(")
# Brackets, line ends and what strings and comments are made of: the rest
# goes first, so that taking strings out reads a few characters a line.
_NOT_KEPT = bytes(set(range(256)).difference(b"()[]{}\n\"'\\/*"))
_QUOTED = re.compile(rb'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"|\'[^\'\\\n]*+(?:\\.[^\'\\\n]*+)*+\'|/\*.*?\*/')
_NOT_BRACKETS = bytes(set(range(256)).difference(b"()[]{}\n"))


@dataclass
class Lines:
    """The lines of one computation, to be checked before they are skipped."""

    text: str  # the whole text the computation is in
    body: Body
    skeleton: Skeleton | None = None  # made here when not given
    places: list[int] | None = None


def failing(blocks: list[Lines], computations: frozenset[str]) -> set[int]:
    """The indices of ``blocks`` the parser might reject (see the module docstring)."""
    bad = set()
    known_heads: set[str] = set()
    for k, block in enumerate(blocks):
        skeleton = block.skeleton if block.skeleton is not None else \
            Skeleton.of(block.body.text(block.text))
        places = block.places if block.places is not None else skeleton.places(computations)
        if places is None or not skeleton.sound(places, block.body.line_count(block.text)):
            bad.add(k)
            continue
        heads = set(compress(islice(skeleton.between, 1, None), skeleton.defines))
        heads.difference_update(known_heads)  # few distinct: shapes x opcodes
        if not all(is_opcode(opcode_of(head) or "") for head in heads):
            bad.add(k)
            continue
        known_heads.update(heads)
    good = [k for k in range(len(blocks)) if k not in bad]
    all_lines = "\n".join(blocks[k].body.text(blocks[k].text) for k in good)
    if not brackets_closed(all_lines):  # the usual: all at once
        bad.update(k for k in good if not brackets_closed(blocks[k].body.text(blocks[k].text)))
    return bad


def failing_computations(path: str) -> frozenset[str] | None:
    """The computations of the HLO file at ``path`` the parser might reject,
    by name; None when it is not laid out as XLA prints it. Each computation
    is checked on its own, so this says of any of them what ``failing`` says:
    a worker process runs it over a whole file while the unchanged pass pairs
    it with another (hlodiff/analysis/compare.py)."""
    from ..parser import read_text
    text = read_text(path)
    outline = outline_of(text)
    if outline is None:
        return None
    bodies = outline.bodies
    return frozenset(bodies[k].name for k in failing([Lines(text, body) for body in bodies],
                                                        outline.names))


def opcode_of(definition: str) -> str | None:
    """The opcode of a line, from what follows its name (`` = f32[2] add(``)."""
    m = _HEAD.match(definition)
    return m.group(1) if m is not None else None


def brackets_closed(lines: str) -> bool:
    """Does every line close the brackets it opens, in order and at most
    MAX_NESTING deep? Strings and comments aside, innermost pairs are taken
    away until none is left."""
    kept = lines.encode().translate(None, _NOT_KEPT)
    data = _QUOTED.sub(b"", kept).translate(None, _NOT_BRACKETS)
    for _ in range(MAX_NESTING):
        shorter = data.replace(b"()", b"").replace(b"[]", b"").replace(b"{}", b"")
        if len(shorter) == len(data):
            break
        data = shorter
    return data.count(b"\n") == len(data)
