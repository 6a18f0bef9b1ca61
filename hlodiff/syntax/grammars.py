"""The Lark parsers built from the .lark grammar files (found by hlodiff/paths.py).

Parsers are built on first use and kept, so importing hlodiff stays cheap.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from typing import TYPE_CHECKING

from .. import cache as stored
from ..paths import grammar_dir
from ..plain import from_literal, to_literal

if TYPE_CHECKING:
    from lark import Lark


@cache
def lalr(name: str, start: tuple[str, ...] = ("start",), **options) -> Lark:
    """An LALR parser for ``grammar/<name>.lark``, from the rules ``start``.

    Lark's analysis of a grammar takes tens of milliseconds, a good part of a
    small diff, so its tables are kept in the user's cache (hlodiff/cache.py:
    plain JSON, signed with the user's key; Lark's own cache would unpickle
    whatever is in the file) under a name made of the grammar's text, the
    options and Lark's version. Without a usable cache it is built afresh.
    """
    import lark
    from lark import Lark  # here: commands that parse nothing need not load it
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    text = (grammar_dir() / f"{name}.lark").read_text(encoding="utf-8")
    settings = dict(parser="lalr", maybe_placeholders=True, start=list(start))
    identity = hashlib.sha256(f"{lark.__version__}\0{sorted(settings.items())}\0{text}".encode())
    entry = f"grammar-{name}-{identity.hexdigest()[:32]}"
    payload = stored.load_bytes(entry)
    if payload is not None:
        try:
            return Lark.__new__(Lark)._load(from_literal(json.loads(payload)), **options)
        except Exception:  # signed by us, but unusable (written by another Lark): build anew
            pass
    data, memo = Lark(text, **settings).memo_serialize([TerminalDef, Rule])
    tables = {"data": data, "memo": memo}
    stored.store_bytes(entry, json.dumps(to_literal(tables), separators=(",", ":")).encode())
    return Lark.__new__(Lark)._load(tables, **options)
