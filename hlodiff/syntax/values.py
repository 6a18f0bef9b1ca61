"""Reading the pieces the coarse parse leaves as text: shapes, operands,
attribute values and literals.

Shapes go through grammar/shape.lark; everything else through the generic
grammar/value.lark, whose trees become plain Python data here, and typed
readers (metadata, int lists, windows, literals...) check the forms XLA
requires. Each distinct text is parsed once: a dump repeats the same shapes
and small attribute values thousands of times.

Errors are raised as ``PieceError`` with an offset inside the piece; callers
who know where the piece sits in the file turn it into an HloSyntaxError.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from lark import Transformer, v_args
from lark.exceptions import LarkError, UnexpectedInput

from ..errors import HloSyntaxError, Source
from .grammars import lalr
from .lexer import MAX_NESTING
from ..model import Attribute, Layout, Literal, Shape

ELEMENT_TYPES = frozenset("""
pred s1 s2 s4 s8 s16 s32 s64 u1 u2 u4 u8 u16 u32 u64 f16 bf16 f32 f64
f8e5m2 f8e4m3 f8e4m3fn f8e4m3b11fnuz f8e3m4 f8e5m2fnuz f8e4m3fnuz f8e8m0fnu
f6e3m2fn f6e2m3fn f4e2m1fn c64 c128 token opaque
""".split())


class PieceError(Exception):
    """A syntax error at ``offset`` inside a piece of text. ``grammatical``
    is False for what the complete grammar (grammar/hlo_full.lark) accepts
    and only a check rejects (a layout without one entry per dimension)."""

    def __init__(self, offset: int, message: str, grammatical: bool = True):
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.grammatical = grammatical


def _lark_error(exc: LarkError, what: str) -> PieceError:
    if isinstance(exc, UnexpectedInput):
        pos = getattr(exc, "pos_in_stream", None)
        if pos is None:
            token = getattr(exc, "token", None)
            pos = getattr(token, "start_pos", None) or 0
        found = getattr(exc, "token", None) or getattr(exc, "char", None)
        detail = f": unexpected {str(found)!r}" if found not in (None, "") else ": it ends too early"
        if getattr(found, "type", None) == "$END":
            detail = ": it ends too early"
        return PieceError(pos or 0, f"malformed {what}{detail}")
    return PieceError(0, f"malformed {what}: {exc}")


# --- shapes -------------------------------------------------------------------------

@v_args(inline=True)
class _ShapeBuilder(Transformer):
    def array_shape(self, element_type, *rest):
        *dims, layout = rest
        if str(element_type) not in ELEMENT_TYPES:
            raise PieceError(element_type.start_pos, f'unknown element type "{element_type}"')
        dims = [d for d in dims if d is not None]
        if layout is None:
            layout = default_layout(str(element_type), len(dims))
        elif len(layout.minor_to_major) != len(dims):
            raise PieceError(element_type.start_pos,
                             f"layout {layout} does not have one entry per dimension", False)
        return Shape(str(element_type), tuple(d[0] for d in dims), tuple(d[1] for d in dims), layout)

    def tuple_shape(self, *shapes):
        return Shape("tuple", tuple_shapes=tuple(s for s in shapes if s is not None))

    def buffer_shape(self, inner):
        return Shape("buffer", tuple_shapes=(inner,))

    def static_dim(self, n):
        return (_size(n), False)

    def bounded_dim(self, n):
        return (_size(n), True)

    def unbounded_dim(self):
        return (None, False)

    def layout(self, *items):
        order = tuple(_size(i) for i in items if getattr(i, "type", None) == "INT")
        fields = "".join(i[1] for i in items if isinstance(i, tuple))
        return Layout(order, fields)

    def fields_only_layout(self, *fields):
        return Layout((), "".join(f[1] for f in fields if isinstance(f, tuple)))

    def dim_levels(self, *levels):
        return ("field", "D(" + ",".join(level for level in levels if level is not None) + ")")

    def dim_level(self, token):
        if not re.fullmatch(r"[DCSH]\+?~?", str(token)):
            raise PieceError(token.start_pos, f'"{token}" is not a dim level type (D, C, S or H)')
        return str(token)

    def tiles(self, *tiles):
        return ("field", "T" + "".join(tiles))

    def tile(self, *dims):
        return "(" + ",".join(str(d) for d in dims if d is not None) + ")"

    def tile_dim(self, token=None):
        return "*" if token is None else str(token)

    def tail_padding(self, n):
        return ("field", f"L({n})")

    def index_type(self, t):
        return ("field", f"#({t})")

    def pointer_type(self, t):
        return ("field", f"*({t})")

    def element_bits(self, n):
        return ("field", f"E({n})")

    def memory_space(self, n):
        return ("field", f"S({n})")

    def splits(self, *splits):
        return ("field", "SC" + "".join(splits))

    def split(self, dim, *indices):
        return f"({dim}:" + ",".join(i for i in indices if i is not None) + ")"

    def physical_shape(self, shape):
        return ("field", f"P({shape})")

    def dynamic_metadata(self, n):
        return ("field", f"M({n})")


_SHAPE_BUILDER = _ShapeBuilder()


def _size(token) -> int:
    """A dimension size or layout entry: a grammatical integer, never negative."""
    if token.startswith("-"):
        raise PieceError(token.start_pos, f"{token} is negative", False)
    return int(token)


def default_layout(element_type: str, rank: int) -> Layout | None:
    """The layout XLA's parser gives an array shape printed without one: the
    major-to-minor order, ``{1,0}`` for a rank 2 shape and ``{}`` for a
    scalar (``LayoutUtil::SetToDefaultLayout``, applied to every shape the
    text leaves without a layout: instructions, signatures, the entry
    computation layout). Tokens and opaque values have none."""
    if element_type in ("token", "opaque"):
        return None
    return _DEFAULT_LAYOUTS[rank] if rank < len(_DEFAULT_LAYOUTS) else \
        Layout(tuple(range(rank - 1, -1, -1)))


_DEFAULT_LAYOUTS = tuple(Layout(tuple(range(rank - 1, -1, -1))) for rank in range(9))


@lru_cache(maxsize=None)
def parse_shape(text: str) -> Shape:
    """Parse a shape such as ``f32[2,4]{1,0}``; raises PieceError."""
    flat = _flat_tuple(text)
    if flat is not None:
        return flat
    try:
        # Read first, then built: a syntax error anywhere in the text is
        # told before what the builder finds wrong (a negative size).
        return _SHAPE_BUILDER.transform(lalr("shape").parse(text))
    except PieceError:
        raise
    except LarkError as exc:
        inner = getattr(exc, "orig_exc", None)
        if isinstance(inner, PieceError):
            raise inner from None
        raise _lark_error(exc, f"shape {text.strip()!r}") from None


# One element of a tuple of plain array shapes, with the ``/*index=5*/``
# markers XLA prints every fifth element, and the ',' or ')' after it.
_FLAT_TUPLE_ELEMENT = re.compile(
    r"\s*(?:/\*[^*]*\*/\s*)?([a-z][a-z0-9]*\[[^\[\](){}/]*\](?:\{[^{}()/]*\})?)\s*([,)])")


def _flat_tuple(text: str) -> Shape | None:
    """A tuple of plain array shapes, read element by element; None for any
    other text, and for a tuple with an element in error (the grammar then
    reads the whole text and reports the error as it always does).

    The entry computation layout of a big program is such a tuple of
    thousands of elements, most of them alike: each distinct element is
    parsed once, instead of the grammar walking the whole tuple.
    """
    pos = len(text) - len(text.lstrip())
    if not text.startswith("(", pos) or text.startswith(")", pos + 1):
        return None
    pos += 1
    shapes = []
    while True:
        m = _FLAT_TUPLE_ELEMENT.match(text, pos)
        if m is None:
            return None
        try:
            shapes.append(parse_shape(m.group(1)))
        except PieceError:
            return None
        pos = m.end()
        if m.group(2) == ")":
            break
    if text[pos:].strip():
        return None
    return Shape("tuple", tuple_shapes=tuple(shapes))


# --- the generic value grammar -----------------------------------------------------------

class Seq(tuple):
    """Several terms side by side in one value, e.g. ``[2,2]<=[4]`` (three terms)."""


@dataclass(frozen=True)
class Pair:
    """``key=value`` or ``key:value`` where it is not an entry of a ``{k=v ...}`` dict."""

    key: Any
    value: Any
    sep: str = "="


_INT_ATOM = re.compile(r"-?\d+")


_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)", re.S)
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", "a": "\a", "b": "\b",
                   "f": "\f", "v": "\v"}


def _unescape(match: re.Match) -> str:
    code = match.group(1)
    if code[0] == "x":
        return chr(int(code[1:], 16))
    if code[0] in "01234567" and code != "0":
        return chr(int(code, 8))
    return _SIMPLE_ESCAPES.get(code, code)


def _unquote(token: str) -> str:
    """A quoted string's content, with C escapes (\\n, \\", \\x41, octal) resolved."""
    body = token[1:-1]
    return _ESCAPE.sub(_unescape, body) if "\\" in body else body


@v_args(inline=True)
class _ValueBuilder(Transformer):
    """Generic value trees to plain data: dict, list, tuple, Seq, Pair, int, str."""

    def ATOM(self, token):
        text = str(token)
        return int(text) if _INT_ATOM.fullmatch(text) else text

    def STRING(self, token):
        return _unquote(str(token))

    def seq(self, *terms):
        return terms[0] if len(terms) == 1 else Seq(terms)

    def assign(self, key, value):
        return Pair(key, value, "=")

    def colon(self, key, value):
        return Pair(key, value, ":")

    def items(self, *seqs):
        return [s for s in seqs if s is not None]

    def brace(self, items=None):
        """``{k=v k2=v2, k3=v3}`` (spaces or commas) is a dict; anything else a list."""
        items = items or []
        terms = [t for i in items for t in (i if isinstance(i, Seq) else (i,))]
        if terms and all(isinstance(t, Pair) and t.sep == "=" and isinstance(t.key, str)
                         for t in terms):
            return {t.key: t.value for t in terms}
        return list(items)

    def bracket(self, items=None):
        return list(items or [])

    def paren(self, items=None):
        return tuple(items or [])


_VALUE_BUILDER = _ValueBuilder()


@lru_cache(maxsize=1 << 16)
def parse_value(text: str) -> Any:
    """Parse text with the generic value grammar; raises PieceError."""
    try:
        return lalr("value", transformer=_VALUE_BUILDER).parse(text)
    except LarkError as exc:
        raise _lark_error(exc, "value") from None



def attribute_value(attr: Attribute) -> Any:
    """The parsed value of an attribute (plain Python data)."""
    if attr.reader is not None:
        return attr.reader.attribute_value(attr)
    try:
        return parse_value(attr.text)
    except PieceError as err:
        raise HloSyntaxError(f"attribute {attr.name}: {err.message}") from None


_ALIAS_ENTRY = re.compile(r"""\s*(\{[^{}]*\})\s*:\s*\(\s*(\S+?)\s*,\s*(\{[^{}]*\})\s*(?:,\s*(\S+?)\s*)?\)\s*""")
_DONOR_ENTRY = re.compile(r"""\s*\(\s*(\S+?)\s*,\s*(\{[^{}]*\})\s*\)\s*""")
_SHAPE_INDEX = re.compile(r"\{\s*(?:\d+\s*(?:,\s*\d+\s*)*)?\}")
_INDEX = re.compile(r"\d+")


@lru_cache(maxsize=64)
def alias_entries(name: str, text: str) -> tuple[tuple, ...]:
    """The entries of ``input_output_alias={ {0}: (0, {}, may-alias), ... }``
    ((output index, parameter, parameter index, kind), the kind may-alias
    where none is written) or ``buffer_donor={ (0, {}) }`` ((parameter,
    parameter index)), indices as tuples of ints; raises PieceError where
    XLA's parser would. Read with regular expressions: a train step's table
    has an entry per parameter, hundreds, which the generic value grammar
    reads a hundred times slower. Kept: both runs' headers hold the same
    table, which the parser checks and the differ then compares."""
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        raise PieceError(0, f"{name} must be a brace-enclosed list")
    lead = text.index("{") + 1
    entries = []
    for offset, entry in split_operands(stripped[1:-1]) if stripped[1:-1].strip() else []:
        at = lead + offset
        if name == "input_output_alias":
            m = _ALIAS_ENTRY.fullmatch(entry)
            if m is None:
                raise PieceError(at, "expected {output index}: (parameter, {parameter index}[, kind])")
            out_index, param, param_index, kind = m.groups()
            indices = (out_index, param_index)
            if kind is not None and kind not in ("may-alias", "must-alias"):
                raise PieceError(at, f'unknown alias kind "{kind}"')
        else:
            m = _DONOR_ENTRY.fullmatch(entry)
            if m is None:
                raise PieceError(at, "expected (parameter, {parameter index})")
            param, param_index = m.groups()
            indices = (param_index,)
        if not param.isdigit():
            raise PieceError(at, f'parameter number "{param}" is not an integer')
        for index in indices:
            if not _SHAPE_INDEX.fullmatch(index):
                raise PieceError(at, f"shape index {index} must be {{}} or {{integers}}")
        number, index = int(param), tuple(map(int, _INDEX.findall(param_index)))
        if name == "input_output_alias":
            output = tuple(map(int, _INDEX.findall(out_index)))
            entries.append((output, number, index, kind or "may-alias"))
        else:
            entries.append((number, index))
    return tuple(entries)


def attribute_error(attr: Attribute, message: str) -> HloSyntaxError:
    reader = attr.reader
    if reader is not None and attr.offset >= 0:
        return reader.error(attr.offset, message)
    return HloSyntaxError(f"attribute {attr.name}: {message}")


# --- typed readers --------------------------------------------------------------------

def metadata_fields(attr: Attribute) -> dict[str, Any]:
    """``metadata={op_type="add" op_name="a/b" source_line=3}`` as a dict."""
    value = attribute_value(attr)
    if value == []:  # metadata={}
        return {}
    if not isinstance(value, dict):
        raise attribute_error(attr, "metadata must be {key=value ...}")
    for key, kind, what in _METADATA_TYPES:
        if key in value and not isinstance(value[key], kind):
            raise attribute_error(attr, f"metadata {key} must be {what}")
    return value


# The fields hlodiff reads, with the types XLA's OpMetadata gives them.
_METADATA_TYPES = tuple((key, str, "a string") for key in
                        ("op_type", "op_name", "source_file", "deduplicated_name")) + \
    tuple((key, int, "an integer") for key in ("source_line", "stack_frame_id"))


_SINGLE_NAME = re.compile(r"\s*%?([A-Za-z_][\w.\-]*)\s*")


def computation_names(attr: Attribute) -> list[str]:
    """Names in ``calls=%c`` or ``branch_computations={%a, %b}``."""
    single = _SINGLE_NAME.fullmatch(attr.text)
    if single is not None:  # the common case, without the grammar
        return [single.group(1)]
    value = attribute_value(attr)
    items = value if isinstance(value, list) else [value]
    names = []
    for item in items:
        if not isinstance(item, str):
            raise attribute_error(attr, f"{attr.name} expects computation names")
        names.append(item[1:] if item.startswith("%") else item)
    return names


def int_list(attr: Attribute) -> tuple[int, ...]:
    """``dimensions={0,1}`` (or a bare int) as a tuple of ints."""
    value = attribute_value(attr)
    items = value if isinstance(value, list) else [value]
    if not all(isinstance(i, int) for i in items):
        raise attribute_error(attr, f"{attr.name} expects a list of integers")
    return tuple(items)


_DIM_LABELS = re.compile(r"[0-9bf?]{2,}_[0-9io?]{2,}->[0-9bf?]{2,}")
_WINDOW_KEYS = {"size", "stride", "pad", "lhs_dilate", "rhs_dilate", "rhs_reversal"}


def check_attribute(attr: Attribute) -> None:
    """Check the forms XLA requires of known attributes beyond the generic grammar."""
    value = attribute_value(attr)
    name = attr.name
    if name == "window":
        if not isinstance(value, dict) and value != []:
            raise attribute_error(attr, "window must be {size=... stride=... pad=...}")
        for key, item in (value or {}).items():
            if key not in _WINDOW_KEYS:
                raise attribute_error(attr, f'unknown window field "{key}"')
            if key == "pad":
                for part in str(item).split("x"):
                    if len(part.split("_")) != 2:
                        raise attribute_error(
                            attr, f"window pad {item} must be low_high for each dimension")
    elif name == "dim_labels":
        if not _DIM_LABELS.fullmatch(attr.text.strip()):
            raise attribute_error(attr, "dim_labels must read like b01f_01io->b01f")
    elif name == "result_accuracy":
        if not isinstance(value, dict):
            raise attribute_error(attr, "result_accuracy expects {mode=...} or {tolerance={...}}")
    elif name == "metadata":
        metadata_fields(attr)
    elif name in ("dimensions", "dynamic_slice_sizes", "fft_length",
                  "lhs_batch_dims", "rhs_batch_dims", "lhs_contracting_dims",
                  "rhs_contracting_dims", "offset_dims", "collapsed_slice_dims",
                  "start_index_map", "update_window_dims", "inserted_window_dims",
                  "scatter_dims_to_operand_dims"):
        int_list(attr)


# --- operands -------------------------------------------------------------------------------

_NAME = r"%?([A-Za-z_][\w.\-]*)"
_ARRAY_SHAPE = r"[a-z][a-z0-9]*\[[^\]]*\](?:\{[^{}]*\})?"
_COMMENT = r"(?:/\*(?:[^*]|\*(?!/))*\*/\s*)?"
_OPERAND = rf"{_COMMENT}(?:{_ARRAY_SHAPE}\s+)?{_NAME}\s*"
_SIMPLE_OPERAND_LIST = re.compile(rf"\s*(?:{_OPERAND}(?:,\s*{_OPERAND})*)?")
_OPERAND_NAMES = re.compile(rf"(?:^|,)\s*{_OPERAND}")
# Operands as XLA prints them: "%a, %b", with "/*index=5*/" every fifth in long lists.
_PLAIN_OPERAND_NAME = re.compile(r"%([A-Za-z_][\w.\-]*)")
_PLAIN_OPERAND_LIST = re.compile(
    r"(?:/\*index=\d+\*/)?%[A-Za-z_][\w.\-]*(?:, (?:/\*index=\d+\*/)?%[A-Za-z_][\w.\-]*)*")


class NestedOperand(str):
    """An operand written as an instruction (``add(x, f32[] constant(1))``):
    its text, as written, and where it starts in the operand list. XLA makes
    an instruction of it (hlodiff/syntax/program.py)."""

    __slots__ = ("offset",)

    def __new__(cls, text: str, offset: int):
        operand = str.__new__(cls, text)
        operand.offset = offset
        return operand


class Operands(tuple):
    """Operand names of which some are ``NestedOperand``s: the type says so,
    so that the parser finds the instructions with nested operands without
    looking at each operand."""


def parse_operands(text: str) -> tuple[str, ...]:
    """Operand names of an instruction, from the text between its parentheses.

    Accepts plain (``%a, %b``), typed (``f32[2]{0} %a``) and compact
    get-tuple-element (``%t#0#1``) operands, and nested instructions
    (``f32[] constant(1)``, kept whole as a ``NestedOperand``, in an
    ``Operands`` tuple); raises PieceError otherwise.
    """
    plain = plain_operands(text)
    if plain is not None:
        return plain
    if _SIMPLE_OPERAND_LIST.fullmatch(text):
        if "[" in text:  # typed operands: their shapes must read as shapes
            for shape in _OPERAND_SHAPES.finditer(text):
                _operand_shape(shape.group(1), shape.start(1))
        return tuple(_OPERAND_NAMES.findall(text))
    if not text.strip():
        return ()
    names = tuple(_operand_name(item) for item in split_operands(text))
    if any(type(name) is NestedOperand for name in names):
        return Operands(names)
    return names


def plain_operands(text: str) -> tuple[str, ...] | None:
    """The operand names of a list as XLA prints it (``%a, %b``, with
    ``/*index=5*/`` before every fifth of a long one, or nothing), read in
    one quick pass; None for any other form (``parse_operands`` reads it)."""
    if not text:
        return ()
    if _PLAIN_OPERAND_LIST.fullmatch(text):
        return tuple(_PLAIN_OPERAND_NAME.findall(text))
    return None


def split_operands(text: str) -> list[tuple[int, str]]:
    """Top-level comma split of an operand list, with each item's offset."""
    from .lexer import ScanError, balanced_end
    items, depth_start, i, n = [], 0, 0, len(text)
    while i < n:
        c = text[i]
        if c in "({[":
            try:
                i = balanced_end(text, i)
            except ScanError as err:
                raise PieceError(err.offset, err.message) from None
            continue
        if c == ",":
            items.append((depth_start, text[depth_start:i]))
            depth_start = i + 1
        i += 1
    items.append((depth_start, text[depth_start:]))
    return [(off, item) for off, item in items if item.strip() or len(items) > 1]


_OPERAND_SHAPES = re.compile(rf"(?:^|,)\s*{_COMMENT}({_ARRAY_SHAPE})\s+")
_GTE_OPERAND = re.compile(rf"\s*{_COMMENT}(?:({_ARRAY_SHAPE}|\(.*\))\s+)?%?([A-Za-z_][\w.\-]*)((?:#[^\s,]*)*)\s*",
                          re.S)


def _operand_shape(text: str, offset: int) -> None:
    """A typed operand's shape must read as a shape (what it says is not kept)."""
    try:
        parse_shape(text)
    except PieceError as err:
        raise PieceError(offset + err.offset, err.message, err.grammatical) from None
_NESTED_OPERAND = re.compile(r"\s*(?:\S.*?\s+)??([a-z][a-z0-9\-]*)\((.*)\)\s*", re.S)


def _operand_name(item: tuple[int, str]) -> str:
    offset, text = item
    if not text.strip():
        raise PieceError(offset, "empty operand")
    m = _GTE_OPERAND.fullmatch(text)
    if m is not None:
        shape, name, suffix = m.groups()
        if shape is not None:
            _operand_shape(shape, offset + m.start(1))
        for index in suffix.split("#")[1:]:
            if not index.isdigit():
                raise PieceError(offset + m.start(3), f"compact get-tuple-element index #{index} is not an integer")
        return name + suffix
    m = _NESTED_OPERAND.fullmatch(text)
    if m is not None:
        from .opcodes import is_opcode
        if is_opcode(m.group(1)):
            start = len(text) - len(text.lstrip())
            return NestedOperand(text.strip(), offset + start)
    raise PieceError(offset, f"malformed operand {text.strip()!r}")


# --- literals ----------------------------------------------------------------------------------

_NUMBER_ATOM = re.compile(r"-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|nan(?:\(0x[0-9a-fA-F]+\))?)")
_SCALAR_LITERAL = re.compile(r"\s*(-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf|nan(?:\(0x[0-9a-fA-F]+\))?)|true|false)\s*")


def parse_literal(text: str, shape: Shape | None, source: Source | None = None,
                  offset: int = -1, reader=None) -> Literal:
    """Read the literal of ``constant(...)``; errors point into the file when possible."""
    try:
        return _literal(text, shape, reader)
    except PieceError as err:
        if source is not None and offset >= 0:
            raise source.error(offset + err.offset, err.message) from None
        raise HloSyntaxError(f"constant: {err.message}") from None


def _literal(text: str, shape: Shape | None, reader) -> Literal:
    stripped = text.strip()
    element_type = None if shape is None else shape.element_type
    dimensions = () if shape is None else shape.dimensions
    m = _SCALAR_LITERAL.fullmatch(text)
    if m is not None:
        return Literal(stripped, (stripped,), False, (), element_type, dimensions, reader)
    if shape is not None and shape.is_tuple:
        if stripped == "{...}":  # XLA prints a large tuple constant so (its parser cannot read it)
            return Literal(stripped, (), True, (), "tuple", (), reader)
        value = parse_value(text)
        if not isinstance(value, tuple) or len(value) != len(shape.tuple_shapes):
            raise PieceError(0, f"tuple literal does not match shape {shape}")
        parts = []
        for part, part_shape in zip(split_operands(stripped[1:-1]), shape.tuple_shapes):
            parts.append(_literal(part[1], part_shape, reader))
        return Literal(stripped, (), False, tuple(parts), "tuple", (), reader)
    elements = _dense_array_elements(text, shape)
    if elements is not None:
        return Literal(stripped, elements, False, (), element_type, dimensions, reader)
    value = parse_value(text)
    if value == ["..."]:
        return Literal(stripped, (), True, (), element_type, dimensions, reader)
    complex_type = shape is not None and shape.element_type in ("c64", "c128")
    elements: list[str] = []
    depth = _flatten(value, elements, complex_type, 0)
    if shape is not None and not shape.is_tuple and shape.element_count and depth != shape.rank:
        raise PieceError(0, f"literal has {depth} levels of braces but shape {shape} has rank {shape.rank}")
    if shape is not None and shape.element_count is not None and shape.dimensions \
            and len(elements) != shape.element_count:
        raise PieceError(0, f"literal has {len(elements)} elements but shape {shape} has {shape.element_count}")
    return Literal(stripped, tuple(elements), False, (), element_type, dimensions, reader)


_PLAIN_ELEMENT = re.compile(r"-?(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|inf"
                            r"|nan(?:\(0x[0-9a-fA-F]+\))?)|true|false")
_WHITE_SPACE = re.compile(r"\s+")


def _dense_array_elements(text: str, shape: Shape | None) -> tuple[str, ...] | None:
    """The elements of a literal printed exactly as XLA prints a dense array of
    ``shape`` (nested braces of plain numbers), read with a few whole-text
    regular expression passes; None when it is of any other form.

    A constant can be hundreds of megabytes on one line: the general value
    grammar costs microseconds per element, this costs nanoseconds.
    """
    if shape is None or shape.is_tuple or shape.element_type in ("c64", "c128") \
            or not shape.dimensions or None in shape.dimensions or any(shape.dynamic):
        return None
    skeleton = _WHITE_SPACE.sub("", _PLAIN_ELEMENT.sub("x", text))
    count = skeleton.count("x")
    if count == 0 or count != shape.element_count:  # before building a text that large
        return None
    expected = "x"
    for size in reversed(shape.dimensions):
        expected = "{" + ",".join([expected] * size) + "}"
    if skeleton != expected:
        return None
    return tuple(_PLAIN_ELEMENT.findall(text))


def _flatten(value: Any, out: list[str], complex_type: bool, depth: int) -> int:
    """Append element texts of a nested literal; return its brace depth."""
    if depth > MAX_NESTING:  # as the scanner limits every other bracket
        raise PieceError(0, f"literal braces nest more than {MAX_NESTING} deep")
    if isinstance(value, list):
        depths = [_flatten(v, out, complex_type, depth + 1) for v in value]
        return max(depths) if depths else depth + 1
    if isinstance(value, tuple) and complex_type:
        if len(value) != 2:
            raise PieceError(0, "a complex element is (real, imaginary)")
        out.append("(" + ", ".join(_element_text(v) for v in value) + ")")
        return depth
    if isinstance(value, Seq):  # "nan(0x7f)" is an atom followed by a group
        out.append("".join(_element_text(v) for v in value))
        return depth
    out.append(_element_text(value))
    return depth


def _element_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return "(" + ",".join(map(str, value)) + ")"
    text = str(value)
    if not (_NUMBER_ATOM.fullmatch(text) or text in ("true", "false")):
        raise PieceError(0, f"{text!r} is not a literal value")
    return text
