"""Dumps made to attack whoever reads hlodiff's output, and what hlodiff writes for them.

A dump is written by someone else's code: op_names, source files, module and
file names and log lines can carry terminal escape sequences (retitle the
window, clear the screen, write the clipboard), newlines followed by lines
that look like output, Markdown and HTML, and GitHub workflow commands.
Every command is run as a user runs it, ``python -m hlodiff`` in a
subprocess, with stdout a pipe and again in a pseudo-terminal, and the
bytes it writes are checked: nothing from the input reaches the terminal
raw, one finding stays one Markdown row and one annotation, JSON keeps
every string exactly.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import struct
import subprocess
import sys
import termios
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import ROOT

TITLE = "\x1b]0;PWNED\x07"  # OSC 0: retitle the terminal window
CLEAR = "\x1b[2J"  # CSI 2 J: clear the screen
CLIPBOARD = "\x1b]52;c;cHduZWQ=\x07"  # OSC 52: write "pwned" to the clipboard
OP_NAME = ("lr" + TITLE + CLEAR + CLIPBOARD + "|`tick`<script>alert(1)</script>"
           "[link](https://e.vil)![img](https://e.vil/i.png)&amp;%0A"
           "\n## INJECTED\n::warning::pwned\u202egnp.exe\x9b31m")
SOURCE = "model" + TITLE + ",x:y|`\n## INJECTED.py"
PROGRAM = "jit_step" + TITLE + CLEAR  # in the dump's file names
UNKNOWN = "notes" + TITLE + "\n## INJECTED|x.md"
GIT_PATH = "model" + TITLE + CLEAR + ".hlo"

# What the terminal must never receive from the input.
RAW = (b"\x07", "\x9b".encode(), "\u202e".encode(), b"\x1b]", b"\x1b[2J")
# hlodiff's own colours: Select Graphic Rendition, nothing else.
OWN_ESCAPE = re.compile(rb"\x1b\[[0-9;]*m")


def visible(text: str) -> str:
    """``text`` as the terminal must show it, spelled out here independently."""
    for char, shown in (("\x1b", r"\x1b"), ("\x07", r"\x07"), ("\n", r"\n"),
                        ("\u202e", r"\u202e"), ("\x9b", r"\x9b")):
        text = text.replace(char, shown)
    return text


def c_string(text: str) -> str:
    """``text`` as a quoted HLO string, control characters as C octal escapes."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif char == "\n":
            out.append("\\n")
        elif ord(char) < 0x20 or 0x7f <= ord(char) < 0xa0:
            out.append(f"\\{ord(char):03o}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def c_unescape(text: str) -> str:
    """A quoted string's content as XLA's parser reads it (absl::CUnescape, on
    the UTF-8 bytes), written apart from hlodiff's own reader."""
    data, out, i = text.encode(), bytearray(), 0
    simple = {ord("n"): 10, ord("t"): 9, ord("r"): 13, ord("a"): 7, ord("b"): 8, ord("f"): 12,
              ord("v"): 11, ord("\\"): 92, ord("'"): 39, ord('"'): 34, ord("?"): 63}
    while i < len(data):
        if data[i] != 0x5C:
            out.append(data[i])
            i += 1
            continue
        i += 1
        if chr(data[i]) in "01234567":
            digits = re.match(rb"[0-7]{1,3}", data[i:]).group()
            out.append(int(digits, 8))
            i += len(digits)
        elif data[i] == ord("x"):
            digits = re.match(rb"[0-9a-fA-F]+", data[i + 1:]).group()
            out.append(int(digits, 16))
            i += 1 + len(digits)
        else:
            out.append(simple[data[i]])
            i += 1
    return out.decode()


def module_text(rate: str) -> str:
    """A JAX-like train step whose learning rate carries hostile metadata;
    a frontend attribute holds raw control characters, as no XLA writes them."""
    metadata = f"metadata={{op_name={c_string(OP_NAME)} source_file={c_string(SOURCE)} source_line=7}}"
    return (
        "HloModule jit_step, entry_computation_layout={(f32[4]{0})->f32[4]{0}}\n\n"
        "ENTRY main.5 {\n"
        "  p0 = f32[4]{0} parameter(0)\n"
        f"  c = f32[] constant({rate})\n"
        f"  b = f32[4]{{0}} broadcast(c), dimensions={{}}, {metadata}\n"
        f"  ROOT r = f32[4]{{0}} multiply(p0, b), {metadata}, "
        f'frontend_attributes={{note="raw{TITLE}{CLEAR}"}}\n'
        "}\n")


@dataclass(frozen=True)
class Hostile:
    a: Path
    b: Path
    a_file: Path
    b_file: Path
    log: Path
    baseline: Path
    bad: Path


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Hostile:
    root = tmp_path_factory.mktemp("hostile")
    runs = []
    for run, rate in (("run_a", "0.01"), ("run_b", "0.02")):
        folder = root / run
        folder.mkdir()
        main = folder / f"module_0001.{PROGRAM}.before_optimizations.txt"
        main.write_text(module_text(rate))
        (folder / UNKNOWN).write_text("not HLO\n")
        runs.append((folder, main))
    log = root / "compile.log"
    # step is compiled twice: the second time JAX says why, with text from the input
    log.write_text(
        f"TRACING CACHE MISS at {SOURCE.splitlines()[0]}:7 (<module>):\n"
        f"  never seen function:\n    step id=1 defined at model.py:3\n"
        f"Compiling jit(step) with global shapes and types (ShapedArray(float32[4]),).\n"
        f"TRACING CACHE MISS at {SOURCE.splitlines()[0]}:8 (<module>):\n"
        f"  for step defined at model.py:3\n"
        f"  all previously seen cache keys differ. For the closest previous key:\n"
        f"  different input types:\n  * at x{CLEAR}{TITLE}, now f32[8] and before f32[4]\n"
        f"Compiling jit(step) with global shapes and types (ShapedArray(float32[8]),).\n")
    bad = root / f"broken{TITLE}.txt"
    bad.write_text(f"HloModule m\n\nENTRY main {{\n  ROOT r = f32[4]{{0}} add({CLEAR}x)\n}}\n")
    baseline = root / "baseline.json"
    subprocess.run([sys.executable, "-m", "hlodiff", "baseline", str(runs[0][0]), "-o",
                    str(baseline)], check=True, capture_output=True, cwd=ROOT)
    return Hostile(runs[0][0], runs[1][0], runs[0][1], runs[1][1], log, baseline, bad)


# Every command that prints something of the dump, as (arguments, extra environment).
COMMANDS = {
    "diff": lambda h: (["diff", str(h.a), str(h.b)], {}),
    "diff --format markdown": lambda h: (["diff", "--format", "markdown", str(h.a), str(h.b)], {}),
    "diff under git": lambda h: (["diff", GIT_PATH, str(h.a_file), "1a", "100644", str(h.b_file),
                                  "2b", "100644"], {"GIT_DIFF_PATH_COUNTER": "1"}),
    "git: file added": lambda h: (["diff", GIT_PATH, "/dev/null", "0", "0", str(h.b_file), "2b",
                                   "100644"], {"GIT_DIFF_PATH_COUNTER": "1"}),
    "check": lambda h: (["check", "--baseline", str(h.baseline), str(h.b)], {}),
    "check --format github": lambda h: (["check", "--baseline", str(h.baseline), str(h.b),
                                         "--format", "github"], {}),
    "check --format markdown": lambda h: (["check", "--baseline", str(h.baseline), str(h.b),
                                           "--format", "markdown"], {}),
    "ls --explain": lambda h: (["ls", "--explain", str(h.a)], {}),
    "constants": lambda h: (["constants", str(h.a)], {}),
    "constants across runs": lambda h: (["constants", str(h.a), str(h.b)], {}),
    "canon --metadata": lambda h: (["canon", "--metadata", str(h.a_file)], {}),
    "canon": lambda h: (["canon", str(h.a_file)], {}),
    "log": lambda h: (["log", str(h.log)], {}),
    "error quoting a file and a line": lambda h: (["constants", str(h.bad)], {}),
}


def run_piped(args: list[str], env: dict[str, str], columns: int = 100) -> bytes:
    """stdout and stderr of ``hlodiff ARGS``, both pipes, as bytes."""
    done = subprocess.run([sys.executable, "-m", "hlodiff", *args], capture_output=True, cwd=ROOT,
                          env={**os.environ, "COLUMNS": str(columns), **env})
    assert done.returncode in (0, 1, 2), done.stderr
    assert b"Traceback" not in done.stderr, done.stderr.decode()
    return done.stdout + done.stderr


def run_in_terminal(args: list[str], env: dict[str, str], columns: int = 80) -> bytes:
    """What a terminal receives from ``hlodiff ARGS`` run in it (an xterm of
    ``columns`` columns, colours on): stdout and stderr, as bytes."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "NO_COLOR")}
    process = subprocess.Popen([sys.executable, "-m", "hlodiff", *args], cwd=ROOT,
                               stdin=slave, stdout=slave, stderr=slave,
                               env={**environment, "TERM": "xterm-256color", **env})
    os.close(slave)
    received = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the process closed the terminal
            break
        if not chunk:
            break
        received += chunk
    os.close(master)
    assert process.wait(timeout=120) in (0, 1, 2)
    assert b"Traceback" not in received, received.decode(errors="replace")
    return bytes(received).replace(b"\r\n", b"\n")


def assert_inert(output: bytes) -> None:
    """No escape sequence, BEL, C1 control or bidi override of the input, and
    no line of the input's own: every ESC starts one of hlodiff's colours."""
    for raw in RAW:
        assert raw not in output, (raw, output.decode(errors="replace"))
    assert b"\x1b" not in OWN_ESCAPE.sub(b"", output), output.decode(errors="replace")
    for line in OWN_ESCAPE.sub(b"", output).decode().splitlines():
        assert not line.lstrip(" │|>").startswith(("## INJECTED", "::warning::")), line


@pytest.mark.parametrize("command", COMMANDS)
def test_piped_output_shows_the_inputs_control_characters_and_obeys_none(hostile, command):
    output = run_piped(*COMMANDS[command](hostile))
    assert_inert(output)
    assert b"\x1b" not in output  # not a terminal: no colour either
    assert _shown(command) in output


def _shown(command: str) -> bytes:
    """How ESC reads in the output: a C escape in HLO, a Python one elsewhere."""
    return rb"\033" if command.startswith("canon") else rb"\x1b"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_terminal_receives_no_sequence_of_the_input(hostile, command):
    output = run_in_terminal(*COMMANDS[command](hostile))
    assert_inert(output)
    assert _shown(command) in OWN_ESCAPE.sub(b"", output)


def test_diff_shows_the_op_name_and_source_file_whole_and_visible(hostile):
    text = run_piped(["diff", str(hostile.a), str(hostile.b)], {}, columns=400).decode()
    assert any(line.endswith(f"{visible(OP_NAME)}  {visible(SOURCE)}:7")
               for line in text.splitlines())
    assert f"compared module_0001.{visible(PROGRAM)} with module_0001.{visible(PROGRAM)}" in text


def test_errors_are_one_line_naming_the_file_visibly(hostile):
    done = subprocess.run([sys.executable, "-m", "hlodiff", "constants", str(hostile.bad)],
                          capture_output=True, cwd=ROOT)
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.count(b"\n") == 1
    assert done.stderr.startswith(f"hlodiff: error: {visible(str(hostile.bad))}:4:".encode())


def test_markdown_keeps_one_finding_one_row_and_nothing_else_markdown(hostile):
    from markdown_it import MarkdownIt

    text = run_piped(["diff", "--format", "markdown", str(hostile.a), str(hostile.b)], {}).decode()
    table = [line for line in text.splitlines() if line.startswith("| 1 |")]
    assert len(table) == 1 and table[0].endswith(" |")
    assert not any(line.startswith(("#", "::", "<")) for line in text.splitlines()[1:])
    html = MarkdownIt("commonmark").enable("table").render(text)
    findings = html.split("<tbody>")[1].split("</tbody>")[0]
    assert findings.count("<tr>") == 1
    assert findings.count("<td>") == 7  # the row's seven cells, none split off
    for element in ("<script", "<h2", "<a ", "<img", "<em>"):
        assert element not in html
    assert "&lt;script&gt;" in findings


def test_github_annotations_stay_one_per_finding_and_decode_to_the_visible_text(hostile):
    lines = run_piped(["check", "--baseline", str(hostile.baseline), str(hostile.b), "--format",
                       "github"], {}).decode().splitlines()
    assert len(lines) == 1 and lines[0].startswith("::error file=")
    properties, message = lines[0][len("::error "):].split("::", 1)
    decoded = message.replace("%0D", "\r").replace("%0A", "\n").replace("%25", "%")
    assert "\n" not in decoded and "\r" not in decoded
    assert f"at {visible(OP_NAME)} ({visible(SOURCE)}:7)" in decoded  # its literal %0A included
    file = properties.split(",")[0][len("file="):]
    assert file == visible(SOURCE).replace("%", "%25").replace(":", "%3A").replace(",", "%2C")


def test_json_carries_every_string_exactly(hostile):
    doc = json.loads(run_piped(["diff", "--format", "json", str(hostile.a), str(hostile.b)], {}))
    origin = doc["findings"][0]["origin"]
    assert (origin["op_name"], origin["source_file"]) == (OP_NAME, SOURCE)
    assert doc["modules"][0]["a"] == f"module_0001.{PROGRAM}"
    listing = json.loads(run_piped(["ls", "--format", "json", str(hostile.a)], {}))
    assert listing["modules"][0]["program_as_written"] == PROGRAM
    assert [f["path"] for f in listing["unknown_files"]] == [UNKNOWN]


def test_canon_stays_hlo_whose_strings_read_back_as_written(hostile):
    text = run_piped(["canon", "--metadata", str(hostile.a_file)], {}).decode()
    names = re.findall(r'op_name="((?:[^"\\]|\\.)*)"', text)
    assert names and all(c_unescape(name) == OP_NAME for name in names)
    note = re.search(r'note="((?:[^"\\]|\\.)*)"', text).group(1)
    assert c_unescape(note) == "raw" + TITLE + CLEAR
    assert "\n## INJECTED" not in text


def test_markdown_quotes_a_summary_that_names_an_argument(tmp_path):
    # A finding's summary quotes argument names from the dump ("batch 4 -> 8
    # in NAME f32[4]"), and the Markdown headline wrote it as it was: a name
    # like the one below became an image, a link, HTML and a mention in a PR
    # comment. (A name with a '/' is a scope, not an argument's name.)
    name = "![x](x.png) [y](z) <img src=x> @someone"
    runs = []
    for run, width in (("run_a", 4), ("run_b", 8)):
        folder = tmp_path / run
        folder.mkdir()
        (folder / f"module_0001.{PROGRAM}.before_optimizations.txt").write_text(
            f"HloModule jit_step, entry_computation_layout={{(f32[{width}]{{0}})->f32[{width}]{{0}}}}"
            f"\n\nENTRY main.3 {{\n  p0 = f32[{width}]{{0}} parameter(0), "
            f"metadata={{op_name={c_string(name)}}}\n"
            f"  ROOT r = f32[{width}]{{0}} add(p0, p0)\n}}\n")
        runs.append(folder)
    text = run_piped(["diff", "--format", "markdown", *map(str, runs)], {}).decode()
    headline = text.splitlines()[0]
    assert "batch 4 -> 8" in headline
    from markdown_it import MarkdownIt
    html = MarkdownIt("commonmark").enable("table").render(text)
    for element in ("<img", "<a ", "<script"):
        assert element not in html
    assert "<code>batch 4 -&gt; 8 in ![x](x.png) [y](z) &lt;img src=x&gt; @someone f32[4]</code>" \
        in html
