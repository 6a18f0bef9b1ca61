"""The text report as people read it: at 80 and 120 columns, piped and in a terminal.

Lines fit the page; an op_name or a ``file:line`` is never split across
lines (it is shortened in the middle instead); the footer says truly what
the table left out; no placeholder (``None``, ``module_?``) shows; the
stages are named with the same words everywhere.
"""

from __future__ import annotations

import io
import re
from dataclasses import replace

import pytest

from conftest import CORPUS, run_cli
from hlodiff.analysis.compare import compare
from hlodiff.render import text as render_text
from hlodiff.render.report import STAGE_WORDS, markdown
from test_hostile_output import OWN_ESCAPE, run_in_terminal

# A constant with a source line, TF's long names, many findings, module-level
# findings with no place, torch's parameters, notes about other modules.
CASES = ("jax_learning_rate", "jax_dtype", "jax_donation", "jax_batch_size", "tf_dtype",
         "torch_special_scalar", "tf_extra_compilations")
WIDTHS = (80, 120)


@pytest.fixture(scope="module")
def reports():
    return {case: compare(CORPUS / case / "run_a", CORPUS / case / "run_b") for case in CASES}


def shown(report, width: int, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    stream = io.StringIO()
    render_text.report(report, stream)
    return stream.getvalue()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", CASES)
def test_every_line_fits_the_page(reports, case, width, monkeypatch):
    lines = shown(reports[case], width, monkeypatch).splitlines()
    assert lines and all(len(line) <= width for line in lines), \
        [line for line in lines if len(line) > width]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", CASES)
def test_op_names_and_source_lines_are_never_split(reports, case, width, monkeypatch):
    """Each origin in the table is on one line, whole or shortened to its last
    scope components; each file:line whole or shortened to its file name."""
    words = shown(reports[case], width, monkeypatch).split()
    for finding in [f for f in reports[case].findings if f.moves_a_hash][:15]:
        for name in filter(None, (finding.origin.op_name, finding.origin.location)):
            assert any(word == name or word.startswith("…/") and name.endswith(word[1:])
                       for word in words), name


@pytest.mark.parametrize("case", CASES)
def test_the_footer_counts_what_the_table_leaves_out(reports, case, monkeypatch):
    report = reports[case]
    text = shown(report, 120, monkeypatch)
    moving = [f for f in report.findings if f.moves_a_hash]
    quiet = [f for f in report.findings if not f.moves_a_hash and f.kind != "elided_constant"
             ]
    hidden_moving = max(len(moving) - 15, 0)
    footer = " ".join(line for line in text.splitlines() if line.startswith("... and ") or
                      "--format json lists them all" in line)
    if not hidden_moving and not (quiet and moving):
        assert footer == ""
        return
    assert f"... and {hidden_moving + (len(quiet) if moving else 0)} more finding" in footer
    if hidden_moving:
        assert f"{hidden_moving} that move a cache key" in footer
    if quiet and moving:
        kinds = {f.kind for f in quiet}
        assert f"{len(quiet)} that move no cache key (" in footer
        assert all(kind in footer for kind in kinds)


def test_the_footer_never_calls_hidden_key_movers_metadata(reports, monkeypatch):
    """20 findings move keys; 15 fit the table. The rest are said to move keys."""
    report = reports["jax_dtype"]
    moving = [f for f in report.findings if f.moves_a_hash]
    many = replace(report, findings=tuple(replace(moving[0], count=n) for n in range(1, 21)))
    text = " ".join(shown(many, 120, monkeypatch).split())
    assert "5 that move a cache key" in text


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("case", CASES)
def test_no_placeholder_shows(reports, case, width, monkeypatch):
    text = shown(reports[case], width, monkeypatch)
    for placeholder in ("None", "module_?", "/None", " at /", "e.g.  ->"):
        assert placeholder not in text, placeholder


def test_no_placeholder_shows_in_markdown(reports):
    assert "`None`" not in markdown(reports["jax_batch_size"])


@pytest.mark.parametrize("case", CASES)
def test_stages_have_the_same_words_in_text_and_markdown(reports, case, monkeypatch):
    report = reports[case]
    words = {STAGE_WORDS[f.stage] for f in report.findings}
    assert words <= {"before", "after", "both"}
    rows = [line.split(" | ") for line in markdown(report).splitlines() if re.match(r"\| \d+ \|", line)]
    assert {row[2] for row in rows} <= words
    text = shown(report, 120, monkeypatch)
    under_kinds = set(re.findall(r"^ +(before|after|both|unknown)\b", text, re.M))
    findings = list(report.findings)
    in_table = [f for f in findings if f.moves_a_hash] or findings
    assert under_kinds == {STAGE_WORDS[f.stage] for f in in_table[:15]}


def test_each_note_is_printed_once(reports, monkeypatch):
    report = reports["tf_extra_compilations"]
    note = "the runs used different persistent-cache paths"
    doubled = replace(report, notes=(note, note))
    text = " ".join(shown(doubled, 120, monkeypatch).split())
    assert text.count(f"note: {note}") == 1


def test_extra_compilations_have_their_own_section_not_rows_of_the_table(reports, monkeypatch):
    report = reports["tf_extra_compilations"]
    text = " ".join(shown(report, 80, monkeypatch).split())
    # TensorFlow's trace counter moved (its keys hold it), XLA produced the same programs
    assert text.startswith("Recompiles (a_inference_train_step")
    assert "but XLA produces the same executable; 2 extra compilations in one run." in text
    assert "extra compilations: run b alone compiled 2 modules: module_0000.a_inference_running_" \
           "mean_16…, module_0001.a_inference_outer_max_35…" in text
    assert "module_added" not in text and "extra compilation is itself" not in text
    comment = markdown(report)
    assert "module_added" not in comment and "Extra compilations: run b alone compiled " \
        "`module_0000.a_inference_running_mean_16…`, `module_0001.a_inference_outer_max_35…`." \
        in comment


def test_tf_module_names_are_cut_after_function_and_counter(reports, monkeypatch):
    text = shown(reports["tf_dtype"], 120, monkeypatch)
    assert "compared module_0154.a_inference_train_step_480… with " \
           "module_0154.a_inference_train_step_491… (paired by name)" in text
    assert "XlaMustCompile" not in text


def test_piped_output_follows_columns(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    assert render_text.page_width(io.StringIO()) == 100
    monkeypatch.delenv("COLUMNS")
    assert render_text.page_width(io.StringIO()) in (render_text.PIPED_WIDTH, _stderr_width())


def _stderr_width() -> int | None:
    """pytest may run with stderr on a terminal: piped stdout then takes its width."""
    import os
    import sys
    try:
        return os.get_terminal_size(sys.__stderr__.fileno()).columns
    except OSError:
        return None


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("command", [
    ["diff", str(CORPUS / "tf_dtype" / "run_a"), str(CORPUS / "tf_dtype" / "run_b")],
    ["ls", "--explain", str(CORPUS / "tf_dtype" / "run_a")],
    ["constants", str(CORPUS / "jax_learning_rate" / "run_a"),
     str(CORPUS / "jax_learning_rate" / "run_b")],
    ["log", str(CORPUS / "logs" / "jax.log")],
], ids=["diff", "ls --explain", "constants", "log"])
def test_a_terminal_gets_lines_as_wide_as_itself(command, width):
    output = OWN_ESCAPE.sub(b"", run_in_terminal(command, {}, columns=width)).decode()
    lines = output.splitlines()
    # a line that ends in a file path keeps it whole, for copying: the terminal wraps it
    long = [line for line in lines if len(line) > width]
    assert all("/" in line.split()[-1] for line in long), long


def test_a_terminal_that_reports_no_width_gets_the_piped_width():
    # script(1) and some CI runners give a terminal of 0 x 0: the layout was
    # the narrowest (40 columns, headers cut to "ki…"), not the 160 the
    # README promises (a new user's session).
    command = ["diff", str(CORPUS / "jax_learning_rate" / "run_a"),
               str(CORPUS / "jax_learning_rate" / "run_b")]
    output = OWN_ESCAPE.sub(b"", run_in_terminal(command, {}, columns=0)).decode()
    lines = output.splitlines()
    assert max(map(len, lines)) > 80 and max(map(len, lines)) <= render_text.PIPED_WIDTH
    assert "kind" in output and "count" in output


# Every command as a user at a terminal of 80 (or 60) columns meets it: the
# cases with TensorFlow's long names, many findings, torch's programs, a log
# with the framework's long lines, a log explained from its dump.
def _runs(case: str) -> list[str]:
    return [str(CORPUS / case / "run_a"), str(CORPUS / case / "run_b")]


LOGS = CORPUS / "logs"
COMMANDS = {
    "diff tf_loop_trip_count": ["diff", *_runs("tf_loop_trip_count")],
    "diff bench_model_change": ["diff", *_runs("bench_model_change")],
    "diff tf_keras_uneven_batches": ["diff", *_runs("tf_keras_uneven_batches")],
    "diff jax_version_upgrade": ["diff", *_runs("jax_version_upgrade")],
    "diff torch_extra_compilations": ["diff", *_runs("torch_extra_compilations")],
    "diff torch_hlo_debug": ["diff", *_runs("torch_hlo_debug")],
    "constants tf_keras_batch_size": ["constants", _runs("tf_keras_batch_size")[0]],
    "constants jax_learning_rate a b": ["constants", *_runs("jax_learning_rate")],
    "ls --explain": ["ls", "--explain", _runs("tf_keras_batch_size")[0]],
    "recompiles tf_recompile_new_shape": ["recompiles",
                                          str(CORPUS / "tf_recompile_new_shape" / "run")],
    "log graphcore": ["log", str(LOGS / "graphcore_published_format.log")],
    "log torch": ["log", str(LOGS / "torch_debug_level1.log")],
    "log tf_default_logging": ["log", str(LOGS / "tf_default_logging.log")],
    "log --dump": ["log", str(LOGS / "jax_explain_cache_misses.log"),
                   "--dump", str(LOGS / "jax_explain_cache_misses_dump")],
    "git-setup": ["git-setup"],
}
# a word cut at its end ("broadcas…"); TensorFlow's names cut after their
# counter (a_inference_step_480…) are not, nor a name shortened in its middle
def _cut_words(line: str) -> list[str]:
    return [word for word in (w.rstrip(",);.") for w in line.split())
            if len(word) > 1 and word.endswith("…") and "…" not in word[:-1]
            and not re.search(r"_\d+…$", word)]


@pytest.mark.parametrize("command", COMMANDS)
def test_every_command_fits_80_and_60_columns_and_cuts_no_word(command, monkeypatch):
    """No line wider than the page but one word too long for any line (a
    path, a URL, a key from a log), kept whole to be copied; no word of a
    value, a name or a sentence cut at its end or split across lines."""
    for width in (80, 60):
        monkeypatch.setenv("COLUMNS", str(width))
        lines = run_cli(*COMMANDS[command], expect=None).stdout.splitlines()
        assert lines
        wide = [line for line in lines if len(line) > width and len(line.split()) > 1]
        assert not wide, (width, wide)
        cut = [line for line in lines if _cut_words(line)]
        assert not cut, (width, cut)
        # a sentence's full stop wrapped away from the name it ends
        assert not [line for line in lines if line.strip() in (".", ")", ").", ",")]


def test_a_long_name_from_a_log_is_not_split_and_its_block_keeps_its_indent(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    text = run_cli(*COMMANDS["log graphcore"], expect=1).stdout
    # the cluster's name was folded into "...__XlaNu" and "mResourceArgs_2_"
    assert "cluster_5007650843385306307… compilation #2" in text
    text = run_cli(*COMMANDS["log --dump"], expect=1).stdout
    lines = text.splitlines()
    said = next(n for n, line in enumerate(lines) if line.startswith("  the dump says: #2 x"))
    # its continuation stays inside the indented block (it went to column 0)
    assert lines[said + 1] == "    corpus/logs/jax_explain_cache_misses.py:48"


@pytest.mark.parametrize("over", [1, 3])
def test_a_path_too_long_for_the_page_is_kept_whole_with_its_line_number(
        over, tmp_path, monkeypatch):
    """A log's path one to three characters wider than the page, as a clone
    in a deep folder makes it: rich cut "(…/jax.log:4" from ")" and ":1"
    from "4)", so the location could not be copied (CI found it, where the
    corpus lay deeper than on the machine that wrote the test)."""
    import shutil
    name = "jax_explain_cache_misses"
    ran = 0
    for width in (60, 80, 100, 120):
        # "(" + folder + "/" + log name + ":14)" is one word of width + over characters
        pad = width + over - len(f"({tmp_path}/{width}//{name}.log:14)")
        if pad < 1:
            continue
        folder = tmp_path / str(width) / ("d" * pad)
        folder.mkdir(parents=True)
        log = shutil.copy(LOGS / f"{name}.log", folder)
        shutil.copytree(LOGS / f"{name}_dump", folder / f"{name}_dump")
        monkeypatch.setenv("COLUMNS", str(width))
        lines = run_cli("log", log, "--dump", str(folder / f"{name}_dump"), expect=1
                        ).stdout.splitlines()
        assert f"  ({log}:14)" in lines, (width, lines[:20])
        assert not [line for line in lines if line.strip() in (".", ")", ").", ",")]
        ran += 1
    assert ran


def test_the_programs_alike_are_named_eight_at_most_above_the_findings(monkeypatch):
    """An op-by-op run (Keras with jit_compile=False) has dozens of programs
    alike; all 91 were named, 25 lines above the findings. Eight are."""
    monkeypatch.setenv("COLUMNS", "100")
    lines = run_cli("diff", *_runs("jax_equinox_hyperparameter"), expect=1).stdout.splitlines()
    start = next(n for n, line in enumerate(lines) if "other programs are the same" in line)
    said = " ".join(lines[start:start + 4])
    assert said.startswith("19 other programs are the same in both runs: ")
    assert "and 11 more (--format json lists every pairing)" in said
    listed = said.split(": ", 1)[1].split(" and 11 more")[0]
    assert len(listed.split(", ")) == 8
    assert lines.index(next(line for line in lines if line.startswith("#  kind"))) - start <= 4


def test_one_program_past_the_first_pairings_gets_its_own_line(monkeypatch):
    """jax_enable_x64 moves four programs: the fourth read "compared 1 more
    programs that differ: jit_init", as long as the line naming its pair."""
    monkeypatch.setenv("COLUMNS", "100")
    lines = run_cli("diff", *_runs("jax_enable_x64"), expect=1).stdout.splitlines()
    assert "compared module_0006.jit_init with module_0006.jit_init (paired by name)" in lines
    assert not [line for line in lines if "more programs" in line]
    assert "1 other program is the same in both runs: jit_init_fn" in lines
