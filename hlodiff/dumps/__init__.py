"""Dump directories: file names, modules, the main program, and pairing two runs.

``naming`` reads what a file name says; ``catalogue`` groups a directory's
files into modules and picks the main program; ``pairing`` matches the
modules of two runs; ``mlir`` reads JAX's module.mlir sidecar; ``pool``
reads many files on every core.

What this package exports loads on first use: the installed command imports
``pool`` first, to start a worker, before anything reads a file name
(hlodiff/command.py).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .catalogue import (Dump, DumpModule, ListedModule, Listing, MainProgram, file_dump,
                            human_size, list_dump, load_dump, load_target)
    from .naming import (AFTER, BEFORE, HLO_TEXT, IN_PASS, PASS, UNKNOWN, DumpFile, NamePart,
                         ProgramName, Stage, classify, legend, normalise_program, program_name)
    from .naming import explain as explain_name

# Where each name is defined: (module, its name there).
_WHERE = {
    **{name: ("catalogue", name) for name in (
        "Dump", "DumpModule", "ListedModule", "Listing", "MainProgram", "file_dump",
        "human_size", "list_dump", "load_dump", "load_target")},
    **{name: ("naming", name) for name in (
        "AFTER", "BEFORE", "HLO_TEXT", "IN_PASS", "PASS", "UNKNOWN", "DumpFile", "NamePart",
        "ProgramName", "Stage", "classify", "legend", "normalise_program", "program_name")},
    "explain_name": ("naming", "explain"),
}


def __getattr__(name: str):
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, defined_as = _WHERE[name]
    return getattr(import_module(f".{module}", __name__), defined_as)


def __dir__() -> list[str]:
    """What is here and what loads on first use: completion offers both."""
    return sorted(set(globals()) | set(_WHERE))

__all__ = sorted(_WHERE)
