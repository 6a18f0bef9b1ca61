"""Constant values from JAX's ``module.mlir`` sidecar, for constants HLO elided.

XLA prints a large constant as ``constant({...})``, so two dumps that both
elide it cannot be compared from the HLO text. JAX (0.4.30 and later) also
writes the StableHLO it handed to XLA as ``module_NNNN.<name>/module.mlir``,
where constants keep every value (``dense<"0x...">`` or ``dense<[...]>``).
When both runs have that file, the constants of a given tensor type can be
compared there, and shown decoded.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import dataclass
from pathlib import Path

from ..model import Shape

_CONSTANT = re.compile(r"""stablehlo\.constant\s+dense<("0x[0-9A-Fa-f]*"|[^>]*)>\s*:\s*"""
                       r"""tensor<((?:[^<>]|<[^<>]*>)*)>""")
_TENSOR = re.compile(r"((?:\d+x)*)(.+)")

# HLO element type -> MLIR element type.
_MLIR_TYPES = {
    "pred": "i1", "s2": "i2", "s4": "i4", "s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64",
    "u2": "ui2", "u4": "ui4", "u8": "ui8", "u16": "ui16", "u32": "ui32", "u64": "ui64",
    "f16": "f16", "bf16": "bf16", "f32": "f32", "f64": "f64",
    "f8e5m2": "f8E5M2", "f8e4m3": "f8E4M3", "f8e4m3fn": "f8E4M3FN",
    "f8e4m3b11fnuz": "f8E4M3B11FNUZ", "f8e5m2fnuz": "f8E5M2FNUZ", "f8e4m3fnuz": "f8E4M3FNUZ",
    "f8e3m4": "f8E3M4", "f8e8m0fnu": "f8E8M0FNU", "f6e3m2fn": "f6E3M2FN", "f6e2m3fn": "f6E2M3FN",
    "f4e2m1fn": "f4E2M1FN", "c64": "complex<f32>", "c128": "complex<f64>",
}

# MLIR element type -> (bits, decoder of the integer holding one element)
_INTEGER_BITS = {"i1": 1, "i2": 2, "i4": 4, "i8": 8, "i16": 16, "i32": 32, "i64": 64,
                 "ui2": 2, "ui4": 4, "ui8": 8, "ui16": 16, "ui32": 32, "ui64": 64}


@dataclass(frozen=True)
class _Minifloat:
    """A small float format: exponent and mantissa bits, and how it spends its top codes."""

    exponent: int
    mantissa: int
    bias: int
    infinities: bool = True  # IEEE-like: top exponent is inf/nan
    nan_is_negative_zero: bool = False  # the "fnuz" kinds: -0's code is NaN, no infinities
    finite_only: bool = False  # the "fn" kinds: only all-ones is NaN
    signed: bool = True

    @property
    def bits(self) -> int:
        return self.exponent + self.mantissa + (1 if self.signed else 0)

    def decode(self, code: int) -> float:
        sign = -1.0 if self.signed and code >> (self.exponent + self.mantissa) & 1 else 1.0
        exponent = code >> self.mantissa & ((1 << self.exponent) - 1)
        mantissa = code & ((1 << self.mantissa) - 1)
        top = (1 << self.exponent) - 1
        if self.nan_is_negative_zero and sign < 0 and exponent == 0 and mantissa == 0:
            return math.nan
        if self.infinities and exponent == top:
            return sign * math.inf if mantissa == 0 else math.nan
        if self.finite_only and exponent == top and mantissa == (1 << self.mantissa) - 1:
            return math.nan
        if not self.signed and self.mantissa == 0:  # e8m0: a power of two, all ones is NaN
            return math.nan if exponent == top else 2.0 ** (exponent - self.bias)
        if exponent == 0:
            return sign * mantissa * 2.0 ** (1 - self.bias - self.mantissa)
        return sign * (1 + mantissa / (1 << self.mantissa)) * 2.0 ** (exponent - self.bias)


_FLOATS = {
    "f16": _Minifloat(5, 10, 15), "bf16": _Minifloat(8, 7, 127), "f32": _Minifloat(8, 23, 127),
    "f64": _Minifloat(11, 52, 1023),
    "f8E5M2": _Minifloat(5, 2, 15), "f8E4M3": _Minifloat(4, 3, 7),
    "f8E4M3FN": _Minifloat(4, 3, 7, infinities=False, finite_only=True),
    "f8E4M3B11FNUZ": _Minifloat(4, 3, 11, infinities=False, nan_is_negative_zero=True),
    "f8E5M2FNUZ": _Minifloat(5, 2, 16, infinities=False, nan_is_negative_zero=True),
    "f8E4M3FNUZ": _Minifloat(4, 3, 8, infinities=False, nan_is_negative_zero=True),
    "f8E3M4": _Minifloat(3, 4, 3), "f8E8M0FNU": _Minifloat(8, 0, 127, infinities=False,
                                                           signed=False),
    "f6E3M2FN": _Minifloat(3, 2, 3, infinities=False), "f6E2M3FN": _Minifloat(2, 3, 1, infinities=False),
    "f4E2M1FN": _Minifloat(2, 1, 1, infinities=False),
}


def mlir_type(shape: Shape) -> str:
    """``f32[64,32]`` -> ``64x32xf32``, the spelling of tensor types in MLIR."""
    element = _MLIR_TYPES.get(shape.element_type, shape.element_type)
    dims = "x".join(str(d) for d in shape.dimensions)
    return f"{dims}x{element}" if dims else element


def read_constants(path: Path) -> dict[str, list[str]]:
    """The ``stablehlo.constant`` values in ``path`` that HLO holds as
    constants, by tensor type, in file order: what a constant XLA printed as
    ``{...}`` is paired with. A splat of more than one element is not one:
    XLA reads it as a broadcast of a scalar constant (its prepare-for-export
    pass), so a ``dense<1> : tensor<4x16xi32>`` JAX stages for an array of
    ones closed over is no HLO constant, and counting it left the token ids
    beside it unpaired (a Hugging Face Flax BERT given an attention mask of
    ones made outside the step, against one built in it)."""
    found = constants_in(path.read_text(encoding="utf-8", errors="replace"))
    return {tensor: kept for tensor, values in found.items()
            if (kept := [v for v in values if not _splat(tensor, v)])}


def _splat(tensor: str, value: str) -> bool:
    """A value of more than one element written as one: ``dense<1>``, or
    ``dense<"0x0000803F">`` (the bytes of one element) for a 2x3xf32."""
    dims = _dims(tensor)
    if not dims or math.prod(dims) <= 1:
        return False  # a scalar, one element or a dynamic size: as HLO holds it
    if value.startswith('"0x'):
        width = _element_width(_TENSOR.fullmatch(tensor).group(2))
        return width is not None and len(value) - 4 == 2 * width[1]
    return not value.lstrip().startswith("[")


def _element_width(element: str) -> tuple[int, int] | None:
    """The bits of an element of type ``element`` and the bytes MLIR stores
    it in (whole bytes: an i1 or an f4 in one); None for a type without
    bits here (complex)."""
    bits = _INTEGER_BITS.get(element) or (_FLOATS[element].bits if element in _FLOATS else None)
    return None if bits is None else (bits, max(1, (bits + 7) // 8))


def constants_in(text: str) -> dict[str, list[str]]:
    """Every ``stablehlo.constant`` value in MLIR ``text``, by tensor type, in order."""
    found: dict[str, list[str]] = {}
    for value, tensor in _CONSTANT.findall(text):
        found.setdefault(tensor.strip(), []).append(value)
    return found


@dataclass(frozen=True)
class Settled:
    """What module.mlir says about constants of one tensor type in both runs.

    ``differ`` is True or False when both runs hold them, None when the
    values could not be found on both sides (``detail`` says why).
    """

    differ: bool | None
    detail: str


def settle(tensor: str, old: list[str] | None, new: list[str] | None) -> Settled:
    """Compare the constants of type ``tensor<tensor>`` of two module.mlir files."""
    missing = [side for side, values in (("a", old), ("b", new)) if not values]
    if missing:
        sides = " and ".join(f"run {s}" for s in missing)
        return Settled(None, f"module.mlir of {sides} holds no constant of type tensor<{tensor}>")
    if len(old) != len(new):
        return Settled(None, f"module.mlir holds {len(old)} vs {len(new)} constants of type "
                             f"tensor<{tensor}>: they cannot be paired")
    for a, b in zip(old, new):
        if _normalised(a) == _normalised(b):
            continue
        if a.startswith('"0x') or b.startswith('"0x'):
            # bytes: equal when they decode to the same elements (a splat is
            # one element for all); two hex strings of one length that are
            # not elements (the digests an hlo_snapshot keeps) differ as text;
            # anything else (damaged hex, one side decoding) is undecided
            va, vb = decode(tensor, a), decode(tensor, b)
            if va is not None and vb is not None:
                if _bits(va) == _bits(vb):
                    continue
            elif not (va is None and vb is None and len(a) == len(b)
                      and _is_hex(a) and _is_hex(b)):
                return Settled(None, f"module.mlir holds a value of tensor<{tensor}> that "
                                     "cannot be decoded: the values cannot be compared")
        detail = element_difference(tensor, a, b)
        return Settled(True, f"module.mlir shows different values of tensor<{tensor}>"
                             + (f": {detail}" if detail else ""))
    return Settled(False, f"module.mlir shows the same values of tensor<{tensor}>")


def _is_hex(value: str) -> bool:
    """``"0x..."`` with hexadecimal digits only."""
    return value.startswith('"0x') and value.endswith('"') and all(
        c in "0123456789abcdefABCDEF" for c in value[3:-1])


def _bits(values: list[float | int]) -> list[bytes]:
    """Each element's bits as a double: -0.0 is not 0.0, NaN equals its own bits."""
    return [struct.pack("<d", float(v)) for v in values]


def _normalised(value: str) -> str:
    return value.upper() if value.startswith('"0x') else " ".join(value.split())


def decode(tensor: str, value: str) -> list[float | int] | None:
    """The elements of a ``dense<...>`` value of type ``tensor``, or None when unknown."""
    typed = _TENSOR.fullmatch(tensor)
    if typed is None or not value.startswith('"0x') or not value.endswith('"'):
        return None
    shape, element = typed.groups()
    dims = [int(d) for d in shape.split("x") if d]
    count = math.prod(dims) if dims else 1
    try:
        raw = bytes.fromhex(value[3:-1])
    except ValueError:  # not hexadecimal: a damaged file
        return None
    sizes = _element_width(element)
    if sizes is None:
        return None
    bits, width = sizes
    if len(raw) == width:  # a splat: one value for every element
        raw = raw * count
    if len(raw) != width * count:
        return None
    codes = [int.from_bytes(raw[i:i + width], "little") for i in range(0, len(raw), width)]
    if element in _FLOATS:
        return [_FLOATS[element].decode(c & ((1 << bits) - 1)) for c in codes]
    mask = (1 << bits) - 1
    codes = [c & mask for c in codes]
    if element.startswith("i") and element != "i1":
        codes = [c - (1 << bits) if c >> (bits - 1) else c for c in codes]
    return codes


def element_difference(tensor: str, a: str, b: str) -> str:
    """``[3]: 0.75 -> -0.75 (1 of 3072 elements differ)``, decoded; "" when undecodable."""
    va, vb = decode(tensor, a), decode(tensor, b)
    if va is None or vb is None or len(va) != len(vb):
        return ""
    bits_a, bits_b = _bits(va), _bits(vb)
    differing = [i for i in range(len(va)) if bits_a[i] != bits_b[i]]
    if not differing:
        return ""
    shown = ", ".join(f"[{i}]: {va[i]:.9g} -> {vb[i]:.9g}" for i in differing[:3])
    more = ", ..." if len(differing) > 3 else ""
    return f"{shown}{more} ({len(differing)} of {len(va)} elements differ)"


def without_locations(text: str) -> list[str]:
    """The lines of a module.mlir without its debug information: the ``#loc``
    table and every ``loc(...)`` (source lines, op_names, argument names).
    JAX keys its persistent cache on the StableHLO serialized without them
    (jax/_src/cache_key.py), so two files equal so are one key's worth, names
    and lines aside (checked over the corpus: where they differ, the observed
    keys differ too)."""
    from ..syntax.lexer import ScanError, balanced_end  # here: a cached diff needs no lexer
    kept = []
    for line in text.split("\n"):
        if line.startswith("#loc"):
            continue
        while (at := line.find(" loc(")) >= 0:
            try:
                end = balanced_end(line, at + len(" loc"))
            except ScanError:  # never closed: the rest of the line is it
                end = len(line)
            line = line[:at] + line[end:]
        kept.append(line)
    return kept


def stablehlo_lines(path: Path) -> list[str] | None:
    """The lines of a module.mlir without its debug information
    (``without_locations``); None when it cannot be read."""
    try:
        return without_locations(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return None


def first_difference(a: list[str], b: list[str]) -> tuple[str, str] | None:
    """The first line in which two module.mlir's lines (``stablehlo_lines``)
    differ; None when they do not."""
    if a == b:
        return None
    for x, y in zip(a, b):
        if x != y:
            return x.strip(), y.strip()
    return (a[len(b)].strip(), "") if len(a) > len(b) else ("", b[len(a)].strip())


# The ops XLA folds into a constant when it reads StableHLO whose operand is
# one (checked with jax 0.10: a labels array ``ids[:, 1:][..., None]`` of
# token ids closed over is ``slice`` then ``broadcast_in_dim`` in module.mlir
# and one ``s32[4,15,1] constant({...})`` in the HLO). A broadcast that makes
# more elements stays a broadcast, as a splat does.
_FUNC = re.compile(r"^\s*func\.func\b", re.M)
_VALUE = r"(%[\w.#$-]+)"
_TYPES = r":\s*\(tensor<([^>]*)>\)\s*->\s*tensor<([^>]*)>"
_SHAPE_OPS = {
    "slice": re.compile(_VALUE + r"\s*=\s*stablehlo\.slice\s+" + _VALUE + r"\s*\[([^\]]*)\]\s*"
                        + _TYPES),
    "reshape": re.compile(_VALUE + r"\s*=\s*stablehlo\.reshape\s+" + _VALUE + r"\s*" + _TYPES),
    "transpose": re.compile(_VALUE + r"\s*=\s*stablehlo\.transpose\s+" + _VALUE
                            + r",\s*dims\s*=\s*\[([^\]]*)\]\s*" + _TYPES),
    "broadcast_in_dim": re.compile(_VALUE + r"\s*=\s*stablehlo\.broadcast_in_dim\s+" + _VALUE
                                   + r",\s*dims\s*=\s*\[([^\]]*)\]\s*" + _TYPES),
}
_DEFINED = re.compile(r"^\s*" + _VALUE + r"(?::\d+)?\s*=\s*stablehlo\.constant\s")


def folded_constants(path: Path) -> dict[str, list[str]]:
    """The constants XLA makes of ``slice``, ``reshape``, ``transpose`` and
    ``broadcast_in_dim`` (adding only dimensions of size 1) applied to a
    ``stablehlo.constant``, by tensor type, in file order: the values of HLO
    constants module.mlir holds under no type of their own. Only those some op
    other than these reads are kept (the ones folded further are no HLO
    constant). Values are computed on the elements as module.mlir writes them
    (hex bytes or a list), so two runs are compared by value."""
    return folded_in(path.read_text(encoding="utf-8", errors="replace"))


def folded_in(text: str) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    starts = [m.start() for m in _FUNC.finditer(text)] or [0]
    for start, end in zip(starts, starts[1:] + [len(text)]):
        for tensor, value in _fold_function(text[start:end]):
            found.setdefault(tensor, []).append(value)
    return found


def _fold_function(body: str) -> list[tuple[str, str]]:
    values: dict[str, tuple[str, list[str], bool]] = {}  # name -> (tensor, elements, hex)
    folded: list[tuple[str, str]] = []  # (name, tensor), in order
    consumed: dict[str, int] = {}  # uses of a value by a folded op
    for line in body.split("\n"):
        defined = _DEFINED.match(line)
        if defined:
            constant = _CONSTANT.search(line)
            if constant and not _splat(constant.group(2).strip(), constant.group(1)):
                elements = _elements(constant.group(2).strip(), constant.group(1))
                if elements is not None:
                    values[defined.group(1)] = (constant.group(2).strip(), *elements)
            continue
        for op, pattern in _SHAPE_OPS.items():
            m = pattern.search(line)
            if m is None or m.group(2) not in values:
                continue
            name, source = m.group(1), m.group(2)
            tensor_in, elements, is_hex = values[source]
            out = _fold(op, m, tensor_in, elements)
            if out is not None:
                values[name] = (m.groups()[-1].strip(), out, is_hex)
                folded.append((name, m.groups()[-1].strip()))
                consumed[source] = consumed.get(source, 0) + 1
            break
    kept = []
    for name, tensor in folded:
        uses = len(re.findall(re.escape(name) + r"(?![\w.#$-])", body)) - 1  # its definition
        if uses > consumed.get(name, 0):
            _, elements, is_hex = values[name]
            kept.append((tensor, '"0x' + "".join(elements) + '"' if is_hex
                         else "[" + ", ".join(elements) + "]"))
    return kept


def _dims(tensor: str) -> list[int] | None:
    typed = _TENSOR.fullmatch(tensor)
    parts = typed.group(1).split("x")[:-1] if typed else None
    if parts is None or not all(p.isdigit() for p in parts):
        return None
    return [int(p) for p in parts]


def _elements(tensor: str, value: str) -> tuple[list[str], bool] | None:
    """Each element as written (a hex chunk of its bytes, or a list item), and
    whether they are hex; None for a value this cannot split (complex, dynamic)."""
    dims, typed = _dims(tensor), _TENSOR.fullmatch(tensor)
    if dims is None or typed is None:
        return None
    count = math.prod(dims)
    if value.startswith('"0x'):
        sizes = _element_width(typed.group(2))
        if sizes is None or not _is_hex(value):
            return None
        width = 2 * sizes[1]  # hex digits per element
        digits = value[3:-1].upper()
        chunks = [digits[i:i + width] for i in range(0, len(digits), width)]
        chunks = chunks * count if len(chunks) == 1 else chunks
        return (chunks, True) if len(chunks) == count else None
    if "(" in value or '"' in value:
        return None
    items = [t.strip() for t in value.replace("[", " ").replace("]", " ").split(",")]
    items = [t for t in items if t]
    items = items * count if len(items) == 1 else items
    return (items, False) if len(items) == count else None


def _strides(dims: list[int]) -> list[int]:
    out, step = [], 1
    for d in reversed(dims):
        out.append(step)
        step *= d
    return out[::-1]


def _fold(op: str, m: re.Match, tensor_in: str, elements: list[str]) -> list[str] | None:
    """The elements of ``op`` applied to ``elements`` of ``tensor_in``, or None
    when the op is not one XLA folds (a broadcast adding elements) or its
    types do not add up."""
    tensor_out = m.groups()[-1].strip()
    ins, outs = _dims(m.groups()[-2].strip()), _dims(tensor_out)
    if ins is None or outs is None or m.groups()[-2].strip() != tensor_in \
            or math.prod(ins) != len(elements):
        return None
    if op == "reshape":
        return list(elements) if math.prod(outs) == len(elements) else None
    index_of = _strides(ins)
    if op == "slice":
        ranges = []
        for part in m.group(3).split(","):
            bounds = [int(b) for b in part.strip().split(":")] if part.strip() else []
            if len(bounds) not in (2, 3):
                return None
            ranges.append(range(*bounds))
        if [len(r) for r in ranges] != outs or len(ranges) != len(ins):
            return None
        sources = [0]
        for axis, r in enumerate(ranges):
            sources = [s + i * index_of[axis] for s in sources for i in r]
        return [elements[s] for s in sources]
    order = [int(d) for d in m.group(3).split(",") if d.strip()]
    if op == "transpose":
        if sorted(order) != list(range(len(ins))) or outs != [ins[d] for d in order]:
            return None
        mapping = order  # result axis k reads operand axis order[k]
        into = [index_of[d] for d in mapping]
    else:  # broadcast_in_dim: operand axis k is result axis order[k]
        if math.prod(outs) != len(elements) or len(order) != len(ins) \
                or any(outs[d] != n for d, n in zip(order, ins)):
            return None
        into = [0] * len(outs)
        for k, d in enumerate(order):
            into[d] = index_of[k]
    sources = [0]
    for axis, n in enumerate(outs):
        sources = [s + i * into[axis] for s in sources for i in range(n)]
    return [elements[s] for s in sources]
