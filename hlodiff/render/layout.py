"""The page's layout for text output: prose wrapped at spaces, tables ruled
under their header, and the widths of the columns that hold names.

hlodiff/render/text.py and hlodiff/render/compile_log.py lay their output out
with these, so every command's text wraps and shortens the same way.
"""

from __future__ import annotations

import re
from typing import Iterable

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from . import shorten
from .escape import terminal


def prose(out: Console, text: str | Text, style: str | None = None, indent: str = "",
          hanging: str = "") -> None:
    """Lines of ``text`` wrapped at spaces to the page, each behind ``indent``
    (its continuations behind ``indent + hanging``). A word longer than a
    line (a path, a URL, a cache key) stays whole on a line of its own: it
    is there to be copied or searched for, and the terminal wraps it. (Rich
    would cut it at the page's edge, leaving its last characters, such as
    the ``)`` that closes it, alone on the next line.) ``text`` given as
    ``Text`` keeps its styles; its parts are already made safe by the caller."""
    lines = text.split("\n", allow_blank=True) if isinstance(text, Text) else \
        [Text(terminal(line), style=style or "") for line in text.splitlines()]
    for line in lines or [Text("")]:
        plain = line.plain
        if not plain.strip():
            out.print("")
            continue
        own = plain[:len(plain) - len(plain.lstrip(" "))]  # the text's own indent is kept
        pieces = line.divide(_breaks(plain, out.width, len(indent), len(indent + own + hanging)))
        for n, piece in enumerate(pieces):
            lead = indent if n == 0 else indent + own + hanging
            piece.rstrip()
            if n:
                piece = piece[len(piece.plain) - len(piece.plain.lstrip(" ")):]
            out.print(Text(lead) + piece if lead else piece, soft_wrap=True)


def _breaks(plain: str, width: int, first: int, rest: int) -> list[int]:
    """Where to cut ``plain`` so each line, behind a lead of ``first`` (then
    ``rest``) characters, fits ``width``: at the spaces before a word that
    would not fit, a word longer than a line alone on its own."""
    breaks, start, lead, words = [], 0, first, 0
    for word in re.finditer(r"\S+", plain):
        if words and lead + word.end() - start > width:
            breaks.append(word.start())
            start, lead, words = word.start(), rest, 0
        words += 1
    return breaks


def ruled_table(*columns: tuple[str, str]) -> Table:
    """A table ruled under its header only, two spaces between columns: the
    least ink that keeps columns apart, so 80 columns hold the most."""
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True,
                  header_style="bold")
    for name, justify in columns:
        table.add_column(name, justify=justify)
    return table


def pin_widths(table: Table, widths: dict[int, int]) -> None:
    """Pin the columns whose content was already shortened to fit."""
    for index, width in widths.items():
        column = table.columns[index]
        column.width = column.min_width = column.max_width = width
        column.no_wrap = True


def widest(lines: Iterable[str]) -> int:
    return max((len(line) for line in lines), default=0)


def name_widths(width: int, fixed: list[int], wanted: list[int], floor: int = 12) -> list[int]:
    """Widths for the columns that hold names, out of what the fixed columns
    and the two spaces between columns leave of ``width``."""
    gaps = 2 * (len(fixed) + len(wanted) - 1)
    return shorten.fit(wanted, width - sum(fixed) - gaps, floor)
