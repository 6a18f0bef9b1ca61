"""What differs between two aligned modules: a list of ``Change`` records.

Each matched instruction pair is compared on what XLA would compile:
opcode, shape (split into dtype, dimensions and layout), constant value,
attributes (parsed, so spacing does not count) and, separately, metadata,
which no compiled program depends on. Unmatched instructions are added or
removed. Every change carries the origin of its instruction in the user's
code; a constant without metadata borrows its users' origin.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from typing import TYPE_CHECKING

from .constants import constant_origin, users_of
from ..model import Attribute, Instruction, Module, Origin, Shape, element_value

if TYPE_CHECKING:  # aligning is imported when a diff is computed, not to read a cached one
    from .align import Alignment, ComputationMatch

KINDS = ("constant", "shape", "dtype", "layout", "opcode", "op_added", "op_removed", "attribute",
         "parameter", "constant_to_parameter", "parameter_to_constant", "metadata",
         "elided_constant", "module_added", "module_removed")

_NOT_COMPILED = frozenset({"metadata", "statistics"})
_CALLS = frozenset({"calls", "to_apply", "condition", "body", "select", "scatter",
                    "true_computation", "false_computation", "branch_computations",
                    "called_computations"})


@dataclass(frozen=True)
class Change:
    """One difference at one place.

    ``old`` and ``new`` are as printed in the HLO (a literal, a shape, an
    opcode, an attribute value); ``detail`` says more where needed (the
    attribute name, the differing array elements). ``a`` and ``b`` name the
    instruction on each side (None when it exists on one side only).
    """

    kind: str
    old: str | None
    new: str | None
    computation: str
    a: str | None
    b: str | None
    origin: Origin = field(default_factory=Origin, compare=False)
    detail: str = ""
    element_type: str | None = None  # of a constant, for the hash rules
    all_zero_or_one: tuple[bool, bool] = (False, False)  # old, new constant is all 0 / all 1
    # For elided constants: None while unknown, True/False once another source
    # (JAX's module.mlir) showed the values.
    values_differ: bool | None = None


def diff_modules(a: Module, b: Module, alignment: Alignment | None = None) -> list[Change]:
    """Every change between ``a`` and ``b``, in b's file order."""
    if alignment is None:
        from .align import align
        alignment = align(a, b)
    changes: list[Change] = header_changes(a, b)
    for match in alignment.computations:
        changes.extend(_ComputationDiff(alignment, match).changes())
    return changes


def _same_value(old: Attribute, new: Attribute) -> bool:
    """Do two attribute texts mean the same (spacing, quoting, key order aside)?

    deepdiff is imported here, on first use: it pulls in numpy and pydantic,
    which would double the start-up of every command.
    """
    from deepdiff import DeepDiff
    return not DeepDiff(old.value, new.value)


def header_changes(a: Module, b: Module) -> list[Change]:
    """Module header attributes that differ: input_output_alias (buffer
    donation), entry_computation_layout, replica_count, num_partitions, ..."""
    old = {attr.name: attr for attr in a.header}
    new = {attr.name: attr for attr in b.header}
    out = []
    for name in list(old) + [n for n in new if n not in old]:
        x, y = old.get(name), new.get(name)
        if x is not None and y is not None and (x.text == y.text or _same_value(x, y)):
            continue
        out.append(Change("attribute", None if x is None else x.text, None if y is None else y.text,
                          "", None, None, Origin(), f"module header: {name}"))
    return out


class _ComputationDiff:
    def __init__(self, alignment: Alignment, match: ComputationMatch):
        self.alignment = alignment
        self.match = match
        self.is_entry = match.a.is_entry or match.a is alignment.a.entry
        self._users_a = None
        self._users_b = None

    # origins ------------------------------------------------------------------------

    def _origin(self, module: Module, instruction: Instruction, users_attr: str) -> Origin:
        if instruction.opcode != "constant":
            return module.origin(instruction)
        users = getattr(self, users_attr)
        if users is None:
            computation = self.match.a if users_attr == "_users_a" else self.match.b
            users = users_of(computation)
            setattr(self, users_attr, users)
        return constant_origin(module, instruction, users)[0]

    def origin_b(self, y: Instruction) -> Origin:
        return self._origin(self.alignment.b, y, "_users_b")

    def origin_a(self, x: Instruction) -> Origin:
        return self._origin(self.alignment.a, x, "_users_a")

    # changes --------------------------------------------------------------------------------

    def changes(self) -> list[Change]:
        m = self.match
        if m.unchanged:  # the same text in both runs: nothing can differ
            return []
        out: list[Change] = []
        reverse = {y: x for x, y in m.pairs.items()}
        for y in m.b.instructions:
            x_name = reverse.get(y.name)
            if x_name is None:
                out.append(self._one_sided("op_added", None, y))
                continue
            how = m.how.get(x_name)
            if how == "unchanged":  # the same text in both runs: nothing can differ
                continue
            x = m.a.by_name[x_name]
            if how == "exact" and x.opcode != "constant":
                # Equal fingerprints: opcode, shape and attributes are the same by
                # construction; only metadata can differ. (Constants still go the
                # long way: equal text {...} does not mean equal values.)
                out.extend(self._attribute_changes(x, y, only=_NOT_COMPILED))
            else:
                out.extend(self._compare(x, y))
        for x in m.unmatched_a:
            out.append(self._one_sided("op_removed", x, None))
        if self.is_entry:
            out.extend(self._parameter_count())
        return out

    def _change(self, kind, old, new, x, y, detail="", **extra) -> Change:
        origin = self.origin_b(y) if y is not None else Origin()
        if not origin and x is not None:
            origin = self.origin_a(x)
        return Change(kind, old, new, self.match.b.name if y is not None else self.match.a.name,
                      x.name if x is not None else None, y.name if y is not None else None,
                      origin, detail, **extra)

    def _one_sided(self, kind: str, x: Instruction | None, y: Instruction | None) -> Change:
        if kind == "op_added" and y.opcode == "convert":
            converted = self._dtype_conversion(y)
            if converted is not None:
                return converted
        instruction = y if y is not None else x
        text = f"{instruction.opcode} {instruction.shape}" if instruction.shape else instruction.opcode
        if kind == "op_added":
            return self._change(kind, None, text, None, y)
        return self._change(kind, text, None, x, None)

    def _dtype_conversion(self, y: Instruction) -> Change | None:
        """An added convert is a dtype change the user made: ``f32 -> bf16``."""
        source = self.match.b.by_name.get(y.operands[0]) if y.operands else None
        if source is None or source.shape is None or y.shape is None:
            return None
        if _element_types(source.shape) == _element_types(y.shape):
            return None
        return self._change("dtype", str(source.shape), str(y.shape), None, y,
                            detail="a convert was added")

    def _compare(self, x: Instruction, y: Instruction) -> list[Change]:
        out: list[Change] = []
        if x.opcode != y.opcode:
            # The constant's side says where in the user's code the value is used.
            if x.opcode == "constant" and y.opcode == "parameter":
                return [replace(self._change("constant_to_parameter", x.operand_text.strip(),
                                             _parameter_text(y), x, y),
                                origin=self.origin_a(x) or self.origin_b(y))]
            if x.opcode == "parameter" and y.opcode == "constant":
                return [self._change("parameter_to_constant",
                                     _parameter_text(x),
                                     y.operand_text.strip(), x, y)]
            out.append(self._change("opcode", x.opcode, y.opcode, x, y))
        if self.is_entry and x.opcode == y.opcode == "parameter":
            if str(x.shape) != str(y.shape) or x.parameter_number != y.parameter_number:
                out.append(self._change("parameter", _parameter_text(x),
                                        _parameter_text(y), x, y))
        else:
            out.extend(self._shape_changes(x, y))
        if x.opcode == y.opcode == "constant":
            out.extend(self._constant_change(x, y))
        out.extend(self._attribute_changes(x, y))
        return out

    def _shape_changes(self, x: Instruction, y: Instruction) -> list[Change]:
        sx, sy = x.shape, y.shape
        if sx is None or sy is None or str(sx) == str(sy):
            return []
        if _element_types(sx) != _element_types(sy):
            kind = "dtype"
        elif str(sx.without_layout()) != str(sy.without_layout()):
            kind = "shape"
        else:
            kind = "layout"
        return [self._change(kind, str(sx), str(sy), x, y)]

    def _constant_change(self, x: Instruction, y: Instruction) -> list[Change]:
        lx, ly = x.literal, y.literal
        if lx is None or ly is None:
            return []
        element_type = y.shape.element_type if y.shape is not None else None
        if lx.elided and ly.elided:  # equal text, unknown values
            return [self._change("elided_constant", lx.text, ly.text, x, y,
                                 f"{y.shape}: values not printed (dump with "
                                 "XLA_FLAGS=--xla_dump_large_constants to compare them)",
                                 element_type=element_type)]
        if lx == ly:
            return []
        if x.shape is not None and y.shape is not None and str(x.shape.without_layout()) != str(
                y.shape.without_layout()):
            return []  # a shape change says it already; the values cannot line up
        detail = _element_differences(lx.elements, ly.elements) if not lx.parts else ""
        return [self._change("constant", lx.text, ly.text, x, y, detail,
                             element_type=element_type,
                             all_zero_or_one=(_all_zero_or_one(lx.elements),
                                              _all_zero_or_one(ly.elements)))]

    def _attribute_changes(self, x: Instruction, y: Instruction,
                           only: frozenset[str] | None = None) -> list[Change]:
        tx = {n: t for n, t in x.attribute_items if n not in _CALLS and (only is None or n in only)}
        ty = {n: t for n, t in y.attribute_items if n not in _CALLS and (only is None or n in only)}
        if tx == ty:
            return []
        out = []
        metadata_old = metadata_new = None  # set when the metadata text differs
        for name in list(tx) + [n for n in ty if n not in tx]:
            if tx.get(name) == ty.get(name):
                continue
            if name in _NOT_COMPILED:  # metadata is compared by origin, below
                if name == "metadata":
                    metadata_old, metadata_new = x.metadata, y.metadata
                continue
            old, new = x.attribute(name), y.attribute(name)
            if old is not None and new is not None and _same_value(old, new):
                continue
            out.append(self._change("attribute", None if old is None else old.text,
                                    None if new is None else new.text, x, y, detail=name))
        if metadata_old is not None or metadata_new is not None:
            described = _metadata_difference(self.alignment.a.origin(x), self.alignment.b.origin(y))
            if described:
                out.append(self._change("metadata", described[0], described[1], x, y,
                                        detail=described[2]))
        return out

    def _parameter_count(self) -> list[Change]:
        na, nb = len(self.match.a.parameters), len(self.match.b.parameters)
        if na == nb:
            return []
        return [Change("parameter", f"{na} parameters", f"{nb} parameters", self.match.b.name,
                       None, None, Origin(), "the entry computation takes a different number "
                       "of parameters")]


def _parameter_text(instruction: Instruction) -> str:
    """``f32[16,8]{1,0} parameter(0)``, as the HLO line prints it."""
    return f"{instruction.shape} parameter({instruction.parameter_number})"


def _element_types(shape: Shape) -> tuple[str, ...]:
    if shape.tuple_shapes:
        return tuple(t for s in shape.tuple_shapes for t in _element_types(s))
    return (shape.element_type,)


def _all_zero_or_one(elements: tuple[str, ...]) -> bool:
    if not elements:
        return False
    try:
        values = {element_value(e) for e in elements}
    except ValueError:
        return False
    return len(values) == 1 and next(iter(values)) in (0, 1)


def _element_differences(old: tuple[str, ...], new: tuple[str, ...], limit: int = 5) -> str:
    """``[3]: 0.5 -> 0.7, [9]: 1 -> 2 (2 of 16 elements differ)`` for arrays."""
    if len(old) <= 1 or len(old) != len(new):
        return ""
    differing = [i for i, (o, n) in enumerate(zip(old, new)) if o != n and not _same_number(o, n)]
    shown = ", ".join(f"[{i}]: {old[i]} -> {new[i]}" for i in differing[:limit])
    more = ", ... " if len(differing) > limit else ""
    return f"{shown}{more} ({len(differing)} of {len(old)} elements differ)"


def _same_number(a: str, b: str) -> bool:
    try:
        va, vb = element_value(a), element_value(b)
    except ValueError:
        return False
    if isinstance(va, float) and isinstance(vb, float) and math.isnan(va) and math.isnan(vb):
        return True
    return va == vb


def _metadata_difference(old: Origin, new: Origin) -> tuple[str, str, str] | None:
    """(old, new, which fields) for the metadata a person cares about.

    Stack frames are compared resolved (file, function, line): their ids
    are renumbered between runs and mean nothing by themselves.
    """
    keys = [k for k in ("op_name", "op_type", "source_file", "source_line", "stack")
            if getattr(old, k) != getattr(new, k)]
    if not keys:
        return None
    key = keys[0]
    if key == "stack":
        return (" < ".join(f"{f.file}:{f.line}" for f in old.stack[:3]),
                " < ".join(f"{f.file}:{f.line}" for f in new.stack[:3]), "stack")
    return str(getattr(old, key)), str(getattr(new, key)), ", ".join(keys)
