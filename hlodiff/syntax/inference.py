"""The shape XLA gives an instruction whose text leaves it out.

XLA's parser accepts ``ROOT s = add(a, b)`` and infers the shape with its
``ShapeInference`` (``xla/service/shape_inference.cc``). This module does the
same for the opcodes such text uses (found in XLA's parser tests and in
modules from public repositories: elementwise operations, tuple,
get-tuple-element, while, conditional, call, reduce, pad, dot, broadcast,
after-all, concatenate, transpose, ...), layouts included: an elementwise
result keeps its first operand's layout, as XLA's does, while a shape made
anew (dot, pad, reduce) gets the default one, and a transpose's follows its
dimensions. For any other opcode the
shape stays unknown (None), as it was in the text.
"""

from __future__ import annotations

from typing import Callable

from ..model import Layout, Shape
from .values import default_layout

_SAME_AS_OPERAND = frozenset("""
abs acos acosh asin asinh atanh cbrt ceil cos cosh count-leading-zeros copy
cosine domain erf exponential exponential-minus-one floor log log-plus-one
logistic negate not opt-barrier popcnt reverse round-nearest-afz
round-nearest-even rsqrt sign sine sinh sqrt tan tanh
""".split())
_ELEMENTWISE_BINARY = frozenset("""
add and atan2 divide maximum minimum multiply or power remainder shift-left
shift-right-arithmetic shift-right-logical subtract xor
""".split())
# (significand bits, exponent bits) for ShapeUtil::HigherPrecisionElementType.
_FLOAT_PRECISION = {
    "f64": (53, 11), "f32": (24, 8), "bf16": (8, 8), "f16": (11, 5),
    "f8e5m2": (3, 5), "f8e4m3": (4, 4), "f8e4m3fn": (4, 4), "f8e4m3b11fnuz": (4, 4),
    "f8e3m4": (5, 3), "f8e5m2fnuz": (3, 5), "f8e4m3fnuz": (4, 4), "f8e8m0fnu": (1, 8),
    "f6e3m2fn": (3, 3), "f6e2m3fn": (4, 2), "f4e2m1fn": (2, 2),
}
_COMPLEX_PART = {"c64": "f32", "c128": "f64"}


def _array(element_type: str, dimensions, dynamic=None) -> Shape:
    """A new array shape with the default layout (``ShapeUtil::MakeShape``)."""
    dimensions = tuple(dimensions)
    dynamic = tuple(dynamic) if dynamic is not None else (False,) * len(dimensions)
    return Shape(element_type, dimensions, dynamic, default_layout(element_type, len(dimensions)))


def _with_type(shape: Shape, element_type: str) -> Shape:
    """``ShapeUtil::ChangeElementType``: the layout stays."""
    return Shape(element_type, shape.dimensions, shape.dynamic, shape.layout)


def _higher_precision(a: Shape, b: Shape) -> str:
    if a.element_type == b.element_type or b.element_type not in _FLOAT_PRECISION \
            or a.element_type not in _FLOAT_PRECISION:
        return a.element_type
    return b.element_type if _FLOAT_PRECISION[b.element_type] > _FLOAT_PRECISION[a.element_type] \
        else a.element_type


def _elementwise(lhs: Shape, rhs: Shape) -> Shape | None:
    """``InferElementwiseBinaryOpShape`` for operands of the same rank."""
    if lhs.is_tuple or rhs.is_tuple or lhs.rank != rhs.rank:
        return None
    element_type = _higher_precision(lhs, rhs)
    if lhs.dimensions == rhs.dimensions:
        dynamic = tuple(a or b for a, b in zip(lhs.dynamic, rhs.dynamic))
        return Shape(element_type, lhs.dimensions, dynamic, lhs.layout)
    dimensions = []
    for a, b in zip(lhs.dimensions, rhs.dimensions):
        if a != b and 1 not in (a, b):
            return None
        dimensions.append(b if a == 1 else a)
    return _array(element_type, dimensions)


def _int_list(text: str | None) -> tuple[int, ...] | None:
    if text is None:
        return None
    body = text.strip()
    if body.startswith("{") and body.endswith("}"):
        body = body[1:-1]
    try:
        return tuple(int(part) for part in body.split(",") if part.strip())
    except ValueError:
        return None


# The opcodes whose shape XLA's parser infers when the text leaves it out
# (CanInferShape in hlo_parser.cc); for any other the shape is required.
INFERABLE = frozenset("""
abs acos acosh add add-dependency after-all and asin asinh atan2 atanh batch-norm-grad
batch-norm-inference batch-norm-training broadcast call cbrt ceil cholesky clamp compare
complex concatenate conditional convolution copy cosh cosine count-leading-zeros divide
domain dot erf exponential exponential-minus-one fft floor gather get-dimension-size
get-tuple-element imag is-finite log log-plus-one logistic map maximum minimum multiply
negate not opt-barrier or pad partition-id popcnt power ragged-dot real reduce
reduce-window remainder replica-id reverse round-nearest-afz round-nearest-even rsqrt
scaled-dot scan scatter select select-and-scatter set-dimension-size shift-left
shift-right-arithmetic shift-right-logical sign sine sinh sort sqrt subtract tan tanh
topk transpose triangular-solve tuple while xor
""".split())


def made(opcode: str, given: Shape | None, operands: list[Shape | None]) -> Shape | None:
    """The shape XLA gives an instruction of ``SHAPE_MADE_BY_XLA`` (the
    ``HloInstruction::Create...`` of the opcode builds it, ignoring the
    text's): tokens for after-all, outfeed and send-done, the operand's for
    add-dependency, ``(data, u32[], token[])`` for send and recv,
    ``(data, token[])`` for recv-done. None when an operand is unknown."""
    token = Shape("token")
    if opcode in ("after-all", "outfeed", "send-done"):
        return token
    if opcode == "recv" and given is not None and given.is_tuple and given.tuple_shapes:
        data = given.tuple_shapes[0]
    elif not operands or operands[0] is None:
        return None
    elif opcode == "add-dependency":
        return operands[0]
    elif opcode == "send":
        data = operands[0]
    elif opcode == "recv-done" and operands[0].is_tuple and operands[0].tuple_shapes:
        return Shape("tuple", tuple_shapes=(operands[0].tuple_shapes[0], token))
    else:
        return None
    return Shape("tuple", tuple_shapes=(data, _array("u32", ()), token))


def infer(opcode: str, operands: list[Shape], attribute: Callable[[str], str | None],
          result_of: Callable[[int], Shape | None]) -> Shape | None:
    """The shape XLA infers for ``opcode`` over ``operands`` (their shapes);
    ``attribute(name)`` gives an attribute's text, ``result_of(i)`` the root
    shape of the i-th computation the instruction calls. None when XLA would
    not infer it, or it is not worked out here."""
    if opcode == "tuple":
        return Shape("tuple", tuple_shapes=tuple(operands))
    if opcode == "after-all":
        return Shape("token")
    if opcode in ("while", "call", "conditional"):
        if opcode == "while":
            return operands[0] if operands else None
        return result_of(0)
    if not operands or any(s.is_tuple for s in operands[:1]) and opcode != "get-tuple-element":
        if opcode in ("replica-id", "partition-id"):
            return _array("u32", ())
        return None
    first = operands[0]
    if opcode == "get-tuple-element":
        index = _int_list(attribute("index"))
        if not first.is_tuple or not index or not 0 <= index[0] < len(first.tuple_shapes):
            return None
        return first.tuple_shapes[index[0]]
    if opcode in _SAME_AS_OPERAND:
        return first
    if opcode in ("real", "imag", "abs") and first.element_type in _COMPLEX_PART:
        return _with_type(first, _COMPLEX_PART[first.element_type])
    if opcode in ("real", "imag"):
        return first
    if opcode == "is-finite":
        return _with_type(first, "pred")
    if opcode in _ELEMENTWISE_BINARY or opcode in ("compare", "complex"):
        if len(operands) != 2:
            return None
        shape = _elementwise(first, operands[1])
        if shape is None or opcode == "compare":
            return None if shape is None else _with_type(shape, "pred")
        if opcode == "complex":
            return _with_type(shape, {"f32": "c64", "f64": "c128"}.get(shape.element_type, "?"))
        return shape
    if opcode == "select" and len(operands) == 3:
        full = operands[1] if first.rank == 0 else first
        return _with_type(full, _higher_precision(operands[1], operands[2]))
    if opcode == "clamp" and len(operands) == 3:
        return operands[1]
    if opcode == "add-dependency":
        return first
    return _reshaping(opcode, operands, attribute, result_of)


def _reshaping(opcode: str, operands: list[Shape], attribute: Callable[[str], str | None],
               result_of: Callable[[int], Shape | None]) -> Shape | None:
    """Opcodes whose result is a new shape, with the default layout."""
    first = operands[0]
    if opcode == "broadcast":
        sizes = _int_list(attribute("dimensions")) or ()
        return _array(first.element_type, sizes + first.dimensions,
                      (False,) * len(sizes) + first.dynamic)
    if opcode == "pad" and len(operands) == 2:
        config = (attribute("padding") or "").strip()
        parts = [tuple(int(n) for n in dim.split("_")) for dim in config.split("x")] if config else []
        if len(parts) != first.rank or any(len(p) not in (2, 3) for p in parts):
            return None
        dims = [None if size is None else size + p[0] + p[1] + max(size - 1, 0) * (p[2] if len(p) == 3 else 0)
                for size, p in zip(first.dimensions, parts)]
        return _array(_higher_precision(first, operands[1]), dims, first.dynamic)
    if opcode == "dot" and len(operands) == 2:
        lhs, rhs = operands
        numbers = {name: _int_list(attribute(name)) or () for name in
                   ("lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims")}
        dims = [lhs.dimensions[d] for d in numbers["lhs_batch_dims"]]
        dims += [size for d, size in enumerate(lhs.dimensions)
                 if d not in numbers["lhs_contracting_dims"] and d not in numbers["lhs_batch_dims"]]
        dims += [size for d, size in enumerate(rhs.dimensions)
                 if d not in numbers["rhs_contracting_dims"] and d not in numbers["rhs_batch_dims"]]
        return _array(_higher_precision(lhs, rhs), dims)
    if opcode == "reduce":
        reduced = set(_int_list(attribute("dimensions")) or ())
        kept = [(size, dynamic) for d, (size, dynamic) in enumerate(zip(first.dimensions, first.dynamic))
                if d not in reduced]
        result = result_of(0)
        if result is None:
            return None
        parts = result.tuple_shapes if result.is_tuple else (result,)
        shapes = [_array(part.element_type, [k[0] for k in kept], [k[1] for k in kept]) for part in parts]
        return Shape("tuple", tuple_shapes=tuple(shapes)) if result.is_tuple else shapes[0]
    if opcode == "concatenate":
        dimension = (_int_list(attribute("dimensions")) or (None,))[0]
        if dimension is None or dimension >= first.rank or any(s.dimensions[dimension] is None for s in operands):
            return None
        dims = list(first.dimensions)
        dims[dimension] = sum(s.dimensions[dimension] for s in operands)
        return _array(first.element_type, dims)
    if opcode == "transpose":
        order = _int_list(attribute("dimensions"))
        if order is None or sorted(order) != list(range(first.rank)):
            return None
        # ShapeUtil::PermuteDimensions: the layout follows, so that the
        # transpose is a bitcast (minor-to-major through the inverse order).
        inverse = {d: i for i, d in enumerate(order)}
        layout = first.layout
        if layout is not None:
            layout = Layout(tuple(inverse[d] for d in layout.minor_to_major), layout.fields)
        return Shape(first.element_type, tuple(first.dimensions[d] for d in order),
                     tuple(first.dynamic[d] for d in order), layout)
    if opcode == "get-dimension-size":
        return _array("s32", ())
    return None
