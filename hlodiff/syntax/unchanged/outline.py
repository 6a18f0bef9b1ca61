"""Where the computations of an HLO text are, and their lines, found without parsing.

XLA prints a computation as a header line at the margin ending in '{', one
instruction per line indented by two spaces, and a line starting with '}'.
The outline jumps from one '{' line end to the next with ``str.find``: it
never looks at the lines in between.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import accumulate, count
from operator import add

# How XLA lays a computation out: its header line ends with OPEN, its last
# instruction line is followed by CLOSE, and a computation nothing follows on
# the line of its '}' ends with CLOSED.
OPEN = "{\n"
CLOSE = "\n}"
CLOSED = "\n}\n"
# How each instruction line starts.
LINE_STARTS = ("  %", "  ROOT %")

_COMPUTATION_NAME = re.compile(r"%([A-Za-z_][\w.\-]*)")
_LINE_NAMES = re.compile(r"\n  (?:ROOT )?%([^ ]+) = ")  # "\n" and not "^": a literal is found fast


@dataclass(frozen=True)
class Body:
    """Where one computation is: its header line, its lines and its '}'."""

    name: str
    is_entry: bool
    header: int  # where the header line starts
    start: int  # where its first line starts, just after OPEN
    end: int  # the newline that ends its last line, where CLOSE starts

    @property
    def closed(self) -> int:
        """Just after its '}'."""
        return self.end + len(CLOSE)

    @property
    def name_at(self) -> int:
        """Where its name starts in the header, '%' included."""
        return self.header + (len("ENTRY ") if self.is_entry else 0)

    def text(self, text: str) -> str:
        """Its lines, without the newline after the last."""
        return text[self.start:self.end]

    def lines(self, text: str) -> tuple[list[str], list[int]]:
        """Its lines, and where each starts."""
        lines = self.text(text).split("\n")
        return lines, list(line_starts(lines, self.start))

    def line_count(self, text: str) -> int:
        return text.count("\n", self.start, self.end) + 1

    def ends_alone(self, text: str) -> bool:
        """Is its '}' alone on its line (no execution_thread after it)?"""
        return text.startswith(CLOSED, self.end) or text.endswith(CLOSE) and \
            len(text) == self.closed


@dataclass(frozen=True)
class Outline:
    """The computations of a text, in text order, and what precedes them."""

    bodies: tuple[Body, ...]
    by_name: dict[str, Body]
    names: frozenset[str]
    preamble: str  # the module header and the stack frame tables

    @property
    def entry(self) -> Body:
        """The ENTRY computation, or the last one when none is marked (XLA's rule)."""
        return next((body for body in self.bodies if body.is_entry), self.bodies[-1])


def outline_of(text: str) -> Outline | None:
    """The computations as XLA prints them; None when there is none, one is
    printed otherwise, or a name is defined twice (the text is then parsed
    whole, and the parser says what is wrong)."""
    if "\r" in text:
        return None
    bodies: list[Body] = []
    at = text.find(OPEN)
    while at >= 0:
        header = text.rfind("\n", 0, at) + 1
        close = text.find(CLOSE, at + 1)
        if close < 0:
            break
        if text[header] in " \t" or text.startswith(("HloModule", "}"), header):
            at = text.find(OPEN, at + len(OPEN))  # not a computation header: look further
            continue
        if close > at + 1:
            is_entry = text.startswith("ENTRY ", header)
            name = _COMPUTATION_NAME.match(text, header + is_entry * len("ENTRY "))
            if name is None:
                return None  # not as XLA prints it: names go without their '%'
            bodies.append(Body(name.group(1), is_entry, header, at + len(OPEN), close))
        at = text.find(OPEN, close + len(CLOSE))
    by_name = {body.name: body for body in bodies}
    if not bodies or len(by_name) < len(bodies):
        return None
    return Outline(tuple(bodies), by_name, frozenset(by_name), text[:bodies[0].header])


def line_starts(lines: list[str], start: int) -> Iterator[int]:
    """Where each of ``lines`` starts, the first at ``start`` (a newline after each)."""
    return map(add, accumulate(map(len, lines), initial=start), count())  # in C: no Python per line


def names_as_printed(lines: list[str]) -> list[str] | None:
    """The instruction name of each line, or None unless every line starts
    as XLA prints one (``  %name = ``, ``  ROOT %name = ``)."""
    names = _LINE_NAMES.findall("\n" + "\n".join(lines))  # one regex over them all, in C
    return names if len(names) == len(lines) else None


def names_of(lines: list[str]) -> list[str]:
    """The instruction name of each line (lines whose instruction starts
    them), however the line spaces its ``=``."""
    names = names_as_printed(lines)
    return names if names is not None else [_name(line) for line in lines]


_NAME = re.compile(r"\s*(?:ROOT\s+)?%?([^\s=]+)\s*=")


def _name(line: str) -> str:
    return _NAME.match(line).group(1)
