"""The ``Reader`` every model object of a parsed file holds (see hlodiff/model.py).

The parser reads structure at once and leaves attribute values, literals and
the lines the unchanged pass skipped as text with their offsets; a
``TextReader`` reads them from the file's text when the model is first asked
for them, and raises ``HloSyntaxError`` at their place in the file.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..errors import HloSyntaxError, Source, syntax_error_at
from ..model import CALL_ATTRIBUTES, Attribute, Instruction, Literal, Module, Shape, StackFrameTable
from . import pieces
from .lexer import HloScanner, ScanError, attribute_offsets, head_at, line_heads
from .literals import LiteralError, decoded, element_bits_of
from .meaning import attribute_key, header_key, instruction_keys, replaces_config
from .values import (PieceError, computation_names, metadata_fields, parse_literal,
                     parse_operands, parse_shape, parse_value, plain_operands)


# An attribute naming a computation, as it starts on an instruction's line.
_CALLING = re.compile(r"[ ,](?:%s)=" % "|".join(sorted(CALL_ATTRIBUTES)))


class TextReader:
    """Reads the pieces of one file's text, on first use."""

    __slots__ = ("source", "frames", "parse_module")

    def __init__(self, source: Source, parse_module: Callable[[str], Module] | None = None):
        self.source = source
        self.frames: StackFrameTable | None = None  # the module's, once read
        # Reads the HLO modules a header can embed (origin_recovery_table);
        # the parser passes itself, which this module cannot import.
        self.parse_module = parse_module

    @property
    def path(self) -> str | None:
        return self.source.path

    @property
    def text(self) -> str:
        return self.source.text

    def error(self, offset: int, message: str) -> HloSyntaxError:
        return self.source.error(offset, message)

    # -- what the model asks ------------------------------------------------------

    def attribute_value(self, attribute: Attribute) -> Any:
        try:
            return parse_value(attribute.text)
        except PieceError as err:
            raise self._error_in(attribute.offset, err, f"attribute {attribute.name}") from None

    def attribute_key(self, attribute: Attribute) -> Any:
        return attribute_key(attribute.name, attribute.text, self.frames)

    def instruction_keys(self, instruction: Instruction) -> frozenset:
        return instruction_keys(instruction.opcode, instruction.shape,
                                instruction.attribute_items, self.frames)

    def header_key(self, attribute: Attribute) -> Any:
        return header_key(attribute.name, attribute.text, self.parse_module)

    def replaces_config(self, attribute: Attribute) -> bool:
        return replaces_config(attribute.name, attribute.text)

    def program_shape(self, attribute: Attribute) -> tuple[tuple[Shape, ...], Shape]:
        """The shapes of ``entry_computation_layout={(params)->result}``."""
        text = attribute.text.strip()[1:-1]
        arrow = text.rindex("->")
        parameters = parse_shape(text[:arrow])
        return parameters.tuple_shapes, parse_shape(text[arrow + 2:])

    def attribute_offsets(self, tail_offset: int) -> tuple[int, ...]:
        return attribute_offsets(self.source.text, tail_offset)

    def metadata(self, attribute: Attribute) -> dict[str, Any]:
        return metadata_fields(attribute)

    def literal(self, instruction: Instruction) -> Literal:
        return parse_literal(instruction.operand_text, instruction.shape, self.source,
                             instruction.operand_offset, self)

    def literal_bits(self, literal: Literal) -> tuple:
        """Each element's bits as XLA stores them; an element XLA rejects
        stays its text (``check`` reports it)."""
        try:
            return element_bits_of(literal)
        except LiteralError:
            return literal.elements

    def literal_values(self, literal: Literal) -> tuple:
        return tuple(decoded(literal.element_type, bits) if not isinstance(bits, str) else bits
                     for bits in literal.bits)

    def computation_names(self, attribute: Attribute) -> list[str]:
        return computation_names(attribute)

    def head(self, offset: int) -> tuple[str, tuple[str, ...]] | None:
        """(opcode, operand names) of the one-line instruction at ``offset``, read
        with one regular expression when it has the common form; else None."""
        head = head_at(self.source.text, offset)
        if head is None:
            return None
        opcode, operands = head
        if opcode in pieces.NO_OPERAND_NAMES:
            return opcode, ()
        try:
            return opcode, parse_operands(operands)
        except PieceError:
            return None

    def heads(self, lines: list[str]) -> list[tuple[str, tuple[str, ...]] | None]:
        """``head`` of each of ``lines`` (instruction lines of this text, as
        XLA prints them), read together; None where ``head`` is to be asked."""
        out: list[tuple[str, tuple[str, ...]] | None] = []
        for head in line_heads(lines):
            if head is not None:
                opcode, operands = head
                names = () if opcode in pieces.NO_OPERAND_NAMES else plain_operands(operands)
                head = None if names is None else (opcode, names)
            out.append(head)
        return out

    def parameter_number(self, offset: int) -> int | None:
        head = head_at(self.source.text, offset)
        return int(head[1]) if head is not None else None

    def may_call(self, offset: int) -> bool:
        """Might the instruction at ``offset`` call a computation: does an
        attribute that names one (``calls=``, ``to_apply=``...) appear on
        its line? A string holding such a text only makes this say yes."""
        text = self.source.text
        end = text.find("\n", offset)
        return _CALLING.search(text, offset, end if end >= 0 else len(text)) is not None

    def line_text(self, offset: int) -> str:
        """The line that starts at ``offset``, without its newline."""
        text = self.source.text
        end = text.find("\n", offset)
        return text[offset:end if end >= 0 else len(text)]

    def instruction(self, offset: int, line: int) -> Instruction:
        """The instruction at ``offset`` (line ``line``), read on its own."""
        scanner = HloScanner(self.source.text)
        scanner.pos, scanner.line, scanner._line_pos = offset, line, offset
        try:
            return pieces.instruction(self, scanner.instruction())
        except ScanError as err:
            raise self.error(err.offset, err.message) from None
        except pieces.Failure as err:
            raise self.error(err.offset, err.message) from None

    def _error_in(self, base: int, err: PieceError, fallback: str) -> HloSyntaxError:
        if base >= 0:
            return syntax_error_at(self.source.text, base + err.offset, err.message,
                                   self.source.path)
        return HloSyntaxError(f"{fallback}: {err.message}", path=self.source.path)
