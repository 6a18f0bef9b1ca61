"""The parser and typed model on real dumps and on the forms a user will meet."""

from __future__ import annotations

import math
import re
import random
import struct

import pytest

import hlodiff
from conftest import CORPUS
from hlodiff.syntax.lexer import MAX_NESTING, ScanError, balanced_end


def _main_before(case: str) -> hlodiff.Module:
    path = next((CORPUS / case / "run_a").glob("*jit_train_step.before_optimizations.txt"))
    return hlodiff.parse_file(path)


def test_jax_stack_frames_resolve_to_the_users_call_chain():
    """JAX 0.10 prints each parent_frame_id as the parent's id + 1 (1: none)."""
    module = _main_before("jax_learning_rate")
    mul = next(i for _, i in module.instructions()
               if "adam_update/mul" in (i.metadata.get("op_name") or ""))
    stack = module.origin(mul).stack
    functions = [frame.function for frame in stack]
    assert functions[-1] == "<module>"  # the outermost frame has no parent
    assert "run.<locals>.adam_update" in functions
    assert functions.index("run.<locals>.adam_update") > 0  # the lambda inside it is innermost
    assert all(frame.file == "corpus/gen/jax_cases.py" for frame in stack)
    origin = module.origin(mul)
    assert (origin.source_file, origin.source_line) == (stack[0].file, stack[0].line)


def test_unknown_attributes_are_kept_not_rejected():
    text = ("ENTRY e {\n  p = f32[2]{0} parameter(0)\n  ROOT c = f32[2]{0} add(p, p), "
            "new_thing={a=[1,2] b:(x) 'q'}, flag=true\n}")
    root = hlodiff.parse(text, strict=True).entry.root
    assert root.attribute("new_thing").text == "{a=[1,2] b:(x) 'q'}"
    assert root.attribute("flag").value == "true"


def test_literal_text_is_exact_and_values_are_what_xla_stores():
    module = hlodiff.parse("ENTRY e {\n  ROOT c = f32[2,2]{1,0} constant({ {1e-05, -inf}, "
                           "{nan, 0.1} })\n}")
    literal = module.entry.root.literal
    assert literal.elements == ("1e-05", "-inf", "nan", "0.1")
    f32 = struct.unpack("<f", struct.pack("<f", 1e-05))[0]  # the float XLA keeps, not the double
    assert literal.values[0] == f32 != 1e-05 and literal.values[1] == -math.inf
    assert math.isnan(literal.values[2])
    assert literal.bits[2] == 0x7FC00000  # f32's quiet NaN
    assert not literal.elided


def test_elided_literal_is_flagged():
    module = hlodiff.parse("ENTRY e {\n  ROOT c = f32[64,32]{1,0} constant({...})\n}")
    assert module.entry.root.literal.elided


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_crlf_and_cr_only_files_read_like_lf(newline):
    text = _main_before("jax_seed").path
    lf = open(text, encoding="utf-8").read()
    assert hlodiff.parse(lf.replace("\n", newline)) == hlodiff.parse(lf)


def test_syntax_error_names_line_and_column_with_a_caret():
    with pytest.raises(hlodiff.HloSyntaxError) as caught:
        hlodiff.parse("HloModule m\n\nENTRY e {\n  ROOT x = f32[] bogus-op(y)\n}\n", path="m.hlo")
    err = caught.value
    assert (err.path, err.line, err.column) == ("m.hlo", 4, 18)
    assert str(err).splitlines() == ['m.hlo:4:18: unknown opcode "bogus-op"',
                                     "    ROOT x = f32[] bogus-op(y)", "                   ^"]


def test_the_entry_layout_of_a_real_dump_reads_as_the_shape_grammar_reads_it():
    # Read element by element (it holds a shape per parameter): the result
    # must be the grammar's, /*index=5*/ markers and all.
    from hlodiff.syntax.grammars import lalr
    from hlodiff.syntax.values import _SHAPE_BUILDER, parse_shape
    path = CORPUS / "jax_learning_rate" / "run_a" / "module_0006.jit_train_step.cpu_after_optimizations.txt"
    layout = next(a for a in hlodiff.parse_file(path).header if a.name == "entry_computation_layout")
    parameters = layout.text[1:layout.text.rindex("->")].strip()
    assert "/*index=5*/" in parameters
    shape = parse_shape(parameters)
    assert shape == lalr("shape", transformer=_SHAPE_BUILDER).parse(parameters)
    assert len(shape.tuple_shapes) == parameters.count("[")  # one array shape per parameter


@pytest.mark.parametrize("bad, column", [
    ("(f32[2]{0}, f33[4]{0})", 52),  # an unknown element type: where it starts
    ("(f32[2]{0}, f32[4]{1,0})", 52),  # a layout with an entry too many: its shape
    ("(f32[2]{0},)", 51),  # a trailing comma: the ')' after it
])
def test_an_error_in_a_tuple_shape_points_into_the_element(bad, column):
    text = f"HloModule m, entry_computation_layout={{{bad}->f32[]}}\n\nENTRY e {{\n" \
           "  ROOT c = f32[] constant(0)\n}\n"
    with pytest.raises(hlodiff.HloSyntaxError) as caught:
        hlodiff.parse(text)
    assert (caught.value.line, caught.value.column) == (1, column)


def test_an_empty_computation_is_an_error_at_its_closing_brace():
    # XLA's parser: "4:1: error: expects name"; the body is scanned whole, so
    # the scanner, not the grammar, says so.
    with pytest.raises(hlodiff.HloSyntaxError) as caught:
        hlodiff.parse("HloModule m\n\nENTRY e {\n}\n", path="m.hlo")
    assert (caught.value.path, caught.value.line, caught.value.column) == ("m.hlo", 4, 1)
    assert "a computation needs at least one instruction" in str(caught.value)


def test_threads_parse_at_once_each_with_its_own_text():
    # Every parse has its own scanner, builder and reader: instructions read
    # lazily in one thread must come from that thread's text, never another's.
    from concurrent.futures import ThreadPoolExecutor

    from conftest import CORPUS
    paths = [next((CORPUS / case / "run_a").glob("*train_step.before_optimizations.txt"))
             for case in ("jax_learning_rate", "jax_seed", "jax_batch_size", "jax_dtype")]
    texts = [p.read_text() for p in paths]
    alone = [hlodiff.parse(t) for t in texts]

    def parse_and_read(index: int):
        module = hlodiff.parse(texts[index % len(texts)])
        literals = [i.literal.text for _, i in module.instructions() if i.opcode == "constant"]
        readers = {i.reader.text is texts[index % len(texts)] for _, i in module.instructions()}
        return index % len(texts), module, literals, readers

    with ThreadPoolExecutor(max_workers=8) as pool:
        for index, module, literals, readers in pool.map(parse_and_read, range(32)):
            assert readers == {True}
            assert module == alone[index]
            assert literals == [i.literal.text for _, i in alone[index].instructions()
                                if i.opcode == "constant"]


def test_operands_as_xla_prints_them_read_in_order():
    # XLA marks every fifth operand of a long list with /*index=N*/; the quick
    # reading of such lists must give the names the general reading gives.
    names = [f"p{k}" for k in range(12)]
    printed = ", ".join(("/*index=%d*/" % k if k and k % 5 == 0 else "") + "%" + name
                        for k, name in enumerate(names))
    parameters = "\n".join(f"  %{name} = f32[] parameter({k})" for k, name in enumerate(names))
    module = hlodiff.parse("HloModule m\n\nENTRY %e () -> (f32[]) {\n" + parameters +
                           f"\n  ROOT %t = ({', '.join(['f32[]'] * 12)}) tuple({printed})\n}}\n")
    assert module.entry.root.operands == tuple(names)
    typed = ", ".join(f"f32[] %{name}" for name in names)  # the old typed form: the general way
    module = hlodiff.parse("HloModule m\n\nENTRY %e () -> (f32[]) {\n" + parameters +
                           f"\n  ROOT %t = ({', '.join(['f32[]'] * 12)}) tuple({typed})\n}}\n")
    assert module.entry.root.operands == tuple(names)


def _group_end(text: str, pos: int) -> tuple:
    """Where the bracket group at ``pos`` ends, read one character at a time
    (strings and /* */ or // comments skipped whole), or the error, as
    (position, message)."""
    stack = [pos]
    i = pos + 1
    while i < len(text):
        c = text[i]
        if c in "([{":
            stack.append(i)
            if len(stack) > MAX_NESTING:
                return "error", i, f"brackets nest more than {MAX_NESTING} deep"
        elif c in ")]}":
            expected = {"(": ")", "[": "]", "{": "}"}[text[stack[-1]]]
            if c != expected:
                return "error", i, f"expected '{expected}' but found '{c}'"
            stack.pop()
            if not stack:
                return "end", i + 1
        elif c in "\"'":
            k = i + 1
            while k < len(text) and text[k] != c:
                k += 2 if text[k] == "\\" else 1
            if k >= len(text):
                return "error", i, "string is never closed"
            i = k
        elif text.startswith("/*", i):
            k = text.find("*/", i + 2)
            if k < 0:
                return "error", i, "comment is never closed"
            i = k + 1
        elif text.startswith("//", i):
            k = text.find("\n", i)
            i = (len(text) if k < 0 else k) - 1
        i += 1
    return "error", pos, f"'{text[pos]}' is never closed"


def _balanced_end(text: str, pos: int) -> tuple:
    try:
        return "end", balanced_end(text, pos)
    except ScanError as err:
        return "error", err.offset, err.message


def test_a_bracket_group_ends_where_reading_it_a_character_at_a_time_ends_it():
    # balanced_end steps over shallow groups in one regular expression match;
    # it must end every group, and reject every broken one, where the plain
    # reading does: on random text of brackets, strings and comments, and on
    # every group of the corpus's module headers (thousands each).
    rng = random.Random(2026)
    texts = ["".join(rng.choice("()[]{}\"'/*ab ,\n\\") for _ in range(rng.randint(1, 30)))
             for _ in range(20_000)]
    texts += ["(" * depth + ")" * depth for depth in range(MAX_NESTING - 2, MAX_NESTING + 3)]
    texts += [path.read_text().split("\n", 1)[0]
              for path in sorted(CORPUS.glob("jax_*/run_a/*.txt"))[:20]]
    starts = 0
    for text in texts:
        for pos, c in enumerate(text):
            if c in "([{":
                starts += 1
                assert _balanced_end(text, pos) == _group_end(text, pos), (text, pos)
    assert starts > 50_000


def _terminal_names() -> set[str]:
    """Lark's names for the terminals of the grammars (RSQB, METADATA_INT,
    __ANON_14, the coarse grammar's declared ones): never words for a user."""
    from hlodiff.syntax.parser import _WORDS
    from hlodiff.syntax.strict import full_grammar
    names = {t.name for t in full_grammar().terminals if t.name != t.pattern.value} | set(_WORDS)
    return {n for n in names if len(n) > 2}  # not 'ENTRY', 'ROOT': HLO's own words


def _broken_texts():
    """XLA's own invalid inputs, and a real dump cut short or missing a character."""
    for path in sorted((CORPUS / "xla-conformance" / "invalid").glob("*.hlo")):
        yield path.name, path.read_text()
    real = (CORPUS / "jax_learning_rate" / "run_a" /
            "module_0006.jit_train_step.before_optimizations.txt").read_text()
    chosen = random.Random(7)
    for n in range(10):
        at = chosen.randrange(100, len(real) - 1)
        yield f"cut at {at}", real[:at]
        yield f"missing {at}", real[:at] + real[at + 1:]


def test_a_syntax_error_says_what_was_expected_in_words_not_lark_names():
    # "unexpected 'parameter', expected an integer, QMARK, RSQB, __ANON_14"
    # (a new user's session): Lark's names for its terminals reached the user.
    names = _terminal_names()
    told = 0
    for name, text in _broken_texts():
        for strict in (False, True):
            try:
                hlodiff.parse(text, path="bad.hlo", strict=strict)
            except hlodiff.HloSyntaxError as err:
                unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", err.reason)
                assert not names & set(re.findall(r"\w+", unquoted)), (name, strict, err.reason)
                told += "expected" in err.reason
            except hlodiff.HlodiffError:
                pass
    assert told > 30


def test_a_shape_left_open_says_which_characters_would_close_it():
    text = "HloModule m\n\nENTRY main {\n  p = f32[ parameter(0)\n  ROOT r = f32[2] add(p, p)\n}\n"
    for strict in (False, True):
        with pytest.raises(hlodiff.HloSyntaxError) as caught:
            hlodiff.parse(text, path="bad.hlo", strict=strict)
        assert f"{caught.value.location}: {caught.value.reason}" == \
            "bad.hlo:4:12: unexpected 'parameter', expected an integer, '?', ']' or '<='"


def test_every_terminal_of_the_complete_grammar_has_words():
    """A terminal added to grammar/hlo_full.lark gets its words too: one
    without would be left out of 'expected ...'."""
    from hlodiff.syntax.parser import _terminal_words
    from hlodiff.syntax.strict import full_grammar
    words = _terminal_words()
    assert [t.name for t in full_grammar().terminals
            if t.name not in words and t.name not in ("WS", "COMMENT")] == []
