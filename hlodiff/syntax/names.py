"""The names XLA gives what it reads: its ``NameUniquer``, rule for rule.

XLA's parser keeps the names the text gives, then the module makes them
unique (``HloModule::AddComputationInternal``): every computation's name,
and every instruction's name across the whole module, in the order the
computations were made. So an entry instruction ``t`` becomes ``t.1`` when
a computation before it has a ``t`` of its own. Numeric suffixes take part:
``x`` and ``x.0`` are the same name to XLA (the second becomes ``x.1``), and
``c.007`` is printed back as ``c.7``. hlodiff names things as XLA does, so
a module and XLA's print of it have the same names.

Rules from ``xla/service/name_uniquer.cc`` (``GetSanitizedName``,
``GetUniqueName``, ``SequentialIdGenerator``).
"""

from __future__ import annotations

import re

from .values import ELEMENT_TYPES

_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_.\-]")
# absl::SimpleAtoi on what follows the last '.': an optional sign, digits.
_NUMBER = re.compile(r"[+-]?[0-9]+")
_INT64 = 1 << 63


def sanitized(name: str) -> str:
    """The name XLA would use for ``name``: characters it does not allow
    become '_', a primitive type name gets a '_' appended, and a leading
    ``__`` (reserved for backends, except ``__xla_``) becomes ``a_``."""
    if not name:
        return name
    if not (name[0].isascii() and (name[0].isalpha() or name[0] == "_")):
        name = "_" + name[1:]
    name = name[0] + _NOT_ALLOWED.sub("_", name[1:])
    if name in ELEMENT_TYPES and name not in ("tuple", "buffer"):
        name += "_"
    if name.startswith("__") and not name.startswith("__xla_"):
        name = "a" + name[1:]
    return name


def _root_and_number(name: str) -> tuple[str, int, bool]:
    """``add.12`` -> ("add", 12, True); ``add`` -> ("add", 0, False)."""
    dot = name.rfind(".")
    if 0 < dot < len(name) - 1:
        suffix = name[dot + 1:]
        if _NUMBER.fullmatch(suffix):
            number = int(suffix)
            if -_INT64 <= number < _INT64:
                return name[:dot], number, True
    return name, 0, False


class NameUniquer:
    """XLA's ``NameUniquer`` with '.' as separator: ``unique(name)`` returns
    the name XLA gives the next thing named ``name``."""

    __slots__ = ("_used", "_next")

    def __init__(self) -> None:
        self._used: dict[str, set[int]] = {}
        self._next: dict[str, int] = {}

    def unique(self, prefix: str) -> str:
        root, number, has_number = _root_and_number(sanitized(prefix or "name"))
        used = self._used.setdefault(root, set())
        if number in used:
            number = self._next.get(root, 0)
            while number in used:
                number += 1
            self._next[root] = number + 1
        used.add(number)
        if number == 0:
            return f"{root}.0" if has_number else root
        return f"{root}.{number}"


# A numeric suffix XLA would print differently (".007", ".-3"), so renames.
_UNUSUAL_NUMBER = re.compile(r"\.(?:0|[+-])[0-9]+(?=\n|\Z)")
_RESERVED = re.compile(r"^__(?!xla_)", re.M)
_NOT_ALLOWED_IN_NAMES = re.compile(r"[^A-Za-z0-9_.\-\n]")
_ZERO_SUFFIX = re.compile(r"\.0\n")


def already_unique(names: list[str]) -> bool:
    """True when XLA would keep every name in ``names`` as it is: they are
    distinct, none names the same thing as another (``x`` and ``x.0``; dumps
    are full of ``slice.0``), and none is changed by sanitizing. True for
    every module XLA printed itself; checked at C speed on the joined names."""
    distinct = set(names)
    if len(distinct) != len(names):
        return False
    joined = "\n".join(names)
    joined += "\n"
    if _UNUSUAL_NUMBER.search(joined) or not ELEMENT_TYPES.isdisjoint(distinct) \
            or not joined.isascii() and _NOT_ALLOWED_IN_NAMES.search(joined) \
            or ("\n__" in joined or joined.startswith("__")) and _RESERVED.search(joined):
        return False
    for zero in _ZERO_SUFFIX.finditer(joined):  # "x.0" and "x" are one name
        if joined[joined.rfind("\n", 0, zero.start()) + 1:zero.start()] in distinct:
            return False
    return True
