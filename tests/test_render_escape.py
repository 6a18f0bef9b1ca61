"""The escaping rule of each output format, and names shortened to a column, one by one."""

from __future__ import annotations

import doctest

import pytest

from hlodiff.render import escape, shorten
from hlodiff.render.escape import (annotation_data, annotation_property, hlo, markdown_code,
                                   markdown_text, terminal)

CONTROLS = [chr(c) for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))]
BIDI = ["\u061c", "\u200e", "\u200f", "\u2028", "\u2029", *map(chr, range(0x202A, 0x202F)),
        *map(chr, range(0x2066, 0x206A))]


def test_doctests_run():
    assert doctest.testmod(escape).failed == 0
    assert doctest.testmod(shorten).failed == 0


@pytest.mark.parametrize("char", CONTROLS + BIDI)
def test_terminal_shows_every_control_and_bidi_character_as_an_escape(char):
    shown = terminal(f"a{char}b")
    assert char not in shown and shown.startswith("a\\") and shown.endswith("b")


def test_terminal_leaves_printable_text_alone():
    text = "jit(f)/dense_1/été/中文/[1,0] -> {…} \\x1b as typed"
    assert terminal(text) == text


def test_terminal_shows_a_lone_surrogate_of_an_undecodable_file_name():
    assert terminal("model\udcff.hlo") == "model\\udcff.hlo"


def _render(markdown: str) -> str:
    from markdown_it import MarkdownIt
    return MarkdownIt("commonmark").enable("table").render(markdown)


@pytest.mark.parametrize("text", ["a`b", "``", "`x`", " a ", "<b>&amp;</b>", "[l](u) ![i](u)",
                                  "a\nb", "*em* _em_ # h"])
def test_a_markdown_code_span_shows_its_text_and_nothing_else(text):
    html = _render("x " + markdown_code(text) + " y")
    inner = html.split("<code>")[1].split("</code>")[0]
    expected = terminal(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    assert inner == expected
    assert html.count("<") == 4  # <p>, <code> and their ends: no other element


def test_a_pipe_in_a_table_cell_stays_in_its_cell():
    row = f"| {markdown_code('a|b', table=True)} | c |"
    html = _render("| x | y |\n|---|---|\n" + row + "\n")
    assert html.count("<td>") == 2


def test_markdown_text_starts_nothing():
    html = _render(markdown_text("# h\n- [l](http://e.vil) <script> &amp; *e* `c` | x"))
    assert html.startswith("<p>") and html.count("<") == 2


def test_annotation_encoding_keeps_one_command_per_line():
    assert annotation_data("50%\r\n::warning::x") == "50%25\\r\\n::warning::x"
    assert annotation_data("%0A") == "%250A"  # not decoded into a newline by the runner
    assert annotation_property("a:b,c") == "a%3Ab%2Cc"


def test_hlo_writes_raw_controls_in_strings_as_c_escapes_and_keeps_the_rest():
    text = 'ENTRY m {\n\t%x = f32[] constant(1), op_name="a\x1b[2J\nb\\n\\"c\x07"\n}\n'
    assert hlo(text) == 'ENTRY m {\n\t%x = f32[] constant(1), op_name="a\\033[2J\\nb\\n\\"c\\007"\n}\n'


def test_hlo_writes_a_backslash_before_a_raw_control_as_the_controls_escape():
    assert hlo('"a\\\x1b"') == '"a\\033"'


def test_hlo_writes_unicode_controls_as_their_utf8_bytes():
    assert hlo('"\u202e"') == '"\\342\\200\\256"'


def test_names_shortened_to_a_column_keep_their_end():
    assert shorten.op_name("a/b/c/d", 100) == "a/b/c/d"
    assert shorten.op_name("jit(f)/block_1/attention/softmax", 20) == "…/attention/softmax"
    assert shorten.op_name("a_very_long_single_component", 10) == "…component"
    assert shorten.location("src/models/deep/net.py:1234", 20) == "…/deep/net.py:1234"
    assert shorten.location("a_very_long_file_name.py:12", 10) == "…ame.py:12"
    assert all(len(shorten.middle("x" * 50, w)) == w for w in (1, 2, 10, 49))


def test_tf_program_names_keep_function_and_counter():
    name = ("a_inference_train_step_491__XlaMustCompile_true_config_proto_135613195898957579"
            "34_executor_type_11160318154034397263_.21")
    assert shorten.program(f"module_0154.{name}") == "module_0154.a_inference_train_step_491…"
    assert shorten.program(f"{name}/Cast.12") == "a_inference_train_step_491…/Cast.12"
    assert shorten.program("cluster_7__XlaCompiledKernel_true__XlaNumConstantArgs_0.3") == \
        "cluster_7…"
    assert shorten.program("SyncTensorsGraph.502") == "SyncTensorsGraph.502"


def test_columns_share_what_is_left():
    assert shorten.fit([10, 50, 40], 60, 8) == [10, 25, 25]
    assert shorten.fit([10, 20], 60, 8) == [10, 20]
    assert shorten.fit([100, 100], 10, 8) == [8, 8]
