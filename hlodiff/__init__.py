"""hlodiff: why did two runs of a model not share a compiled XLA executable?

The public API: ``parse`` / ``parse_file`` read HLO text into a ``Module``;
errors are ``HlodiffError`` (``HloSyntaxError`` for bad HLO text).
"""

from .dumps import load_dump
from .errors import HlodiffError, HloSyntaxError
from .model import (Attribute, Computation, Frame, Instruction, Layout, Literal, Module,
                    Origin, Shape, StackFrameTable)
from . import opcodes
from .parser import check, parse, parse_file

__version__ = "0.1.0"

__all__ = [
    "Attribute", "Computation", "Frame", "HlodiffError", "HloSyntaxError", "Instruction",
    "Layout", "Literal", "Module", "Origin", "Shape", "StackFrameTable", "check", "parse",
    "parse_file", "load_dump",
]
