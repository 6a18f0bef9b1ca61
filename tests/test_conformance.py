"""XLA's own parser test data (corpus/xla-conformance) through hlodiff's parser.

Every module XLA accepts must parse; every input XLA rejects for syntax
must raise HloSyntaxError at a line and column; printing a parsed module
and parsing it again must give the same model; and on every module that
XLA's C++ parser (from jaxlib) also reads, hlodiff's model must be XLA's,
and equal to the model of XLA's own print of the module.
"""

from __future__ import annotations

import csv
import re
from collections import Counter

import pytest

import hlodiff
from hlodiff.syntax.printer import to_text
from xla_agreement import REPRINT_EXCEPTIONS, model_differences, reprint_difference, xla_views_or_skip

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
    return xla_views_or_skip(MODULES)


def test_hlodiff_builds_the_model_xla_builds(xla_views):
    """For every module jaxlib's XLA accepts: the same computations, and per
    instruction the same name, opcode, shape, operands and called
    computations, in the same order, with the same root."""
    accepted = [(k, t) for k, t in MODULES if xla_views[k]["ok"]]
    mismatches = [f"{key}: {difference}" for key, text in accepted
                  for difference in model_differences(hlodiff.parse(text, path=key), xla_views[key])[:1]]
    print(f"\nmodel: {len(accepted) - len(mismatches)} of the {len(accepted)} modules XLA accepts "
          f"({len(MODULES) - len(accepted)} rejected) build XLA's model")
    assert not mismatches, "\n".join(mismatches[:20])
    assert len(accepted) >= 800


def test_a_module_equals_xlas_print_of_it(xla_views):
    """parse(text) == parse(XLA's print of the text): the same program, read
    from its spelling and from XLA's."""
    accepted = [(k, t) for k, t in MODULES if xla_views[k]["ok"]]
    outcome = {key: reprint_difference(hlodiff.parse(text), text, xla_views[key]["reprint"])
               for key, text in accepted}
    excepted = Counter(why for why in outcome.values() if why in REPRINT_EXCEPTIONS)
    failures = [f"{key}: {why}" for key, why in outcome.items()
                if why is not None and why not in REPRINT_EXCEPTIONS]
    equal = sum(why is None for why in outcome.values())
    print(f"\nreprint: {equal} of {len(accepted)} equal XLA's print; set aside: {dict(excepted)}")
    assert not failures, "\n".join(failures[:20])
    assert sum(excepted.values()) <= 12
