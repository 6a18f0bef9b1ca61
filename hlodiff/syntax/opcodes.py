"""The opcode vocabulary of HLO text.

XLA rejects a word it does not know as an opcode; so does hlodiff, because a
misspelt opcode in a dump means the file is not what it claims to be. Async
"sugar" (``<op>-start``, ``<op>-update``, ``<op>-done``) is accepted for any
opcode that has no asynchronous form of its own, as XLA's parser does.
"""

from __future__ import annotations

from ..model import CALL_ATTRIBUTES

OPCODES = frozenset("""
abs acos acosh add add-dependency after-all all-gather all-gather-done
all-gather-start all-reduce all-reduce-done all-reduce-start all-to-all and
asin asinh async-done async-start async-update atan2 atanh batch-norm-grad
batch-norm-inference batch-norm-training bitcast bitcast-convert broadcast call
cbrt ceil cholesky clamp collective-broadcast collective-permute
collective-permute-done collective-permute-start compare complex concatenate
conditional constant convert convolution copy copy-done copy-start cosine cosh
count-leading-zeros custom-call divide domain dot dynamic-reshape dynamic-slice
dynamic-update-slice erf exponential exponential-minus-one fft floor fusion
gather get-dimension-size get-tuple-element imag infeed iota is-finite log
log-plus-one logistic map maximum minimum mulhi multiply negate not opt-barrier
or outfeed pad parameter partition-id popcnt power ragged-all-to-all ragged-dot
real recv recv-done reduce reduce-precision reduce-scatter reduce-window
remainder replica-id reshape reverse rng rng-bit-generator
rng-get-and-update-state round-nearest-afz round-nearest-even rsqrt scaled-dot
scan scatter select select-and-scatter send send-done set-dimension-size
shift-left shift-right-arithmetic shift-right-logical sign sine sinh slice sort
sqrt stochastic-convert subtract tan tanh topk transpose triangular-solve tuple
while xor
""".split())

# Opcodes that may call computations, and the attributes that name them
# (a computation may be written inline there instead: to_apply={ ... }).
CALLERS = frozenset("""
all-reduce all-reduce-start async-start call conditional custom-call fusion map
reduce reduce-scatter reduce-window scan scatter select-and-scatter sort while
""".split())
CALL_LISTS = frozenset({"branch_computations", "called_computations"})
# Opcodes whose shape XLA makes itself, whatever the text says (see
# hlodiff/syntax/inference.py).
SHAPE_MADE_BY_XLA = frozenset({"after-all", "add-dependency", "outfeed", "send", "send-done",
                               "recv", "recv-done"})
# Opcodes of which XLA makes exactly what the text says, given a shape.
PLAIN = OPCODES - CALLERS - SHAPE_MADE_BY_XLA


def writes_inline(name: str, text: str) -> bool:
    """Does the attribute ``name=text`` write a computation inline?"""
    if name in CALL_LISTS:  # {%a, %b}, or {%a, { ... }}
        return "{" in text[text.find("{") + 1:]
    return name in CALL_ATTRIBUTES and text.lstrip().startswith("{")


def as_written(shape: str | None, opcode: str, attributes, operands: str) -> bool:
    """Does XLA make exactly what this instruction's text says (no shape to
    infer, no nested operand, no async sugar, no computation written
    inline, no shape of its own making)? False when it may not."""
    if shape is None or "(" in operands:
        return False
    if opcode in PLAIN:
        return True
    return opcode in CALLERS and not any(writes_inline(n, t) for n, t in attributes)


# Opcodes that are asynchronous by themselves: their "-update" spelling, and
# a "-start" for send/recv, do not exist.
_NATIVE_ASYNC = frozenset({
    "all-gather", "all-reduce", "collective-permute", "copy", "send", "recv",
})

_ASYNC_SUFFIXES = ("-start", "-update", "-done")


def is_opcode(word: str) -> bool:
    """True when ``word`` is an HLO opcode or valid async sugar for one.

    >>> is_opcode("add"), is_opcode("custom-call-start"), is_opcode("all-reduce-update")
    (True, True, False)
    """
    if word in OPCODES:
        return True
    for suffix in _ASYNC_SUFFIXES:
        if word.endswith(suffix):
            base = word[: -len(suffix)]
            return base in OPCODES and base not in _NATIVE_ASYNC
    return False
