"""Names made to fit a column without splitting them across lines.

A wrapped op_name or ``file:line`` reads as two names, and half a file name
cannot be searched for. So a name too long for its column is shortened in
the middle, where it says least: an op_name keeps its last scope
components (the op and the layer it belongs to), a source location keeps
its line number and file name. TensorFlow's program names carry a config
proto and executor type (130 characters) that mean nothing to a reader:
they are cut after the function name and its counter.

All widths are in characters; ``…`` marks what was left out.
"""

from __future__ import annotations

import re

ELLIPSIS = "…"

# a_inference_train_step_480__XlaMustCompile_true_config_proto_..._.21 and
# cluster_3__XlaCompiledKernel_true__...: the function (or cluster) and its
# counter, then attributes.
_TF_ATTRIBUTES = re.compile(
    r"\b((?:a_|__)(?:inference|forward|backward)_\w+?_\d+|cluster_\d+)__[A-Za-z]\w*(?:\.\d+)?")


def program(text: str) -> str:
    """TensorFlow program names in ``text`` cut after their counter.

    >>> program("module_0154.a_inference_train_step_480__XlaMustCompile_true_config_proto_1_.21")
    'module_0154.a_inference_train_step_480…'
    >>> program("module_0006.jit_train_step")
    'module_0006.jit_train_step'
    """
    return _TF_ATTRIBUTES.sub(lambda m: m.group(1) + ELLIPSIS, text)


def middle(text: str, width: int) -> str:
    """``text`` with its middle left out if it is longer than ``width``.

    >>> middle("abcdefghij", 7)
    'abc…hij'
    """
    if len(text) <= width:
        return text
    if width <= 1:
        return ELLIPSIS
    head = (width - 1) // 2
    return text[:head] + ELLIPSIS + text[len(text) - (width - 1 - head):]


def _tail(text: str, width: int) -> str:
    """The end of ``text`` that fits ``width`` with the ellipsis before it."""
    if len(text) <= width:
        return text
    return ELLIPSIS + text[len(text) - width + 1:] if width > 1 else ELLIPSIS


def _last_parts(parts: list[str], suffix: str, width: int) -> str:
    """``…/`` and as many of the last ``parts`` (joined by ``/``, ``suffix``
    after the last) as fit in ``width``; the last one cut if it alone does not."""
    kept = parts[-1] + suffix
    if len(parts) == 1 or len(f"{ELLIPSIS}/{kept}") > width:
        return _tail("/".join(parts) + suffix, width)
    for part in reversed(parts[:-1]):
        if len(f"{ELLIPSIS}/{part}/{kept}") > width:
            break
        kept = f"{part}/{kept}"
    return f"{ELLIPSIS}/{kept}"


def op_name(text: str, width: int) -> str:
    """A scope path shortened to its last components: the op and the layers
    around it say more than the jitted function every op_name starts with.

    >>> op_name("jit(train_step)/train_step/grad/adam_update/mul", 36)
    '…/train_step/grad/adam_update/mul'
    >>> op_name("jit(train_step)/train_step/grad/adam_update/mul", 20)
    '…/adam_update/mul'
    """
    return text if len(text) <= width else _last_parts(text.split("/"), "", width)


_LINE = re.compile(r"(.*?)(:\d+(?::\d+)?)", re.S)


def location(text: str, width: int) -> str:
    """``path/to/file.py:LINE`` shortened to keep the line and the file name.

    >>> location("corpus/gen/jax_cases.py:168", 22)
    '…/gen/jax_cases.py:168'
    """
    if len(text) <= width:
        return text
    match = _LINE.fullmatch(text)
    path, line = (match.group(1), match.group(2)) if match else (text, "")
    return _last_parts(path.split("/"), line, width)


def fit(natural: list[int], space: int, floor: int) -> list[int]:
    """Widths for columns that want ``natural`` widths and share ``space``.

    Columns that want less than an equal share get what they want; the rest
    split what is left equally, none below ``floor`` (the table is then
    wider than ``space``, and the terminal wraps it, rather than showing
    nothing of a name).

    >>> fit([10, 50, 40], 60, 8)
    [10, 25, 25]
    """
    widths = [0] * len(natural)
    open_ = sorted(range(len(natural)), key=lambda i: natural[i])
    left = space
    while open_:
        share = left // len(open_)
        i = open_[0]
        if natural[i] <= share:
            widths[i] = natural[i]
            left -= natural[i]
            open_.pop(0)
            continue
        for i in open_:
            widths[i] = max(share, floor)
        break
    return widths


def token(text: str, width: int) -> str:
    """One word (no spaces) shortened the way its kind reads best: a
    ``file:line`` keeps its file name and line, a scope path its last
    components, anything else loses its middle.

    >>> token("corpus/logs/jax_explain_cache_misses.py:47", 33)
    '…/jax_explain_cache_misses.py:47'
    """
    if len(text) <= width:
        return text
    if _LINE.fullmatch(text) and not text.startswith(("{", "(", "[")):
        return location(text, width)
    if "/" in text.strip("/") and not any(c in text for c in "{[(,"):
        return op_name(text, width)
    return middle(text, width)


def words(text: str, width: int) -> str:
    """``text`` cut after its last whole word that fits ``width``, `` …`` for
    the rest; where that would leave little, its longest word is shortened
    instead (``phrase``).

    >>> words("4 ops (multiply, constant(0.5), broadcast)", 40)
    '4 ops (multiply, constant(0.5), …'
    >>> words("… < corpus/logs/jax_explain_cache_misses.py:47", 36)
    '… < …/jax_explain_cache_misses.py:47'
    """
    if len(text) <= width:
        return text
    cut = text.rfind(" ", 0, width - 1)
    if cut >= width // 3:
        return text[:cut].rstrip() + " " + ELLIPSIS
    return phrase(text, width)


def each_word(text: str, width: int) -> str:
    """``text`` with every word longer than ``width`` shortened as a
    ``token``: what is left can be wrapped at spaces and never splits a word."""
    return "\n".join(" ".join(token(w, width) for w in line.split(" "))
                     for line in text.split("\n"))


def phrase(text: str, width: int) -> str:
    """A phrase made to fit one line of ``width`` by shortening its longest
    word first, so the short words around it stay readable.

    >>> phrase("SyncTensorsGraph at corpus/logs/torch_debug.py:66", 40)
    'SyncTensorsGraph at …/torch_debug.py:66'
    """
    parts = text.split(" ")
    while len(" ".join(parts)) > width:
        longest = max(range(len(parts)), key=lambda i: len(parts[i]))
        excess = len(" ".join(parts)) - width
        if len(parts[longest]) - excess < 8:
            return middle(text, width)
        parts[longest] = token(parts[longest], len(parts[longest]) - excess)
    return " ".join(parts)
