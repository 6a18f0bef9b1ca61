"""The scanner that feeds grammar/hlo.lark: HLO text to coarse tokens.

An instruction becomes one INSTRUCTION token whatever its length, because
the LALR parser's cost is per token (a few microseconds each): the token
carries the instruction's pieces (name, shape, opcode, operand list,
attribute name/value pairs) as text with their offsets. The scanner knows just enough HLO to find where each piece ends:
brackets nest, strings and comments may hold anything, and a line ends an
instruction unless a bracket is still open or the next line goes on with a
comma. The common one-line instruction is matched by a single regular
expression; everything else takes the general bracket-matching path.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

from lark import Token

from .opcodes import PLAIN, as_written, is_opcode


class ScanError(Exception):
    """A scanning failure at a character offset; the parser adds path and line."""

    def __init__(self, offset: int, message: str):
        super().__init__(message)
        self.offset = offset
        self.message = message


class InstructionPieces(NamedTuple):
    """What the scanner cut one instruction into: texts and where they start."""

    is_root: bool
    shape: str | None  # the shape as printed, None when the text leaves it out
    shape_at: int
    opcode: str
    operands: str  # the text between the parentheses after the opcode
    operands_at: int
    attributes: tuple[tuple[str, str], ...]  # (name, value text) in printed order
    # Where each attribute value starts; None until an error message needs
    # them (found again from ``tail_at``, where the attribute tail starts).
    attribute_offsets: tuple[int, ...] | None
    tail_at: int


class Body(NamedTuple):
    """What the scanner found between a computation's '{' and '}'."""

    pieces: list  # INSTRUCTION and UNCHANGED tokens
    # False when XLA may make more of the text than it says (a shape to
    # infer, a nested operand, async sugar...): hlodiff/syntax/program.py.
    as_written: bool
    starts_async: bool  # an async-start: it gives computations its thread


class PieceToken(Token):
    """A token that also carries what the scanner already worked out about it
    (an INSTRUCTION token carries its pieces). Built without Token's general
    constructor, which costs twice as much."""

    __slots__ = ("extra",)

    def __new__(cls, kind, value, start_pos, line=None, extra=None):
        token = str.__new__(cls, value)
        token.type = kind
        token.value = value
        token.start_pos = start_pos
        token.line = line
        token.column = token.end_line = token.end_column = token.end_pos = None
        token.extra = extra
        return token


# --- regular expressions ------------------------------------------------------

_SKIP = re.compile(r"(?:[ \t\n]+|/\*.*?\*/|//[^\n]*)*", re.S)
_SKIP_INLINE = re.compile(r"(?:[ \t]+|/\*.*?\*/)*", re.S)
_WORD = re.compile(r"%?([A-Za-z_][\w.\-]*)")
_ATTR_NAME = re.compile(r"([A-Za-z_][\w.\-]*)=")
_INT = re.compile(r"-?\d+")
_INTERESTING = re.compile(r"""[(){}\[\]"'/]""")
# Unrolled: a run of plain characters is one step, not one per character.
_STRINGS = {
    '"': re.compile(r'"[^"\\]*+(?:\\.[^"\\]*+)*+"', re.S),
    "'": re.compile(r"'[^'\\]*+(?:\\.[^'\\]*+)*+'", re.S),
}
_CLOSER = {"(": ")", "{": "}", "[": "]"}
# A bracket group holding groups of no brackets at most, no strings, and no
# comments but /*...*/ (``/*index=5*/``) outside those: what balanced_end
# steps over in one match.
_FLAT_CONTENT = (r"""(?:[^()\[\]{}"'/]++|\([^()\[\]{}"'/]*+\)|\[[^()\[\]{}"'/]*+\]"""
                 r"""|\{[^()\[\]{}"'/]*+\}|/\*[\s\S]*?\*/)*+""")
_FLAT_GROUP = {opening: re.compile(re.escape(opening) + _FLAT_CONTENT + re.escape(closing))
               for opening, closing in _CLOSER.items()}
# Deeper than any HLO XLA prints (ranks and tuple nesting stay in the tens),
# shallow enough that the recursive readers of shapes and literals stay far
# from Python's recursion limit.
MAX_NESTING = 128
_VALUE_RUN = re.compile(r"""[^\s,{}()\[\]"'/]+|/(?![*/])""")

# One whole ordinary instruction head: [ROOT] name = [shape] opcode(
_INSTRUCTION_HEAD = re.compile(r"""
    (?:(ROOT)[ \t]+)?
    %?([A-Za-z_][\w.\-]*)[ \t]*=[ \t]*
    (?:([a-z][a-z0-9]*\[[^\]\n]*\](?:\{[0-9:][^{}\n]*\})?)[ \t]+)?
    ([a-z][a-z0-9\-]*)\(
    """, re.X)
# The common case: a one-line instruction whose operands hold no
# parentheses, and whose rest of line is ", name=value" attributes with
# words, strings or one level of braces as values (checked by walking it
# with _FAST_ATTRIBUTE, which reads each byte of the line once).
_STRING_BODY = r'"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'  # unrolled: runs of plain characters at once
_SIMPLE_VALUE = (rf"""(?:{_STRING_BODY}|\{{[^{{}}"\n/]*+(?:{_STRING_BODY}[^{{}}"\n/]*+)*+\}}"""
                 r"""|[^\s,{}()\[\]"'/]+)""")
# What _FAST_INSTRUCTION and _LINE_HEAD both read: an array shape, and the
# opcode with an operand list holding no parentheses, strings or line breaks.
_ARRAY_SHAPE = r"[a-z][a-z0-9]*\[[^\]\n]*\](?:\{[0-9:][^{}\n]*\})?"
# (A comment may stand among the operands, but one holding a parenthesis,
# ``/* c) */``, takes the slow path: it would end the list here.)
_PLAIN_OPERANDS = r'''(?:[^()"'\n/]++|/(?!\*)|/\*[^()*\n]*\*/)*+'''
_OPCODE_OPERANDS = rf'''([a-z][a-z0-9\-]*)\(({_PLAIN_OPERANDS})\)'''
_FAST_INSTRUCTION = re.compile(rf"""
    [ \t\n]*+
    (?:(ROOT)[ \t]+)?
    %?([A-Za-z_][\w.\-]*)[ \t]*=[ \t]*
    (?:({_ARRAY_SHAPE})[ \t]+)?
    {_OPCODE_OPERANDS}
    ([^\n]*)
    """, re.X)
_FAST_ATTRIBUTE = re.compile(rf"[ \t]*,[ \t]*([A-Za-z_][\w.\-]*)=({_SIMPLE_VALUE})")
_FAST_TAIL = re.compile(rf"(?:[ \t]*,[ \t]*[A-Za-z_][\w.\-]*={_SIMPLE_VALUE})*+[ \t]*")
# An operand list with no nested parentheses, strings or line breaks.
_SIMPLE_OPERANDS = re.compile(_PLAIN_OPERANDS + r"\)")
# One ", name=value" whose value is a word, a string or a brace group with no
# nested braces: metadata, dimensions, calls, kind, to_apply, ...
_SIMPLE_ATTR = re.compile(rf"""
    [ \t]*,[ \t]*([A-Za-z_][\w.\-]*)=({_SIMPLE_VALUE})
    (?=[ \t]*(?:[,\n}}]|$))
    """, re.X)
# A computation's parameter list whose brackets and braces nest one level at
# most, with no strings, comments or tuple shapes: read in one match.
_FLAT_PARAMETERS = re.compile(r"""\((?:[^()"'/\[\]{}]++|\[[^()"'/\[\]{}]*+\]|\{[^()"'/\[\]{}]*+\})*+\)""")
_SHAPE_START = re.compile(r"b\(|\(|[a-z][a-z0-9]*[ \t\r\n]*\[")
_TABLE_KEYWORDS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def balanced_end(text: str, pos: int) -> int:
    """Index just past the bracket that closes the one at ``pos``.

    Strings and comments are skipped whole, so a brace inside an op_name or a
    ``/*index=5*/`` marker does not count. A group nesting one more level at
    most, without strings or comments (``(0, {}, may-alias)``, ``f32[2]{0}``),
    is one match of a regular expression, not a step per bracket: a module
    header restating a train step's hundreds of parameters holds thousands.
    """
    flat = _FLAT_GROUP[text[pos]].match(text, pos)
    if flat is not None:
        return flat.end()
    stack = [_CLOSER[text[pos]]]
    i = pos + 1
    search = _INTERESTING.search
    while True:
        m = search(text, i)
        if m is None:
            raise ScanError(pos, f"'{text[pos]}' is never closed")
        c = m.group()
        j = m.start()
        if c in "({[":
            if len(stack) + 2 <= MAX_NESTING:
                flat = _FLAT_GROUP[c].match(text, j)
                if flat is not None:  # closed as it opened: nothing to keep
                    i = flat.end()
                    continue
            stack.append(_CLOSER[c])
            if len(stack) > MAX_NESTING:
                raise ScanError(j, f"brackets nest more than {MAX_NESTING} deep")
            i = j + 1
        elif c in ")}]":
            if c != stack[-1]:
                raise ScanError(j, f"expected '{stack[-1]}' but found '{c}'")
            stack.pop()
            i = j + 1
            if not stack:
                return i
        elif c == "/":
            i = _comment_end(text, j)
        else:
            i = _string_end(text, j)


def _string_end(text: str, pos: int) -> int:
    m = _STRINGS[text[pos]].match(text, pos)
    if m is None:
        raise ScanError(pos, "string is never closed")
    return m.end()


def _comment_end(text: str, pos: int) -> int:
    """Index after the comment starting at ``pos``, or ``pos + 1`` for a lone '/'."""
    if text.startswith("/*", pos):
        end = text.find("*/", pos + 2)
        if end < 0:
            raise ScanError(pos, "comment is never closed")
        return end + 2
    if text.startswith("//", pos):
        end = text.find("\n", pos)
        return len(text) if end < 0 else end
    return pos + 1


def skip(text: str, pos: int) -> int:
    """Skip white space and comments (across lines)."""
    pos = _SKIP.match(text, pos).end()
    if text.startswith("/*", pos):
        raise ScanError(pos, "comment is never closed")
    return pos


def value_end(text: str, pos: int) -> int:
    """Index after an attribute value starting at ``pos``.

    A value is a word, a string or a bracket group, then maybe more groups,
    strings or numbers after white space (``mesh['x'=2] {'x'}``,
    ``literal=s32[] 1``), as grammar/hlo_full.lark's ``generic_value``. It
    ends at a comma, a closing bracket at its own level, or white space
    followed by anything else (the next instruction, when a formatter put
    two on one line: ``index=0 a5 = f16[] ...``).
    """
    start = pos
    n = len(text)
    while pos < n:
        c = text[pos]
        if c in "({[":
            pos = balanced_end(text, pos)
            if pos < n and text[pos] not in " \t\r\n,)}]" and not _MORE_VALUE.match(text, pos):
                break  # "{...}next": the value ended at its bracket
        elif c in "\"'":
            pos = _string_end(text, pos)
        elif c in " \t\r\n":
            ahead = _SKIP.match(text, pos).end()
            if ahead >= n or not _MORE_VALUE.match(text, ahead):
                break
            pos = ahead
        elif c in ",)}]":
            break
        elif c == "/" and text.startswith(("/*", "//"), pos):
            break
        else:
            run = _VALUE_RUN.match(text, pos)
            if run is None:  # other white space (\v, \f, U+00A0, ...) ends the value too
                break
            pos = run.end()
    if pos == start:
        raise ScanError(start, "expected a value")
    return pos


# What may follow a value's first term after white space: a bracket group,
# a string, a number, or the rest of an iota device list ("<=[4]T(1,0)").
_MORE_VALUE = re.compile(r"""[{(\["']|-?\.?[0-9]|-?inf\b|-?nan\b|<=|T\s*\(""")


# What starts an instruction (or a computation) after a value on the same line.
_NEXT_INSTRUCTION = re.compile(r"(?:ROOT|ENTRY)\b|%?[A-Za-z_][\w.\-]*\s*=(?![=>])")


def shape_end(text: str, pos: int) -> int:
    """Index after a shape starting at ``pos`` (array, tuple or buffer shape)."""
    if text.startswith("b(", pos):
        return balanced_end(text, pos + 1)
    if text.startswith("(", pos):
        return balanced_end(text, pos)
    m = _SHAPE_START.match(text, pos)
    if m is None:
        raise ScanError(pos, "expected a shape")
    end = balanced_end(text, m.end() - 1)
    # A layout: "{" followed by a digit or ":" (so "f32[]{}" is not one), as
    # XLA's lexer sees it: white space and comments may come between.
    brace = skip(text, end)
    if brace < len(text) and text[brace] == "{":
        after = skip(text, brace + 1)
        if after < len(text) and (text[after].isdigit() or text[after] in ":-"):
            end = balanced_end(text, brace)
    return end


class HloScanner:
    """Turns HLO text into the tokens grammar/hlo.lark is written over."""

    def __init__(self, text: str, unchanged: dict | None = None):
        self.text = text
        # The tokens scanned so far whose text is checked later (the
        # instructions of each body, header attributes, signatures, frame
        # table entries), in the order of the text: when a later error
        # comes first, the parser looks in them for an earlier one.
        self.scanned: list[list[Token]] = []
        self.bodies: list[list[Token]] = []  # the tokens of each body: their values are names
        self.as_written = True  # of the body being scanned, see Body
        self.starts_async = False
        # What the unchanged pass matched in the other run (see
        # hlodiff/syntax/unchanged.py): runs of lines, by the offset of the newline
        # before their first line, one UNCHANGED token each; and whole
        # computations, by the offset of their header, one
        # UNCHANGED_COMPUTATION token each. ``extra`` holds the run.
        self.unchanged = unchanged or {}
        self.pos = 0
        self.line = 1
        self._line_pos = 0  # offset up to which self.line is counted

    # -- helpers ----------------------------------------------------------

    def _token(self, kind: str, value: str, start: int) -> Token:
        return Token(kind, value, start, self._line_at(start))

    def _line_at(self, offset: int) -> int:
        if offset >= self._line_pos:
            self.line += self.text.count("\n", self._line_pos, offset)
        else:
            self.line -= self.text.count("\n", offset, self._line_pos)
        self._line_pos = offset
        return self.line

    def _kept(self, token: Token) -> Token:
        """``token``, also kept in ``scanned``: its text is checked later."""
        self.scanned.append([token])
        return token

    def _skip(self) -> None:
        self.pos = skip(self.text, self.pos)

    def _word(self, what: str) -> tuple[str, int]:
        m = _WORD.match(self.text, self.pos)
        if m is None:
            raise ScanError(self.pos, f"expected {what}")
        self.pos = m.end()
        return m.group(1), m.start()

    def _at_word(self, word: str) -> bool:
        text, pos = self.text, self.pos
        if not text.startswith(word, pos):
            return False
        end = pos + len(word)
        return end >= len(text) or not (text[end].isalnum() or text[end] in "_.-")

    # -- the token stream ---------------------------------------------------

    def tokens(self) -> Iterator[Token]:
        text = self.text
        self._skip()
        if self.pos >= len(text):
            raise ScanError(self.pos, "no HloModule, ENTRY or computation: the input is empty")
        if self._at_word("HloModule"):
            yield from self._header()
        self._skip()
        if self._at_word("FileNames"):
            yield from self._stack_frame_index()
        self._skip()
        if self.pos >= len(text):
            raise ScanError(self.pos, "the module has no computation")
        skipped = self.unchanged
        while self.pos < len(text):
            computation = skipped.get(self.pos) if skipped else None
            if computation is None:
                yield from self._computation()
                self._skip()
                continue
            # At a header, only a SkippedComputation is found. Those in a
            # row are one token: most of a big diff's computations, each
            # costing the LALR parser as much as scanning a whole line.
            run = []
            while computation is not None:
                run.append((computation, self._line_at(computation.name_at)))
                self.pos = computation.end
                self._skip()
                computation = skipped.get(self.pos)
            first, line = run[0]
            yield PieceToken("UNCHANGED_COMPUTATION", first.name, first.name_at, line, run)

    def _header(self) -> Iterator[Token]:
        yield self._token("KW_HLOMODULE", "HloModule", self.pos)
        self.pos += len("HloModule")
        self._skip()
        name, start = self._word("a module name after HloModule")
        yield self._token("MODULE_NAME", name, start)
        if self.text.startswith(":", self.pos):  # old style "HloModule name:"
            self.pos += 1
        while True:
            self._skip()
            if not self.text.startswith(",", self.pos):
                return
            self.pos += 1
            self._skip()
            start = self.pos
            m = _ATTR_NAME.match(self.text, self.pos)
            if m is None:
                raise ScanError(self.pos, "expected a header attribute name=value")
            self.pos = value_end(self.text, skip(self.text, m.end()))
            yield self._kept(self._token("HEADER_ATTR", self.text[start:self.pos], start))

    def _stack_frame_index(self) -> Iterator[Token]:
        text = self.text
        for keyword in _TABLE_KEYWORDS:
            self._skip()
            if not self._at_word(keyword):
                raise ScanError(self.pos, f"expected {keyword} in the stack frame index")
            yield self._token("KW_" + keyword.upper(), keyword, self.pos)
            self.pos += len(keyword)
            while True:
                self._skip()
                m = _INT.match(text, self.pos)
                if m is None:
                    break
                start = self.pos
                self.pos = skip(text, m.end())
                if self.pos < len(text) and text[self.pos] == "{":
                    self.pos = balanced_end(text, self.pos)
                elif self.pos < len(text) and text[self.pos] in "\"'":
                    self.pos = _string_end(text, self.pos)
                else:
                    raise ScanError(self.pos, f"expected a string or {{...}} in {keyword}")
                yield self._kept(self._token("TABLE_ENTRY", text[start:self.pos], start))

    def _computation(self) -> Iterator[Token]:
        text = self.text
        if self._at_word("ENTRY"):
            yield self._token("KW_ENTRY", "ENTRY", self.pos)
            self.pos += len("ENTRY")
            self._skip()
        name, start = self._word("a computation name")
        yield self._token("COMP_NAME", name, start)
        self._skip()
        if text.startswith("(", self.pos):
            start = self.pos
            m = _FLAT_PARAMETERS.match(text, start)
            self.pos = skip(text, m.end() if m is not None else balanced_end(text, start))
            if not text.startswith("->", self.pos):
                raise ScanError(self.pos, "expected '->' and the result shape")
            self.pos = shape_end(text, skip(text, self.pos + 2))
            yield self._kept(self._token("SIGNATURE", text[start:self.pos], start))
            self._skip()
        if not text.startswith("{", self.pos):
            raise ScanError(self.pos, "expected '{' to open the computation")
        yield self._token("LBRACE", "{", self.pos)
        self.pos += 1
        yield self._body()
        yield self._token("RBRACE", "}", self.pos)
        self.pos += 1
        after = skip(text, self.pos)
        if text.startswith(",", after):
            self.pos = skip(text, after + 1)
            m = _ATTR_NAME.match(text, self.pos)
            if m is None or m.group(1) != "execution_thread":
                raise ScanError(self.pos, "expected execution_thread= after the computation")
            start = self.pos
            self.pos = value_end(text, skip(text, m.end()))
            yield self._token("EXEC_THREAD", text[m.end():self.pos], start)

    def _body(self) -> Token:
        """One BODY token for the instructions between '{' and '}': its
        ``extra`` is a ``Body``. Handing Lark the body whole spares it a
        reduction per instruction; there is nothing in a body for a grammar
        to decide."""
        text = self.text
        start = self.pos
        self.as_written = True
        self.starts_async = False
        pieces = []
        self.scanned.append(pieces)
        self.bodies.append(pieces)
        fast = _FAST_INSTRUCTION.match
        unchanged = self.unchanged
        while True:
            run = unchanged.get(self.pos) if unchanged else None
            if run is not None:
                pieces.append(PieceToken("UNCHANGED", "", self.pos + 1, self._line_at(self.pos + 1),
                                         run))
                self.pos = run.end
                continue
            m = fast(text, self.pos)
            if m is not None and is_opcode(m.group(4)):
                piece = self._fast_instruction(m)
            else:
                self._skip()
                if self.pos >= len(text):
                    raise ScanError(self.pos, "the computation is never closed: the file ends inside it")
                if text[self.pos] == "}":
                    break
                piece = self._instruction()
            pieces.append(piece)
        if not pieces:
            raise ScanError(self.pos, "a computation needs at least one instruction")
        return PieceToken("BODY", "", start, self._line_at(start),
                          Body(pieces, self.as_written, self.starts_async))

    def instruction(self) -> Token:
        """The INSTRUCTION token of the instruction at ``pos`` (one, on its own)."""
        m = _FAST_INSTRUCTION.match(self.text, self.pos)
        if m is not None and is_opcode(m.group(4)):
            return self._fast_instruction(m)
        self._skip()
        return self._instruction()

    def _fast_instruction(self, m: re.Match) -> Token:
        root, name, shape, opcode, operands, tail = m.groups()
        if _FAST_TAIL.fullmatch(tail) is None:  # not of the simple form: the general way
            self._skip()
            return self._instruction()
        items = _FAST_ATTRIBUTE.findall(tail)  # back to back, as the tail matched
        self.pos = m.end()
        if shape is None or opcode not in PLAIN:  # no nested operand: none has a '('
            self.as_written = self.as_written and as_written(shape, opcode, items, "")
            self.starts_async = self.starts_async or opcode == "async-start"
        # The offsets of attribute values are only needed for error messages:
        # None here means "scan again from the tail's start when asked".
        return PieceToken("INSTRUCTION", name, m.start(2), self._line_at(m.start(2)),
                          InstructionPieces(bool(root), shape, m.start(3), opcode, operands,
                                            m.start(5), tuple(items), None, m.start(6)))

    def _instruction(self) -> Token:
        """One INSTRUCTION token, the general way; its ``extra`` holds the
        ``InstructionPieces``."""
        text = self.text
        m = _INSTRUCTION_HEAD.match(text, self.pos)
        if m is not None and is_opcode(m.group(4)):
            root, name, shape, opcode = m.groups()
            name_at, shape_at, opcode_at = m.start(2), m.start(3), m.start(4)
            self.pos = m.end()
        else:
            root, name, name_at, shape, shape_at = self._instruction_head()
            opcode_at = self.pos
            word = _WORD.match(text, self.pos)
            if word is None or text.startswith("%", self.pos):
                raise ScanError(self.pos, "expected an opcode")
            opcode = word.group(1)
            self.pos = skip(text, opcode_at + len(opcode))
            if not text.startswith("(", self.pos):
                raise ScanError(self.pos, f"expected '(' after the opcode {opcode}")
            self.pos += 1
            if not is_opcode(opcode):
                raise ScanError(opcode_at, f'unknown opcode "{opcode}"')
        # Operands: everything up to the matching ')'.
        start = self.pos
        m = _SIMPLE_OPERANDS.match(text, start)
        end = m.end() if m is not None else balanced_end(text, start - 1)
        self.pos = end
        items, offsets = self._attributes()
        self._check_instruction_end()
        self.as_written = self.as_written and as_written(shape, opcode, items, text[start:end - 1])
        self.starts_async = self.starts_async or opcode == "async-start"
        return PieceToken("INSTRUCTION", name, name_at, self._line_at(name_at),
                          InstructionPieces(bool(root), shape, shape_at, opcode,
                                            text[start:end - 1], start, items, offsets, end))

    def _instruction_head(self) -> tuple:
        """[ROOT] name = [shape], the slow way (comments, odd spacing, tuple shapes)."""
        text = self.text
        root = self._at_word("ROOT")
        if root:
            self.pos = skip(text, self.pos + 4)
        name, name_at = self._word("an instruction name")
        self._skip()
        if not text.startswith("=", self.pos):
            raise ScanError(self.pos, f"expected '=' after the instruction name {name}")
        self.pos = skip(text, self.pos + 1)
        shape = shape_at = None
        if _SHAPE_START.match(text, self.pos) is not None:
            shape_at = self.pos
            self.pos = shape_end(text, self.pos)
            shape = text[shape_at:self.pos]
            self._skip()
        return root, name, name_at, shape, shape_at

    def _attributes(self) -> tuple[tuple, tuple]:
        """The ``, name=value`` tail: ((name, value), ...) and the values' offsets."""
        text = self.text
        items = []
        offsets = []
        simple = _SIMPLE_ATTR.match
        while True:
            m = simple(text, self.pos)
            if m is not None:
                items.append((m.group(1), m.group(2)))
                offsets.append(m.start(2))
                self.pos = m.end()
                continue
            after = skip(text, self.pos)
            if not text.startswith(",", after):
                break
            name_at = skip(text, after + 1)
            m = _ATTR_NAME.match(text, name_at)
            if m is None:
                raise ScanError(name_at, "expected an attribute name=value after ','")
            value_at = skip(text, m.end())
            self.pos = value_end(text, value_at)
            items.append((m.group(1), text[value_at:self.pos]))
            offsets.append(value_at)
        return tuple(items), tuple(offsets)

    def _check_instruction_end(self) -> None:
        """An instruction ends its line, closes its computation, or is
        followed by the next one (XLA does not care where lines break)."""
        text = self.text
        if text.startswith("\n", self.pos):
            return
        after = skip(text, self.pos)
        if after >= len(text) or text[after] == "}" or _NEXT_INSTRUCTION.match(text, after):
            return
        raise ScanError(after, f"unexpected text after the instruction: {text[after:after + 20]!r}")


def nested_instruction(text: str, pos: int) -> InstructionPieces:
    """The pieces of an instruction written as an operand at ``pos``:
    ``[shape] opcode(operands)``, with no name and no attributes."""
    shape = shape_at = None
    if _SHAPE_START.match(text, pos) is not None:
        shape_at = pos
        pos = shape_end(text, pos)
        shape = text[shape_at:pos]
        pos = skip(text, pos)
    word = _WORD.match(text, pos)
    if word is None or text.startswith("%", pos) or not is_opcode(word.group(1)):
        raise ScanError(pos, "expected an opcode")
    opcode = word.group(1)
    pos = skip(text, word.end())
    if not text.startswith("(", pos):
        raise ScanError(pos, f"expected '(' after the opcode {opcode}")
    end = balanced_end(text, pos)
    return InstructionPieces(False, shape, shape_at, opcode, text[pos + 1:end - 1], pos + 1,
                             (), (), end)


def inline_body(text: str, pos: int) -> list[Token]:
    """The INSTRUCTION tokens of a computation written inline as an attribute
    value (``to_apply={ ... }``), whose '{' is at ``pos``."""
    scanner = HloScanner(text)
    scanner.pos = pos + 1
    scanner.line = text.count("\n", 0, pos) + 1
    scanner._line_pos = pos
    return scanner._body().extra.pieces


# The head of an instruction line as XLA prints it: what _FAST_INSTRUCTION
# reads of it, for lines cut already (names as _FAST_INSTRUCTION's).
_LINE_HEAD = re.compile(rf"""
    [ ][ ](?:ROOT[ ])?%[A-Za-z_][\w.\-]*[ ]=[ ]
    (?:{_ARRAY_SHAPE}[ ])?
    {_OPCODE_OPERANDS}
    """, re.X)


def line_heads(lines: list[str]) -> list[tuple[str, str] | None]:
    """(opcode, operand text) of each instruction line, as ``head_at`` reads
    it, when the line starts as XLA prints it ("  %name = " or "  ROOT %name
    = "); else None. One regular expression over each, mapped: a run of
    lines left unparsed is read so, all at once."""
    return [m.groups() if m is not None and is_opcode(m.group(1)) else None
            for m in map(_LINE_HEAD.match, lines)]


def head_at(text: str, pos: int) -> tuple[str, str] | None:
    """(opcode, operand text) of the one-line instruction at ``pos``, when it
    is of the common form; None otherwise."""
    m = _FAST_INSTRUCTION.match(text, pos)
    if m is None or not is_opcode(m.group(4)):
        return None
    return m.group(4), m.group(5)


def attribute_offsets(text: str, tail: int) -> tuple[int, ...]:
    """Offsets of the attribute values of the instruction whose tail starts at ``tail``."""
    scanner = HloScanner(text)
    scanner.pos = tail
    return scanner._attributes()[1]
