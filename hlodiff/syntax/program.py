"""What XLA's parser builds from HLO text, where that is more than the text says.

XLA does not keep HLO text as written (``xla/hlo/parser/hlo_parser.cc``):

* an operand written as an instruction, ``add(x, f32[] constant(1))``,
  becomes an instruction of its own just before its user, named by the
  parser ``constant.anon`` (then ``constant.anon.1``, ...);
* a computation written inline, ``to_apply={ ... }``, becomes a computation
  named ``_`` (then ``_.1``, ...), made before the one that uses it;
* async sugar, ``custom-call-start(x), custom_call_target="f"``, becomes an
  ``async-start`` calling a new computation ``async_wrapped`` whose
  parameters are ``async_param`` and whose root is the wrapped instruction,
  named after its opcode (as jaxlib 0.10.2's XLA does); ``<op>-update`` and ``<op>-done`` become
  ``async-update`` and ``async-done``;
* a shape the text leaves out is inferred (hlodiff/syntax/inference.py);
* names are made unique across the module (hlodiff/syntax/names.py).

``Program`` does the same as the parser hands it computations, so that two
texts XLA reads into the same program give equal models. A module XLA
printed itself has none of these, and costs a few checks per instruction.
"""

from __future__ import annotations


from ..model import CALL_ATTRIBUTES, Computation, Instruction, Shape
from . import pieces
from .inference import INFERABLE, infer, made as made_shape
from .lexer import ScanError, inline_body, nested_instruction
from .names import NameUniquer, already_unique, sanitized
from .opcodes import CALL_LISTS, CALLERS, OPCODES, SHAPE_MADE_BY_XLA, writes_inline
from .pieces import Failure, changed
from .reader import TextReader
from .values import NestedOperand, Operands

# The attributes an async instruction keeps for itself (hlo_parser.cc), and
# those of them XLA also gives the instruction it wraps.
_ASYNC_OWN = frozenset({"sharding", "frontend_attributes", "statistics", "parameter_replication",
                        "control-predecessors", "origin", "metadata", "backend_config",
                        "async_execution_thread"})
_ASYNC_COPIED = frozenset({"metadata", "origin", "backend_config", "frontend_attributes",
                           "statistics"})
# Names the parser makes up are given with this mark and a number, unique
# until the module names everything as XLA does (see Program.computations).
_MADE = "\0"


def _made(instruction: Instruction, operand_shapes: list) -> Instruction:
    """``instruction`` (after-all, send, outfeed, ...) with the shape XLA
    makes for it, and an outfeed with the outfeed_shape XLA gives it when
    the text leaves it out (its operand's)."""
    shape = made_shape(instruction.opcode, instruction.shape, operand_shapes) or instruction.shape
    changes = {"shape": shape} if shape != instruction.shape else {}
    if instruction.opcode == "outfeed" and operand_shapes and operand_shapes[0] is not None \
            and instruction.attribute("outfeed_shape") is None:
        changes["attribute_items"] = instruction.attribute_items + (
            ("outfeed_shape", str(operand_shapes[0])),)
        changes["attribute_offsets"] = None
    return changed(instruction, **changes) if changes else instruction


def _base(name: str) -> str:
    return name.split(_MADE, 1)[0]


class Program:
    """The computations of one module as XLA makes them, given one by one in
    the order the parser reads them."""

    def __init__(self, reader: TextReader):
        self.reader = reader
        self.text = reader.text
        self._computations: list[Computation] = []  # XLA's order: what one makes comes first
        self._named: dict[str, Computation] = {}  # by the name the text gives
        self._made = 0  # names made up so far
        # XLA's parser names nested instructions with a NameUniquer that has
        # seen every instruction name before them; made when first needed.
        self._parser_names: NameUniquer | None = None
        # The computations an instruction made (inline ones), and the
        # instructions of the computations being built, for replaying names.
        self._made_by: dict[int, list[Computation]] = {}
        self._building: list[list[Instruction]] = []
        self._async_callers: list[str] = []  # computations with an async-start, in order
        self._built = False  # whether any computation was built: names the text does not give

    # -- computations, as the parser reads them ---------------------------------

    def add(self, computation: Computation, as_written: bool = False,
            starts_async: bool = True) -> Computation:
        """Take the next computation the parser read; ``as_written`` when the
        scanner found nothing XLA makes more of in its text (the usual),
        ``starts_async`` when it has an async-start."""
        if computation.name in self._named:
            raise Failure(computation.offset, f'computation "{computation.name}" already exists')
        built = False
        if not (as_written or computation.unchanged):
            instructions = computation.instructions
            if self._needs_building(instructions):
                instructions, built = self._build(instructions), True
                self._built = True
            elif any(i.opcode in SHAPE_MADE_BY_XLA for i in instructions if not i.unchanged):
                instructions = self._with_made_shapes(instructions)
            if instructions is not computation.instructions:
                computation = Computation(computation.name, tuple(instructions),
                                          computation.is_entry, computation.execution_thread,
                                          computation.line, computation.offset)
        if self._parser_names is not None and not built and not computation.unchanged:
            self._replay(computation.instructions)  # a build shows it each name as it goes
        if (starts_async or built) and not computation.unchanged and any(
                i.opcode == "async-start" for i in computation.instructions):
            self._async_callers.append(computation.name)
        self._named[computation.name] = computation
        self._computations.append(computation)
        return computation

    @staticmethod
    def _needs_building(instructions) -> bool:
        """Is there anything in ``instructions`` XLA makes more of than a
        shape of its own (see _with_made_shapes)?"""
        for instruction in instructions:
            if instruction.unchanged:
                continue
            opcode = instruction.opcode
            if instruction.shape is None or type(instruction.operands) is Operands \
                    or opcode not in OPCODES or opcode in CALLERS and any(
                        writes_inline(name, text) for name, text in instruction.attribute_items):
                return True
        return False

    def _with_made_shapes(self, instructions):
        """``instructions`` with the shapes XLA makes for after-all, send,
        recv, ... (whatever the text says; the same, in a dump XLA wrote)."""
        shapes = {i.name: i.shape for i in instructions if not i.unchanged}
        out = []
        for instruction in instructions:
            if not instruction.unchanged and instruction.opcode in SHAPE_MADE_BY_XLA:
                instruction = _made(instruction, [shapes.get(o) for o in instruction.operands])
                shapes[instruction.name] = instruction.shape
            out.append(instruction)
        return out if any(a is not b for a, b in zip(out, instructions)) else instructions

    def _build(self, instructions) -> tuple[Instruction, ...]:
        out: list[Instruction] = []
        shapes: dict[str, Shape | None] = {}
        self._building.append(out)
        try:
            self._build_into(instructions, out, shapes)
        finally:
            self._building.pop()
        return tuple(out)

    def _build_into(self, instructions, out: list, shapes: dict) -> None:
        for instruction in instructions:
            if instruction.unchanged:
                out.append(instruction)
                shapes[instruction.name] = None
                continue
            built = self._instruction(instruction, out, shapes)
            if self._parser_names is not None:
                self._parser_names.unique(built.name)

    def _instruction(self, instruction: Instruction, out: list, shapes: dict) -> Instruction:
        """Make ``instruction`` as XLA does, appending it (and what it makes
        first) to ``out``; ``shapes`` holds the computation's shapes by name."""
        changes: dict = {}
        operands = instruction.operands
        if type(operands) is Operands:
            operands = changes["operands"] = tuple(
                self._nested(instruction, o, out, shapes).name if type(o) is NestedOperand else o
                for o in operands)
        made: list[Computation] = []
        if instruction.opcode in CALLERS or instruction.opcode not in OPCODES:
            items = self._inline_calls(instruction, made)
            if items is not None:
                instruction = changed(instruction, attribute_items=items, attribute_offsets=None)
        opcode, shape = instruction.opcode, instruction.shape
        if opcode not in OPCODES:  # async sugar: custom-call-start, ...
            opcode, changes["attribute_items"] = self._unsugared(instruction, operands, shapes)
            changes["opcode"] = opcode
        if opcode in SHAPE_MADE_BY_XLA:
            made = _made(changed(instruction, operands=operands), [shapes.get(o) for o in operands])
            shape = made.shape
            if made.attribute_items is not instruction.attribute_items:
                changes["attribute_items"] = made.attribute_items
        elif shape is None:
            if opcode not in INFERABLE:
                raise Failure(instruction.operand_offset - 1,
                              f"{opcode} needs its shape: XLA infers none for it")
            shape = self._inferred(opcode, instruction, operands, shapes)
        if shape is not instruction.shape:
            changes["shape"] = shape
        built = changed(instruction, **changes) if changes else instruction
        if made:
            self._made_by[id(built)] = made
        out.append(built)
        shapes[built.name] = shape
        return built

    # -- nested instructions --------------------------------------------------------

    def _nested(self, user: Instruction, operand: NestedOperand, out: list, shapes: dict) -> Instruction:
        offset = user.operand_offset + operand.offset
        try:
            cut = nested_instruction(self.text, offset)
        except ScanError as err:
            raise Failure(err.offset, err.message) from None
        nested = pieces.built("", user.line + self.text.count("\n", user.operand_offset, offset),
                              cut, self.reader)
        for name in nested.operands:
            if type(name) is not NestedOperand and name not in shapes and "#" not in name:
                raise Failure(cut.operands_at, f'operand "{name}" is not defined before this instruction')
        made = self._instruction(nested, out, shapes)
        out.pop()
        shapes.pop(made.name, None)
        name = self._names().unique(f"{made.opcode}.anon")
        made = changed(made, name=name)
        out.append(made)
        shapes[name] = made.shape
        return made

    def _names(self) -> NameUniquer:
        """XLA's parser's NameUniquer, having seen every name before here."""
        if self._parser_names is None:
            self._parser_names = NameUniquer()
            for computation in self._computations:
                if _MADE not in computation.name and not computation.unchanged:
                    self._replay(computation.instructions)
            for instructions in self._building:
                self._replay(instructions)
        return self._parser_names

    def _replay(self, instructions) -> None:
        """Show the parser's NameUniquer ``instructions`` (and the inline
        computations they made) in the order XLA's parser saw their names."""
        for instruction in instructions:
            for made in self._made_by.get(id(instruction), ()):
                self._replay(made.instructions)
            self._parser_names.unique(instruction.name)

    # -- inline computations ----------------------------------------------------------

    def _inline_calls(self, instruction: Instruction, made: list) -> tuple | None:
        """The attributes of ``instruction`` with each computation written
        inline made (into ``made``) and named instead; None when none is."""
        if not any(writes_inline(name, text) for name, text in instruction.attribute_items):
            return None
        out = []
        for attribute in instruction.attributes:
            text = attribute.text.lstrip()
            if not writes_inline(attribute.name, text):
                out.append((attribute.name, attribute.text))
            elif attribute.name in CALL_LISTS:
                names = [self._inline_or_named(item, attribute, made) for item in _list_items(text)]
                out.append((attribute.name, "{" + ", ".join(names) + "}"))
            else:
                out.append((attribute.name,
                            self._inline(attribute.offset + len(attribute.text) - len(text), made)))
        return tuple(out)

    def _inline_or_named(self, item: tuple[int, str], attribute, made: list) -> str:
        offset, text = item
        stripped = text.strip()
        if stripped.startswith("{"):
            at = attribute.offset + len(attribute.text) - len(attribute.text.lstrip()) + offset
            return self._inline(at + len(text) - len(text.lstrip()), made)
        return stripped[1:] if stripped.startswith("%") else stripped

    def _inline(self, offset: int, made: list) -> str:
        """Make the computation written inline at ``offset`` (its '{')."""
        try:
            tokens = inline_body(self.text, offset)
        except ScanError as err:
            raise Failure(err.offset, err.message) from None
        name = self._made_up("_")
        instructions = pieces.body("_", tokens, self.reader)
        line = self.text.count("\n", 0, offset) + 1
        made.append(self.add(Computation(name, tuple(instructions), False, None, line, offset)))
        return name

    def _made_up(self, base: str) -> str:
        self._made += 1
        return f"{base}{_MADE}{self._made}"

    # -- async sugar ------------------------------------------------------------------------

    def _unsugared(self, instruction: Instruction, operands: tuple,
                   shapes: dict) -> tuple[str, tuple[tuple[str, str], ...]]:
        """``<op>-start`` becomes async-start calling a new computation that
        wraps ``<op>``; ``<op>-update``/``-done`` become async-update/-done.
        The opcode and the attributes XLA keeps on it."""
        opcode, items = instruction.opcode, instruction.attribute_items
        if not opcode.endswith("-start"):
            return ("async-update" if opcode.endswith("-update") else "async-done"), items
        wrapped = opcode[:-len("-start")]
        shape = instruction.shape
        if shape is None or not shape.is_tuple or len(shape.tuple_shapes) < 2:
            raise Failure(instruction.operand_offset, f"{opcode} needs a shape "
                          "((operand shapes), result shape, ...)")
        parameters = [Instruction.built(
            name=self._made_up("async_param"), opcode="parameter", shape=shapes.get(o),
            operands=(), attribute_items=(), is_root=False, operand_text=str(i),
            line=instruction.line, operand_offset=-1, attribute_offsets=(), tail_offset=-1,
            reader=self.reader) for i, o in enumerate(operands)]
        root = changed(instruction, name=self._made_up(wrapped), opcode=wrapped,
                        shape=shape.tuple_shapes[1], operands=tuple(p.name for p in parameters),
                        attribute_items=tuple((n, t) for n, t in items if n not in _ASYNC_OWN
                                              or n in _ASYNC_COPIED),
                        attribute_offsets=None, is_root=True)
        thread = instruction.attribute("async_execution_thread")
        thread_name = None
        if thread is not None and self.reader.attribute_value(thread) != "main":
            thread_name = str(self.reader.attribute_value(thread))
        name = self._made_up("async_wrapped")
        self._computations.append(Computation(name, (*parameters, root), False, thread_name,
                                              instruction.line, instruction.operand_offset))
        self._named[name] = self._computations[-1]
        kept = tuple((n, t) for n, t in items if n in _ASYNC_OWN)
        return "async-start", kept + (("calls", name),)

    # -- shapes ------------------------------------------------------------------------------

    def _inferred(self, opcode: str, instruction: Instruction, operands: tuple,
                  shapes: dict) -> Shape | None:
        operand_shapes = [shapes.get(o) for o in operands]
        if any(s is None for s in operand_shapes):
            return None

        def result_of(index: int) -> Shape | None:
            names = instruction.called_computations
            computation = self._named.get(names[index]) if index < len(names) else None
            return None if computation is None else computation.root.shape

        def attribute(name: str) -> str | None:
            found = instruction.attribute(name)
            return None if found is None else found.text

        return infer(opcode, operand_shapes, attribute, result_of)

    # -- the module --------------------------------------------------------------------------

    def computations(self, names: list[str] | None = None) -> tuple[Computation, ...]:
        """Every computation, named as XLA names them: computation names
        and instruction names (across the module) made unique, in the order
        the computations were made (hlodiff/syntax/names.py). ``names``:
        every instruction's name as the scanner read them, when it read all
        (quicker to gather than from the instructions)."""
        if self._async_callers:
            self._give_threads()
        computations = self._computations
        if names is None or self._built:
            names = [i.name for c in computations if not c.unchanged for i in c.instructions]
        if not self._made and already_unique([c.name for c in computations]) and already_unique(names):
            return tuple(computations)
        return self._renamed(computations)

    def _give_threads(self) -> None:
        """An async-start runs what it calls on its thread (main unless
        ``async_execution_thread`` says otherwise): XLA sets that thread on
        every computation it reaches, and on the async-starts among them
        (``SetThreadName`` in hlo_instructions.cc). Later ones win."""
        index = {c.name: k for k, c in enumerate(self._computations)}
        for caller in self._async_callers:
            for instruction in self._computations[index[caller]].instructions:
                if instruction.opcode == "async-start":
                    thread = instruction.attribute("async_execution_thread")
                    name = "main" if thread is None else str(self.reader.attribute_value(thread))
                    for called in instruction.called_computations:
                        self._set_thread(called, name, index, set())

    def _set_thread(self, name: str, thread: str, index: dict, seen: set) -> None:
        if name not in index or name in seen:
            return
        seen.add(name)
        computation = self._computations[index[name]]
        if computation.unchanged:
            return
        instructions = []
        for instruction in computation.instructions:
            if instruction.opcode == "async-start":
                items = tuple(i for i in instruction.attribute_items if i[0] != "async_execution_thread")
                if thread != "main":
                    items += (("async_execution_thread", '"' + thread + '"'),)
                instruction = changed(instruction, attribute_items=items, attribute_offsets=None)
            instructions.append(instruction)
            for called in instruction.called_computations:
                self._set_thread(called, thread, index, seen)
        self._computations[index[name]] = Computation(
            name, tuple(instructions), computation.is_entry, None if thread == "main" else thread,
            computation.line, computation.offset)

    def _renamed(self, computations: list[Computation]) -> tuple[Computation, ...]:
        computation_names, instruction_names = NameUniquer(), NameUniquer()
        renamed = {c.name: computation_names.unique(_base(c.name)) for c in computations}
        calls_change = any(old != new for old, new in renamed.items())
        out = []
        for computation in computations:
            if computation.unchanged:
                out.append(computation)
                continue
            local: dict[str, str] = {}
            for instruction in computation.instructions:
                if instruction.name in local:
                    raise Failure(instruction.operand_offset,
                                  f'instruction "{instruction.name}" already exists in '
                                  f"computation {computation.name}")
                if _MADE not in instruction.name and sanitized(instruction.name) != instruction.name:
                    raise Failure(instruction.operand_offset,
                                  f'illegal instruction name "{instruction.name}": XLA would call '
                                  f"it {sanitized(instruction.name)}")
                local[instruction.name] = instruction_names.unique(_base(instruction.name))
            instructions = []
            for instruction in computation.instructions:
                changes = {}
                if local[instruction.name] != instruction.name:
                    changes["name"] = local[instruction.name]
                if any(o in local and local[o] != o for o in instruction.operands):
                    changes["operands"] = tuple(local.get(o, o) for o in instruction.operands)
                if calls_change and instruction.called_computations:
                    changes["attribute_items"] = _renamed_calls(instruction, renamed)
                instructions.append(changed(instruction, **changes) if changes else instruction)
            out.append(Computation(renamed[computation.name], tuple(instructions),
                                   computation.is_entry, computation.execution_thread,
                                   computation.line, computation.offset))
        return tuple(out)


def _renamed_calls(instruction: Instruction, renamed: dict[str, str]) -> tuple:
    """The attributes of ``instruction`` with the computations it calls renamed."""
    items = []
    for attribute in instruction.attributes:
        if attribute.name not in CALL_ATTRIBUTES:
            items.append((attribute.name, attribute.text))
            continue
        names = [renamed.get(n, n) for n in instruction.reader.computation_names(attribute)]
        single = not attribute.text.lstrip().startswith("{")
        items.append((attribute.name, names[0] if single else "{" + ", ".join(names) + "}"))
    return tuple(items)


def _list_items(text: str) -> list[tuple[int, str]]:
    """The items of ``{a, {...}, b}`` with their offsets in ``text``."""
    from .values import split_operands
    inner = text[1:text.rindex("}")]
    return [(offset + 1, item) for offset, item in split_operands(inner)]
