"""Where the .lark grammar files live, and the Lark parsers built from them.

The grammars sit in the top-level ``grammar/`` folder of a checkout and are
copied into ``hlodiff/grammar/`` inside the wheel; both places are looked
at, so an editable install and an installed wheel behave the same. Parsers
are built on first use and kept, so importing hlodiff stays cheap.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
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
    """An LALR parser for ``grammar/<name>.lark``.

    Lark's analysis of a grammar takes ~0.1 s, a tenth of a small diff, so
    it is kept in ``grammars/`` of the user's cache directory
    (hlodiff/cache.py; private to the user, unlike the temporary directory
    Lark would use, since loading it unpickles) and loaded from there. Lark
    checks the file against the grammar, the options and its own version,
    rebuilds it on any mismatch or damage, and carries on without it when
    it cannot be written.
    """
    from lark import Lark  # here: commands that parse nothing need not load it

    from .cache import cache_dir
    directory = cache_dir() / "grammars"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        kept: str | bool = str(directory / f"grammar-{name}.lark-cache")
    except OSError:
        kept = False
    return Lark.open(str(grammar_dir() / f"{name}.lark"), parser="lalr",
                     maybe_placeholders=True, cache=kept, **options)
