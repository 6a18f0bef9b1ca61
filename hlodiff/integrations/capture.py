"""Programs taken from a framework in the same process, as the HLO text a dump would hold.

A test or a notebook holds the program one call away: JAX's
``jax.jit(f).lower(...)`` (the compile input, with op_names and the
stack-frame tables) and ``.compile()`` (the optimized program), TensorFlow's
``experimental_get_compiler_ir``, PyTorch/XLA's pending graph. ``capture``
turns any of them into a ``Capture``: the texts XLA would have dumped for
that program, by stage. hlodiff then reads them exactly as it reads a dump
(hlodiff/integrations/inputs.py), so a capture is explained the same way.

No framework is imported here: an object can only come from a framework
the caller has imported already, so each is looked up in ``sys.modules``.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any

from ..dumps import AFTER, BEFORE
from ..model import Module

_HEADER = re.compile(r"^\s*HloModule\s+([^\s,]+)", re.M)


@dataclass(frozen=True)
class Capture:
    """One program as a framework handed it over.

    ``before`` is the compile input (a dump's before_optimizations file),
    ``after`` the optimized program (after_optimizations), ``text`` an HLO
    text whose stage nobody said (read as a lone HLO file is). ``mlir`` is
    JAX's StableHLO with every constant value, the module.mlir a JAX dump
    keeps beside the HLO. ``framework`` names the framework and its version.
    """

    program: str
    before: str | None = None
    after: str | None = None
    text: str | None = None
    mlir: str | None = None
    framework: str | None = None

    @property
    def stages(self) -> dict[str | None, str]:
        """The texts by stage (BEFORE, AFTER, or None for ``text``)."""
        found = {BEFORE: self.before, AFTER: self.after, None: self.text}
        return {stage: text for stage, text in found.items() if text is not None}

    @property
    def first(self) -> tuple[str | None, str]:
        """The earliest stage held and its text: where the user's own code shows best."""
        return next(iter(self.stages.items()))


def looks_like_hlo(text: str) -> bool:
    """Is this string HLO text rather than a path? HLO text holds a ``{`` and
    an ``HloModule`` header or an ``ENTRY`` computation; a path with both
    would be strange enough to be given as a ``pathlib.Path``."""
    return "{" in text and ("HloModule" in text or "ENTRY" in text)


def program_of(text: str) -> str:
    """The HloModule name of ``text``, or ``program`` for a text without a header."""
    match = _HEADER.search(text)
    return match.group(1) if match else "program"


def capture(program: Any, *args: Any, optimized: bool = False, **kwargs: Any) -> Capture:
    """The HLO of ``program``, from whatever framework object it is.

    * HLO text (``str``) or an ``hlodiff.Module``: as given, stage unknown;
    * ``jax.stages.Lowered``: the compile input with op_names and source
      lines, plus JAX's StableHLO (every constant value); with
      ``optimized``, also compiled, for the optimized program;
    * ``jax.stages.Compiled``: the optimized program;
    * a jitted JAX function and its arguments: ``fn.lower(*args, **kwargs)``;
    * a ``tf.function(jit_compile=True)`` and its arguments: its compile input
      (``stage="hlo"``), with ``optimized`` also ``stage="optimized_hlo"``;
    * PyTorch/XLA tensors (one, or a list): the graph pending on them, before
      optimization (run with ``XLA_HLO_DEBUG=1`` for op names and source lines).

    A ``Capture`` is returned as it is. Raises TypeError for anything else.
    """
    if isinstance(program, (Capture, Module, str)):
        _no_arguments("a program already captured or in text", args, kwargs)
    if isinstance(program, Capture):
        return program
    if isinstance(program, Module):
        from ..syntax.printer import to_text
        return Capture(program.name, text=to_text(program))
    if isinstance(program, str):
        if not looks_like_hlo(program):
            raise TypeError("capture() takes HLO text (a string with an HloModule header or an "
                            "ENTRY computation); to read a file, give its path to compare()")
        return Capture(program_of(program), text=program)
    for reader in (_jax_stage, _tensorflow_function, _jax_function, _torch_xla_tensors):
        captured = reader(program, args, kwargs, optimized)
        if captured is not None:
            return captured
    raise TypeError(f"hlodiff cannot read a {type(program).__module__}.{type(program).__name__}: "
                    "give HLO text, a path, an hlodiff.Module, a jax.stages.Lowered or Compiled, "
                    "a jitted JAX function or a tf.function(jit_compile=True) with its "
                    "arguments, or PyTorch/XLA tensors")


# --- JAX ------------------------------------------------------------------------------

def _jax_stage(program, args, kwargs, optimized: bool) -> Capture | None:
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    stages = jax.stages
    if isinstance(program, stages.Compiled):
        _no_arguments("a jax.stages.Compiled", args, kwargs)
        text = program.as_text()
        if text is None:
            raise TypeError("this JAX backend gives no text for a compiled program")
        return Capture(program_of(text), after=text, framework=f"jax {jax.__version__}")
    if isinstance(program, stages.Lowered):
        _no_arguments("a jax.stages.Lowered", args, kwargs)
        return _lowered(jax, program, optimized)
    return None


def _jax_function(program, args, kwargs, optimized: bool) -> Capture | None:
    jax = sys.modules.get("jax")
    if jax is None or not callable(getattr(program, "lower", None)):
        return None
    return _lowered(jax, program.lower(*args, **kwargs), optimized)


def _lowered(jax, lowered, optimized: bool) -> Capture:
    """The compile input printed as XLA prints it into a dump (``%`` names,
    op_names, the stack-frame tables that give every instruction its source
    line, constants over 10 elements as ``{...}``), and JAX's StableHLO, which
    keeps those constants' values, as the dump's module.mlir does."""
    computation = lowered.compiler_ir("hlo")
    before = computation.as_hlo_module().to_string() if computation is not None else \
        lowered.as_text(dialect="hlo", debug_info=True)
    after = lowered.compile().as_text() if optimized else None
    return Capture(program_of(before), before=before, after=after, mlir=lowered.as_text(),
                   framework=f"jax {jax.__version__}")


def _no_arguments(what: str, args, kwargs) -> None:
    if args or kwargs:
        raise TypeError(f"{what} is a program already: give it without arguments")


# --- TensorFlow -------------------------------------------------------------------------

def _tensorflow_function(program, args, kwargs, optimized: bool) -> Capture | None:
    tf = sys.modules.get("tensorflow")
    compiler_ir = getattr(program, "experimental_get_compiler_ir", None)
    if tf is None or compiler_ir is None:
        return None
    stage = compiler_ir(*args, **kwargs)
    before = stage(stage="hlo")
    after = stage(stage="optimized_hlo") if optimized else None
    return Capture(program_of(before), before=before, after=after,
                   framework=f"tensorflow {tf.__version__}")


# --- PyTorch/XLA ------------------------------------------------------------------------

def _torch_xla_tensors(program, args, kwargs, optimized: bool) -> Capture | None:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    tensors = list(program) if isinstance(program, (list, tuple)) else [program]
    if not tensors or not all(isinstance(t, torch.Tensor) for t in tensors):
        return None
    torch_xla = sys.modules.get("torch_xla")
    if torch_xla is None or not all(t.device.type == "xla" for t in tensors):
        raise TypeError("only tensors on an XLA device (torch_xla.device()) have an XLA graph")
    _no_arguments("a tensor's pending graph", args, kwargs)
    if optimized:
        raise TypeError("PyTorch/XLA gives the pending graph before optimization only")
    # torch-xla has no public call for this; its own debug.graph_saver uses this one.
    text = torch_xla._XLAC._get_xla_tensors_hlo(tensors)
    return Capture(program_of(text), before=text,
                   framework=f"torch_xla {getattr(torch_xla, '__version__', '?')}")
