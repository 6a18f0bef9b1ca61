"""Reading HLO with the complete grammar, for ``parse(text, strict=True)``.

grammar/hlo_full.lark describes every form of HLO text; the fast path's
scanner (hlodiff/syntax/lexer.py) only finds where pieces end. In strict
mode the grammar reads the whole text instead of the scanner, and its tree
is cut into the same coarse tokens the scanner gives grammar/hlo.lark (an
INSTRUCTION token per instruction, with the texts of its shape, operands
and attribute values), so one model builder serves both: a text the grammar
and the scanner both accept gives equal models, which tests/test_grammar.py
checks. Speed is not the goal here.
"""

from __future__ import annotations

from collections.abc import Iterator

from lark import Token, Tree

from .grammars import lalr
from .lexer import Body, InstructionPieces, PieceToken, skip
from .opcodes import as_written


def tokens(text: str) -> Iterator[Token]:
    """The scanner's tokens for ``text``, cut from the complete grammar's
    tree; raises Lark's UnexpectedInput where the text leaves the grammar."""
    module = full_grammar().parse(text, start="start").children[0]
    header, frames, *computations = module.children
    if header is not None:
        yield from _header(text, header)
    if frames is not None:
        yield from _frame_index(text, frames)
    for computation in computations:
        yield from _computation(text, computation)


# The rules of the complete grammar a text or a piece is read from.
_STARTS = ("start", "attribute", "header_attribute", "literal")


def full_grammar():
    """grammar/hlo_full.lark, ready to read a module or one of its pieces."""
    return lalr("hlo_full", _STARTS, propagate_positions=True)


def check_piece(text: str, rule: str) -> None:
    """Read ``text`` (an attribute ``name=value``, a header attribute, a
    literal) with its rule of the complete grammar; raises Lark's
    UnexpectedInput where it leaves the grammar."""
    full_grammar().parse(text, start=rule)


def _token(kind: str, value: str, at: int, line: int) -> Token:
    return Token(kind, value, at, line)


def _header(text: str, header: Tree) -> Iterator[Token]:
    yield _token("KW_HLOMODULE", "HloModule", header.meta.start_pos, header.meta.line)
    name = header.children[0]
    yield _token("MODULE_NAME", str(name).rstrip(":").lstrip("%"), name.start_pos, name.line)
    for attribute in header.children[1:]:
        start, end = attribute.meta.start_pos, attribute.meta.end_pos
        yield _token("HEADER_ATTR", text[start:end], start, attribute.meta.line)


def _frame_index(text: str, frames: Tree) -> Iterator[Token]:
    for table in frames.children:
        keyword = table.data.replace("_", "").upper()  # file_names -> FILENAMES
        yield _token("KW_" + keyword, keyword, table.meta.start_pos, table.meta.line)
        entries = table.children
        for key, value in zip(entries[::2], entries[1::2]):
            end = value.end_pos if isinstance(value, Token) else value.meta.end_pos
            yield _token("TABLE_ENTRY", text[key.start_pos:end], key.start_pos, key.line)


def _computation(text: str, computation: Tree) -> Iterator[Token]:
    entry, name, signature, *instructions, thread = computation.children
    if entry is not None:
        yield _token("KW_ENTRY", "ENTRY", computation.meta.start_pos, computation.meta.line)
    yield _token("COMP_NAME", str(name).lstrip("%"), name.start_pos, name.line)
    if signature is not None:
        yield _token("SIGNATURE", text[signature.meta.start_pos:signature.meta.end_pos],
                     signature.meta.start_pos, signature.meta.line)
    brace = skip(text, (signature.meta.end_pos if signature is not None else name.end_pos))
    yield _token("LBRACE", "{", brace, name.line)
    pieces = [_instruction(text, instruction) for instruction in instructions]
    written = all(as_written(p.extra.shape, p.extra.opcode, p.extra.attributes, p.extra.operands)
                  for p in pieces)
    starts_async = any(p.extra.opcode == "async-start" for p in pieces)
    yield PieceToken("BODY", "", brace + 1, name.line, Body(pieces, written, starts_async))
    close = text.rindex("}", 0, thread.start_pos if thread is not None else computation.meta.end_pos)
    yield _token("RBRACE", "}", close, computation.meta.end_line)
    if thread is not None:
        yield _token("EXEC_THREAD", str(thread), thread.start_pos, thread.line)


def _instruction(text: str, instruction: Tree) -> PieceToken:
    root, name, shape, operation, *attributes = instruction.children
    opcode = operation.children[0]
    paren = skip(text, opcode.end_pos)  # the '(' after the opcode
    shape_text = shape_at = None
    if shape is not None:
        shape_at = shape.meta.start_pos
        shape_text = text[shape_at:shape.meta.end_pos]
    items, offsets = [], []
    for attribute in attributes:
        start, end = attribute.meta.start_pos, attribute.meta.end_pos
        equals = text.index("=", start)
        value_at = skip(text, equals + 1)
        items.append((text[start:equals], text[value_at:end]))
        offsets.append(value_at)
    return PieceToken("INSTRUCTION", str(name).lstrip("%"), name.start_pos, name.line,
                      InstructionPieces(root is not None, shape_text, shape_at, str(opcode),
                                        text[paren + 1:operation.meta.end_pos - 1], paren + 1,
                                        tuple(items), tuple(offsets), operation.meta.end_pos))
