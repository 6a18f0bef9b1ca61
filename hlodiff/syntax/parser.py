"""HLO text to a ``Module``: the public ``parse`` and ``parse_file``.

grammar/hlo.lark describes the structure; hlodiff/syntax/lexer.py cuts the
text into its coarse tokens, which are fed to Lark's LALR parser one by one;
``_ModuleBuilder`` then turns the small tree into model objects. Every parse
has its own scanner, builder and reader, so threads may parse at once.
Shapes and operand lists are read at once (each distinct shape only once);
attribute values and literals when first used (hlodiff/syntax/reader.py), or
at once with ``strict=True``.
"""

from __future__ import annotations

import re
from functools import cache, partial
from itertools import chain
from pathlib import Path

from lark import Token, Transformer, v_args
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput

from ..collector import paused
from ..errors import HlodiffError, HloSyntaxError, Source, syntax_error_at
from ..model import Attribute, Computation, Literal, Module, StackFrameTable, UnchangedComputation
from . import pieces
from .grammars import lalr
from .program import Program
from .strict import check_piece, tokens as strict_tokens
from .lexer import MAX_NESTING, HloScanner, ScanError, shape_end, skip
from .literals import LiteralError, element_bits_of
from .opcodes import OPCODES, is_opcode
from .pieces import Failure
from .reader import TextReader
from .values import (ELEMENT_TYPES, PieceError, alias_entries, check_attribute, parse_shape,
                     parse_value, split_operands)


@v_args(inline=True)
class _ModuleBuilder(Transformer):
    """Turns the tree of one parse into model objects; one per parse."""

    def __init__(self, reader: TextReader, names: list[str] | None = None):
        super().__init__()
        self.reader = reader
        self.program = Program(reader)
        self.names = names  # every instruction name, when the scanner read every line

    def computation(self, entry, name, signature, _lbrace, body, _rbrace, thread):
        instructions = pieces.body(str(name), body.extra.pieces, self.reader)
        if signature is not None:
            _check_signature(signature)
            _check_parameters(signature)  # the model keeps none: read here or never
        thread_name = None if thread is None else str(parse_value(str(thread)))
        if thread_name == "main":  # XLA's default thread, which it does not print
            thread_name = None
        return self.program.add(Computation(str(name), tuple(instructions), entry is not None,
                                            thread_name, name.line, name.start_pos),
                                body.extra.as_written, body.extra.starts_async)

    def unchanged_computations(self, token: Token) -> None:
        """The computations in a row the unchanged pass skipped (see
        hlodiff/syntax/unchanged/): each header is one line."""
        for skipped, line in token.extra:
            self.program.add(UnchangedComputation(
                skipped.name, partial(skipped.body.instructions, self.reader, line + 1),
                skipped.is_entry, None, line, skipped.name_at))

    def header(self, _kw, name, *attrs):
        return str(name), tuple(self._header_attribute(a) for a in attrs)

    def _header_attribute(self, token: Token) -> Attribute:
        text = str(token)
        name, _, value = text.partition("=")
        attribute = Attribute(name, value, token.start_pos + len(name) + 1, self.reader)
        try:
            check_header_attribute(attribute)
        except PieceError as err:
            raise Failure(attribute.offset + err.offset, err.message, True) from None
        return attribute

    def stack_frame_index(self, *items):
        tables: list[list[Token]] = []
        for item in items:
            if item.type.startswith("KW_"):
                tables.append([])
            else:
                tables[-1].append(item)
        return _frame_table(*tables)

    def start(self, header, frames, *_as_read):  # a computation twice: see Program.add
        self.reader.frames = frames
        computations = self.program.computations(self.names)
        entries = [c for c in computations if c.is_entry]
        if len(entries) > 1:
            raise Failure(entries[1].offset,
                          f"more than one ENTRY computation: {entries[0].name} and {entries[1].name}")
        if header is None:
            name = "module_" + (entries[0].name if entries else computations[-1].name)
            attrs = ()
        else:
            name, attrs = header
        return Module(name, tuple(computations), attrs, frames, self.reader.path)


def _check_signature(signature: Token) -> None:
    """The result shape after '->' must be a shape (the parameters' are
    ``_check_parameters``')."""
    text = str(signature)
    arrow = text.rfind("->")
    result = text[arrow + 2:]
    pieces.shape_at(result.strip(), signature.start_pos + arrow + 2
                    + (len(result) - len(result.lstrip())))


def _check_parameters(signature: Token) -> None:
    """``(name: shape, ...)`` of a signature: each shape must be a shape
    (the names are XLA's to ignore). What XLA prints, arrays without
    layouts, is seen whole by one regular expression: a dump has thousands."""
    text = str(signature)
    close = text.rfind(")", 0, text.rfind("->"))
    if _AS_XLA_PRINTS.fullmatch(text, 0, close + 1):
        return
    try:
        parameters = split_operands(text[1:close]) if text[1:close].strip() else []
    except PieceError as err:
        raise Failure(signature.start_pos + 1 + err.offset, err.message, True) from None
    for offset, item in parameters:
        name = _PARAMETER_NAME.match(item)
        if name is None:
            raise Failure(signature.start_pos + 1 + offset, "expected name: shape", True)
        pieces.shape_at(item[name.end():].rstrip(), signature.start_pos + 1 + offset + name.end())


_ARRAY = r"(?:%s)\[[\d,]*\]" % "|".join(sorted(ELEMENT_TYPES, key=len, reverse=True))
_AS_XLA_PRINTS = re.compile(r"\((?:[A-Za-z_][\w.\-]*: %s(?:, (?=[A-Za-z_])|(?=\))))*\)" % _ARRAY)
_PARAMETER_NAME = re.compile(r"\s*(?:/\*.*?\*/\s*)*[A-Za-z_][\w.\-]*(?::|\s)\s*", re.S)


_TABLE_KEY = re.compile(r"\s*(-?\d+)")


def _frame_table(files, functions, locations, frames) -> StackFrameTable:
    def entries(tokens, names=None):
        """(id, value) of each entry: a string, or with ``names`` those integer fields."""
        for token in tokens:
            text = str(token)
            key = _TABLE_KEY.match(text)  # the scanner saw the integer
            try:
                value = parse_value(text[key.end():])
            except PieceError as err:
                raise Failure(token.start_pos + key.end() + err.offset, err.message, True) from None
            if names is None and not isinstance(value, str):
                raise Failure(token.start_pos + key.end(), "expected a string", True)
            if names is not None:
                if not isinstance(value, dict) or \
                        not all(type(value.get(n, 0)) is int for n in names):
                    raise Failure(token.start_pos + key.end(),
                                  "expected {" + " ".join(f"{n}=N" for n in names) + "}")
                value = tuple(value.get(n, 0) for n in names)
            yield int(key.group(1)), value

    location_table = dict(entries(locations, ("file_name_id", "function_name_id", "line", "column")))
    frame_table = {}
    for key, (location_id, printed_parent) in entries(frames, ("file_location_id", "parent_frame_id")):
        # Printed as the parent's id plus one; 1 (or 0) means no parent.
        frame_table[key] = (location_id, max(0, printed_parent - 1))
    return StackFrameTable(dict(entries(files)), dict(entries(functions)), location_table, frame_table)


# --- header attributes -------------------------------------------------------------------

def check_header_attribute(attribute: Attribute) -> None:
    """Check the header attributes whose form XLA enforces; raise PieceError."""
    name, text = attribute.name, attribute.text
    if name == "entry_computation_layout":
        inner = text.strip()
        if not (inner.startswith("{") and inner.endswith("}")):
            raise PieceError(0, "entry_computation_layout must be {(parameter shapes)->result shape}")
        _check_layout_signature(inner[1:-1], 1)
    elif name in ("input_output_alias", "buffer_donor"):
        alias_entries(name, text)
    else:
        try:
            parse_value(text)
        except PieceError:
            raise


def _check_layout_signature(text: str, base: int) -> None:
    try:
        pos = skip(text, 0)
        end = shape_end(text, pos)  # the parameter tuple
        parse_shape(text[pos:end])
        pos = skip(text, end)
        if not text.startswith("->", pos):
            raise PieceError(base + pos, "expected '->' in entry_computation_layout")
        pos = skip(text, pos + 2)
        end = shape_end(text, pos)
        parse_shape(text[pos:end])
        pos = skip(text, end)
        if pos < len(text):
            raise PieceError(base + pos, f"unexpected {text[pos]!r} after the result shape")
    except ScanError as err:
        raise PieceError(base + err.offset, err.message) from None
    except PieceError as err:
        raise PieceError(base + pos + err.offset, err.message) from None


# --- public entry points -------------------------------------------------------------------

def parse(text: str, *, path: str | None = None, strict: bool = False,
          unchanged: dict | None = None) -> Module:
    """Parse HLO text into a ``Module``.

    Accepts modules with or without the ``HloModule`` header, in every print
    style XLA has used. Attribute values and literals are read on first use;
    ``strict=True`` reads the text with the complete grammar
    (grammar/hlo_full.lark) instead of the fast scanner, and reads every
    attribute value and literal now, so that any syntax error is raised
    here. Errors are ``HloSyntaxError`` with path, line and column.

    ``unchanged`` holds the runs of lines the unchanged pass matched in
    another run (hlodiff/syntax/unchanged.py, which computes the offsets from
    this very text): they become ``Unparsed`` instructions.
    """
    if "\r" in text:
        if unchanged:
            raise ValueError("unchanged runs are offsets into text with \\n line ends")
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if unchanged and _xla_makes_more(text):
        unchanged = None
    reader = TextReader(Source(text, path), parse)
    scanner = HloScanner(text, unchanged)
    try:
        with paused():  # the parse allocates millions of objects and frees none
            tree = _feed(strict_tokens(text) if strict else scanner.tokens())
            names = None if strict or unchanged else list(chain.from_iterable(scanner.bodies))
            module = _ModuleBuilder(reader, names).transform(tree)
    except (ScanError, Failure, UnexpectedInput, LarkError) as err:
        raise _error(text, getattr(err, "orig_exc", None) or err, scanner, reader, path,
                     strict) from None
    if strict:
        check(module)
    return module


# What makes XLA build more than the text says (see program.py) in text the
# unchanged pass could skip, whose lines it prints as "  %name = shape op(":
# a shape left out, or async sugar (checked word by word: all-reduce-start is
# a real opcode).
_SHAPE_LEFT_OUT = re.compile(r"= [a-z][a-z0-9\-]*\(")
_ASYNC_SUFFIX = re.compile(r"-(?:start|update|done)\(")


def _xla_makes_more(text: str) -> bool:
    """Would XLA make instructions or computations the text does not write?

    The unchanged pass leaves lines as text, and what XLA would make of
    them is then not made: such a text is parsed whole. XLA never prints
    those forms, so a dump it wrote is always skipped as planned. Nested
    operands, inline computations and names XLA would rename are not
    looked for (too costly to find in text this big, and never printed by
    XLA either): in lines the pass skips, which are the same in both runs,
    they stay as written.
    """
    if _SHAPE_LEFT_OUT.search(text):
        return True
    for suffix in _ASYNC_SUFFIX.finditer(text):
        start = text.rfind(" ", 0, suffix.start()) + 1
        word = text[start:suffix.end() - 1]
        if word not in OPCODES and is_opcode(word):
            return True
    return False


def _error(text: str, err: Exception, scanner: HloScanner, reader: TextReader,
           path: str | None, strict: bool) -> HloSyntaxError:
    """The error to tell: the first syntax error in the text, as the
    complete grammar would find it, before any check's."""
    if isinstance(err, UnexpectedInput):
        return _grammar_error(text, err, path)
    told = None
    if isinstance(err, ScanError) or isinstance(err, Failure) and not err.grammatical:
        before = err.offset if isinstance(err, ScanError) else len(text) + 1
        earlier = _first_error((t for kept in scanner.scanned for t in kept), reader, before)
        if earlier is not None:
            told = _failure_error(text, earlier, path)
    if told is None:
        if isinstance(err, ScanError):
            told = _scan_error(text, err, path)
        elif isinstance(err, Failure):
            told = _failure_error(text, err, path)
        else:
            return HloSyntaxError(str(err), path=path)
    if not strict and len(text) <= _LOCATED_BY_GRAMMAR and not _TOO_DEEP.search(text):
        # The scanner finds where pieces end, not which token is wrong: the
        # complete grammar says where the text first leaves it.
        try:
            for _ in strict_tokens(text):
                pass
        except UnexpectedInput as exact:
            located = _grammar_error(text, exact, path)
            if located.line != told.line:
                return located
    return told


# Texts up to this size are read with the complete grammar when the fast
# path finds an error, to tell the first one where the grammar does
# (a second at most; bigger texts keep the fast path's error). Not a text
# that opens more brackets in a row than any HLO nests: the grammar has no
# such limit and builds a tree as deep (a header of 100,000 nested brackets,
# 200 kB, took it 4 seconds before the scanner's error was told).
_LOCATED_BY_GRAMMAR = 500_000
_TOO_DEEP = re.compile(r"[\[{(]{%d}" % (MAX_NESTING + 1))


def _first_error(tokens, reader: TextReader, before: int) -> Failure | None:
    """The first syntax error in the text of ``tokens`` (those the scanner
    kept, see HloScanner.scanned) that start before offset ``before``, so
    that syntax errors are told in the order of the text, as the complete
    grammar tells them (checks come after both)."""
    builder = _ModuleBuilder(reader)
    for token in tokens:
        if token.start_pos >= before:
            break
        try:
            if token.type == "INSTRUCTION":
                pieces.built(str(token), token.line, token.extra, reader)
            elif token.type == "HEADER_ATTR":
                builder._header_attribute(token)
            elif token.type == "SIGNATURE":
                _check_signature(token)
                _check_parameters(token)
            elif token.type == "TABLE_ENTRY":
                parse_value(str(token)[_TABLE_KEY.match(str(token)).end():])
        except Failure as err:
            if err.grammatical:
                return err
        except PieceError as err:
            return Failure(token.start_pos + err.offset, err.message, True)
    return None


def _feed(tokens):
    """The tree grammar/hlo.lark gives the scanner's tokens (a handful per computation)."""
    interactive = lalr("hlo").parse_interactive()
    last = None
    for last in tokens:
        interactive.feed_token(last)
    return interactive.feed_eof(last)


# Files that are often handed over by mistake: the JAX dump folder holds
# module.mlir beside the HLO, and XLA can dump .dot graphs.
_FOREIGN = (
    (re.compile(r'(?:module\s*(?:@|attributes\b|\{)|"?func\.func\b|#loc\d*\s*=|"?builtin\.module\b)'),
     "this is MLIR (StableHLO or MHLO), not HLO text"),
    (re.compile(r"(?:strict\s+)?(?:di)?graph\b"), "this is a Graphviz .dot graph, not HLO text"),
)


def _scan_error(text: str, err: ScanError, path: str | None) -> HloSyntaxError:
    """The scanner's error, or what the file is when it is not HLO at all."""
    try:
        start = skip(text, 0)
    except ScanError:  # a comment that never closes: that is the error
        start = len(text)
    for pattern, what in _FOREIGN:
        if pattern.match(text, start):
            return syntax_error_at(text, start, what, path)
    return syntax_error_at(text, err.offset, err.message, path)


def _failure_error(text: str, err: Failure, path: str | None) -> HloSyntaxError:
    if err.offset < 0:
        return HloSyntaxError(err.message, path=path)
    return syntax_error_at(text, err.offset, err.message, path)


def _grammar_error(text: str, err: UnexpectedInput, path: str | None) -> HloSyntaxError:
    """Where the text leaves a grammar (grammar/hlo_full.lark in strict
    mode, the coarse grammar/hlo.lark otherwise), or what the file is when
    it is not HLO at all."""
    if isinstance(err, UnexpectedCharacters):
        found = _scan_error(text, ScanError(err.pos_in_stream,
                                            f"unexpected {text[err.pos_in_stream]!r}"), path)
        return found
    token = getattr(err, "token", None)
    if token is None or token.type == "$END":
        return syntax_error_at(text, len(text), "the text ends too early", path)
    wanted = expected_words(getattr(err, "expected", ()) or ())
    return _scan_error(text, ScanError(token.start_pos, f"unexpected {str(token)[:30]!r}"
                                       + (f", expected {wanted}" if wanted else "")), path)


def expected_words(terminals) -> str:
    """What a grammar expected, in words a person reads: ``']'``, ``a
    shape``, ``an attribute``; never Lark's names for its terminals
    (RSQB, METADATA_INT, __ANON_14). Four at most, each said once."""
    words = _terminal_words()
    said = list(dict.fromkeys(words.get(t, "") for t in sorted(terminals)))
    said = [w for w in said if w]
    return " or ".join(", ".join(said[:4]).rsplit(", ", 1)) if said else ""


# Words for the terminals of the grammars a user's text can leave: the
# coarse grammar's (its tokens come from the scanner), and the complete
# grammar's that match a pattern. Those that match a fixed string are said
# as that string.
_WORDS = {
    # grammar/hlo.lark
    "KW_HLOMODULE": "'HloModule'", "MODULE_NAME": "the module's name",
    "HEADER_ATTR": "a module attribute name=value", "KW_FILENAMES": "'FileNames'",
    "KW_FUNCTIONNAMES": "'FunctionNames'", "KW_FILELOCATIONS": "'FileLocations'",
    "KW_STACKFRAMES": "'StackFrames'", "TABLE_ENTRY": "a stack-frame table entry",
    "KW_ENTRY": "'ENTRY'", "COMP_NAME": "a computation name", "SIGNATURE": "a signature",
    "BODY": "instructions", "EXEC_THREAD": "execution_thread=",
    "UNCHANGED_COMPUTATION": "a computation",
    # grammar/hlo_full.lark
    "NAME": "a name", "ATTR_NAME": "an attribute", "NAME_COLON": "a name and ':'",
    "STRING": "a string", "INT": "an integer", "DECIMAL": "a number", "INF": "'inf'",
    "NAN": "'nan'", "DXD": "window sizes (2x2)", "PAD": "padding (0_0x1_1)",
    "DIM_LABELS": "dimension labels (b01f_01io->b01f)", "ALIAS_KIND": "an alias kind",
    "TRUE": "'true'", "FALSE": "'false'", "TUPLE_ELEMENT": "a tuple element (name#0)",
    "CONSTANT": "an opcode", "PARAMETER": "an opcode", "OPCODE": "an opcode",
    "BUFFER": "a shape", "ELEMENT_TYPE": "a shape", "LAYOUT_OPEN": "a layout",
    "DIM_LEVEL": "a dimension level (D, C, S, H)", "TYPE_WORD": "a type",
    "BOOLEAN_ATTRIBUTE": "an attribute", "INT_ATTRIBUTE": "an attribute",
    "STRING_ATTRIBUTE": "an attribute", "INT_LIST_ATTRIBUTE": "an attribute",
    "COMPUTATION_ATTRIBUTE": "an attribute", "COMPUTATION_LIST_ATTRIBUTE": "an attribute",
    "ENUM_ATTRIBUTE": "an attribute", "WINDOW_SIZES": "a window field (size=)",
    "METADATA_STRING": "a metadata field", "METADATA_INT": "a metadata field",
    "BLOB_TEXT": "text", "SHARDING_KIND": "a sharding", "SHARDING_DEVICE": "device=",
    "SHARDING_DEVICES": "devices=", "SHARDING_LAST_TILE_DIMS": "last_tile_dims=",
    "SHARDING_METADATA": "metadata=", "SHARD_GROUP": "shard_as or shard_like",
    "MESH": "a mesh", "GATOM": "a value",
}


@cache
def _terminal_words() -> dict[str, str]:
    from .strict import full_grammar
    words = {t.name: repr(t.pattern.value) for t in full_grammar().terminals
             if t.pattern.type == "str"}
    return {**words, "LBRACE": "'{'", "RBRACE": "'}'", **_WORDS}


def check(module: Module) -> None:
    """Read every attribute value and literal of ``module`` with its rule of
    the complete grammar (grammar/hlo_full.lark), then as the model reads
    it, and every literal's values as XLA would store them; raise the
    first error (syntax errors before the rest, as a strict parse finds them)."""
    for attribute in module.header:
        _check_piece(f"{attribute.name}={attribute.text}", "header_attribute", attribute,
                     attribute.offset - len(attribute.name) - 1)
    for _, instruction in module.instructions():
        for attribute in instruction.attributes:
            _check_piece(f"{attribute.name}={attribute.text}", "attribute", attribute,
                         attribute.offset - len(attribute.name) - 1)
        if instruction.opcode == "constant":
            _check_piece(instruction.operand_text, "literal", instruction, instruction.operand_offset)
    for _, instruction in module.instructions():
        for attribute in instruction.attributes:
            check_attribute(attribute)
        instruction.called_computations  # names, or computations XLA would make of them
        if instruction.opcode == "constant":
            _check_values(instruction.literal, instruction)


def _check_piece(text: str, rule: str, owner, offset: int) -> None:
    """``text`` must read with ``rule`` of the complete grammar; pieces made
    by hlodiff, with no place in the file (offset < 0), are not checked."""
    if offset < 0:
        return
    try:
        check_piece(text, rule)
    except UnexpectedInput as err:
        source = owner.reader.source
        error = _grammar_error(text, err, None)
        raise syntax_error_at(source.text, offset + _offset_in(text, error), error.reason,
                              source.path) from None


def _offset_in(text: str, error: HloSyntaxError) -> int:
    """The offset in ``text`` of a line and column an error names."""
    lines = text.split("\n")
    return sum(len(line) + 1 for line in lines[:error.line - 1]) + error.column - 1


def _check_values(literal: Literal, instruction) -> None:
    """Each element must be a value of the literal's type, as XLA requires
    (in range, a NaN payload that fits, an integer for an integer type)."""
    for part in literal.parts:
        _check_values(part, instruction)
    if literal.elided or literal.parts:
        return
    try:
        element_bits_of(literal)
    except LiteralError as err:
        raise instruction.reader.error(instruction.operand_offset, f"constant: {err}") from None


def read_text(path: str | Path) -> str:
    """Read a dump file as text, with errors a user can act on."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except IsADirectoryError:
        raise HlodiffError(f"{p}: is a directory, expected an HLO text file") from None
    except FileNotFoundError:
        raise HlodiffError(f"{p}: no such file") from None
    except OSError as err:
        raise HlodiffError(f"{p}: cannot read: {err.strerror}") from None
    if b"\0" in data[:8192]:
        raise HlodiffError(f"{p}: is a binary file, not HLO text")
    nul = data.find(b"\0")  # further on: XLA reads no NUL anywhere, not even in a string
    if nul >= 0:
        raise HloSyntaxError("a NUL byte, which HLO text never holds", path=str(p),
                             **_place(data, nul))
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise HloSyntaxError(f"byte 0x{data[err.start]:02x} is not UTF-8 text",
                             path=str(p), **_place(data, err.start)) from None
    # an editor's byte-order mark is no text (nor a column an editor counts)
    return text[1:] if text.startswith("\ufeff") else text


def _place(data: bytes, offset: int) -> dict[str, int]:
    """The line and column of byte ``offset``: lines end as parse() ends
    them, columns count characters, as every other column."""
    before = data[:offset].replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    line_start = before.rfind(b"\n") + 1
    return {"line": before.count(b"\n") + 1,
            "column": len(before[line_start:].decode("utf-8", errors="replace")) + 1}


def parse_file(path: str | Path, *, strict: bool = False) -> Module:
    """Parse the HLO text file at ``path`` (see ``parse``)."""
    return parse(read_text(path), path=str(path), strict=strict)
