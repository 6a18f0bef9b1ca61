"""Fuzzing for wrong answers: a one-token edit changes the verdict exactly
when it changes the program.

Real modules (XLA's parser tests, small real dumps of every framework,
before and after optimizations) each get one-token edits: a number, an
opcode, an operand, an op_name, a name renamed everywhere it is used,
``ROOT`` moved to another line; or one of two lines edits: an operand that
reads another line of its shape, two neighbouring lines swapped. Two judges
read each pair of texts:

* XLA's own parser (jaxlib, in a subprocess: ``xla_reference.py``) prints
  both canonically (names by position, no metadata, every constant in full,
  backend_config kept; see ``_program`` there): the program is the same
  exactly when the two prints are equal. An edit XLA rejects is not a program and is left out;
* ``hlodiff.analysis.compare``: "same executable" or not, with the pass
  that leaves unchanged lines unparsed off (as for small files) and on (as
  for big ones).

They must agree both ways. A "same" for a changed program is the worst
answer hlodiff can give; a "different" for a renamed instruction hides the
real cause among false ones. The default run makes 400 edits; a campaign:
``HLODIFF_FUZZ_EXAMPLES=5000 python -m pytest tests/test_verdict_fuzz.py``
(``HLODIFF_FUZZ_SEED`` picks other edits). What a campaign finds is kept,
reduced to the pair a user would diff, in test_fuzz_found.py.
"""

from __future__ import annotations

import os
import random
import re

from conftest import CONFORMANCE, CORPUS
from hlodiff.analysis.compare import compare
from hlodiff.syntax import unchanged
from xla_agreement import xla_views_or_skip

EDITS = int(os.environ.get("HLODIFF_FUZZ_EXAMPLES", "400"))
SEED = int(os.environ.get("HLODIFF_FUZZ_SEED", "2026"))
_SIZE_LIMIT = 8_000  # small modules: a few hundred edits a minute
_REAL_MIN_BYTES = unchanged.MIN_BYTES

_UNARY = ["negate", "exponential", "tanh", "abs", "sqrt", "rsqrt", "log", "sine", "cosine"]
_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power"]
_TOKEN = re.compile(r"%?[A-Za-z_][\w.\-]*|-?\d+(?:\.\d+)?(?:e-?\d+)?|\"[^\"\n]*\"")


def _seeds() -> list[str]:
    paths = sorted((CONFORMANCE / "valid").glob("*.hlo"))
    for framework in ("jax", "tf", "torch"):
        paths += sorted(CORPUS.glob(f"{framework}_*/run_a/*before_optimizations.txt"))
        paths += sorted(CORPUS.glob(f"{framework}_*/run_a/*after_optimizations.txt"))
    texts = [p.read_text() for p in paths]
    return [t for t in texts if len(t) <= _SIZE_LIMIT and "{...}" not in t]


def _in_literal(text: str, at: int) -> bool:
    """Is offset ``at`` inside a ``constant(...)`` literal? Only there may a
    number turn negative: XLA's parser also takes ``{1,-1}`` for a layout,
    but no compiler takes it as a program."""
    line = text.rfind("\n", 0, at) + 1
    start = text.rfind("constant(", line, at)
    return start != -1 and text.count("(", start, at) > text.count(")", start, at)


def _options(token: str, literal: bool, opcode: bool) -> list[str]:
    """What one token may become (``opcode``: it is followed by ``(``, so it
    is an opcode, not an instruction named like one)."""
    bare = token.lstrip("%")
    if opcode and bare in _UNARY:
        return [o for o in _UNARY if o != bare]
    if opcode and bare in _BINARY:
        return [o for o in _BINARY if o != bare]
    if re.fullmatch(r"-?\d+", token):
        number = int(token)
        options = {str(number + 1), str(number - 1), str(-number), "0"}
        return sorted({o for o in options if literal or not o.startswith("-")} - {token})
    if re.fullmatch(r"-?\d+\.\d+(?:e-?\d+)?|-?\d+e-?\d+", token):
        value = float(token)
        return sorted({repr(value * 2), repr(value), f"{value:e}"} - {token})
    if token == "ROOT":
        return ["MOVE_ROOT"]
    if token.startswith('"'):
        return ['"renamed/scope"']
    if "." in bare and bare[0].isalpha():
        return ["RENAME"]
    return []


_LINE = re.compile(r"^[ \t]*(?:ROOT )?%?([A-Za-z_][\w.\-]*) = (\S+)[^\n]*$", re.M)
_READ = re.compile(r"%([A-Za-z_][\w.\-]*)")


def _line_edit(text: str, rng: random.Random) -> tuple[str, str] | None:
    """``text`` with two neighbouring lines swapped (where the second does
    not read the first), or with a name a line reads replaced by another
    line of its computation above it, of the same shape; and what the edit
    was. (Found lines alike read one for another: two copies of one value
    swapped in a scheduled module were "Same executable".)"""
    lines = list(_LINE.finditer(text))
    if len(lines) < 2:
        return None
    k = rng.randrange(len(lines) - 1)
    first, second = lines[k], lines[k + 1]
    if rng.random() < 0.5:
        reads = second.group()[second.group().index(" = "):]
        if text[first.end():second.start()] != "\n" or re.search(
                rf"(?<![\w.\-]){re.escape(first.group(1))}(?![\w.\-])", reads):
            return None  # (XLA reads a name used above its line as something else)
        return (text[:first.start()] + second.group() + "\n" + first.group() + text[second.end():],
                f"lines {first.group(1)} and {second.group(1)} swapped")
    computation = text.rfind("{\n", 0, second.start())
    above = {m.group(1): m.group(2) for m in lines[:k + 1] if m.start() > computation}
    defined = second.start() + second.group().index(" = ")
    choices = [(read, other) for read in _READ.finditer(text, defined, second.end())
               if read.group(1) in above for other, shape in above.items()
               if other != read.group(1) and shape == above[read.group(1)]]
    if not choices:
        return None
    read, other = rng.choice(choices)
    return (text[:read.start(1)] + other + text[read.end(1):],
            f"{second.group(1)} reads {other}, not {read.group(1)}")


def _edit(text: str, rng: random.Random) -> tuple[str, str] | None:
    """``text`` with one token edited (or, one time in five, one of
    ``_line_edit``'s), and what the edit was."""
    if rng.random() < 0.2:
        return _line_edit(text, rng)
    body = text.index("\n") + 1  # the HloModule line names the program: not an edit of it
    tokens = [(m, options) for m in _TOKEN.finditer(text, body)
              if (options := _options(m.group(), _in_literal(text, m.start()),
                                      text.startswith("(", m.end())))]
    if not tokens:
        return None
    match, options = rng.choice(tokens)
    token = match.group()
    choice = rng.choice(options)
    if choice == "MOVE_ROOT":  # the computation returns another of its lines
        start = text.rfind("{\n", 0, match.start()) + 2
        end = text.find("\n}", match.end())
        lines = [m.start(1) for m in re.finditer(r"\n[ \t]*(%?[A-Za-z_][\w.\-]* =)",
                                                 text[start - 1:end])]
        if len(lines) < 2:
            return None
        there = start - 1 + rng.choice(lines)
        if there == match.end() + 1:  # its own line
            return None
        moved = text[:there] + "ROOT " + text[there:]
        at = match.start() + (5 if there < match.start() else 0)
        return moved[:at] + moved[at + 5:], f"ROOT moved to offset {there}"
    if choice == "RENAME":  # a name, and every use of it: the same program
        name = token.lstrip("%")
        renamed = re.sub(rf"(?<![\w.\-]){re.escape(name)}(?![\w.\-])",
                         name.split(".")[0] + ".9999", text[body:])
        return text[:body] + renamed, f"rename {name}"
    return text[:match.start()] + choice + text[match.end():], \
        f"{token!r} -> {choice!r} at offset {match.start()}"


def test_a_one_token_edit_changes_the_verdict_exactly_when_xla_reads_another_program(
        tmp_path, monkeypatch):
    rng = random.Random(SEED)
    seeds = _seeds()
    cases = []
    while len(cases) < EDITS:
        text = rng.choice(seeds)
        edited = _edit(text, rng)
        if edited is not None and edited[0] != text:
            cases.append((text, *edited))
    texts = {t for case in cases for t in case[:2]}
    keys = {t: str(n) for n, t in enumerate(sorted(texts))}
    views = xla_views_or_skip([(key, text) for text, key in keys.items()])
    wrong, judged = [], 0
    for n, (text, edited, what) in enumerate(cases):
        before, after = views[keys[text]], views[keys[edited]]
        if not before["ok"] or not after["ok"]:
            continue  # XLA does not read it as a program
        judged += 1
        folder = tmp_path / str(n)
        folder.mkdir()
        (folder / "a.txt").write_text(text)
        (folder / "b.txt").write_text(edited)
        same = before["program"] == after["program"]
        # Small modules are parsed whole; big ones leave what both runs share
        # unparsed (hlodiff/syntax/unchanged/): both ways must answer alike.
        for skipping in (False, True):
            monkeypatch.setattr(unchanged, "MIN_BYTES", 0 if skipping else _REAL_MIN_BYTES)
            how = " (unchanged lines skipped)" if skipping else ""
            try:
                verdict = compare(folder / "a.txt", folder / "b.txt").same_executable
            except Exception as exc:  # noqa: BLE001 - a text XLA reads must be read
                wrong.append(f"{what}: hlodiff failed{how}: {exc}")
                continue
            if verdict is not same:
                wrong.append(f"{what}: XLA reads {'the same' if same else 'another'} program, "
                             f"hlodiff says same_executable={verdict}{how} (in {text[:60]!r})")
    assert judged >= EDITS // 4, f"only {judged} of {EDITS} edits were programs XLA reads"
    assert not wrong, f"{len(wrong)} of {judged} verdicts wrong:\n" + "\n".join(wrong[:15])
