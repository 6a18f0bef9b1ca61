"""From the scanner's INSTRUCTION tokens to ``Instruction`` objects.

Shared by the parser, which builds every instruction of a module, and by the
reader, which builds one instruction the unchanged pass left as a line when
something asks for it. Shapes and operand lists are read here; attribute
values and literals wait for the reader.
"""

from __future__ import annotations

import re

from lark import Token

from ..model import Instruction, Reader
from .lexer import InstructionPieces
from .values import PieceError, parse_operands, parse_shape

NO_OPERAND_NAMES = frozenset({"parameter", "constant"})
_PARAMETER_NUMBER = re.compile(r"[ \t]*[0-9]+[ \t]*")


class Failure(Exception):
    """A syntax error found while building the model, at a character offset
    of the file; the parser turns it into an ``HloSyntaxError``."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset = offset
        self.message = message


def shape_at(text: str | None, offset: int):
    """The Shape printed as ``text`` at ``offset`` of the file (None for no text)."""
    if text is None:
        return None
    try:
        return parse_shape(text)
    except PieceError as err:
        raise Failure(offset + err.offset, err.message) from None


def instruction(token: Token, reader: Reader) -> Instruction:
    """The Instruction of one INSTRUCTION token of the file ``reader`` reads."""
    pieces: InstructionPieces = token.extra
    opcode, text = pieces.opcode, pieces.operands
    if opcode in NO_OPERAND_NAMES:
        names = ()
        if opcode == "parameter" and not _PARAMETER_NUMBER.fullmatch(text):
            raise Failure(pieces.operands_at, "parameter(N) needs a parameter number N >= 0")
    else:
        try:
            names = parse_operands(text)
        except PieceError as err:
            raise Failure(pieces.operands_at + err.offset, err.message) from None
    return Instruction.built(
        name=str(token), opcode=opcode, shape=shape_at(pieces.shape, pieces.shape_at),
        operands=names, attribute_items=pieces.attributes, is_root=pieces.is_root,
        operand_text=text if not names else "", line=token.line,
        operand_offset=pieces.operands_at, attribute_offsets=pieces.attribute_offsets,
        tail_offset=pieces.tail_at, reader=reader)
