"""Constant values from JAX's ``module.mlir`` sidecar, for constants HLO elided.

XLA prints a large constant as ``constant({...})``, so two dumps that both
elide it cannot be compared from the HLO text. JAX (0.4.30 and later) also
writes the StableHLO it handed to XLA as ``module_NNNN.<name>/module.mlir``,
where constants keep every value (``dense<"0x...">``). When both runs have
that file, the constants of a given tensor type can be compared there.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from ..model import Shape

_CONSTANT = re.compile(r"""stablehlo\.constant\s+dense<("0x[0-9A-Fa-f]*"|[^>]*)>\s*:\s*tensor<([^>]*)>""")
_MLIR_TYPES = {"pred": "i1", "s8": "i8", "s16": "i16", "s32": "i32", "s64": "i64",
               "u8": "ui8", "u16": "ui16", "u32": "ui32", "u64": "ui64"}
_UNPACK = {"f32": "f", "f64": "d", "i32": "i", "i64": "q", "ui32": "I", "ui64": "Q",
           "i16": "h", "ui16": "H", "i8": "b", "ui8": "B"}


def mlir_type(shape: Shape) -> str:
    """``f32[64,32]`` -> ``64x32xf32``, the spelling of tensor types in MLIR."""
    element = _MLIR_TYPES.get(shape.element_type, shape.element_type)
    dims = "x".join(str(d) for d in shape.dimensions)
    return f"{dims}x{element}" if dims else element


def read_constants(path: Path) -> dict[str, list[str]]:
    """Every ``stablehlo.constant`` value in ``path``, by tensor type, in file order."""
    found: dict[str, list[str]] = {}
    text = path.read_text(encoding="utf-8", errors="replace")
    for value, tensor in _CONSTANT.findall(text):
        found.setdefault(tensor.strip(), []).append(value)
    return found


def describe_difference(tensor: str, old: list[str], new: list[str]) -> str:
    """What differs between the constants of one tensor type, in a person's words."""
    if len(old) != len(new):
        return f"module.mlir holds {len(old)} vs {len(new)} constants of type tensor<{tensor}>"
    for a, b in zip(old, new):
        if a != b:
            detail = _element_difference(tensor, a, b)
            return f"module.mlir shows different values of tensor<{tensor}>" + \
                (f": {detail}" if detail else "")
    return ""


def _element_difference(tensor: str, a: str, b: str) -> str:
    element = tensor.rsplit("x", 1)[-1]
    code = _UNPACK.get(element)
    if code is None or not (a.startswith('"0x') and b.startswith('"0x')):
        return ""
    try:
        ra, rb = bytes.fromhex(a[3:-1]), bytes.fromhex(b[3:-1])
        size = struct.calcsize(code)
        va = struct.unpack(f"<{len(ra) // size}{code}", ra)
        vb = struct.unpack(f"<{len(rb) // size}{code}", rb)
    except (ValueError, struct.error):
        return ""
    if len(va) != len(vb):
        return ""
    differing = [i for i, (x, y) in enumerate(zip(va, vb)) if x != y]
    if not differing:
        return ""
    first = differing[0]
    return (f"[{first}]: {va[first]:.9g} -> {vb[first]:.9g} "
            f"({len(differing)} of {len(va)} elements differ)")
