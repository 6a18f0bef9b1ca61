"""HLO written elsewhere, read as XLA reads it.

``corpus/external/repros`` holds one small module per way real HLO from
public repositories was once misread (default layouts, literal spellings,
inline operands, inferred shapes, line breaks, names...), each beside XLA's
print of it (``X.xla.hlo``, from jaxlib 0.10.2): the two must parse to equal
models, and (with jaxlib) hlodiff's model must be XLA's.

The modules themselves (fetched from public repositories, not committed;
see corpus/external/README.md) are checked the same way when
``HLODIFF_EXTERNAL_HLO`` names the folder holding them::

    HLODIFF_EXTERNAL_HLO=/work/external-hlo/modules python3 -m pytest -q -s tests/test_external.py
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

import hlodiff
from conftest import CORPUS
from hlodiff.analysis.compare import compare
from xla_agreement import (REPRINT_EXCEPTIONS, with_elided_literals, model_differences,
                            reprint_difference, xla_views_or_skip)

REPROS = sorted(p for p in (CORPUS / "external" / "repros").glob("*.hlo")
                if not p.name.endswith(".xla.hlo"))
EXTERNAL = os.environ.get("HLODIFF_EXTERNAL_HLO")


def test_every_cause_has_a_repro():
    causes = {p.stem.rsplit("_", 1)[0] for p in REPROS}
    assert {"default-layout", "literal-spelling", "inline-operands", "inferred-shape",
            "line-breaks", "names", "inline-computation", "async-sugar"} <= causes
    assert all(p.with_suffix(".xla.hlo").exists() for p in REPROS)


# Repros whose print XLA makes a different text of the program (see REPRINT_EXCEPTIONS).
_NOT_COMPARABLE = {"async-done-calls_1": "XLA prints the async computation as <op>-start sugar, "
                                         "which renames it"}


@pytest.mark.parametrize("path", REPROS, ids=[p.stem for p in REPROS])
def test_a_repro_equals_xlas_print_of_it(path):
    text = path.read_text()
    why = reprint_difference(hlodiff.parse(text), text, path.with_suffix(".xla.hlo").read_text())
    assert why == _NOT_COMPARABLE.get(path.stem)


@pytest.mark.parametrize("path", REPROS, ids=[p.stem for p in REPROS])
def test_a_repro_diffed_against_xlas_print_of_it_is_the_same_executable(path, tmp_path):
    if path.stem in _NOT_COMPARABLE:
        pytest.skip(_NOT_COMPARABLE[path.stem])
    text = path.read_text()
    # where XLA's print elides a literal the module spells out, it gets the
    # module's values: XLA's print has none to compare (a {...} says "cannot tell")
    reprint = tmp_path / "module.xla.hlo"
    reprint.write_text(with_elided_literals(hlodiff.parse(text),
                                            path.with_suffix(".xla.hlo").read_text()))
    assert _same_program(path, reprint)


def _same_program(a: Path, b: Path) -> bool:
    """What a user who pastes a module beside XLA's print of it reads: the
    same executable, nothing that moves a hash (not even a guessed version);
    "cannot tell" where the module itself prints a literal as ``{...}``."""
    report = compare(a, b)
    undecidable = "{...}" in a.read_text()
    return report.same_executable in ((True, None) if undecidable else (True,)) \
        and not [f for f in report.findings if f.affects]


def test_the_repros_build_xlas_model():
    entries = [(p.stem, p.read_text()) for p in REPROS]
    views = xla_views_or_skip(entries)
    mismatches = [f"{key}: {difference}" for key, text in entries if views[key]["ok"]
                  for difference in model_differences(hlodiff.parse(text), views[key])[:1]]
    assert not mismatches, "\n".join(mismatches)
    assert sum(views[key]["ok"] for key, _ in entries) == len(entries)


@pytest.fixture(scope="module")
def external():
    if not EXTERNAL:
        reason = "HLODIFF_EXTERNAL_HLO is not set: the fetched external modules are not checked"
        print(f"\nSKIPPED: {reason}")
        pytest.skip(reason)
    folder = Path(EXTERNAL)
    entries = [(str(p.relative_to(folder)), p.read_text(encoding="utf-8"))
               for p in sorted(folder.rglob("*.hlo"))]
    assert entries, f"no *.hlo under {folder}"
    return entries, xla_views_or_skip(entries)


def test_external_modules_diffed_against_xlas_print_are_the_same_executable(external, tmp_path):
    entries, views = external
    judged, wrong, excused = 0, [], Counter()
    for n, (key, text) in enumerate(entries):
        if not views[key]["ok"]:
            continue
        module = hlodiff.parse(text, path=key)
        why = reprint_difference(module, text, views[key]["reprint"])
        if why in REPRINT_EXCEPTIONS:  # XLA's print is another text of it: nothing to diff
            excused[why] += 1
            continue
        reprint = with_elided_literals(module, views[key]["reprint"])
        folder = tmp_path / str(n)
        folder.mkdir()
        (folder / "module.hlo").write_text(text)
        (folder / "module.xla.hlo").write_text(reprint)
        judged += 1
        if not _same_program(folder / "module.hlo", folder / "module.xla.hlo"):
            wrong.append(key)
    print(f"\nexternal: {judged - len(wrong)} of {judged} modules the same executable as "
          f"XLA's print of them; not compared, XLA's print being another text: {dict(excused)}")
    assert not wrong, "\n".join(wrong[:20])


def test_external_modules_build_xlas_model_and_equal_its_print(external):
    entries, views = external
    accepted = [(k, t) for k, t in entries if views[k]["ok"]]
    model, reprint, failures = 0, Counter(), []
    rejected_too = 0
    for key, text in entries:
        if not views[key]["ok"]:
            try:
                hlodiff.parse(text, strict=True)
            except hlodiff.HloSyntaxError:
                rejected_too += 1
            continue
        module = hlodiff.parse(text, path=key)
        differences = model_differences(module, views[key])
        model += not differences
        failures += [f"{key}: {d}" for d in differences[:1]]
        why = reprint_difference(module, text, views[key]["reprint"])
        reprint[why if why in REPRINT_EXCEPTIONS else "equal" if why is None else "different"] += 1
        if why is not None and why not in REPRINT_EXCEPTIONS:
            failures.append(f"{key}: print: {why}")
    print(f"\nexternal: {len(entries)} modules, XLA accepts {len(accepted)}; "
          f"hlodiff builds XLA's model for {model}; equal to XLA's print: {dict(reprint)}; "
          f"of the {len(entries) - len(accepted)} XLA rejects, hlodiff (strict) rejects {rejected_too}")
    assert not failures, "\n".join(failures[:20])
