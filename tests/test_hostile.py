"""The bad-input matrix: every input a user can hand hlodiff by mistake gets
exit 2 and one line ``hlodiff: error: PATH[:LINE:COL]: what is wrong``, or
the right answer where the input is legal. Never a traceback, never a hang.

``ls`` lists what it can read and marks the rest unreadable (exit 0), so for
broken files it is checked for that instead of exit 2.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import run_cli
from hostile import assert_error, copy_case, error_of, main_file

SMALL = """HloModule m, entry_computation_layout={(f32[4]{0})->f32[4]{0}}

ENTRY main {
  p0 = f32[4]{0} parameter(0)
  c = f32[4]{0} constant({1, 2, 3, 4})
  ROOT r = f32[4]{0} add(p0, c)
}
"""


def write(path: Path, data: str | bytes) -> Path:
    if isinstance(data, str):
        data = data.encode()
    path.write_bytes(data)
    return path


@pytest.fixture
def good(tmp_path: Path) -> Path:
    return write(tmp_path / "good.txt", SMALL)


def assert_file_error(path: Path, good: Path, line: int | None = None, column: int | None = None,
                      what: str = "") -> None:
    """``constants`` and ``diff`` (either side) fail with the one line; ``ls`` marks it."""
    assert_error(error_of("constants", str(path)), path, line, column, what)
    assert_error(error_of("diff", str(path), str(good)), path, line, column, what)
    assert_error(error_of("diff", str(good), str(path)), path, line, column, what)
    listing = run_cli("ls", str(path), expect=2)  # listed, with its error, and exit 2
    assert "unreadable" in listing.stdout and "Traceback" not in listing.stdout + listing.stderr
    assert listing.stdout.count(str(path)) >= 1 and f"{path.name}: {path}" not in listing.stdout


# --- paths ------------------------------------------------------------------------------

def test_missing_path(tmp_path: Path, good: Path) -> None:
    missing = tmp_path / "nowhere"
    for args in (("constants", str(missing)), ("diff", str(missing), str(good)),
                 ("diff", str(good), str(missing)), ("ls", str(missing))):
        assert_error(error_of(*args), missing, what="no such file or directory")


def test_empty_directory(tmp_path: Path, good: Path) -> None:
    empty = tmp_path / "dump"
    empty.mkdir()
    for args in (("constants", str(empty)), ("diff", str(empty), str(good)), ("ls", str(empty))):
        assert_error(error_of(*args), empty, what="empty directory")


def test_directory_with_no_hlo(tmp_path: Path, good: Path) -> None:
    dump = tmp_path / "dump"
    dump.mkdir()
    write(dump / "notes.md", "not a dump\n")
    write(dump / "module_0001.jit_f.debug_options", "xla_cpu_enable_fast_math: false\n")
    for args in (("constants", str(dump)), ("diff", str(good), str(dump)), ("ls", str(dump))):
        assert_error(error_of(*args), dump, what="no HLO text")


# --- files that are not HLO text -----------------------------------------------------------

def test_empty_file(tmp_path: Path, good: Path) -> None:
    assert_file_error(write(tmp_path / "empty.txt", ""), good, 1, 1, "the input is empty")


def test_only_white_space_and_comments(tmp_path: Path, good: Path) -> None:
    path = write(tmp_path / "blank.txt", "\n  // nothing\n/* here */\n")
    assert_file_error(path, good, 4, 1, "the input is empty")


def test_binary_file(tmp_path: Path, good: Path) -> None:
    path = write(tmp_path / "module_0001.jit_f.before_optimizations.txt",
                 b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)))
    assert_file_error(path, good, what="binary file")


def test_non_utf8_byte_has_its_line_and_column(tmp_path: Path, good: Path) -> None:
    text = SMALL.replace("c = f32[4]{0}", "c\u00e9\u00e9 = f32[4]{0}").encode()
    at = text.index("\u00e9\u00e9".encode()) + 4
    path = write(tmp_path / "latin1.txt", text[:at] + b"\xff" + text[at:])
    # column in characters: "  c" + two two-byte letters, then the bad byte
    assert_file_error(path, good, 5, 6, "byte 0xff is not UTF-8")


def test_a_nul_byte_past_the_binary_sniff_is_an_error_at_its_place(tmp_path: Path,
                                                                      good: Path) -> None:
    # A NUL in an op_name, 8 kB in: XLA reads no such text; hlodiff read two
    # copies as "Same executable" (a helper session's run), never reading
    # the metadata of a line the same in both.
    text = "\n" * 9000 + SMALL.replace("c = f32[4]{0} constant({1, 2, 3, 4})",
                                       'c = f32[4]{0} constant({1, 2, 3, 4}), '
                                       'metadata={op_name="x\0y"}')
    path = write(tmp_path / "nul.txt", text)
    assert_file_error(path, good, 9005, 61, "a NUL byte")
    copy = write(tmp_path / "nul2.txt", text)
    assert_error(error_of("diff", str(path), str(copy)), path, 9005, 61, "a NUL byte")


@pytest.mark.parametrize("signature, column, what", [
    ("(p: f32[4]) -> f32[4]", None, None),
    ("(p: q32[4]) -> f32[4]", 16, 'unknown element type "q32"'),
    ("(p: f32[4,x]) -> f32[4]", 22, "malformed shape"),
    ("(p@: f32[4]) -> f32[4]", 13, "expected name: shape"),
])
def test_a_computation_signature_is_read_as_xla_reads_it(tmp_path: Path, good: Path,
                                                          signature, column, what) -> None:
    # The parameters of a signature are kept nowhere, so a shape XLA rejects
    # there was never read: two such files were "Same executable" (a helper
    # session's run).
    text = SMALL.replace("ENTRY main {", f"ENTRY main {signature} {{")
    path = write(tmp_path / "signed.txt", text)
    if what is None:
        assert run_cli("diff", str(path), str(good), expect=0)
        return
    assert_file_error(path, good, 3, column, what)


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_non_utf8_line_counts_other_line_ends(tmp_path: Path, good: Path, newline: str) -> None:
    data = SMALL.replace("\n", newline).encode().replace(b"add(", b"add(\xc0")
    assert_file_error(write(tmp_path / "bad.txt", data), good, 6, 26, "byte 0xc0")


def test_mlir_given_as_hlo(tmp_path: Path, good: Path) -> None:
    case = copy_case("jax_learning_rate", tmp_path)
    mlir = next(case.glob("run_a/*/module.mlir"))
    assert_file_error(mlir, good, 1, 1, "this is MLIR")


def test_dot_file_given_as_hlo(tmp_path: Path, good: Path) -> None:
    dot = write(tmp_path / "module_0001.jit_f.before_optimizations.dot",
                'digraph G {\n  rankdir = TB;\n  n1 [label="add"];\n  n1 -> n2;\n}\n')
    assert_file_error(dot, good, 1, 1, "Graphviz .dot graph")


# --- HLO that is broken ---------------------------------------------------------------------

def test_file_cut_off_mid_instruction(tmp_path: Path, good: Path) -> None:
    case = copy_case("jax_learning_rate", tmp_path)
    text = main_file(case / "run_a").read_text()
    cut = text.index("(", text.index(" dot(")) + 3  # inside a dot's operand list
    path = write(tmp_path / "cut.txt", text[:cut])
    line = text.count("\n", 0, cut) + 1
    m = assert_error(error_of("constants", str(path)), path)
    assert m["line"] is not None and int(m["line"]) <= line
    assert_error(error_of("diff", str(path), str(main_file(case / "run_b"))), path)


@pytest.mark.parametrize("cut", ["ROOT r = f32[4]{0} add(p0, c)\n", "}\n"])
def test_file_cut_off_at_an_instruction_or_brace(tmp_path: Path, good: Path, cut: str) -> None:
    path = write(tmp_path / "cut.txt", SMALL[:SMALL.index(cut)])
    assert_file_error(path, good, what="never closed")


def test_header_with_no_computations(tmp_path: Path, good: Path) -> None:
    path = write(tmp_path / "header.txt", SMALL.split("\n\n")[0] + "\n")
    assert_file_error(path, good, 2, 1, "no computation")


def test_undefined_operand_is_an_error_at_its_place(tmp_path: Path, good: Path) -> None:
    path = write(tmp_path / "undefined.txt", SMALL.replace("add(p0, c)", "add(p0, cc)"))
    assert_file_error(path, good, 6, 30, 'operand "cc" is not defined')


def test_operand_used_before_its_definition(tmp_path: Path, good: Path) -> None:
    lines = SMALL.splitlines(keepends=True)
    swapped = "".join(lines[:4] + [lines[5], lines[4]] + lines[6:])
    path = write(tmp_path / "order.txt", swapped.replace("ROOT ", "").replace("  c =", "  ROOT c ="))
    assert_file_error(path, good, 5, 25, 'operand "c" is not defined')


def test_operand_from_another_computation_is_undefined(tmp_path: Path, good: Path) -> None:
    text = ("HloModule m\n\nadd_f32 {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
            "  ROOT s = f32[] add(x, y)\n}\n\nENTRY main {\n  p = f32[] parameter(0)\n"
            "  ROOT r = f32[] add(p, s)\n}\n")
    assert_file_error(write(tmp_path / "scope.txt", text), good, 11, 25, 'operand "s"')


# --- deep nesting: a clean error, never RecursionError or a hang ----------------------------

DEPTH = 100_000
NESTED = {
    "literal": ("  c = f32[4]{0} constant({1, 2, 3, 4})",
                "  c = f32[4]{0} constant(" + "{" * DEPTH + "1" + "}" * DEPTH + ")"),
    "unclosed literal": ("  c = f32[4]{0} constant({1, 2, 3, 4})",
                         "  c = f32[4]{0} constant(" + "{" * DEPTH),
    "attribute": ("add(p0, c)", "add(p0, c), frontend_attributes=" + "{" * DEPTH + "}" * DEPTH),
    "metadata": ("add(p0, c)", "add(p0, c), metadata=" + "{" * DEPTH + "}" * DEPTH),
    "tuple shape": ("  p0 = f32[4]{0} parameter(0)",
                    "  p0 = " + "(" * DEPTH + "f32[4]{0}" + ")" * DEPTH + " parameter(0)"),
    "operand": ("add(p0, c)", "add(" + "(" * DEPTH + "p0" + ")" * DEPTH + ", c)"),
    "header": ("HloModule m,", "HloModule m, x=" + "[" * DEPTH + "]" * DEPTH + ","),
}


@pytest.mark.parametrize("where", sorted(NESTED))
def test_100000_nested_brackets(tmp_path: Path, good: Path, where: str) -> None:
    old, new = NESTED[where]
    assert old in SMALL
    path = write(tmp_path / "nested.txt", SMALL.replace(old, new))
    for args in (("constants", str(path)), ("diff", str(path), str(good)),
                 ("diff", str(path), str(path), "--format", "json")):
        m = assert_error(error_of(*args), path)
        assert m["line"] is not None
    listing = run_cli("ls", str(path), expect=2)  # listed as unreadable: it nests too deep
    assert "Traceback" not in listing.stdout + listing.stderr


def test_nesting_up_to_the_limit_is_read(tmp_path: Path) -> None:
    """A rank-120 literal and 120 nested tuples stay well inside the limit and
    go through every command and renderer."""
    from hlodiff.syntax.lexer import MAX_NESTING
    depth = MAX_NESTING - 8
    dims = ",".join(["1"] * depth)
    for value in (1, 2):
        write(tmp_path / f"lit{value}.txt",
              f"HloModule lit\n\nENTRY e {{\n  ROOT c = f32[{dims}] constant("
              + "{" * depth + str(value) + "}" * depth + ")\n}\n")
        shape = "(" * depth + f"f32[{value}]" + ")" * depth
        write(tmp_path / f"tup{value}.txt", f"HloModule tup\n\nENTRY e {{\n  ROOT p = {shape} parameter(0)\n}}\n")
    for stem in ("lit", "tup"):
        a, b = str(tmp_path / f"{stem}1.txt"), str(tmp_path / f"{stem}2.txt")
        for fmt in ("text", "json", "markdown"):
            run_cli("diff", a, b, "--format", fmt, expect=1)
            run_cli("diff", a, a, "--format", fmt, expect=0)
        run_cli("constants", a, b, expect=1 if stem == "lit" else 0)
        run_cli("constants", a, "--format", "json")
        run_cli("ls", a)


# --- large and odd but legal ---------------------------------------------------------------

def constant_module(size: int, value: str) -> str:
    values = ", ".join([value] * size)
    return (f"HloModule big, entry_computation_layout={{(f32[{size}]{{0}})->f32[{size}]{{0}}}}\n\n"
            f"ENTRY main {{\n  p = f32[{size}]{{0}} parameter(0)\n"
            f"  c = f32[{size}]{{0}} constant({{{values}}}), metadata={{op_name=\"jit(f)/lr\"}}\n"
            f"  ROOT r = f32[{size}]{{0}} multiply(p, c)\n}}\n")


def check_large_constant(tmp_path: Path, size: int) -> None:
    a = write(tmp_path / "a.txt", constant_module(size, "0.125"))
    b = write(tmp_path / "b.txt", constant_module(size, "0.125").replace("0.125}", "0.25}"))
    run_cli("diff", str(a), str(a), expect=0)
    report = json.loads(run_cli("diff", str(a), str(b), "--format", "json", expect=1).stdout)
    assert [f["kind"] for f in report["findings"]] == ["constant"]
    assert report["same_executable"] is False
    listing = json.loads(run_cli("constants", str(a), "--format", "json").stdout)
    assert "0.125" in json.dumps(listing)
    run_cli("constants", str(a), str(b), expect=1)


def test_large_single_line_constant(tmp_path: Path) -> None:
    """2 MB on one line, in the default run: read at regex speed, not per element."""
    check_large_constant(tmp_path, 300_000)


@pytest.mark.slow
def test_100_mb_single_line_constant(tmp_path: Path) -> None:
    check_large_constant(tmp_path, 14_300_000)  # 7 bytes an element: 100 MB
    assert (tmp_path / "a.txt").stat().st_size > 100_000_000


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_crlf_and_cr_only_files_give_the_same_answer(tmp_path: Path, newline: str) -> None:
    case = copy_case("jax_learning_rate", tmp_path)
    for run in ("run_a", "run_b"):
        other = tmp_path / f"{run}_{len(newline)}"
        # the module folders too: without its module.mlir a program's JAX key
        # cannot be told unchanged
        shutil.copytree(case / run, other, ignore=shutil.ignore_patterns("*.txt"))
        for f in (case / run).glob("*.txt"):
            (other / f.name).write_bytes(f.read_bytes().replace(b"\n", newline.encode()))
    lf = run_cli("diff", str(case / "run_a"), str(case / "run_b"), "--format", "json", expect=1)
    odd = run_cli("diff", str(tmp_path / f"run_a_{len(newline)}"),
                  str(tmp_path / f"run_b_{len(newline)}"), "--format", "json", expect=1)

    def without_paths(document: str) -> dict:
        data = json.loads(document)
        data.pop("stages")  # the only place the run directories are named
        return data
    assert without_paths(odd.stdout) == without_paths(lf.stdout)
    for stem in ("run_a",):
        lf_constants = run_cli("constants", str(main_file(case / stem)), "--format", "json")
        odd_file = tmp_path / f"{stem}_{len(newline)}" / main_file(case / stem).name
        odd_constants = run_cli("constants", str(odd_file), "--format", "json")
        assert odd_constants.stdout.replace(str(odd_file), "F") == \
            lf_constants.stdout.replace(str(main_file(case / stem)), "F")


def test_symlink_loops_in_a_dump_directory(tmp_path: Path) -> None:
    case = copy_case("jax_learning_rate", tmp_path)
    before = run_cli("diff", str(case / "run_a"), str(case / "run_b"), "--format", "json",
                     expect=1).stdout
    listed = run_cli("ls", str(case / "run_a"), "--format", "json").stdout
    run = case / "run_a"
    os.symlink("..", run / "up")
    os.symlink("self", run / "self")  # points at itself
    (run / "sub").mkdir()
    os.symlink("../sub", run / "sub" / "again")
    after = run_cli("diff", str(run), str(case / "run_b"), "--format", "json", expect=1).stdout
    assert after == before
    assert run_cli("ls", str(run), "--format", "json").stdout == listed
    run_cli("constants", str(run))


def test_two_directories_with_no_module_in_common(tmp_path: Path) -> None:
    """Different programs: a training step is not compared with a graph that
    runs no backward pass (the largest of each run, for lack of better); it
    has no counterpart, and every module is an extra compilation."""
    jax = copy_case("jax_learning_rate", tmp_path) / "run_a"
    torch = copy_case("torch_seed", tmp_path) / "run_a"
    report = json.loads(run_cli("diff", str(jax), str(torch), "--format", "json", expect=1).stdout)
    assert report["same_executable"] is False and report["recompiles"] is None
    assert report["modules"] == []
    assert "jit_train_step, has no counterpart in run b" in report["warnings"][0]
    assert {e["run"] for e in report["extra_compilations"]} == {"a", "b"}
    run_cli("diff", str(jax), str(torch), expect=1)
    run_cli("constants", str(jax), str(torch), expect=1)


def test_text_from_the_dump_is_never_read_as_markup(tmp_path: Path) -> None:
    """Brackets in names, op_names, paths and error messages are shown as written."""
    op_name = "jit(f)/dot_general[dimension_numbers=(([1], [0]), ([], []))] [/x] [bold]"
    text = SMALL.replace("constant({1, 2, 3, 4})",
                         f'constant({{1, 2, 3, 4}}), metadata={{op_name="{op_name}" '
                         'source_file="a[/b].py" source_line=3}')
    dump = tmp_path / "dump"
    dump.mkdir()
    a = write(dump / "module_0001.jit_[red]f[bold].before_optimizations.txt", text)
    b = write(tmp_path / "b.txt", text.replace("{1, 2, 3, 4}", "{1, 2, 3, 5}"))
    write(dump / "module_0002.jit_g[x].before_optimizations.txt", "f32[/100]")
    for args in (("constants", str(a)), ("constants", str(a), str(b)), ("diff", str(a), str(b))):
        out = run_cli(*args, expect=None).stdout
        assert op_name in out and "a[/b].py:3" in out
    assert str(a) in run_cli("constants", str(a), str(b), expect=1).stdout
    listing = run_cli("ls", str(dump), expect=2).stdout  # jit_g cannot be read
    assert "[red]" in listing and "jit_g[x].before_optimizations.txt:1:" in listing


# --- sidecars ---------------------------------------------------------------------------

@pytest.mark.parametrize("damage", ["not hex", "wrong length"])
def test_a_damaged_module_mlir_leaves_the_elided_constant_undecided(tmp_path: Path, damage) -> None:
    # jax_int4_elided: the int4 table differs, and only module.mlir shows it
    case = copy_case("jax_int4_elided", tmp_path)
    mlir = next((case / "run_b").glob("*/module.mlir"))
    text = mlir.read_text()
    at = text.index('"0x') + 3
    mlir.write_text(text[:at] + ("Z" + text[at + 1:] if damage == "not hex" else "00" + text[at:]))
    result = run_cli("diff", str(case / "run_a"), str(case / "run_b"), "--format", "json",
                     expect=1)  # undecided: not the same executable as far as anyone can tell
    assert "Traceback" not in result.stdout + result.stderr
    report = json.loads(result.stdout)
    assert report["same_executable"] is None and report["recompiles"] is None
    assert "cannot be decoded" in report["findings"][0]["detail"]


def test_an_unreadable_main_program_is_an_error_not_another_main(tmp_path: Path) -> None:
    # The training step's file at mode 000: ls, constants and canon chose
    # jit_init_params instead (it "took no arguments"), and baseline recorded
    # it, exit 0 (a helper session's run, root's override dropped).
    run = copy_case("jax_learning_rate", tmp_path) / "run_a"
    locked = run / "module_0006.jit_train_step.before_optimizations.txt"
    locked.chmod(0)
    prefix = []
    if os.geteuid() == 0:  # root reads any file: drop that override for the command
        if shutil.which("setpriv") is None:
            pytest.skip("needs setpriv to run as root without the override")
        prefix = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    for args in (["baseline", str(run), "-o", str(tmp_path / "b.json")], ["canon", str(run)],
                 ["constants", str(run)], ["ls", str(run)],
                 # the file itself: click's four-line usage error said it was "not readable"
                 ["canon", str(locked)], ["constants", str(locked)], ["ls", str(locked)],
                 ["log", str(locked)]):
        done = subprocess.run([*prefix, sys.executable, "-m", "hlodiff", *args],
                              capture_output=True, text=True)
        assert (done.returncode, done.stderr) == \
            (2, f"hlodiff: error: {locked}: cannot read: Permission denied\n"), args
    assert not (tmp_path / "b.json").exists()
