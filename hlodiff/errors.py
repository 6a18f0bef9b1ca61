"""Errors hlodiff raises on purpose.

Every error a user can cause (a bad path, a truncated dump, syntax XLA would
reject) is an ``HlodiffError``; the CLI prints those as one line and exits 2.
Anything else escaping is a bug in hlodiff.
"""

from __future__ import annotations

from dataclasses import dataclass


class HlodiffError(Exception):
    """Base class of every error hlodiff reports to a user."""


class HloSyntaxError(HlodiffError):
    """HLO text that cannot be read, with the place it went wrong.

    ``line`` and ``column`` are 1-based. The message shows the offending
    line with a caret under the column, as compilers do.
    """

    def __init__(self, message: str, *, path: str | None = None, line: int = 0,
                 column: int = 0, source_line: str | None = None):
        self.reason = message
        self.path = path
        self.line = line
        self.column = column
        self.source_line = source_line
        super().__init__(self._render())

    @property
    def location(self) -> str:
        """``path:line:column``, the prefix editors and terminals make clickable."""
        where = self.path or "<text>"
        return f"{where}:{self.line}:{self.column}" if self.line else where

    def _render(self) -> str:
        head = f"{self.location}: {self.reason}"
        if self.source_line is None:
            return head
        shown = self.source_line.rstrip("\n")
        cut = 0
        if len(shown) > 160:  # keep the caret visible on very long lines
            cut = max(0, self.column - 80)
            shown = shown[cut:cut + 160]
        caret = " " * max(0, self.column - 1 - cut) + "^"
        return f"{head}\n  {shown}\n  {caret}"


def syntax_error_at(text: str, offset: int, message: str, path: str | None = None) -> HloSyntaxError:
    """Build an ``HloSyntaxError`` for a character offset into ``text``."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    start = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    if end < 0:
        end = len(text)
    return HloSyntaxError(message, path=path, line=line, column=offset - start + 1,
                          source_line=text[start:end])


@dataclass(frozen=True)
class Source:
    """The text a module was parsed from, kept for errors found after the parse
    (attribute values and literals are read on first use)."""

    text: str
    path: str | None = None

    def error(self, offset: int, message: str) -> HloSyntaxError:
        return syntax_error_at(self.text, offset, message, self.path)
