"""The unchanged pass (hlodiff/syntax/unchanged.py) must change how fast a diff is,
never what it says.

Real dumps are below the size where the pass switches on, so these tests
lower the threshold and compare each report with the one the full parse
and alignment give.
"""

from __future__ import annotations

import pytest

from dump_trees import corpus_cases
from hlodiff.syntax import unchanged
from hlodiff.analysis.compare import compare
from hlodiff.errors import HloSyntaxError
from hlodiff.model import UnchangedComputation, Unparsed
from hlodiff.syntax.parser import parse, parse_file
from hlodiff.render.report import report_document

from conftest import CORPUS

CASES = [case.name for case in corpus_cases(CORPUS, with_truth=True)]
MAIN = "module_0006.jit_train_step.cpu_after_optimizations.txt"


def _texts(case: str, name: str = MAIN) -> tuple[str, str]:
    return tuple((CORPUS / case / run / name).read_text() for run in ("run_a", "run_b"))


@pytest.mark.parametrize("case", CASES)
def test_the_report_is_the_same_with_and_without_the_pass(case, monkeypatch):
    monkeypatch.setattr(unchanged, "MIN_BYTES", 10 ** 12)
    full = report_document(compare(CORPUS / case / "run_a", CORPUS / case / "run_b"))
    monkeypatch.setattr(unchanged, "MIN_BYTES", 0)
    fast = report_document(compare(CORPUS / case / "run_a", CORPUS / case / "run_b"))
    assert fast == full


def test_a_learning_rate_change_leaves_most_lines_unparsed():
    text_a, text_b = _texts("jax_learning_rate")
    plan = unchanged.plan_pair(text_a, text_b)
    assert plan is not None
    instructions = parse(text_a).instruction_count
    assert plan.unchanged_lines > 0.8 * instructions
    a, b, seed = unchanged.parse_pair(text_a, text_b, min_bytes=0)
    assert a.instruction_count == b.instruction_count == instructions
    # the changed constants are read; whatever is unparsed is the same line in both
    for module in (a, b):
        for _, instruction in module.instructions():
            if instruction.opcode == "constant" and instruction.operand_text.strip() in ("0.01", "0.02"):
                assert not instruction.unchanged
    unparsed = [(c.name, i) for c, i in b.instructions() if i.unchanged]
    assert unparsed
    for computation, instruction in unparsed:
        assert instruction.name in (seed.paired(computation) or {instruction.name})


def test_an_unparsed_instruction_reads_as_the_parser_reads_it():
    text_a, text_b = _texts("jax_learning_rate")
    fast, _, _ = unchanged.parse_pair(text_a, text_b, min_bytes=0)
    full = parse(text_a)
    checked = 0
    for computation, instruction in fast.instructions():
        if isinstance(instruction, Unparsed):
            twin = full.computation(computation.name).by_name[instruction.name]
            assert (instruction.opcode, instruction.operands) == (twin.opcode, twin.operands)
            assert instruction.whole == twin
            assert instruction.metadata == twin.metadata and instruction.line == twin.line
            checked += 1
    assert checked > 100


def test_elided_constants_are_never_left_unparsed():
    text_a, text_b = _texts("jax_frozen_large")
    assert "{...}" in text_a
    a, b, _ = unchanged.parse_pair(text_a, text_b, min_bytes=0)
    for module, text in ((a, text_a), (b, text_b)):
        lines = text.split("\n")
        for _, instruction in module.instructions():
            if "{...}" in lines[instruction.line - 1]:
                assert not instruction.unchanged


def test_an_added_instruction_sends_both_texts_to_the_full_parser():
    # Adding an op renumbers what follows: names no longer say what matches.
    text_a, text_b = _texts("jax_op_added")
    assert unchanged.plan_pair(text_a, text_b) is None
    a, b, seed = unchanged.parse_pair(text_a, text_b, min_bytes=0)
    assert not seed and not any(i.unchanged for _, i in a.instructions())


def test_a_syntax_error_in_a_changed_line_is_reported_as_the_full_parse_reports_it():
    text_a, text_b = _texts("jax_learning_rate")
    lines = text_b.split("\n")
    broken = next(n for n, line in enumerate(lines) if "constant(0.02)" in line)
    lines[broken] = lines[broken].replace("constant(0.02)", "constant(0.02]")
    text_b = "\n".join(lines)
    with pytest.raises(HloSyntaxError) as full:
        parse(text_b, path="b.txt")
    with pytest.raises(HloSyntaxError) as fast:
        unchanged.parse_pair(text_a, text_b, "a.txt", "b.txt", min_bytes=0)
    assert str(fast.value) == str(full.value)
    assert fast.value.path == "b.txt" and fast.value.line == broken + 1



def test_computations_unchanged_in_both_runs_are_never_read_by_the_diff(monkeypatch):
    # Most computations of a big dump are the same in both runs: not making
    # their instructions is what the pass saves, so the aligner and the
    # differ must never ask for them.
    monkeypatch.setattr(unchanged, "MIN_BYTES", 0)
    modules: list = []
    monkeypatch.setattr(unchanged, "parse_pair", _keeping(modules, unchanged.parse_pair))
    report = compare(CORPUS / "jax_learning_rate" / "run_a", CORPUS / "jax_learning_rate" / "run_b")
    assert report.same_executable is False
    untouched = [(module, c) for module in modules for c in module.computations
                 if isinstance(c, UnchangedComputation) and "instructions" not in vars(c)]
    assert len(untouched) >= 10
    # Asked for, they are what the full parser makes of their lines.
    for module, computation in untouched:
        twin = parse_file(module.path).computation(computation.name)
        assert [i.whole for i in computation.instructions] == list(twin.instructions)
        assert (computation.is_entry, computation.line, computation.execution_thread) == \
            (twin.is_entry, twin.line, twin.execution_thread)


def _keeping(modules: list, original):
    """parse_pair, remembering the modules it made."""
    def parse_pair(*args, **kwargs):
        a, b, seed = original(*args, **kwargs)
        modules.extend((a, b))
        return a, b, seed
    return parse_pair


VALID = sorted((CORPUS / "xla-conformance" / "valid").glob("*.hlo"))


@pytest.mark.parametrize("path", VALID, ids=[p.stem for p in VALID])
def test_skipped_text_reads_as_the_full_parser_reads_it(path):
    # Two identical runs: the pass skips every computation it can outline, in
    # every layout XLA's own parser tests print (execution threads, comments,
    # odd spacing, ENTRY anywhere). Read back, nothing may differ.
    text = path.read_text()
    full = parse(text)
    fast, _, _ = unchanged.parse_pair(text, text, min_bytes=0)
    assert _shown(fast) == _shown(full)
    assert (fast.name, fast.header, fast.frames, fast.entry.name) == \
        (full.name, full.header, full.frames, full.entry.name)


def _shown(module):
    """Everything of a module's computations a report can show, read whole."""
    return [(c.name, c.is_entry, c.execution_thread, c.line,
             [(i.whole if i.unchanged else i, i.line) for i in c.instructions])
            for c in module.computations]
