"""What hlodiff.compare returns shows itself where people look: print, the REPL,
IPython, a rich console. (The notebook's HTML is tests/test_notebook.py.)"""

from __future__ import annotations

import io

import pytest
from rich.console import Console

import hlodiff
from conftest import CORPUS, run_cli

CASE = CORPUS / "jax_learning_rate"


@pytest.fixture(scope="module")
def comparison():
    return hlodiff.compare(CASE / "run_a", CASE / "run_b")


def test_print_shows_what_hlodiff_diff_prints(comparison, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    printed = run_cli("diff", str(CASE / "run_a"), str(CASE / "run_b"), expect=1).stdout
    assert str(comparison) == printed


def test_the_comparison_reads_as_its_report(comparison):
    assert comparison.findings is comparison.report.findings
    assert (comparison.recompiles, comparison.same_executable) == (True, False)
    assert (comparison.top.old, comparison.top.new) == ("0.01", "0.02")
    assert comparison.a == str(CASE / "run_a")
    with pytest.raises(AttributeError):
        comparison.no_such_field


def test_the_repl_shows_the_verdict_in_one_line(comparison):
    shown = repr(comparison)
    assert "\n" not in shown
    assert shown.startswith(f"<hlodiff.Comparison of {CASE / 'run_a'} and {CASE / 'run_b'}: "
                            "Recompiles (jit_train_step")
    assert "constant 0.01 -> 0.02" in shown


def test_ipython_shows_the_whole_report(comparison, monkeypatch):
    from IPython.lib.pretty import pretty
    monkeypatch.setenv("COLUMNS", "100")
    assert pretty(comparison) == str(comparison).rstrip("\n")


def test_a_rich_console_draws_it_in_colour_at_its_own_width(comparison):
    out = io.StringIO()
    Console(file=out, width=72, force_terminal=True, color_system="standard").print(comparison)
    drawn = out.getvalue()
    assert "\x1b[" in drawn  # coloured
    plain = Console(file=io.StringIO(), width=72)
    plain.print(comparison)
    lines = plain.file.getvalue().splitlines()
    assert lines[0].startswith("Recompiles (jit_train_step)")
    assert max(len(line) for line in lines) <= 72
    assert any("0.01 -> 0.02" in line for line in lines)
