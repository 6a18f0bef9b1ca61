"""Values to plain JSON data and back, with no code path in between.

The cache (hlodiff/cache.py) keeps answers as JSON rather than pickles, so
that an entry someone else planted can at worst be rejected, never run.
Two encodings, one per kind of value:

* ``to_plain`` / ``from_plain``: frozen dataclasses (a ``Report`` and what
  it holds) rebuilt from their type hints. Every field is checked against
  its declared type; anything else raises ``ValueError``.
* ``to_literal`` / ``from_literal``: Python literals (tuples, dicts with
  integer keys) as Lark's grammar tables hold them, tagged so that they
  survive JSON.

>>> from dataclasses import dataclass
>>> @dataclass(frozen=True)
... class P:
...     name: str
...     sizes: tuple[int, ...] = ()
>>> from_plain(to_plain(P("x", (1, 2))), P)
P(name='x', sizes=(1, 2))
>>> from_literal(to_literal({1: ("a", None)}))
{1: ('a', None)}
"""

from __future__ import annotations

import dataclasses
import sys
import types
import typing
from functools import cache
from typing import Any, Union


def to_plain(value: Any) -> Any:
    """A dataclass value (or a structure of them) as JSON-ready data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (tuple, list)):
        return [to_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): to_plain(v) for k, v in value.items()}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"{type(value).__name__} is not plain data")


def from_plain(data: Any, kind: Any) -> Any:
    """Rebuild a value of type ``kind`` from ``to_plain``'s data; ValueError if it does not fit."""
    origin = typing.get_origin(kind)
    if kind is Any:
        return data
    if origin in (Union, types.UnionType):
        options = typing.get_args(kind)
        if data is None and type(None) in options:
            return None
        for option in options:
            if option is type(None):
                continue
            try:
                return from_plain(data, option)
            except ValueError:
                continue
        raise ValueError(f"{data!r:.60} fits none of {kind}")
    if dataclasses.is_dataclass(kind):
        if not isinstance(data, dict):
            raise ValueError(f"{kind.__name__} expects an object")
        hints = _hints(kind)
        names = [f.name for f in dataclasses.fields(kind) if f.init]
        if set(data) != set(names):
            raise ValueError(f"{kind.__name__} fields differ: {sorted(set(data) ^ set(names))}")
        return kind(**{name: from_plain(data[name], hints[name]) for name in names})
    if origin is tuple:
        args = typing.get_args(kind)
        if not isinstance(data, list):
            raise ValueError(f"{kind} expects a list")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(from_plain(v, args[0]) for v in data)
        if len(args) != len(data):
            raise ValueError(f"{kind} expects {len(args)} items")
        return tuple(from_plain(v, a) for v, a in zip(data, args))
    if origin is list:
        if not isinstance(data, list):
            raise ValueError(f"{kind} expects a list")
        (item,) = typing.get_args(kind)
        return [from_plain(v, item) for v in data]
    if origin is dict:
        key, item = typing.get_args(kind)
        if not isinstance(data, dict) or key is not str:
            raise ValueError(f"{kind} expects an object with string keys")
        return {k: from_plain(v, item) for k, v in data.items()}
    if kind is float and isinstance(data, int) and not isinstance(data, bool):
        return float(data)
    if kind in (str, int, float, bool) and type(data) is kind:
        return data
    if kind is type(None) and data is None:
        return None
    raise ValueError(f"{data!r:.60} is not a {getattr(kind, '__name__', kind)}")


@cache
def _hints(kind: type) -> dict[str, Any]:
    """A dataclass's field types, with ``from __future__ import annotations`` resolved."""
    return typing.get_type_hints(kind, vars(sys.modules[kind.__module__]))


def to_literal(value: Any) -> Any:
    """Tuples and dicts with non-string keys, tagged for JSON: ``{"(": [...]}``, ``{"{": [[k, v]]}``."""
    if isinstance(value, tuple):
        return {"(": [to_literal(v) for v in value]}
    if isinstance(value, list):
        return [to_literal(v) for v in value]
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value) and set(value) not in ({"("}, {"{"}):
            return {k: to_literal(v) for k, v in value.items()}
        return {"{": [[to_literal(k), to_literal(v)] for k, v in value.items()]}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"{type(value).__name__} is not a literal")


def from_literal(data: Any) -> Any:
    """Undo ``to_literal``."""
    if isinstance(data, list):
        return [from_literal(v) for v in data]
    if isinstance(data, dict):
        if len(data) == 1 and "(" in data:
            return tuple(from_literal(v) for v in data["("])
        if len(data) == 1 and "{" in data:
            return {_hashable(from_literal(k)): from_literal(v) for k, v in data["{"]}
        return {k: from_literal(v) for k, v in data.items()}
    return data


def _hashable(key: Any) -> Any:
    if isinstance(key, (list, dict)):
        raise ValueError("a dict key must be a literal that can be hashed")
    return key
