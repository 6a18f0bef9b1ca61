"""hlodiff: why did two runs of a model not share a compiled XLA executable?

The public API: ``parse`` / ``parse_file`` read HLO text into a ``Module``;
errors are ``HlodiffError`` (``HloSyntaxError`` for bad HLO text).
"""

from .dumps import load_dump
from .errors import HlodiffError, HloSyntaxError
from .model import (Attribute, Computation, Frame, Instruction, Layout, Literal, Module,
                    Origin, Shape, StackFrameTable)
from .syntax import opcodes

__version__ = "0.1.0"

_PARSER = frozenset({"check", "parse", "parse_file"})


def __getattr__(name: str):
    """``parse``, ``parse_file`` and ``check`` load the parser (and Lark) on
    first use: the CLI, when it serves a diff from the cache, never needs it."""
    if name in _PARSER:
        from .syntax import parser
        return getattr(parser, name)
    raise AttributeError(f"module 'hlodiff' has no attribute {name!r}")

__all__ = [
    "Attribute", "Computation", "Frame", "HlodiffError", "HloSyntaxError", "Instruction",
    "Layout", "Literal", "Module", "Origin", "Shape", "StackFrameTable", "check", "parse",
    "parse_file", "load_dump",
]
