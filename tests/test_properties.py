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
          "module_added": "module_removed", "module_removed": "module_added",
          "constant_to_parameter": "parameter_to_constant",
          "parameter_to_constant": "constant_to_parameter"}


def summary(report) -> Counter:
    """What a report says, without where: (kind, stage, old, new, count) of each
    finding and of each change grouped under it."""
    out: Counter = Counter()
    for finding in report.findings:
        out[(finding.kind, finding.stage, finding.old, finding.new, finding.count)] += 1
        for derived in finding.derived:
            out[("derived", derived.kind, derived.stage, derived.old, derived.new,
                 derived.count)] += 1
    return out


def mirrored(report) -> Counter:
    out: Counter = Counter()
    for key, n in summary(report).items():
        if key[0] == "derived":
            _, kind, stage, old, new, count = key
            out[("derived", MIRROR.get(kind, kind), stage, new, old, count)] += n
        else:
            kind, stage, old, new, count = key
            out[(MIRROR.get(kind, kind), stage, new, old, count)] += n
    return out


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
          "module_added", "module_removed", "elided_constant"}
# The instruction aligner is greedy in run A's order, so where many similar
# instructions change (a dtype switch, a new RNG), the changes that follow
# from the cause pair up differently in each direction. The verdict, the hash
# verdicts and the causes still mirror; the full list does not, yet.
ASYMMETRIC = {"jax_dtype", "jax_temperature", "tf_constant_to_parameter", "tf_dtype", "tf_seed",
              "torch_dtype", "torch_loop_trip_count"}


def causes(report, mirror: bool = False) -> Counter:
    out: Counter = Counter()
    for f in report.findings:
        if f.kind in CAUSES and f.moves_a_hash:
            out[(MIRROR.get(f.kind, f.kind), f.new, f.old) if mirror else (f.kind, f.old, f.new)] \
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
    if case in ASYMMETRIC and summary(backward) != mirrored(forward):
        pytest.xfail("derived changes pair differently in each direction (greedy aligner)")
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
    keep = _KEYWORDS | ELEMENT_TYPES | attribute_words
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
    assert after.hashes == original.hashes
    assert summary(after) == summary(original)
