"""The typed view of an HLO module: frozen dataclasses, one per concept.

Parsing builds these; aligning and diffing read them. Instances are
immutable and compare by content, so a test can say ``parse(a) == parse(b)``.
Positions in the file (``line``) do not take part in comparisons: the same
program printed twice compares equal wherever its lines fall.

Pieces that are costly to read and rarely needed (attribute values,
literals, origins) are read on first access and cached; a syntax error in
them is raised then, with its line and column in the file. The model does
not read text itself: each object holds the ``Reader`` the parse layer
made for its file (hlodiff/syntax/reader.py), and asks it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Callable, ClassVar, Protocol


class Reader(Protocol):
    """Reads, on first use, the pieces of one file that the parser left as text.

    Made by the parse layer for each parsed file; every model object of
    that file holds it. Errors are ``HloSyntaxError`` at the piece's place.
    """

    path: str | None

    def attribute_value(self, attribute: Attribute) -> Any: ...

    def attribute_key(self, attribute: Attribute) -> Any: ...

    def instruction_keys(self, instruction: Instruction) -> frozenset: ...

    def header_key(self, attribute: Attribute) -> Any: ...

    def replaces_config(self, attribute: Attribute) -> bool: ...

    def program_shape(self, attribute: Attribute) -> tuple[tuple[Shape, ...], Shape]: ...

    def attribute_offsets(self, tail_offset: int) -> tuple[int, ...]: ...

    def metadata(self, attribute: Attribute) -> dict[str, Any]: ...

    def literal(self, instruction: Instruction) -> Literal: ...

    def literal_bits(self, literal: Literal) -> tuple: ...

    def literal_values(self, literal: Literal) -> tuple: ...

    def computation_names(self, attribute: Attribute) -> list[str]: ...

    def head(self, offset: int) -> tuple[str, tuple[str, ...]] | None: ...

    def parameter_number(self, offset: int) -> int | None: ...

    def may_call(self, offset: int) -> bool: ...

    def instruction(self, offset: int, line: int) -> Instruction: ...


class cached:
    """``functools.cached_property`` without the lock Python 3.11 takes on
    every first read (a microsecond, paid by each of hundreds of thousands of
    instructions an alignment reads): the value goes into the instance's
    ``__dict__``, where later reads find it without reaching this descriptor.
    Models are not shared between threads."""

    def __init__(self, function: Callable[[Any], Any]):
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.function(instance)
        return value


# --- shapes -------------------------------------------------------------------

@dataclass(frozen=True)
class Layout:
    """Minor-to-major order plus the optional fields after ':' (tiles, memory space...)."""

    minor_to_major: tuple[int, ...]
    fields: str = ""  # canonical text of what follows ':', e.g. "T(8,128)S(1)"

    def __str__(self) -> str:
        order = ",".join(map(str, self.minor_to_major))
        return "{" + order + (":" + self.fields if self.fields else "") + "}"


@dataclass(frozen=True)
class Shape:
    """An array, tuple or buffer shape.

    ``dimensions`` holds an int per static or bounded dimension and ``None``
    for an unbounded one (``?``); ``dynamic`` marks bounded ones (``<=8``).
    ``layout`` is what the text says or, where it says nothing, the default
    layout XLA's parser fills in (``f32[2,3]`` reads as ``f32[2,3]{1,0}``);
    a scalar's layout is ``{}``, printed only when it has fields
    (``f32[]{:T(128)}``), as XLA prints it. Tokens have none.
    """

    element_type: str  # "f32", ..., or "tuple" / "buffer"
    dimensions: tuple[int | None, ...] = ()
    dynamic: tuple[bool, ...] = ()
    layout: Layout | None = None
    tuple_shapes: tuple[Shape, ...] = ()

    @property
    def is_tuple(self) -> bool:
        return self.element_type == "tuple"

    @property
    def rank(self) -> int:
        return len(self.dimensions)

    @property
    def element_count(self) -> int | None:
        count = 1
        for d in self.dimensions:
            if d is None:
                return None
            count *= d
        return count

    def without_layout(self) -> Shape:
        if self.is_tuple:
            return Shape("tuple", tuple_shapes=tuple(s.without_layout() for s in self.tuple_shapes))
        if self.element_type == "buffer":
            return Shape("buffer", tuple_shapes=(self.tuple_shapes[0].without_layout(),))
        return Shape(self.element_type, self.dimensions, self.dynamic)

    def in_default_order(self) -> Shape:
        """The shape with each array's dimensions in the default order
        (``{1,0}`` for rank 2), its layout's other fields (tiles, memory
        space) kept."""
        if self.is_tuple or self.element_type == "buffer":
            return Shape(self.element_type,
                         tuple_shapes=tuple(s.in_default_order() for s in self.tuple_shapes))
        if self.layout is None:
            return self
        order = tuple(range(self.rank - 1, -1, -1))
        return Shape(self.element_type, self.dimensions, self.dynamic, Layout(order, self.layout.fields))

    def __str__(self) -> str:
        return self.text

    @cached
    def text(self) -> str:
        """The shape as XLA prints it; kept, since a dump has few distinct shapes
        and the differ prints and compares them constantly."""
        if self.is_tuple:
            return "(" + ", ".join(map(str, self.tuple_shapes)) + ")"
        if self.element_type == "buffer":
            return f"b({self.tuple_shapes[0]})"
        dims = ",".join("?" if d is None else (f"<={d}" if dyn else str(d))
                        for d, dyn in zip(self.dimensions, self.dynamic))
        layout = self.layout
        if layout is None or not (layout.minor_to_major or layout.fields):
            return f"{self.element_type}[{dims}]"
        return f"{self.element_type}[{dims}]{layout}"


_INT_ATOM = re.compile(r"-?\d+")


def element_value(text: str) -> Any:
    """A printed literal element as a Python value: bool, int, float or complex."""
    if text == "true":
        return True
    if text == "false":
        return False
    if text.startswith("("):
        real, imag = (element_value(p.strip()) for p in text[1:-1].split(","))
        return complex(real, imag)
    if _INT_ATOM.fullmatch(text):
        return int(text)
    if "nan" in text:
        return -math.nan if text.startswith("-") else math.nan
    return float(text)


# --- literals -----------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Literal:
    """The value of a constant, as printed and as XLA stores it.

    ``text`` is the literal exactly as the dump prints it (between the
    parentheses of ``constant(...)``), for display; ``elements`` are the
    printed element texts in row-major order. ``elided`` is true for
    ``{...}``: XLA printed no values (rerun with
    ``--xla_dump_large_constants`` to see them). Tuple literals hold their
    parts in ``parts`` instead. ``element_type`` and ``dimensions`` come
    from the constant's shape.

    Two literals are equal when XLA stores the same bits (its
    ``LiteralBase::Equal`` compares buffers): ``{1,2}`` equals ``{1, 2}``,
    ``0.5`` equals ``5e-1`` and ``-448.`` equals ``-448``, while ``-0.0``
    and ``0.0`` differ and a NaN equals a NaN of the same sign and payload
    (hlodiff/syntax/literals.py has XLA's rules). Two elided literals of
    the same shape are equal: their values are unknown on both sides.
    ``bits`` gives the stored bits of each element, ``values`` their exact
    values as Python numbers (bool, int, float, complex: an f8e4m3fn
    ``0.1`` is 0.1015625, an s4 ``-8`` is -8); both are read on first use.
    """

    text: str
    elements: tuple[str, ...] = ()
    elided: bool = False
    parts: tuple[Literal, ...] = ()
    element_type: str | None = None
    dimensions: tuple[int | None, ...] = ()
    reader: Reader | None = field(default=None, repr=False)

    @cached
    def bits(self) -> tuple:
        """Each element as XLA stores it (an int; a pair for complex types);
        an element XLA would reject stays its text."""
        return self.reader.literal_bits(self) if self.reader is not None else self.elements

    @cached
    def values(self) -> tuple[Any, ...]:
        """Each element's exact value: bool, int, float or complex."""
        if self.reader is not None:
            return self.reader.literal_values(self)
        return tuple(element_value(e) for e in self.elements)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Literal):
            return NotImplemented
        if (self.element_type, self.dimensions, len(self.parts), self.elided) != \
                (other.element_type, other.dimensions, len(other.parts), other.elided):
            return False
        if self.parts:
            return self.parts == other.parts
        return self.elided or self.elements == other.elements or self.bits == other.bits

    def __hash__(self) -> int:
        return hash((self.element_type, self.dimensions, self.elided, len(self.elements)))

    @property
    def is_scalar(self) -> bool:
        return not self.parts and not self.elided and len(self.elements) == 1 and "{" not in self.text


# --- origins --------------------------------------------------------------------

@dataclass(frozen=True)
class Frame:
    """One frame of the Python call stack that produced an instruction."""

    file: str
    function: str
    line: int
    column: int = 0


# The op_name frameworks give every entry parameter alike: it says nothing of
# which argument it is (TensorFlow: XLA_Args; PyTorch/XLA: xla__device_data).
GENERIC_PARAMETER_NAMES = frozenset({"XLA_Args", "xla__device_data"})


@dataclass(frozen=True)
class Origin:
    """Where an instruction came from in the user's program, from its metadata."""

    op_type: str | None = None
    op_name: str | None = None
    source_file: str | None = None
    source_line: int | None = None
    stack: tuple[Frame, ...] = ()  # innermost frame first

    @property
    def name_scope(self) -> str | None:
        """The op_name without its last component: the enclosing scopes."""
        if not self.op_name or "/" not in self.op_name:
            return None
        return self.op_name.rsplit("/", 1)[0]

    @property
    def location(self) -> str | None:
        """``file:line`` of the user's code, from source_* or else the innermost frame."""
        if self.source_file:
            return f"{self.source_file}:{self.source_line}" if self.source_line else self.source_file
        if self.stack:
            return f"{self.stack[0].file}:{self.stack[0].line}"
        return None

    def __bool__(self) -> bool:
        return any((self.op_type, self.op_name, self.source_file, self.source_line, self.stack))


# op_name scopes of a backward pass: JAX's transposed JVPs, TensorFlow's gradient tape.
_BACKWARD_SCOPES = ("transpose(jvp(", "gradient_tape/")


def in_backward_pass(op_name: str | None) -> bool:
    """Is ``op_name`` in the scope of a backward pass, which the framework
    derives from the forward code?

    >>> in_backward_pass("jit(step)/transpose(jvp(LM))/layers_1/add_any")
    True
    >>> in_backward_pass("jit(step)/jvp(LM)/layers_1/add"), in_backward_pass(None)
    (False, False)
    """
    return bool(op_name) and any(scope in op_name for scope in _BACKWARD_SCOPES)


# An op's parameters, which JAX before 0.5 wrote into its op_names
# (``dot_general[dimension_numbers=(((1,), (0,)), ((), ())) ...]``).
_OP_PARAMETERS = re.compile(r"\[[^\[\]]*\]")


def without_parameters(op_name: str) -> str:
    """``op_name`` as JAX 0.5 and later write it: without the parameters of
    each op that JAX 0.4 wrote into it.

    >>> without_parameters("jit(f)/jit(main)/while[cond_nconsts=0 body_nconsts=1]/body/tanh")
    'jit(f)/jit(main)/while/body/tanh'
    """
    return _OP_PARAMETERS.sub("", op_name)


def runs_backward(path) -> bool:
    """Does the HLO text at ``path`` run a backward pass (a training step)?
    False where there is no file to read."""
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            text = stream.read()
    except (OSError, TypeError):  # unreadable, or no file: a capture, a text given directly
        return False
    return any(scope in text for scope in _BACKWARD_SCOPES)


# source_file values a framework writes where it knows no location: every op
# of a TensorFlow auto-clustered cluster (tf.config.optimizer.set_jit) reads
# source_file="dummy_file_name" source_line=10, whatever the script's lines
# (corpus/tf_auto_jit_scale)
PLACEHOLDER_FILES = frozenset({"dummy_file_name"})


def is_library_file(path: str) -> bool:
    """Is ``path`` inside an installed package (framework code, not the user's)?

    >>> is_library_file("/usr/lib/python3/dist-packages/tensorflow/python/ops.py")
    True
    >>> is_library_file("<site-packages>/torch/optim/adam.py"), is_library_file("train.py")
    (True, False)
    """
    return "site-packages" in path or "dist-packages" in path


@dataclass(frozen=True)
class StackFrameTable:
    """The FileNames / FunctionNames / FileLocations / StackFrames tables of a module.

    Ids are 1-based, as printed. ``locations`` maps an id to
    (file id, function id, line, column); ``frames`` maps a frame id to
    (location id, parent frame id or 0). Parent ids are stored resolved: the
    printer of JAX 0.10 / XLA prints each ``parent_frame_id`` as the parent's
    id plus one (checked on real dumps: a frame whose parent is frame 3
    prints 4, and an outermost frame prints 1), and the parser undoes that.
    """

    file_names: dict[int, str]
    function_names: dict[int, str]
    locations: dict[int, tuple[int, int, int, int]]
    frames: dict[int, tuple[int, int]]

    def __hash__(self) -> int:
        return hash((tuple(self.file_names.items()), tuple(self.frames.items())))

    @cached_property
    def _stacks(self) -> dict[int, tuple[Frame, ...]]:
        """Each stack made so far: a big diff asks for the same few hundred
        frames tens of thousands of times (the origin of every change, and of
        every metadata compared). Not a field: not compared, not reported."""
        return {}

    def stack(self, frame_id: int) -> tuple[Frame, ...]:
        """The call stack for ``frame_id``, innermost frame first."""
        known = self._stacks.get(frame_id)
        if known is None:
            known = self._stacks[frame_id] = self._resolve(frame_id)
        return known

    def _resolve(self, frame_id: int) -> tuple[Frame, ...]:
        out: list[Frame] = []
        seen: set[int] = set()
        while frame_id in self.frames and frame_id not in seen:
            seen.add(frame_id)
            location_id, parent = self.frames[frame_id]
            file_id, function_id, line, column = self.locations.get(location_id, (0, 0, 0, 0))
            out.append(Frame(self.file_names.get(file_id, "?"),
                             self.function_names.get(function_id, "?"), line, column))
            frame_id = parent
        return tuple(out)


# --- attributes and instructions ----------------------------------------------------

@dataclass(frozen=True)
class Attribute:
    """``name=value`` after an instruction's operands (or in the module header).

    ``text`` is the value as printed; ``value`` parses it with the generic
    value grammar into plain Python data (dicts for ``{k=v ...}`` groups,
    lists for other brackets, numbers, strings), which is what the differ
    compares, so spacing and quoting differences do not count.
    """

    name: str
    text: str
    offset: int = field(default=-1, compare=False, repr=False)  # of the value, in the file
    reader: Reader | None = field(default=None, compare=False, repr=False)

    @property
    def value(self) -> Any:
        return self.reader.attribute_value(self)

    @property
    def key(self) -> Any:
        """What the value means to XLA, as hashable data: the same for every
        spelling of it (``{0, 1}`` and ``{0,1}``, ``%add`` and ``add``);
        None when XLA keeps nothing of it (``metadata={}``)."""
        return self.reader.attribute_key(self)


CALL_ATTRIBUTES = frozenset({"calls", "to_apply", "condition", "body", "select", "scatter",
                             "true_computation", "false_computation", "branch_computations",
                             "called_computations"})
# The attributes that come second in XLA's list of called computations,
# whatever order the text gives them in: a while calls (body, condition).
_CALLED_SECOND = frozenset({"condition", "false_computation", "scatter"})
# XLA keeps the called computation on the async-start only.
_CALLS_NOTHING = frozenset({"async-update", "async-done"})


@dataclass(frozen=True)
class Instruction:
    """One HLO instruction.

    ``operands`` are the names of the instructions it reads, in order.
    ``attribute_items`` are the ``(name, value text)`` pairs in printed
    order; ``attributes`` gives them as ``Attribute`` objects. Typed
    accessors give the attributes the differ needs: ``metadata``,
    ``literal``, ``called_computations``, ``parameter_number``.
    """

    name: str
    opcode: str
    shape: Shape | None
    operands: tuple[str, ...]
    attribute_items: tuple[tuple[str, str], ...] = ()
    is_root: bool = False
    # The text between the parentheses when it is not a list of names: the
    # literal of a constant, the number of a parameter ("" otherwise).
    operand_text: str = field(default="", repr=False)
    line: int = field(default=0, compare=False)
    operand_offset: int = field(default=-1, compare=False, repr=False)
    # Where each attribute value starts in the file, for error messages; None
    # until needed, then found again from where the attribute tail starts.
    attribute_offsets: tuple[int, ...] | None = field(default=(), compare=False, repr=False)
    tail_offset: int = field(default=-1, compare=False, repr=False)
    reader: Reader | None = field(default=None, compare=False, repr=False)
    # An Instruction is read whole; an Unparsed one is kept as its line of text.
    unchanged: ClassVar[bool] = False
    maybe_parameter: ClassVar[bool] = True  # see Unparsed

    @classmethod
    def built(cls, **fields: Any) -> Instruction:
        """Make one without the dataclass ``__init__``: a large dump builds
        hundreds of thousands, and setting each frozen field through
        ``object.__setattr__`` would double the parser's cost. Every field
        must be given."""
        instruction = object.__new__(cls)
        instruction.__dict__.update(fields)
        return instruction

    @cached
    def attributes(self) -> tuple[Attribute, ...]:
        offsets = self.attribute_offsets
        if offsets is None and self.reader is not None and self.tail_offset >= 0:
            offsets = self.reader.attribute_offsets(self.tail_offset)
        if not offsets or len(offsets) != len(self.attribute_items):
            offsets = (-1,) * len(self.attribute_items)
        return tuple(Attribute(name, text, offset, self.reader)
                     for (name, text), offset in zip(self.attribute_items, offsets))

    def attribute(self, name: str) -> Attribute | None:
        for index, (attribute_name, _) in enumerate(self.attribute_items):
            if attribute_name == name:
                return self.attributes[index]
        return None

    @cached
    def metadata(self) -> dict[str, Any]:
        """The ``metadata={...}`` fields (op_type, op_name, source_file, ...), or {}."""
        attr = self.attribute("metadata")
        if attr is None:
            return {}
        return self.reader.metadata(attr)

    @cached
    def literal(self) -> Literal | None:
        """The value of a ``constant``; None for other opcodes."""
        if self.opcode != "constant":
            return None
        return self.reader.literal(self)

    @cached
    def called_computations(self) -> tuple[str, ...]:
        """Names of the computations this instruction calls (to_apply, calls,
        body, ...), in XLA's order: a while calls (body, condition), a
        conditional (true, false) or its branches, select-and-scatter
        (select, scatter)."""
        items = self.attribute_items
        if not items or CALL_ATTRIBUTES.isdisjoint(dict(items)) or self.opcode in _CALLS_NOTHING:
            return ()  # most instructions: no attribute objects made, no grammar
        calls = [index for index, (name, _) in enumerate(items) if name in CALL_ATTRIBUTES]
        calls.sort(key=lambda index: items[index][0] in _CALLED_SECOND)
        return tuple(name for index in calls
                     for name in self.reader.computation_names(self.attributes[index]))

    @property
    def parameter_number(self) -> int | None:
        if self.opcode != "parameter":
            return None
        return int(self.operand_text.strip())

    @cached
    def attribute_keys(self) -> frozenset:
        """(name, key) of each attribute XLA keeps, by meaning (``Attribute.key``,
        with what XLA assumes when an attribute is left out: no
        ``feature_group_count=1``, no ``replica_groups={}``...); the
        computations it calls left out (``called_computations`` names them)."""
        return self.reader.instruction_keys(self)

    def __eq__(self, other: object) -> bool:
        """The same instruction to XLA: name, opcode, shape, operands, the
        computations it calls, the literal's value or parameter's number,
        and what its attributes mean, whatever their spelling and order.
        (Which one is the root is the computation's to say: the text may
        leave the ROOT mark out.)"""
        if not isinstance(other, (Instruction, Unparsed)):
            return NotImplemented
        if other.unchanged:
            other = other.whole
        return (self.name, self.opcode, self.shape, self.operands) == \
            (other.name, other.opcode, other.shape, other.operands) \
            and self.parameter_number == other.parameter_number \
            and self.literal == other.literal \
            and self.called_computations == other.called_computations \
            and self.attribute_keys == other.attribute_keys

    def __hash__(self) -> int:
        return hash((self.name, self.opcode, self.operands))


class Unparsed:
    """An instruction whose line the unchanged pass (hlodiff/syntax/unchanged.py)
    found byte for byte in the other run, under the same name: it cannot
    take part in any change, so it is kept as its line and read only if
    something asks.

    ``name``, ``is_root`` and ``line`` are known from the line's first
    characters; ``opcode`` and ``operands`` are read with one regular
    expression (aligning and explaining walk the graph); anything else reads
    the whole instruction, with the parser's errors, and answers from it.
    """

    __slots__ = ("name", "is_root", "maybe_parameter", "line", "reader", "offset", "_head",
                 "_whole")
    unchanged = True

    def __init__(self, name: str, is_root: bool, maybe_parameter: bool, line: int,
                 reader: Reader, offset: int, head: tuple[str, tuple[str, ...]] | None = None):
        # maybe_parameter: False when the line cannot be a parameter, so that
        # listing a computation's parameters reads no other line.
        self.name, self.is_root, self.maybe_parameter, self.line = name, is_root, maybe_parameter, line
        self.reader, self.offset = reader, offset  # offset: where the line starts in the file
        # head: (opcode, operands) when read already, with the lines around it
        self._head: tuple[str, tuple[str, ...]] | None = head
        self._whole: Instruction | None = None

    @property
    def opcode(self) -> str:
        return (self._head or self._read_head())[0]

    @property
    def operands(self) -> tuple[str, ...]:
        return (self._head or self._read_head())[1]

    def _read_head(self) -> tuple[str, tuple[str, ...]]:
        self._head = self.reader.head(self.offset) or (self.whole.opcode, self.whole.operands)
        return self._head

    @property
    def parameter_number(self) -> int | None:
        if not self.maybe_parameter or self.opcode != "parameter":
            return None
        number = self.reader.parameter_number(self.offset)  # the one-line form head() saw
        return number if number is not None else self.whole.parameter_number

    @property
    def called_computations(self) -> tuple[str, ...]:
        """What it calls: nothing, without reading the line, when no attribute
        that names a computation is on it (most lines; the explanation asks
        of every line a change flows through)."""
        return self.whole.called_computations if self.reader.may_call(self.offset) else ()

    @property
    def whole(self) -> Instruction:
        """The instruction, read from its line."""
        if self._whole is None:
            self._whole = self.reader.instruction(self.offset, self.line)
        return self._whole

    def __getattr__(self, attribute: str) -> Any:
        # Only reached for what the slots above do not hold.
        if attribute.startswith("__"):
            raise AttributeError(attribute)
        return getattr(self.whole, attribute)

    def __repr__(self) -> str:
        return f"Unparsed({self.name!r}, line {self.line})"

    def __reduce__(self) -> tuple:
        # As a call with its fields: half the time of pickle's way with slots
        # (a worker sends a big diff's thousands of these, bench/README.md).
        return _unparsed, (self.name, self.is_root, self.maybe_parameter, self.line, self.reader,
                           self.offset, self._head, self._whole)


def _unparsed(name: str, is_root: bool, maybe_parameter: bool, line: int, reader: Reader,
              offset: int, head: tuple[str, tuple[str, ...]] | None,
              whole: Instruction | None) -> Unparsed:
    """An Unparsed as it was pickled, with what it had read."""
    instruction = Unparsed(name, is_root, maybe_parameter, line, reader, offset, head)
    instruction._whole = whole
    return instruction


@dataclass(frozen=True)
class Computation:
    """A named list of instructions; the entry computation is the program's main."""

    name: str
    instructions: tuple[Instruction, ...]
    is_entry: bool = False
    execution_thread: str | None = None
    line: int = field(default=0, compare=False)
    offset: int = field(default=-1, compare=False, repr=False)
    unchanged: ClassVar[bool] = False  # see UnchangedComputation

    @cached
    def root(self) -> Instruction:
        for instruction in self.instructions:
            if instruction.is_root:
                return instruction
        return self.instructions[-1]

    @cached
    def parameters(self) -> tuple[Instruction, ...]:
        """The ``parameter(N)`` instructions, ordered by N."""
        params = [i for i in self.instructions if i.maybe_parameter and i.opcode == "parameter"]
        return tuple(sorted(params, key=lambda i: i.parameter_number or 0))

    @cached
    def by_name(self) -> dict[str, Instruction]:
        return {i.name: i for i in self.instructions}

    def __eq__(self, other: object) -> bool:
        """The same computation to XLA: name, execution thread, root and
        instructions, in any order (XLA keeps none: it prints them in post
        order, unless the module is scheduled; see Module). Which one is the
        entry is the module's to say (the text may leave ENTRY out)."""
        if not isinstance(other, Computation):
            return NotImplemented
        return (self.name, self.execution_thread, self.root.name) == \
            (other.name, other.execution_thread, other.root.name) \
            and self.by_name == other.by_name

    def __hash__(self) -> int:
        return hash((self.name, len(self.instructions)))


class UnchangedComputation(Computation):
    """A computation the unchanged pass (hlodiff/syntax/unchanged.py) found line for
    line in the other run: nothing in it can differ, so nothing is made of
    its lines until something asks for its instructions. Most computations
    of a big dump are such; the aligner and the differ never ask.

    ``read`` makes its instructions (``Unparsed``, from its lines).
    """

    unchanged = True

    def __init__(self, name: str, read: Callable[[], list[Instruction]], is_entry: bool = False,
                 execution_thread: str | None = None, line: int = 0, offset: int = -1):
        for attribute, value in (("name", name), ("is_entry", is_entry), ("line", line),
                                 ("execution_thread", execution_thread), ("offset", offset),
                                 ("_read", read)):
            object.__setattr__(self, attribute, value)  # frozen, as Computation is

    @cached
    def instructions(self) -> tuple[Instruction, ...]:
        return tuple(self._read())


@dataclass(frozen=True)
class Module:
    """A parsed HLO module: header, stack-frame tables and computations in order."""

    name: str
    computations: tuple[Computation, ...]
    header: tuple[Attribute, ...] = ()
    frames: StackFrameTable | None = None
    path: str | None = field(default=None, compare=False)

    @cached
    def entry(self) -> Computation:
        """The ENTRY computation, or the last one when none is marked (XLA's rule)."""
        for computation in self.computations:
            if computation.is_entry:
                return computation
        return self.computations[-1]

    @cached
    def by_name(self) -> dict[str, Computation]:
        return {c.name: c for c in self.computations}

    @cached
    def entry_layout(self) -> tuple[tuple[Shape, ...], Shape]:
        """(parameter shapes, result shape) of the program, layouts
        included: the header's entry_computation_layout, or when it has
        none what XLA derives from the entry computation: its parameters'
        and root's shapes, in the default dimension order where the header
        makes XLA's parser install a config of its own (``replica_count=2``:
        ``Reader.replaces_config``)."""
        for attribute in self.header:
            if attribute.name == "entry_computation_layout":
                return attribute.reader.program_shape(attribute)
        entry = self.entry
        parameters, result = tuple(p.shape for p in entry.parameters), entry.root.shape
        if any(attribute.reader.replaces_config(attribute) for attribute in self.header):
            return tuple(p.in_default_order() for p in parameters), result.in_default_order()
        return parameters, result

    @cached
    def header_keys(self) -> frozenset:
        """(name, key) of each header attribute XLA keeps beside the entry
        computation layout (defaults such as ``replica_count=1`` left out)."""
        keys = ((a.name, a.reader.header_key(a)) for a in self.header
                if a.name != "entry_computation_layout")
        return frozenset((name, key) for name, key in keys if key is not None)

    @property
    def is_scheduled(self) -> bool:
        return ("is_scheduled", "true") in self.header_keys

    def __eq__(self, other: object) -> bool:
        """The same program to XLA: module name, header and computations (in
        any order; instruction order too, where the module is scheduled).
        Stack frames count through the metadata that names them."""
        if not isinstance(other, Module):
            return NotImplemented
        return (self.name, self.entry.name, self.header_keys, self.entry_layout, self.schedule) == \
            (other.name, other.entry.name, other.header_keys, other.entry_layout, other.schedule) \
            and self.by_name == other.by_name

    @cached
    def schedule(self) -> dict[str, tuple[str, ...]] | None:
        """The order instructions run in, when the module is scheduled: per
        computation that is not a fusion's body, its instructions in text
        order (XLA's ``ScheduleFromInstructionOrder``); None otherwise."""
        if not self.is_scheduled:
            return None
        fused = {name for _, i in self.instructions() if i.opcode == "fusion"
                 for name in i.called_computations}
        return {c.name: tuple(i.name for i in c.instructions)
                for c in self.computations if c.name not in fused}

    def __hash__(self) -> int:
        return hash((self.name, len(self.computations)))

    def computation(self, name: str) -> Computation:
        return self.by_name[name]

    @property
    def instruction_count(self) -> int:
        return sum(len(c.instructions) for c in self.computations)

    def instructions(self):
        """Every (computation, instruction) pair, in file order."""
        for computation in self.computations:
            for instruction in computation.instructions:
                yield computation, instruction

    def origin(self, instruction: Instruction) -> Origin:
        """Where ``instruction`` came from, with the stack resolved from the frame tables.

        ``source_file`` and ``source_line`` name the user's code: when the
        metadata names none (JAX 0.10 records only a stack_frame_id) they are
        the innermost frame's that is not inside an installed package; a
        source_file inside one (TensorFlow records its own ops.py), or a
        placeholder (PLACEHOLDER_FILES), is not the user's line and is left
        out. The raw fields stay in ``metadata``.
        """
        md = instruction.metadata
        if not md:
            return Origin()
        stack: tuple[Frame, ...] = ()
        frame_id = md.get("stack_frame_id")
        if self.frames is not None and isinstance(frame_id, int):
            stack = self.frames.stack(frame_id)
        source_file = md.get("source_file")
        line = md.get("source_line")
        line = line if isinstance(line, int) else None
        if source_file is not None and (is_library_file(source_file)
                                        or source_file in PLACEHOLDER_FILES):
            source_file = line = None  # the framework's own code, not the user's
        if source_file is None:  # newer JAX records only the stack
            user_frame = next((f for f in stack if not is_library_file(f.file)), None)
            if user_frame is not None:
                source_file, line = user_frame.file, user_frame.line
        return Origin(op_type=md.get("op_type"), op_name=md.get("op_name"),
                      source_file=source_file, source_line=line, stack=stack)
