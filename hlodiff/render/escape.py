"""One escaping rule per output format, for every string that comes from a dump.

A dump is not the user's own text: op_names, source file names, module and
file names and log lines may come from a colleague's run, a CI artifact or
the model code of a pull request. HLO strings take C escapes, so an op_name
can hold ``ESC ] 0 ; title BEL`` (retitle the terminal), ``ESC [ 2 J``
(clear it), OSC 52 (write the clipboard) or a newline followed by a line
that looks like hlodiff's own output. Each format gets the one rule that
makes such text inert there:

* ``terminal``: text for a terminal or a pipe. Control characters (C0,
  DEL, C1), bidirectional overrides and line separators are shown as
  Python escapes (``\\x1b``, ``\\n``, ``\\u202e``), as git and ``ls`` show
  them visibly; everything else is printed as it is.
* ``markdown_code`` and ``markdown_text``: Markdown for a pull-request
  comment. A value goes in a code span, where nothing is interpreted (no
  HTML, link, image, heading or @mention); in a table a ``|`` is escaped so
  one finding stays one row. Prose that quotes input has every ASCII
  punctuation character backslash-escaped.
* ``annotation_data`` and ``annotation_property``: GitHub workflow commands,
  which the runner reads line by line: ``%``, CR and LF are percent-encoded
  (and ``:`` and ``,`` in properties), after ``terminal`` made the rest
  visible, so a newline in an op_name cannot start a command of its own.
* ``hlo``: HLO text (``hlodiff canon``). Control characters inside quoted
  strings become C octal escapes, which XLA's parser and hlodiff's read
  back as the same string, so the output stays valid HLO.
* ``html``: text and attribute values of the HTML report. ``&``, ``<``,
  ``>`` and both quotes become character references, so nothing from a
  dump opens a tag, an attribute or a script; control characters and
  bidirectional overrides are shown as in ``terminal`` (a browser would
  hide them or reorder the text around them).

JSON needs nothing more than JSON's own escaping: it carries the exact
strings, and a program reading it decides how to show them.
"""

from __future__ import annotations

import html as _html
import re

# Characters that change what a terminal, a pager or an editor shows rather
# than showing themselves: C0 controls (tab and newline too: in one cell or
# one line of output they would fake layout), DEL, C1 controls (0x9b is a
# one-byte CSI on some terminals), the Arabic letter mark, the bidirectional
# marks, embeddings, overrides and isolates (they reorder what is shown: the
# "Trojan Source" trick), the Unicode line and paragraph separators, and
# lone surrogates (undecodable bytes of a file name; they cannot be written
# as UTF-8 at all).
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069"
                    "\ud800-\udfff]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _visible(char: str) -> str:
    named = _NAMED.get(char)
    if named:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def terminal(text: str) -> str:
    """``text`` with every unsafe character shown as an escape.

    >>> terminal("lr\\x1b]0;PWNED\\x07\\n## x")
    'lr\\\\x1b]0;PWNED\\\\x07\\\\n## x'
    """
    return UNSAFE.sub(lambda m: _visible(m.group()), text)


# --- Markdown -------------------------------------------------------------------------

_BACKTICKS = re.compile("`+")
_PUNCTUATION = re.compile(r"""([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])""")


def markdown_code(text: str, *, table: bool = False) -> str:
    """``text`` as one inline code span (empty text gives an empty string).

    The fence is one backtick longer than the longest run inside, and a
    space pads content that starts or ends with a backtick, as CommonMark
    asks. In a table cell (``table``) GitHub splits the row at every ``|``
    first, even inside code, so each is written ``\\|`` there.
    """
    text = terminal(text)
    if not text:
        return ""
    if table:
        text = text.replace("|", "\\|")
    fence = "`" * (max((len(run) for run in _BACKTICKS.findall(text)), default=0) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def markdown_text(text: str) -> str:
    """Prose that quotes input, with every ASCII punctuation character escaped:
    no emphasis, link, image, HTML, entity, heading or table cell can start."""
    return _PUNCTUATION.sub(r"\\\1", terminal(text))


# --- GitHub workflow commands -----------------------------------------------------------------

def annotation_data(text: str) -> str:
    """The message of ``::error ...::message``: one line, whatever ``text`` holds."""
    return terminal(text).replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def annotation_property(text: str) -> str:
    """A ``key=value`` property of a workflow command (``file=``, ``title=``)."""
    return annotation_data(text).replace(":", "%3A").replace(",", "%2C")


# --- HLO text -------------------------------------------------------------------------------

_STRING_OR_UNSAFE = re.compile(r'"(?:[^"\\]|\\.)*"|' + UNSAFE.pattern, re.S)


def _octal(char: str) -> str:
    return "".join(f"\\{byte:03o}" for byte in char.encode("utf-8", "surrogateescape"))


_STRING_PIECE = re.compile(r"\\(.)|(.)", re.S)


def _hlo_string(literal: str) -> str:
    """A quoted HLO string with its raw unsafe characters written as C escapes.

    Escapes already in the text stay, except a backslash before a raw
    unsafe character: hlodiff reads ``\\<ESC>`` as the character itself,
    so it becomes that character's escape too.
    """
    if not UNSAFE.search(literal):
        return literal

    def one(match: re.Match[str]) -> str:
        char = match.group(1) if match.group(1) is not None else match.group(2)
        if not UNSAFE.fullmatch(char):
            return match.group()
        return _NAMED.get(char) or _octal(char)
    return _STRING_PIECE.sub(one, literal)


def hlo(text: str) -> str:
    """HLO text whose quoted strings hold no raw unsafe character.

    XLA prints strings with C escapes, so raw control characters only come
    from hand-made files; outside a string (where HLO allows none) they are
    written as octal escapes too, so nothing reaches the terminal raw.
    Newlines and tabs between tokens are the text's own layout and stay.
    """
    def one(match: re.Match[str]) -> str:
        piece = match.group()
        if piece.startswith('"'):
            return _hlo_string(piece)
        return piece if piece in "\n\t" else _octal(piece)
    return _STRING_OR_UNSAFE.sub(one, text)


# --- HTML -------------------------------------------------------------------------------

def html(text: str) -> str:
    """``text`` as HTML text or a quoted attribute value, inert.

    >>> html('<script>alert("x")</script>\u202e')
    '&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;\\\\u202e'
    """
    return _html.escape(terminal(text), quote=True)
