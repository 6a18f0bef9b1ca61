"""Properties of ``compare`` on the real corpus: a run against itself is the
same executable with no findings; swapping the runs mirrors the report; and
renaming every instruction and computation consistently changes nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

import hlodiff
from conftest import CORPUS
from dump_trees import corpus_cases
from hlodiff.analysis.compare import compare
from hlodiff.syntax.opcodes import is_opcode
from hlodiff.syntax.values import ELEMENT_TYPES
from hostile import copy_case, main_file

CASES = [c.name for c in corpus_cases(CORPUS, with_truth=False)] if CORPUS.is_dir() else []

MIRROR = {"op_added": "op_removed", "op_removed": "op_added",
          "computation_added": "computation_removed", "computation_removed": "computation_added",
          "module_added": "module_removed", "module_removed": "module_added",
          "constant_to_parameter": "parameter_to_constant",
          "parameter_to_constant": "constant_to_parameter"}


def summary(report) -> Counter:
    """What a report says, without where: each finding's program, kind, stage and
    count, with its old -> new where it stands for one place (a finding of many
    places shows one of them as an example), and the kinds and counts of the
    changes that follow from it."""
    out: Counter = Counter()
    for finding in report.findings:
        values = (finding.old, finding.new) if finding.count == 1 else (None, None)
        out[(finding.program, finding.kind, finding.stage, *values, finding.count)] += 1
        for derived in finding.derived:
            out[("derived", finding.program, derived.kind, derived.count)] += 1
    return out


def mirrored(report) -> Counter:
    out: Counter = Counter()
    for key, n in summary(report).items():
        if key[0] == "derived":
            _, program, kind, count = key
            out[("derived", _swapped(program), MIRROR.get(kind, kind), count)] += n
        else:
            program, kind, stage, old, new, count = key
            out[(_swapped(program), MIRROR.get(kind, kind), stage, new, old, count)] += n
    return out


def _swapped(program: str) -> str:
    """A program's label with the runs swapped: ``jit_a vs jit_b`` (a pair
    across a rename), ``SyncTensorsGraph (module_0000 vs module_0002)``."""
    name, paren, which = program.partition(" (")
    name = " vs ".join(reversed(name.split(" vs ")))
    which = " vs ".join(reversed(which.rstrip(")").split(" vs ")))
    return f"{name} ({which})" if paren else name


@pytest.mark.parametrize("case", CASES)
def test_a_run_against_itself_is_the_same_executable(tmp_path: Path, case: str) -> None:
    run = copy_case(case, tmp_path) / "run_b"
    for target in (run, main_file(run)):
        report = compare(target, target)
        # One file against itself: even its {...} constants are equal.
        assert report.same_executable is True
        assert list(report.findings) == []
        assert not any(report.hashes.values())


CAUSES = {"constant", "parameter", "constant_to_parameter", "parameter_to_constant",
          "elided_constant", "environment", "replaced", "op_added", "op_removed"}


def causes(report, mirror: bool = False) -> Counter:
    out: Counter = Counter()
    for f in report.findings:
        if f.kind in CAUSES and f.moves_a_hash:
            old, new = (f.old, f.new) if f.count == 1 else (None, None)
            out[(MIRROR.get(f.kind, f.kind), new, old) if mirror else (f.kind, old, new)] \
                += f.count
    return out


@pytest.mark.parametrize("case", CASES)
def test_swapping_the_runs_mirrors_the_report(tmp_path: Path, case: str) -> None:
    root = copy_case(case, tmp_path)
    forward = compare(root / "run_a", root / "run_b")
    backward = compare(root / "run_b", root / "run_a")
    assert backward.same_executable == forward.same_executable
    assert backward.hashes == forward.hashes
    assert causes(backward) == causes(forward, mirror=True)
    assert summary(backward) == mirrored(forward)


# --- renaming ---------------------------------------------------------------------------

_PIECE = re.compile(r'"(?:[^"\\]|\\.)*"|/\*.*?\*/|(%?)([A-Za-z_][\w.\-]*)', re.S)
_KEYWORDS = {"ROOT", "ENTRY", "HloModule", "true", "false", "FileNames", "FunctionNames",
             "FileLocations", "StackFrames"}


def renamed(text: str, prefix: str) -> str:
    """``text`` with every instruction and computation renamed ``<prefix>.<n>``.

    Strings and comments are left alone (op_name paths are names the user
    chose, not HLO names); a name that is also an opcode, an element type or
    a keyword keeps its name, so the renaming stays consistent either way.
    """
    module = hlodiff.parse(text)
    names = [c.name for c in module.computations]
    names += [i.name for c in module.computations for i in c.instructions]
    attribute_words = {a.name for _, i in module.instructions() for a in i.attributes}
    # The HloModule's name is the program's, which cache keys hold: not renamed.
    keep = _KEYWORDS | ELEMENT_TYPES | attribute_words | {module.name}
    mapping = {}
    for name in dict.fromkeys(names):
        if name not in keep and not is_opcode(name):
            mapping[name] = f"{prefix}.{len(mapping)}"

    def swap(m: re.Match) -> str:
        if m.group(2) is None or m.group(2) not in mapping:
            return m.group(0)
        return m.group(1) + mapping[m.group(2)]
    return _PIECE.sub(swap, text)


RENAME_CASES = [c for c in CASES if c.split("_")[0] in ("jax", "tf", "torch")]


@pytest.mark.parametrize("case", RENAME_CASES)
def test_renaming_every_instruction_changes_nothing(tmp_path: Path, case: str) -> None:
    root = copy_case(case, tmp_path)
    a, b = main_file(root / "run_a"), main_file(root / "run_b")
    (tmp_path / "left").mkdir()
    (tmp_path / "right").mkdir()
    a2, b2 = tmp_path / "left" / a.name, tmp_path / "right" / b.name  # names tell the stage
    a2.write_text(renamed(a.read_text(), "left"))
    b2.write_text(renamed(b.read_text(), "right"))
    assert a2.read_text() != a.read_text()
    itself = compare(a, a2)
    if "{...}" in a.read_text():  # a lone file cannot tell {...} constants apart
        assert itself.same_executable is None
        assert {f.kind for f in itself.findings} == {"elided_constant"}
    else:
        assert itself.same_executable is True and list(itself.findings) == []
    original, after = compare(a, b), compare(a2, b2)
    assert after.same_executable == original.same_executable
    # XLA's CPU fingerprint hashes the optimized text, names and all
    # (corpus/gen/HASHES.md): renamed apart, two optimized files move it
    fingerprint = "xla_executable_fingerprint"
    if fingerprint in original.hashes and "after_optimizations" in a.name:
        assert after.hashes[fingerprint] is True
    assert {k: v for k, v in after.hashes.items() if k != fingerprint} == \
        {k: v for k, v in original.hashes.items() if k != fingerprint}
    assert summary(after) == summary(original)
