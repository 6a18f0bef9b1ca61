"""hlodiff diff on every real dump pair in corpus/, judged against its truth.json.

The verdict must be right, controls must report no finding that moves a
hash, and the top finding must be the cause the truth file names, with its
origin (op_name fragment and the user's source line where the framework
records one).
"""

from __future__ import annotations

import json

import pytest

from dump_trees import corpus_cases
from hlodiff.analysis.compare import compare

from conftest import CORPUS

CASES = [case.name for case in corpus_cases(CORPUS, with_truth=True)]


def _truth(case: str) -> dict:
    return json.loads((CORPUS / case / "truth.json").read_text())


def _without_layout(text: str) -> str:
    """f32[16,8]{1,0} -> f32[16,8]: truth files write shapes without layouts."""
    out, depth = [], 0
    for char in text:
        if char == "{" and out and out[-1] == "]":
            depth += 1
        if depth == 0:
            out.append(char)
        if char == "}" and depth:
            depth -= 1
    return "".join(out)


@pytest.fixture(scope="module")
def reports():
    return {}


def _report(reports, case):
    if case not in reports:
        reports[case] = compare(CORPUS / case / "run_a", CORPUS / case / "run_b")
    return reports[case]


@pytest.mark.parametrize("case", CASES)
def test_verdict_matches_the_truth(case, reports):
    truth = _truth(case)
    report = _report(reports, case)
    assert report.same_executable is truth["same_executable"], [
        (f.kind, f.old, f.new) for f in report.findings[:5]]
    if truth["same_executable"] is True:
        movers = [(f.kind, f.old, f.new) for f in report.findings if f.moves_a_hash]
        assert movers == []


@pytest.mark.parametrize("case", [c for c in CASES if _truth(c)["same_executable"] is not True])
def test_top_finding_is_the_true_cause_with_its_origin(case, reports):
    causes = _truth(case)["causes"]
    top = _report(reports, case).top
    # With two causes at once either may come first; the top must be one of them.
    cause = next((c for c in causes if c["kind"] == top.kind), causes[0])
    assert top.kind == cause["kind"], [c["kind"] for c in causes]
    if cause["kind"] == "constant":
        assert (top.old, top.new) == (cause["old"], cause["new"])
    else:
        # a collapsed finding (three parameters moved by one batch size) names
        # each place's values; the truth's must be among them
        places = list(top.where) + [w for d in top.derived for w in d.where]
        for side in ("old", "new"):
            theirs = cause.get(side)
            ours = [getattr(w, side) for w in places if getattr(w, side)]
            if theirs and ours:
                wanted = _without_layout(theirs).split("(")[0]
                assert any(wanted in _without_layout(o) for o in ours), (ours, theirs)
    # the origin: the finding's own, or that of what it explains (a dtype change
    # made by an astype shows at the convert; the dot it feeds follows from it)
    origins = list(top.origins) + [o for d in top.derived for o in d.origins]
    if cause.get("op_name"):
        assert any(cause["op_name"] in (o.op_name or "") for o in origins), origins[:3]
    if cause.get("source_line"):
        assert any(o.source_line == cause["source_line"] for o in origins), origins[:3]
