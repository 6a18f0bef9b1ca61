"""XLA's own parser test data (corpus/xla-conformance) through hlodiff's parser.

Every module XLA accepts must parse; every input XLA rejects for syntax
must raise HloSyntaxError at a line and column; printing a parsed module
and parsing it again must give the same model; and on every module that
XLA's C++ parser (from jaxlib) also reads, both parsers must agree on the
computations, the instruction count and each instruction's opcode and shape.
"""

from __future__ import annotations

import csv
import re
import sys

import pytest

import hlodiff
from hlodiff.syntax.printer import to_text

from conftest import CONFORMANCE

_SPLIT = re.compile(r"^// -----\s*$", re.M)


def _manifest() -> list[dict[str, str]]:
    with open(CONFORMANCE / "MANIFEST.tsv", encoding="utf-8") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def _read(name: str) -> str:
    return (CONFORMANCE / name).read_text(encoding="utf-8", errors="strict")


def _entries(name: str, text: str) -> list[tuple[str, str]]:
    """A files/ entry holds several modules separated by '// -----' lines."""
    chunks = _SPLIT.split(text) if name.startswith("files/") else [text]
    real = [c for c in chunks
            if any(line.strip() and not line.strip().startswith("//") for line in c.splitlines())]
    return [(f"{name}#{i}" if len(real) > 1 else name, c) for i, c in enumerate(real)]


MANIFEST = _manifest()
MODULES = [entry for row in MANIFEST if row["kind"] in ("valid", "file")
           for entry in _entries(row["file"], _read(row["file"]))]
SYNTAX_ERRORS = [row for row in MANIFEST if row["kind"] == "invalid"
                 and re.search(r"\[(syntax|lexical|lexical/syntax)\]", row["note"])]


def test_corpus_is_complete():
    """The copy in corpus/ is the whole conformance set, not a sample."""
    assert len([r for r in MANIFEST if r["kind"] == "valid"]) == 302
    assert len([r for r in MANIFEST if r["kind"] == "file"]) == 300
    assert len(MODULES) > 700
    assert len(SYNTAX_ERRORS) >= 25


@pytest.mark.parametrize("key,text", MODULES, ids=[k for k, _ in MODULES])
def test_every_module_parses_and_round_trips(key, text):
    module = hlodiff.parse(text, path=key, strict=True)
    assert module.computations and all(c.instructions for c in module.computations)
    again = hlodiff.parse(to_text(module), strict=True)
    assert again == module
    assert [[a.value for a in i.attributes] for _, i in again.instructions()] == \
           [[a.value for a in i.attributes] for _, i in module.instructions()]


@pytest.mark.parametrize("row", SYNTAX_ERRORS, ids=[r["file"] for r in SYNTAX_ERRORS])
def test_every_syntax_error_is_reported_with_line_and_column(row):
    with pytest.raises(hlodiff.HloSyntaxError) as caught:
        hlodiff.parse(_read(row["file"]), path=row["file"], strict=True)
    err = caught.value
    assert err.path == row["file"]
    assert err.line >= 1 and err.column >= 1
    assert f"{row['file']}:{err.line}:{err.column}:" in str(err)
    assert "^" in str(err)  # the caret under the offending column


def test_value_errors_surface_on_first_use_without_strict():
    """Without strict=True a bad window is found when it is read, still with its place."""
    text = _read("invalid/parser_test_PaddingConfigIsNotWindowPad.hlo")
    module = hlodiff.parse(text, path="bad.hlo")
    bad = next(a for _, i in module.instructions() for a in i.attributes if a.name == "window")
    with pytest.raises(hlodiff.HloSyntaxError) as caught:
        hlodiff.check(module)
    assert caught.value.line == text[:text.index("pad=1_1_0")].count("\n") + 1
    assert bad.text.startswith("{")


# --- the cross-check against XLA's C++ parser ----------------------------------------------

@pytest.fixture(scope="session")
def xla_views():
    try:
        import jaxlib  # noqa: F401
        from jax._src.lib import hlo  # noqa: F401
    except Exception as exc:  # pragma: no cover - depends on the machine
        reason = f"jaxlib is not installed here ({exc}); the cross-check needs it"
        print(f"\nSKIPPED cross-check: {reason}", file=sys.stderr)
        pytest.skip(reason)
    import xla_reference
    return xla_reference.views(MODULES)


def _materialised_by_xla(module: hlodiff.Module) -> str | None:
    """Why XLA's instruction list legitimately differs from the text, if it does.

    XLA turns nested operands, compact get-tuple-element operands and
    async sugar (``custom-call-start``) into extra instructions and
    computations of its own; hlodiff keeps what the text says.
    """
    for _, instruction in module.instructions():
        if any("(" in o or "#" in o for o in instruction.operands):
            return "nested or compact-GTE operands"
        if instruction.opcode.endswith(("-start", "-update", "-done")) \
                and instruction.opcode not in hlodiff.syntax.opcodes.OPCODES:
            return "async syntax sugar"
        if instruction.opcode.startswith("async-") or any(
                a.name in ("to_apply", "calls") and a.text.lstrip().startswith("{")
                for a in instruction.attributes):
            return "async wrapping or inline computations"
    return None


# Inputs where XLA does not keep what the text says, checked by hand.
_XLA_REWRITES = {
    "files/xla__hlo__translate__hlo_to_mhlo__tests__import_async.hlo#14":
        "recv-done declares f32[128,21]; XLA replaces it with the recv's f32[128,32]",
}


def test_xla_cpp_parser_agrees(xla_views):
    compared, skipped, mismatches = 0, {}, []
    for key, text in MODULES:
        view = xla_views[key]
        if not view["ok"]:
            skipped[key] = "XLA in jaxlib rejects it: " + view["error"][:80]
            continue
        module = hlodiff.parse(text)
        why = _XLA_REWRITES.get(key) or _materialised_by_xla(module)
        if why:
            skipped[key] = why
            continue
        compared += 1
        ours = {c.name: c for c in module.computations}
        theirs = {c["name"]: c for c in view["computations"]}
        if set(ours) != set(theirs):
            mismatches.append(f"{key}: computations {sorted(set(ours) ^ set(theirs))}")
            continue
        for name, computation in theirs.items():
            mine = ours[name].instructions
            rows = computation["instructions"]
            if len(mine) != len(rows):
                mismatches.append(f"{key}: {name} has {len(mine)} instructions, XLA {len(rows)}")
                break
            for instruction, row in zip(mine, rows):
                if instruction.opcode != row["opcode"] or (
                        instruction.shape is not None and str(instruction.shape) != row["shape"]):
                    mismatches.append(f"{key}: {instruction.name} is {instruction.opcode} "
                                      f"{instruction.shape}, XLA says {row['opcode']} {row['shape']}")
                    break
    print(f"\ncross-check: compared {compared} modules with XLA's C++ parser, skipped {len(skipped)}")
    assert not mismatches, "\n".join(mismatches[:20])
    assert compared >= 500, f"only {compared} compared; skipped: {list(skipped.items())[:10]}"
