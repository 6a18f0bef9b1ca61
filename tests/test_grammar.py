"""The complete grammar (grammar/hlo_full.lark) against the fast path.

``parse(text, strict=True)`` reads with the grammar; ``parse(text)`` with
the scanner, and ``check`` reads the pieces it left as text. Both must
build equal models, or both raise ``HloSyntaxError`` at the same line: on
HLO generated from the grammar's own rules (and mutated), on every file of
XLA's conformance corpus and on every dump in corpus/.

The generated examples are few by default. A longer campaign, by hand::

    HLODIFF_GRAMMAR_EXAMPLES=5000 python3 -m pytest -q tests/test_grammar.py

(``HLODIFF_FUZZ_SAVE=/tmp/dir`` keeps the inputs that failed, as for
tests/test_fuzz.py.)
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import timedelta
from functools import cache
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lark import Lark
from lark.grammar import NonTerminal

import hlodiff
from conftest import CONFORMANCE, CORPUS
from hlodiff.paths import grammar_dir
from hlodiff.syntax.opcodes import OPCODES

CAMPAIGN = os.environ.get("HLODIFF_GRAMMAR_EXAMPLES")
SAVE = os.environ.get("HLODIFF_FUZZ_SAVE")
GRAMMAR = grammar_dir() / "hlo_full.lark"


def test_the_grammar_has_no_conflict_and_no_terminal_collision():
    # Lark's strict mode fails on LALR conflicts and on terminals of one
    # priority that match the same text.
    Lark(GRAMMAR.read_text(), parser="lalr", strict=True, maybe_placeholders=True)


def outcome(text: str):
    """("model", module) or ("error", line) for the fast path and the grammar path."""
    def fast():
        module = hlodiff.parse(text)
        hlodiff.check(module)
        return module

    paths = []
    for read in (fast, lambda: hlodiff.parse(text, strict=True)):
        try:
            paths.append(("model", read()))
        except hlodiff.HloSyntaxError as err:
            paths.append(("error", err.line, err.reason))
    return paths


def assert_paths_agree(text: str) -> None:
    fast, strict = outcome(text)
    agree = fast[0] == strict[0] and (fast[1] == strict[1])
    if not agree and SAVE:
        Path(SAVE).mkdir(parents=True, exist_ok=True)
        Path(SAVE, hashlib.sha256(text.encode()).hexdigest()[:12] + ".hlo").write_text(text)
    assert agree, f"fast path: {fast[:3]}\ngrammar:   {strict[:3]}\n--- text:\n{text[:3000]}"


# --- HLO generated from the grammar's rules -----------------------------------------------------

@cache
def _grammar():
    """The compiled rules by origin, and each nonterminal's least depth."""
    lark = Lark(GRAMMAR.read_text(), parser="lalr", maybe_placeholders=True)
    rules: dict[str, list] = {}
    for rule in lark.rules:
        rules.setdefault(rule.origin.name, []).append(rule.expansion)
    depth = {name: 10**9 for name in rules}
    changed = True
    while changed:  # least depth of a derivation to terminals, by fixpoint
        changed = False
        for name, expansions in rules.items():
            best = min(1 + max([depth[s.name] for s in e if isinstance(s, NonTerminal)] or [0])
                       for e in expansions)
            if best < depth[name]:
                depth[name], changed = best, True
    return rules, depth, {t.name: t for t in lark.terminals}


# Terminals drawn from small pools, so that generated text lexes the way it
# was derived and names refer to each other; the rest from their regexes.
_POOLS = {
    "NAME": ["a", "b", "x.1", "%p0", "add", "_", "t"], "NAME_COLON": ["a:", "x:"],
    "ATTR_NAME": ["zz=", "k=", "composite.name="], "INT": ["0", "1", "2", "-1", "7"],
    "DECIMAL": ["0.5", "1e-05", "-2.", "3E2"], "INF": ["inf", "-inf"], "NAN": ["nan", "-nan", "nan(0x7)"],
    "STRING": ['"s"', '""', "'q'", '"a\\"b"'], "GATOM": ["w", "3", "<=", "a.b", "-1"],
    "BLOB_TEXT": ['"k":1', "x:", "ENABLE_TMA"], "DXD": ["3x3", "1x2"], "PAD": ["0_1", "1_1x0_0", "0_0_1"],
    "DIM_LABELS": ["b01f_01io->b01f", "bf_io->bf"], "ELEMENT_TYPE": ["f32", "s32", "pred", "bf16", "u8"],
    "OPCODE": sorted(OPCODES), "DIM_LEVEL": ["D", "C+"], "ALIAS_KIND": ["may-alias"],
    "LAYOUT_OPEN": ["{"], "CONSTANT": ["constant"], "PARAMETER": ["parameter"], "BUFFER": ["b("],
}
_LOOKAHEAD = re.compile(r"\(\?[=!][^()]*(?:\([^()]*\)[^()]*)*\)$")


@st.composite
def derived(draw, symbol: str = "start", budget: int = 14) -> str:
    """Text derived from the grammar's rule ``symbol``, within ``budget`` levels."""
    rules, depth, terminals = _grammar()
    out: list[str] = []

    def walk(name: str, room: int) -> None:
        if name not in rules:
            out.append(_terminal(draw, name, terminals))
            return
        choices = [e for e in rules[name]
                   if max([depth[s.name] for s in e if isinstance(s, NonTerminal)] or [0]) < room]
        expansion = draw(st.sampled_from(choices or sorted(rules[name], key=len)[:1]))
        for symbol_ in expansion:
            walk(symbol_.name, room - 1)

    walk(symbol, budget)
    return " ".join(out)  # (an error inside a piece is told at the piece by the fast path)


def _terminal(draw, name: str, terminals) -> str:
    if name in _POOLS:
        return draw(st.sampled_from(_POOLS[name]))
    pattern = terminals[name].pattern
    if type(pattern).__name__ == "PatternStr":
        return pattern.value
    return draw(st.from_regex(_LOOKAHEAD.sub("", pattern.value), fullmatch=True))


@st.composite
def modules(draw) -> str:
    """A module whose skeleton is well formed (operands name instructions
    defined before them) and whose pieces are derived from the grammar:
    shapes, literals, attributes, header attributes."""
    lines = []
    if draw(st.booleans()):
        attributes = draw(st.lists(derived("header_attribute", 8), max_size=2))
        lines.append("HloModule m" + "".join(", " + a for a in attributes))
    for index in range(draw(st.integers(1, 2))):
        names = []
        entry = "ENTRY " if index == 1 else ""
        lines.append(f"{entry}c{index} {{")
        for k in range(draw(st.integers(1, 4))):
            name = f"i{k}"
            shape = draw(derived("shape", 6))
            kind = draw(st.sampled_from(["parameter", "constant", "op"])) if names else "parameter"
            if kind == "parameter":
                body = f"parameter({k})"
            elif kind == "constant":
                body = f"constant({draw(derived('literal', 6))})"
            else:
                operands = draw(st.lists(st.sampled_from(names), max_size=3))
                body = f"{draw(st.sampled_from(sorted(OPCODES)))}({', '.join(operands)})"
            attributes = draw(st.lists(derived("attribute", 8), max_size=2))
            root = "ROOT " if k == 0 and draw(st.booleans()) else ""
            lines.append(f"  {root}{name} = {shape} {body}" + "".join(", " + a for a in attributes))
            names.append(name)
        lines.append("}")
    return "\n".join(lines) + "\n"


_TOKEN = re.compile(r"\s+|%?[A-Za-z_][\w.\-]*=?|-?\d+(?:\.\d+)?|\S")


@st.composite
def mutated(draw, texts) -> str:
    """A text from ``texts`` with up to two tokens dropped, doubled or swapped."""
    text = draw(texts)
    for _ in range(draw(st.integers(0, 2))):
        tokens = _TOKEN.findall(text)
        i = draw(st.integers(0, len(tokens) - 1))
        how = draw(st.sampled_from(["drop", "duplicate", "swap", "inject"]))
        if how == "drop":
            del tokens[i]
        elif how == "duplicate":
            tokens.insert(i, tokens[i])
        elif how == "swap" and i + 1 < len(tokens):
            tokens[i], tokens[i + 1] = tokens[i + 1], tokens[i]
        else:
            tokens.insert(i, draw(st.sampled_from(list("{}()[],=:#%\n") + [" ", "ROOT ", "/*c*/"])))
        text = "".join(tokens)
    return text


def _budget(default: int) -> settings:
    return settings(max_examples=int(CAMPAIGN) if CAMPAIGN else default,
                    deadline=timedelta(seconds=20), suppress_health_check=list(HealthCheck),
                    derandomize=not CAMPAIGN, database=None)


@_budget(60)
@given(mutated(modules()))
def test_generated_hlo_reads_alike_both_ways(text):
    assert_paths_agree(text)


@_budget(30)
@given(derived("start", 12))
def test_text_derived_from_the_whole_grammar_reads_alike_both_ways(text):
    assert_paths_agree(text)


# --- real HLO ------------------------------------------------------------------------------------

_SPLIT = re.compile(r"^// -----\s*$", re.M)
CONFORMANCE_TEXTS = [(str(p.relative_to(CONFORMANCE)) + (f"#{i}" if i else ""), chunk)
                     for p in sorted(CONFORMANCE.rglob("*.hlo"))
                     for i, chunk in enumerate(_SPLIT.split(p.read_text()) if "files" in p.parts
                                               else [p.read_text()])
                     if chunk.strip()]
# every dump in the corpus: pairs, single runs, the logs' dumps (not the conformance
# copy), each text once: 1,368 files hold 574 texts (a side program is the same in
# both runs of a case, and in many cases), which took this test 135 s of the suite
def _each_text_once(paths: list[Path]) -> list[Path]:
    seen: set[bytes] = set()
    out = []
    for path in paths:
        digest = hashlib.sha256(path.read_bytes()).digest()
        if digest not in seen:
            seen.add(digest)
            out.append(path)
    return out


DUMPS = _each_text_once(sorted(
    p for p in CORPUS.rglob("*optimizations*.txt")
    if p.relative_to(CORPUS).parts[0] not in ("xla-conformance", "external")))


@pytest.mark.parametrize("key,text", CONFORMANCE_TEXTS, ids=[k for k, _ in CONFORMANCE_TEXTS])
def test_every_conformance_input_reads_alike_both_ways(key, text):
    assert_paths_agree(text)


@pytest.mark.parametrize("path", DUMPS, ids=[str(p.relative_to(CORPUS)) for p in DUMPS])
def test_every_corpus_dump_reads_alike_both_ways(path):
    assert_paths_agree(path.read_text())


# --- the command line --------------------------------------------------------------------------

@pytest.mark.parametrize("command", [["canon"], ["constants"], ["ls"], ["diff", "{file}"]])
def test_strict_commands_reject_what_the_grammar_rejects(tmp_path, command):
    from conftest import run_cli
    bad = tmp_path / "bad.hlo"  # the wrong type in metadata: read lazily, never by canon or ls
    bad.write_text("HloModule m\n\nENTRY e {\n  ROOT c = f32[] constant(1), metadata={op_name=3}\n}\n")
    args = [a.replace("{file}", str(bad)) for a in command] + [str(bad)]
    if command[0] in ("canon", "ls"):
        run_cli(*args, expect=0)
    result = run_cli(*args[:1], "--strict", *args[1:], expect=2)
    assert f"{bad}:4:" in result.stderr and "expected a string" in result.stderr
