"""hlodiff: why did two runs of a model not share a compiled XLA executable?

The public API: ``compare(a, b)`` explains why two programs differ, from
dumps, HLO text, a ``Module`` or what a framework hands you (``capture``);
``parse`` / ``parse_file`` read HLO text into a ``Module``; errors are
``HlodiffError`` (``HloSyntaxError`` for bad HLO text). Importing hlodiff
imports no framework, no parser, no matcher and no dump reader: each loads
on first use. pytest imports hlodiff in every project where it is installed
(the ``hlo_snapshot`` fixture), and the installed command starts its worker
before loading anything more than this (hlodiff/command.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import HlodiffError, HloSyntaxError

__version__ = "0.1.0"

if TYPE_CHECKING:
    from .comparison import Comparison
    from .dumps import load_dump
    from .integrations.capture import Capture
    from .model import (Attribute, Computation, Frame, Instruction, Layout, Literal, Module,
                        Origin, Shape, StackFrameTable)

_PARSER = frozenset({"check", "parse", "parse_file"})
_MODEL = ("Attribute", "Computation", "Frame", "Instruction", "Layout", "Literal", "Module",
          "Origin", "Shape", "StackFrameTable")
_LAZY = {"Capture": ".integrations.capture", "capture": ".integrations.capture",
         "Comparison": ".comparison", "load_dump": ".dumps", **dict.fromkeys(_MODEL, ".model")}


def __getattr__(name: str):
    """``parse``, ``parse_file`` and ``check`` load the parser (and Lark) on
    first use: the CLI, when it serves a diff from the cache, never needs it.
    The model, ``load_dump``, ``capture`` and their kin load with their first
    use too."""
    if name in _PARSER:
        from .syntax import parser
        return getattr(parser, name)
    if name in _LAZY:
        from importlib import import_module
        return getattr(import_module(_LAZY[name], __name__), name)
    raise AttributeError(f"module 'hlodiff' has no attribute {name!r}")


def __dir__() -> list[str]:
    """What is here and what loads on first use: completion offers both."""
    return sorted(set(globals()) | _PARSER | set(_LAZY))


def compare(a: Any, b: Any, *, select: str | None = None) -> Comparison:
    """Why ``a`` and ``b`` would not share an executable, as ``hlodiff diff`` says it.

    Each side is a dump directory or HLO file (a ``str`` or ``os.PathLike``
    path), HLO text (a ``str`` holding ``{`` and ``HloModule`` or ``ENTRY``:
    anything else is a path), an ``hlodiff.Module``, a ``jax.stages.Lowered``
    (the compile input, with op_names and source lines), a
    ``jax.stages.Compiled`` (the optimized program), PyTorch/XLA tensors (the
    graph pending on them), or a ``capture(...)`` of anything, such as a
    ``tf.function`` with its arguments. ``select`` keeps the programs whose
    name matches a regular expression. The ``Comparison`` has every field of
    the report (``same_executable``, ``recompiles``, ``findings``, each
    finding's lines and neighbourhood in ``context``...) and shows itself in
    a terminal, a rich console and a notebook.
    """
    from .comparison import Comparison
    from .integrations.inputs import compare as compare_inputs
    report, name_a, name_b = compare_inputs(a, b, select=select, context=True)
    return Comparison(report, name_a, name_b)

__all__ = [
    "Attribute", "Capture", "Comparison", "Computation", "Frame", "HlodiffError",
    "HloSyntaxError", "Instruction", "Layout", "Literal", "Module", "Origin", "Shape",
    "StackFrameTable", "capture", "check", "compare", "parse", "parse_file", "load_dump",
]
