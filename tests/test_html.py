"""The HTML report: what the page says, that it loads and runs nothing but its
own, and that nothing from a dump can act in it. What it draws from is
tests/test_html_context.py; the page in a real browser, tests/test_html_browser.py."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from conftest import CORPUS, run_cli
from hlodiff.analysis.compare import compare
from hlodiff.render.html import page

LR = CORPUS / "jax_learning_rate"


class _Text(HTMLParser):
    """The text a browser shows (no script, style or template), and every tag."""

    def __init__(self):
        super().__init__()
        self.text, self.tags, self._skip = [], [], 0

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style", "template"):
            self._skip += 1

    def handle_endtag(self, tag):
        if tag in ("script", "style", "template"):
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.text.append(data)


def parsed(html_text: str) -> _Text:
    parser = _Text()
    parser.feed(html_text)
    return parser


def test_diff_writes_one_page_with_the_verdict_and_the_cause(tmp_path):
    out = tmp_path / "report.html"
    result = run_cli("diff", str(LR / "run_a"), str(LR / "run_b"), "--format", "html",
                     "-o", str(out), expect=1)
    assert result.stdout == ""
    assert f"Page: {out}" in result.stderr
    text = out.read_text()
    shown = "".join(parsed(text).text)
    assert "Recompiles" in shown and "different executables" in shown
    assert "JAX persistent cache key: moves" in shown
    assert "corpus/gen/jax_cases.py:168" in shown
    assert "A Python float is baked into the jitted function" in shown
    assert re.search(r'<span class="old">0\.01</span>.*<span class="new">0\.02</span>', text)
    assert '<span class="chg">0.01</span>' in text and '<span class="chg">0.02</span>' in text


def test_a_checkpoint_added_is_headed_by_its_sentence_not_by_none_to_none():
    # a change of the program's structure has no old and new values: its
    # heading read "(none) → (none)" above "jax.checkpoint (remat) in run b only"
    case = CORPUS / "jax_remat_added"
    text = page(compare(case / "run_a", case / "run_b"), run_a="a", run_b="b")
    headings = re.findall(r'<h2 class="change">(.*?)</h2>', text)
    assert headings[0].startswith("jax.checkpoint (remat) in run b only: the backward pass")
    assert not [h for h in headings if h.count('class="none"') == 2]


def test_the_page_loads_nothing_and_runs_only_its_own_script(tmp_path):
    out = tmp_path / "report.html"
    run_cli("diff", str(LR / "run_a"), str(LR / "run_b"), "--format", "html", "-o", str(out),
            expect=1)
    tags = parsed(out.read_text()).tags
    assert not [t for t, attrs in tags if "src" in attrs or "href" in attrs]
    assert [t for t, _ in tags].count("script") == 1
    policy = next(attrs["content"] for t, attrs in tags
                  if t == "meta" and attrs.get("http-equiv") == "Content-Security-Policy")
    assert policy.startswith("default-src 'none'; style-src 'sha256-")
    assert "'unsafe-inline'" not in policy


def test_the_page_is_the_same_every_time(tmp_path):
    first, second = tmp_path / "1.html", tmp_path / "2.html"
    for out in (first, second):
        run_cli("diff", str(LR / "run_a"), str(LR / "run_b"), "--format", "html", "-o", str(out),
                "--no-cache", expect=1)
    assert first.read_bytes() == second.read_bytes()


def test_check_writes_the_page_for_ci(tmp_path):
    baseline, out = tmp_path / "baseline.json", tmp_path / "check.html"
    run_cli("baseline", str(LR / "run_a"), "-o", str(baseline))
    run_cli("check", "--baseline", str(baseline), str(LR / "run_b"), "--format", "html",
            "-o", str(out), expect=1)
    shown = "".join(parsed(out.read_text()).text)
    assert "Recompiles" in shown and "0.02" in shown and "jax_cases.py:168" in shown
    assert "The change in the HLO" in shown  # lines read before the baseline's files went


def test_a_doubtful_comparison_says_so_above_the_verdict(tmp_path):
    out = tmp_path / "report.html"
    run_cli("diff", str(LR / "run_a"), str(CORPUS / "tf_learning_rate" / "run_a"), "--format",
            "html", "-o", str(out), expect=1)
    text = out.read_text()
    warning = text.index("Check the comparison:")
    assert warning < text.index("<h1>")
    assert "run a was compiled by JAX and run b by TensorFlow" in text[warning:]


@pytest.mark.parametrize("args, message", [
    (["--format", "html"], "--format html needs -o FILE"),
    (["-o", "out.html"], "-o/--output is for --format html"),
])
def test_html_and_output_go_together(args, message):
    result = run_cli("diff", str(LR / "run_a"), str(LR / "run_b"), *args, expect=2)
    assert message in result.stderr


def big_constant_pair(tmp_path, size: int = 20_000):
    """Two files whose only difference is two elements of a big constant."""
    paths = []
    for run, changes in (("a", {}), ("b", {17: "9.5", 12_345: "-1.25"})):
        values = ", ".join(changes.get(i, f"{i % 7}.5") for i in range(size))
        path = tmp_path / f"{run}.hlo"
        path.write_text(f"HloModule m\n\nENTRY main {{\n  p = f32[{size}] parameter(0)\n"
                        f"  c = f32[{size}] constant({{{values}}})\n"
                        f"  ROOT r = f32[{size}] add(p, c)\n}}\n")
        paths.append(path)
    return paths


def test_a_big_literal_is_its_changed_elements_never_the_whole(tmp_path):
    a, b = big_constant_pair(tmp_path)
    report = compare(a, b, context=True)
    literal = report.context[0].places[0].literal
    assert [(e.index, e.old, e.new) for e in literal.elements] == [(17, "3.5", "9.5"),
                                                                    (12345, "4.5", "-1.25")]
    text = page(report, run_a=str(a), run_b=str(b))
    assert len(text) < 60_000  # the literal alone is 100 kB
    literal = a.read_text().split("constant(")[1]
    assert literal[:400] not in text
    assert "2 of 20000 elements differ" in text and "[12345]" in text


# --- hostile text ---------------------------------------------------------------------------------

SCRIPT = "<script>window.pwned=1</script>"
OP_NAME = (f'jit(step)/{SCRIPT}"><img src=x onerror="window.pwned=2">'
           "</template></style></code>\u202eevil")
SOURCE = "model\"'<b>.py"


def hostile_module(rate: str) -> str:
    metadata = (f'metadata={{op_name="{_c(OP_NAME)}" source_file="{_c(SOURCE)}" '
                "source_line=7}")
    return ("HloModule jit_step\n\nENTRY main.5 {\n  p0 = f32[4]{0} parameter(0)\n"
            f"  c = f32[] constant({rate}), {metadata}\n"
            f"  b = f32[4]{{0}} broadcast(c), dimensions={{}}, {metadata}\n"
            f"  ROOT r = f32[4]{{0}} multiply(p0, b), {metadata}\n}}\n")


def _c(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


@pytest.fixture
def hostile_page(tmp_path):
    runs = []
    for run, rate in (("run_a", "0.01"), ("run_b", "0.02")):
        folder = tmp_path / run
        folder.mkdir()
        (folder / "module_0001.jit_step.before_optimizations.txt").write_text(hostile_module(rate))
        runs.append(folder)
    out = tmp_path / "hostile.html"
    run_cli("diff", str(runs[0]), str(runs[1]), "--format", "html", "-o", str(out), expect=1)
    return out


def test_a_script_in_an_op_name_is_text_on_the_page(hostile_page):
    text = hostile_page.read_text()
    page_ = parsed(text)
    assert [t for t, _ in page_.tags].count("script") == 1  # the page's own
    assert not [t for t, _ in page_.tags if t == "img"]
    assert not [a for _, attrs in page_.tags for a in attrs if a.startswith("on")]
    assert "window.pwned" not in text.split("<script>")[-1]
    shown = "".join(page_.text)
    assert SCRIPT in shown  # shown as the text it is
    assert "\\u202eevil" in shown and "\u202e" not in text  # the override shown, not obeyed
    assert 'model"\'<b>.py:7' in shown


def test_recompiles_writes_one_page_with_each_recompilation_and_its_cause(tmp_path):
    # a Python float learning rate halved every few steps: jit_train_step compiled 3 times
    out = tmp_path / "recompiles.html"
    result = run_cli("recompiles", str(CORPUS / "jax_recompile_python_float" / "run"),
                     "--format", "html", "-o", str(out), expect=1)
    assert result.stdout == "" and f"Page: {out}" in result.stderr
    text = out.read_text()
    # a <wbr> in a long name is a place to break the line, no space in it
    shown = " ".join(" ".join(parsed(text.replace("<wbr>", "")).text).split())
    assert "Recompiles" in shown and "1 user program compiled more than once" in shown
    for number, old, new in ((2, "-0.01", "-0.005"), (3, "-0.005", "-0.0025")):
        assert f"jit_train_step #{number} constant {old} -> {new}" in shown
    # causes are numbered through the page, so j / k walk every recompilation's
    assert re.findall(r'<article class="cause[^"]*" id="(cause-\d+)"', text) == \
        ["cause-1", "cause-2"]
    assert shown.count("corpus/gen/jax_library_cases.py:123") >= 2
    # the lines side by side are labelled run a and run b, as on a diff's page:
    # each section says which compilation is which (a new user read them as two runs)
    assert "run a below is the compilation in module_0012.jit_train_step, run b the one in " \
           "module_0015.jit_train_step" in shown
    tags = parsed(text).tags
    assert not [t for t, attrs in tags if "src" in attrs or "href" in attrs]
