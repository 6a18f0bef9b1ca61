"""Where the .lark grammar files live, and the Lark parsers built from them.

The grammars sit in the top-level ``grammar/`` folder of a checkout and are
copied into ``hlodiff/grammar/`` inside the wheel; both places are looked
at, so an editable install and an installed wheel behave the same. Parsers
are built on first use and kept, so importing hlodiff stays cheap.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from lark import Lark

_HERE = Path(__file__).resolve().parent
_CANDIDATES = (_HERE / "grammar", _HERE.parent / "grammar")


def grammar_dir() -> Path:
    for candidate in _CANDIDATES:
        if (candidate / "hlo.lark").is_file():
            return candidate
    raise FileNotFoundError(
        "hlodiff's grammar files are missing; looked in " + ", ".join(map(str, _CANDIDATES)))


@cache
def lalr(name: str, **options) -> Lark:
    """An LALR parser for ``grammar/<name>.lark``."""
    return Lark.open(str(grammar_dir() / f"{name}.lark"), parser="lalr",
                     maybe_placeholders=True, **options)
