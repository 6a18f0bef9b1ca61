"""The unchanged pass (hlodiff/syntax/unchanged/) must change how fast a diff is,
never what it says, and never which files are accepted.

Real dumps are below the size where the pass switches on, so most of these
tests lower the threshold and compare each report with the one the full
parse and alignment give; the checks of unparsed lines are tested on files
padded past the real threshold.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from conftest import CORPUS, run_cli
from dump_trees import corpus_cases
from hlodiff.analysis.align import align
from hlodiff.analysis.compare import compare
from hlodiff.analysis.diff import diff_modules
from hlodiff.dumps import AFTER, BEFORE, load_dump
from hlodiff.errors import HloSyntaxError, Source
from hlodiff.model import UnchangedComputation, Unparsed
from hlodiff.render.report import report_document
from hlodiff.syntax import unchanged
from hlodiff.syntax.parser import parse, parse_file
from hlodiff.syntax.reader import TextReader
from hlodiff.syntax.unchanged import checks
from hlodiff.syntax.unchanged.frames import renumbered
from hlodiff.syntax.unchanged.outline import outline_of

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
        paired = seed.instruction_pairs(computation, computation)
        assert paired is None or instruction.name in paired.pairs.values()


def test_an_unparsed_instruction_reads_as_the_parser_reads_it():
    text_a, text_b = _texts("jax_learning_rate")
    fast, _, _ = unchanged.parse_pair(text_a, text_b, min_bytes=0)
    full = parse(text_a)
    checked, calling = 0, 0
    for computation, instruction in fast.instructions():
        if isinstance(instruction, Unparsed):
            twin = full.computation(computation.name).by_name[instruction.name]
            assert (instruction.opcode, instruction.operands) == (twin.opcode, twin.operands)
            # what it calls is known without reading the line when it calls nothing
            read_before = instruction._whole is not None
            assert instruction.called_computations == twin.called_computations
            if not twin.called_computations:
                assert (instruction._whole is not None) == read_before
            calling += bool(twin.called_computations)
            assert instruction.whole == twin
            assert instruction.metadata == twin.metadata and instruction.line == twin.line
            checked += 1
    assert checked > 100 and calling > 10


def test_heads_read_together_are_those_read_line_by_line():
    # Unparsed lines get their opcode and operands read a run at a time; a
    # line of an unusual form is left to be read alone. Either way the same.
    files = [CORPUS / case / "run_a" / MAIN for case in ("jax_learning_rate", "jax_op_added")]
    files += VALID
    lines_read = together = 0
    for path in files:
        text = path.read_text()
        outline = outline_of(text)
        if outline is None:
            continue
        reader = TextReader(Source(text, str(path)))
        for body in outline.bodies:
            lines, starts = body.lines(text)
            for head, start in zip(reader.heads(lines), starts):
                lines_read += 1
                if head is not None:
                    together += 1
                    assert head == reader.head(start), (path.name, text[start:start + 200])
    assert lines_read > 2000 and together > 0.9 * lines_read


def test_elided_constants_are_never_left_unparsed():
    text_a, text_b = _texts("jax_frozen_large")
    assert "{...}" in text_a
    a, b, _ = unchanged.parse_pair(text_a, text_b, min_bytes=0)
    for module, text in ((a, text_a), (b, text_b)):
        lines = text.split("\n")
        for _, instruction in module.instructions():
            if "{...}" in lines[instruction.line - 1]:
                assert not instruction.unchanged


def test_an_added_instruction_renumbers_the_rest_and_the_rest_is_still_skipped():
    # Adding an op renumbers what follows: names no longer say what pairs,
    # what each line holds does.
    text_a, text_b = _texts("jax_op_added")
    plan = unchanged.plan_pair(text_a, text_b)
    assert plan is not None
    assert len(plan.seed.identical) > 100
    a, b, _ = unchanged.parse_pair(text_a, text_b, min_bytes=0)
    added = [i for _, i in b.instructions() if i.opcode == "tanh" and "input_squash" in
             str(i.metadata.get("op_name"))]
    assert added and not any(i.unchanged for i in added)


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


# --- renumbered pairs ----------------------------------------------------------------------

_NUMBERED_NAME = r"{sigil}([A-Za-z_][\w\-]*(?:\.[A-Za-z_][\w\-]*)*)\.(\d+)(?![\w.\-])"
_FIRST_PARAMETER = r"^  {sigil}([\w.\-]+) = ([a-z][a-z0-9]*\[[^\]\n]*\](?:\{{[^}}\n]*\}})?) parameter\("


def renumbered_text(text: str) -> str:
    """``text`` as XLA prints it after one op more near the top of the entry:
    the op, and every numbered name after it one number higher. Names are
    printed with a ``%`` or, as JAX 0.4's XLA prints them, without."""
    sigil = "%" if "\n  %" in text else ""
    numbered = re.compile(_NUMBERED_NAME.format(sigil=sigil) if sigil
                          else r"(?<![\w.\-\"/])" + _NUMBERED_NAME.format(sigil=""))
    text = numbered.sub(lambda m: f"{sigil}{m.group(1)}.{int(m.group(2)) + 1}", text)
    entry = text.index("\nENTRY ")
    parameter = re.compile(_FIRST_PARAMETER.format(sigil=sigil), re.M).search(text, entry)
    line_end = text.index("\n", parameter.end())
    added = f"\n  {sigil}hlodiff_added.1 = {parameter.group(2)} copy({sigil}{parameter.group(1)})"
    return text[:line_end] + added + text[line_end:]


def _renumbered_case(case: str, destination: Path) -> tuple[Path, Path]:
    """run_a of ``case``, and its run_b with the main program renumbered."""
    run_b = destination / "run_b"
    shutil.copytree(CORPUS / case / "run_b", run_b)
    main = load_dump(run_b).main_program()
    for stage in (BEFORE, AFTER):
        found = main.stage_file(stage)
        if found is not None:
            path = run_b / found.relative
            path.write_text(renumbered_text(path.read_text()))
    return CORPUS / case / "run_a", run_b


@pytest.mark.parametrize("case", CASES)
def test_a_renumbered_pair_gets_the_report_of_the_full_path(case, tmp_path, monkeypatch):
    run_a, run_b = _renumbered_case(case, tmp_path)
    monkeypatch.setattr(unchanged, "MIN_BYTES", 10 ** 12)
    full = report_document(compare(run_a, run_b))
    monkeypatch.setattr(unchanged, "MIN_BYTES", 0)
    fast = report_document(compare(run_a, run_b))
    assert fast == full
    # the added copy is found: a finding of its own, or folded under the change
    # whose value it copies (a batch size reshapes the copy of x too)
    placed = any(place["b"] == "hlodiff_added.1" for f in fast["findings"] for place in f["places"])
    derived = [(d["kind"], d["new"]) for f in fast["findings"] for d in f["derived"]]
    assert placed or any(kind == "op_added" and "copy" in (new or "") for kind, new in derived)


def test_a_model_change_leaves_all_but_the_change_unparsed():
    # bench/make_big.py's pair: one op more in the middle layer renumbers
    # everything after it; the pass still skips nearly every line.
    text_a, text_b = _texts("bench_model_change", "module_0000.jit_train_step."
                            "cpu_after_optimizations.txt")
    a, b, seed = unchanged.parse_pair(text_a, text_b, min_bytes=0)
    lines = [i for _, i in b.instructions()]
    assert sum(i.unchanged for i in lines) > 0.9 * len(lines)
    added = [i for i in lines if "extra_scale" in str(i.metadata.get("op_name"))]
    assert added and not any(i.unchanged for i in added)
    renamed = [(x, y) for found in seed.lines.values() for x, y in found.pairs.items() if x != y]
    assert len(renamed) > 20  # paired across names


def test_what_reads_a_change_downstream_is_still_paired_unchanged():
    # Before optimization the added op feeds the rest of the forward pass and
    # all of the backward pass: every line after it reads it, through others.
    # Those lines are the same text but for names; only those reading the
    # changed lines themselves are parsed (see bench/README.md).
    name = "module_0000.jit_train_step.before_optimizations.txt"
    text_a, text_b = _texts("bench_model_change", name)
    _, b, _ = unchanged.parse_pair(text_a, text_b, min_bytes=0)
    lines = b.entry.instructions
    at = next(k for k, i in enumerate(lines) if "extra_scale" in str(i.metadata.get("op_name")))
    after = lines[at + 1:]
    assert len(after) > 0.5 * len(lines)
    assert sum(i.unchanged for i in after) > 0.9 * len(after)


def test_a_renumbered_pair_skips_what_holds_the_same():
    text_a, _ = _texts("jax_learning_rate")
    plan = unchanged.plan_pair(text_a, renumbered_text(text_a))
    assert plan is not None
    # every computation but the entry, under its new name; but those whose
    # control-predecessors name instructions (which the pass does not see
    # through), and those that call them
    left_out = set(re.findall(r"\n%([^ ]+) ", text_a)).difference(plan.seed.identical)
    assert 0 < len(left_out) < 5
    for name in left_out:
        body = text_a[text_a.index(f"\n%{name} "):]
        body = body[:body.index("\n}")]
        assert "control-predecessors=" in body or any(f"=%{other}," in body for other in left_out)
    assert all(b != a for a, b in plan.seed.identical.items() if re.search(r"\.\d+$", a))
    entry, lines = next(iter(plan.seed.lines.items()))
    assert entry.startswith("main") and lines.b.startswith("main")
    assert len(lines.pairs) > 10
    assert all(y != x for x, y in lines.pairs.items() if re.search(r"\.\d+$", x))


def test_stack_frames_renumbered_read_as_the_frames_they_are():
    preamble_a = ('HloModule m\n\nFileNames\n1 "f.py"\n\nFunctionNames\n1 "g"\n\n'
                  "FileLocations\n1 {file_name_id=1 function_name_id=1 line=3}\n"
                  "2 {file_name_id=1 function_name_id=1 line=9}\n\n"
                  "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n"
                  "2 {file_location_id=2 parent_frame_id=2}\n\n")
    # b has one frame more, first: its frame 2 is a's frame 1, its 3 a's 2.
    preamble_b = ('HloModule m\n\nFileNames\n1 "f.py"\n\nFunctionNames\n1 "g"\n\n'
                  "FileLocations\n1 {file_name_id=1 function_name_id=1 line=7}\n"
                  "2 {file_name_id=1 function_name_id=1 line=3}\n"
                  "3 {file_name_id=1 function_name_id=1 line=9}\n\n"
                  "StackFrames\n1 {file_location_id=1 parent_frame_id=1}\n"
                  "2 {file_location_id=2 parent_frame_id=1}\n"
                  "3 {file_location_id=3 parent_frame_id=3}\n\n")
    body = "x stack_frame_id=1} y stack_frame_id=2} z stack_frame_id=3} w stack_frame_id=12}"
    assert renumbered(preamble_b + body, preamble_a, preamble_b) == preamble_b + \
        "x stack_frame_id=x1} y stack_frame_id=1} z stack_frame_id=2} w stack_frame_id=x12}"


# --- what the parser would reject, padded past the threshold --------------------------------

def _padding(size: int) -> str:
    """Computations nothing calls, the same in both runs, ``size`` characters of them."""
    one = ("\n%hlodiff_pad.{k} (p.{k}: f32[4]) -> f32[4] {{\n  %hlodiff_p.{k} = f32[4]{{0}} "
           "parameter(0)\n  ROOT %hlodiff_n.{k} = f32[4]{{0}} negate(%hlodiff_p.{k}), "
           'metadata={{op_name="padding"}}\n}}\n')
    return "".join(one.format(k=k) for k in range(size // len(one.format(k=0)) + 1))


def _breaking(line: str, how: str) -> list[str]:
    """``line`` (``  %name = shape opcode(%operand...)...``) made wrong in one of the
    ways the parser rejects, as the lines to put in its place."""
    if how == "undefined operand":
        return [re.sub(r"\((%[\w.\-]+)", "(%hlodiff_nowhere", line, count=1)]
    if how == "unknown opcode":
        return [re.sub(r" ([a-z][a-z0-9\-]*)\(", " frobnicate(", line, count=1)]
    if how == "name defined twice":
        return [line, line]
    assert how == "brackets nested too deep"
    return [re.sub(r"\), ", ", metadata={" + "{" * 200 + "}" * 200 + "}), ", line, count=1)]


def _broken_pair(case: str, how: str, renumbering: bool, where: str) -> tuple[str, str, int]:
    """The main after_optimizations texts of ``case`` (run_b renumbered if
    asked), with the same line broken in both, in a computation equal in both
    runs (``where="computation"``) or in the entry; and its line number in a."""
    text_a, text_b = _texts(case)
    if renumbering:
        text_b = renumbered_text(text_b)
    plan = unchanged.plan_pair(text_a, text_b)
    if where == "computation":
        computation_a, computation_b = next((a, b) for a, b in plan.seed.identical.items()
                                            if not a.startswith("region"))
        place = next(k for k, (line, _) in enumerate(_lines_of(text_a, computation_a))
                     if "(%" in text_a.split("\n")[line])  # reads something
        target_a = _lines_of(text_a, computation_a)[place]
        target_b = _lines_of(text_b, computation_b)[place]
    else:
        entry_a, found = next(iter(plan.seed.lines.items()))
        entry_b, pairs = found.b, found.pairs
        lines_a = {n: k for k, n in _lines_of(text_a, entry_a)}
        name = next(x for x in pairs if "(%" in text_a.split("\n")[lines_a[x]])
        target_a = (lines_a[name], name)
        target_b = ({n: k for k, n in _lines_of(text_b, entry_b)}[pairs[name]], pairs[name])
    lines_a, lines_b = text_a.split("\n"), text_b.split("\n")
    lines_a[target_a[0]:target_a[0] + 1] = _breaking(lines_a[target_a[0]], how)
    lines_b[target_b[0]:target_b[0] + 1] = _breaking(lines_b[target_b[0]], how)
    return "\n".join(lines_a), "\n".join(lines_b), target_a[0] + 1


def _lines_of(text: str, computation: str) -> list[tuple[int, str]]:
    """(index, instruction name) of each line of ``computation``."""
    lines = text.split("\n")
    start = next(k for k, line in enumerate(lines)
                 if re.match(rf"(ENTRY )?%{re.escape(computation)} ", line))
    end = lines.index("}", start)
    return [(k, re.match(r"  (?:ROOT )?%([^ ]+) = ", lines[k]).group(1))
            for k in range(start + 1, end)]


def _error(tmp_path: Path, text_a: str, text_b: str, label: str) -> tuple[int, str]:
    """``hlodiff diff`` on the two texts: its exit code and error, less the path."""
    folder = tmp_path / label
    folder.mkdir()
    (folder / "a.hlo").write_text(text_a)
    (folder / "b.hlo").write_text(text_b)
    result = run_cli("diff", str(folder / "a.hlo"), str(folder / "b.hlo"), expect=None)
    return result.exit_code, result.stderr.replace(str(folder), "DIR")


BREAKAGES = ("undefined operand", "unknown opcode", "name defined twice",
             "brackets nested too deep")


@pytest.mark.parametrize("how", BREAKAGES)
@pytest.mark.parametrize("case, renumbering, where", [
    ("jax_learning_rate", False, "computation"),  # names stable: paired by name
    ("jax_learning_rate", False, "entry"),
    ("jax_learning_rate", True, "computation"),  # renumbered: paired by what they hold
    ("jax_learning_rate", True, "entry"),
])
def test_a_padded_file_is_rejected_as_the_small_file_is(tmp_path, how, case, renumbering, where):
    text_a, text_b, line = _broken_pair(case, how, renumbering, where)
    small = _error(tmp_path, text_a, text_b, "small")
    padding = _padding(unchanged.MIN_BYTES // 2)
    big = _error(tmp_path, text_a + padding, text_b + padding, "big")
    assert small[0] == big[0] == 2
    assert big[1] == small[1]
    assert f"DIR/a.hlo:{line + (how == 'name defined twice')}:" in big[1]


def test_a_name_defined_twice_is_an_error_at_the_second_definition(tmp_path):
    text = "HloModule m\n\nENTRY %e {\n  %a = f32[] parameter(0)\n  %a = f32[] negate(%a)\n" \
           "  ROOT %t = f32[] tanh(%a)\n}\n"
    code, error = _error(tmp_path, text, text, "twice")
    assert code == 2
    assert error.strip() == 'hlodiff: error: DIR/a.hlo:5:4: instruction "a" is defined twice ' \
                            "in computation e (first at line 4)"


@pytest.mark.parametrize("heard", ["what fails", "no answer"])
@pytest.mark.parametrize("where", ["computation", "entry"])
def test_what_was_skipped_on_faith_is_read_again_when_the_checks_say_no(heard, where, tmp_path):
    # Run a's checks, made by a worker on big dumps, are heard only once both
    # texts are parsed. When they fail what was skipped, or never come, the
    # texts are read again as if they had come first: the error is run a's
    # line, as for a small file, although run b's copy fails to parse first.
    text_a, text_b, line = _broken_pair("jax_learning_rate", "unknown opcode", False, where)
    padding = _padding(unchanged.MIN_BYTES // 2)
    text_a, text_b = text_a + padding, text_b + padding
    (tmp_path / "a.hlo").write_text(text_a)
    answer = checks.failing_computations(str(tmp_path / "a.hlo"))
    assert answer
    with pytest.raises(HloSyntaxError) as checked_here:
        unchanged.parse_pair(text_a, text_b, "a.hlo", "b.hlo")
    with pytest.raises(HloSyntaxError) as on_faith:
        unchanged.parse_pair(text_a, text_b, "a.hlo", "b.hlo",
                             failing_a=lambda: answer if heard == "what fails" else None)
    assert str(on_faith.value) == str(checked_here.value)
    assert f"a.hlo:{line}:" in str(on_faith.value)


def test_checks_made_elsewhere_are_waited_for_only_once_both_texts_are_parsed(monkeypatch):
    padding = _padding(unchanged.MIN_BYTES // 2)
    text_a, text_b = (text + padding for text in _texts("jax_learning_rate"))
    parsed = []
    real_parse = unchanged.parse
    monkeypatch.setattr(unchanged, "parse",
                        lambda *args, **kw: parsed.append(1) or real_parse(*args, **kw))
    asked = []
    a, b, seed = unchanged.parse_pair(text_a, text_b,
                                      failing_a=lambda: asked.append(len(parsed)) or frozenset())
    assert asked and asked[0] == 2  # heard after both parses, and trusted: no third
    assert len(parsed) == 2
    here_a, here_b, here_seed = unchanged.parse_pair(text_a, text_b)
    assert [(type(c), c.name) for m in (a, b) for c in m.computations] == \
        [(type(c), c.name) for m in (here_a, here_b) for c in m.computations]
    assert sum(isinstance(c, UnchangedComputation) for c in a.computations) > 1000
    assert diff_modules(a, b, align(a, b, seed)) == \
        diff_modules(here_a, here_b, align(here_a, here_b, here_seed))
