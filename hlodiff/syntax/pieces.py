"""From the scanner's INSTRUCTION tokens to ``Instruction`` objects.

Shared by the parser, which builds every instruction of a module, and by the
reader, which builds one instruction the unchanged pass left as a line when
something asks for it. Shapes and operand lists are read here; attribute
values and literals wait for the reader.
"""

from __future__ import annotations

import re
from dataclasses import fields

from lark import Token

from ..model import Instruction, Reader, Unparsed
from .lexer import InstructionPieces
from .values import PieceError, parse_operands, parse_shape

NO_OPERAND_NAMES = frozenset({"parameter", "constant"})
_FIELDS = tuple(f.name for f in fields(Instruction))
_PARAMETER_NUMBER = re.compile(r"[ \t]*[0-9]+[ \t]*")


class Failure(Exception):
    """A syntax error found while building the model, at a character offset
    of the file; the parser turns it into an ``HloSyntaxError``.
    ``grammatical`` when the complete grammar rejects it too (a malformed
    shape); a check (an operand defined nowhere) is not."""

    def __init__(self, offset: int, message: str, grammatical: bool = False):
        super().__init__(message)
        self.offset = offset
        self.message = message
        self.grammatical = grammatical


def shape_at(text: str | None, offset: int):
    """The Shape printed as ``text`` at ``offset`` of the file (None for no text)."""
    if text is None:
        return None
    try:
        return parse_shape(text)
    except PieceError as err:
        raise Failure(offset + err.offset, err.message, err.grammatical) from None


def instruction(reader: Reader, token: Token) -> Instruction:
    """The Instruction of one INSTRUCTION token of the file ``reader`` reads."""
    pieces: InstructionPieces = token.extra
    return built(str(token), token.line, pieces, reader)


def built(name: str, line: int, pieces: InstructionPieces, reader: Reader) -> Instruction:
    """The Instruction named ``name`` of the pieces the scanner cut (at ``line``)."""
    opcode, text = pieces.opcode, pieces.operands
    shape = shape_at(pieces.shape, pieces.shape_at)
    if opcode in NO_OPERAND_NAMES:
        names = ()
        if opcode == "parameter" and not _PARAMETER_NUMBER.fullmatch(text):
            raise Failure(pieces.operands_at, "parameter(N) needs a parameter number N >= 0",
                          not re.fullmatch(r"\s*-?[0-9]+\s*", text))
        if opcode == "constant" and "{" in text and shape is not None:
            _check_literal_depth(text, shape, pieces.operands_at)
    else:
        try:
            names = parse_operands(text)
        except PieceError as err:
            raise Failure(pieces.operands_at + err.offset, err.message, err.grammatical) from None
    return Instruction.built(
        name=name, opcode=opcode, shape=shape,
        operands=names, attribute_items=pieces.attributes, is_root=pieces.is_root,
        operand_text=text if not names else "", line=line,
        operand_offset=pieces.operands_at, attribute_offsets=pieces.attribute_offsets,
        tail_offset=pieces.tail_at, reader=reader)


def _check_literal_depth(text: str, shape, offset: int) -> None:
    """A literal nests its braces no deeper than its rank (XLA: "expects
    nested array in rank N, but sees larger"), so a scalar's has none. The
    rest of a literal is read when it is asked for; this much is checked on
    every constant at once, so that no depth of braces is ever read."""
    if shape.is_tuple:
        return
    deeper = re.compile(r"\{(?:\s*\{){%d}" % shape.rank).search(text)
    if deeper is not None:
        what = "a scalar's literal has no braces" if shape.rank == 0 else \
            f"the literal nests braces deeper than its rank ({shape.rank})"
        raise Failure(offset + deeper.start(), what)


def changed(instruction: Instruction | Unparsed, **changes) -> Instruction:
    """A copy of ``instruction`` with some fields changed."""
    if instruction.unchanged:
        instruction = instruction.whole
    values = {name: getattr(instruction, name) for name in _FIELDS}
    values.update(changes)
    return Instruction.built(**values)


def body(computation: str, tokens: list[Token], reader: Reader) -> list[Instruction | Unparsed]:
    """The instructions of one computation's body (its INSTRUCTION and
    UNCHANGED tokens, see HloScanner._body), checked as XLA checks them:
    operands defined before use, at most one ROOT."""
    instructions: list[Instruction | Unparsed] = []
    read: list[Token | None] = []  # None for instructions left unparsed
    for piece in tokens:
        if piece.type == "UNCHANGED":
            unparsed = piece.extra.instructions(reader, piece.line)
            instructions += unparsed
            read += [None] * len(unparsed)
        else:
            instructions.append(built(str(piece), piece.line, piece.extra, reader))
            read.append(piece)
    _check_defined_before_use(computation, read, instructions)
    roots = [i for i in instructions if i.is_root]
    if len(roots) > 1:
        raise Failure(roots[1].operand_offset, f"computation {computation} has more than one ROOT")
    return instructions


def _check_defined_before_use(computation: str, tokens, instructions) -> None:
    """Every operand must name an instruction defined earlier in its computation,
    and no instruction may be defined twice in it, as XLA's parser requires: a
    diff of a module that refers to nothing, or to one of two, is
    meaningless. Compact get-tuple-element operands (``%t#0``) are left
    alone, and so are nested instructions (``add(...)``): their own operands
    are checked when they are made (hlodiff/syntax/program.py)."""
    defined: dict[str, int] = {}  # name -> the line that defines it
    for token, instruction in zip(tokens, instructions):
        if instruction.name in defined:
            offset = token.start_pos if token is not None else \
                instruction.reader.text.index("%", instruction.offset) + 1
            raise Failure(offset, f'instruction "{instruction.name}" is defined twice in '
                                  f"computation {computation} (first at line "
                                  f"{defined[instruction.name]})")
        if token is not None and not all(map(defined.__contains__, instruction.operands)):
            for operand in instruction.operands:
                if operand not in defined and "(" not in operand and "#" not in operand:
                    text, offset = token.extra.operands, token.extra.operands_at
                    m = re.search(rf"(?<![\w.\-]){re.escape(operand)}(?![\w.\-])", text)
                    raise Failure(offset + (m.start() if m else 0),
                                  f'operand "{operand}" is not defined before this instruction'
                                  f" in computation {computation}")
        defined[instruction.name] = instruction.line
