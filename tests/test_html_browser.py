"""The HTML report in a real browser, used as a person uses it.

Headless Chromium (Debian's ``chromium`` package; .ci/run installs it)
driven by Playwright, which is told where that browser is: nothing is
downloaded. Each page is opened from ``file://``; every test also checks
that the page logged no error and asked the network for nothing, and
saves a screenshot in its temporary directory. Skipped, saying why, only
where Playwright or Chromium cannot be found.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import CORPUS, run_cli

sync_api = pytest.importorskip("playwright.sync_api",
                               reason="Playwright is not installed (pip install -e '.[test]')")
CHROMIUM = next((found for name in ("chromium", "chromium-browser")
                 if (found := shutil.which(name))), None)
if CHROMIUM is None:
    pytest.skip("no Chromium on PATH (apt-get install chromium)", allow_module_level=True)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="module")
def pages(tmp_path_factory):
    """The page of a corpus case, written once per case."""
    folder = tmp_path_factory.mktemp("pages")
    made: dict[str, Path] = {}

    def page_of(case: str) -> Path:
        if case not in made:
            out = folder / f"{case}.html"
            run_cli("diff", str(CORPUS / case / "run_a"), str(CORPUS / case / "run_b"),
                    "--format", "html", "-o", str(out), expect=None)
            made[case] = out
        return made[case]
    return page_of


class Visit:
    """One page open in a tab, with what it logged and requested."""

    def __init__(self, browser, path: Path, width: int):
        self.tab = browser.new_page(viewport={"width": width, "height": 900})
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.tab.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.tab.on("pageerror", lambda e: self.errors.append(str(e)))
        self.tab.on("request", lambda r: self.requests.append(r.url))
        self.tab.on("dialog", lambda d: (self.dialogs.append(d.message), d.dismiss()))
        self.url = path.resolve().as_uri()
        self.tab.goto(self.url)

    def close(self, screenshot: Path) -> None:
        """Screenshot, then check the page kept to itself."""
        self.tab.screenshot(path=str(screenshot), full_page=True)
        assert screenshot.stat().st_size > 10_000
        assert self.errors == []
        assert self.requests == [self.url]  # the page itself, nothing else
        assert self.dialogs == []
        self.tab.close()


@pytest.fixture
def visit(browser, tmp_path):
    opened = []

    def open_page(path: Path, width: int = 1280) -> Visit:
        opened.append(Visit(browser, path, width))
        return opened[-1]
    yield open_page
    for n, one in enumerate(opened):
        one.close(tmp_path / f"page-{n}.png")


def test_the_verdict_and_the_first_cause_are_visible(visit, pages):
    tab = visit(pages("jax_learning_rate")).tab
    assert tab.locator("#verdict h1").inner_text().startswith("Recompiles")
    first = tab.locator("#cause-1")
    assert first.locator(".change .old").inner_text() == "0.01"
    assert first.locator(".change .new").inner_text() == "0.02"
    source = first.locator(".origin .source")
    assert source.inner_text() == "corpus/gen/jax_cases.py:168" and source.is_visible()
    for element in (first.locator(".change .old"), first.locator(".change .new"),
                    first.locator(".run.a .chg").first, first.locator(".run.b .chg").first):
        assert element.is_visible()
    assert first.locator(".run.b .chg").first.inner_text() == "0.02"


def test_derived_changes_are_collapsed_until_opened(visit, pages):
    tab = visit(pages("jax_flax_batch_size")).tab
    group = tab.locator("#cause-1 details.derived")
    item = group.locator(".derived-item").filter(has_text="182 shape")
    assert not item.is_visible()
    group.locator("summary").click()
    assert item.is_visible()
    assert "48" in item.locator(".run.b .chg").first.inner_text()


def test_clicking_a_graph_node_shows_its_line_and_origin(visit, pages):
    tab = visit(pages("jax_learning_rate")).tab
    panel = tab.locator("#cause-1 .node-panel")
    assert not panel.is_visible()
    tab.locator('#cause-1 .node.focus[data-run="b"]').first.click()
    assert panel.is_visible()
    text = panel.inner_text()
    assert "constant(0.02)" in text and "corpus/gen/jax_cases.py:168" in text
    partner = tab.locator('#cause-1 .node.partnered[data-run="a"]')
    assert partner.count() == 1  # the same constant in run a, outlined


def test_j_and_k_move_between_causes_and_filters_narrow_them(visit, pages):
    # TF's concat -> stack rewrite: ops removed before optimization, and the
    # function's trace counter (the program's name), seen in both stages
    tab = visit(pages("tf_concat_vs_stack")).tab
    causes = tab.locator(".cause")
    assert causes.count() == 2
    tab.keyboard.press("j")
    assert "current" in tab.locator("#cause-1").get_attribute("class")
    tab.keyboard.press("j")
    assert "current" in tab.locator("#cause-2").get_attribute("class")
    tab.keyboard.press("k")
    assert "current" in tab.locator("#cause-1").get_attribute("class")
    assert tab.locator("#cause-1").evaluate("e => e.getBoundingClientRect().top") < 120

    tab.select_option("#filter-kind", "program_name")
    assert [c.is_visible() for c in causes.all()] == [False, True]
    assert tab.locator("#shown").inner_text() == "1 of 2"
    tab.select_option("#filter-kind", "")
    tab.keyboard.press("/")
    tab.keyboard.type("collect/concat")
    assert [c.is_visible() for c in causes.all()] == [True, False]
    tab.keyboard.press("Escape")  # clears the search box, as in any browser
    tab.select_option("#filter-stage", "before_optimizations")
    assert [c.is_visible() for c in causes.all()] == [True, False]
    assert tab.locator("#shown").inner_text() == "1 of 2"


@pytest.mark.parametrize("case", ["jax_learning_rate", "jax_flax_batch_size", "jax_op_added",
                                  "torch_layernorm_added", "jax_int4_elided"])
def test_a_narrow_window_shows_everything_without_scrolling_sideways(visit, pages, case):
    tab = visit(pages(case), width=800).tab
    assert tab.evaluate("document.documentElement.scrollWidth") <= 800
    halves = tab.locator("#cause-1 .half")
    if halves.count():  # one under the other: each as wide as the card
        a, b = (halves.nth(i).bounding_box() for i in range(2))
        assert b["y"] > a["y"] + a["height"] - 1


# The characters after which a line may break inside a name or an HLO line,
# and for each element, the characters each of its lines ends with.
_LINE_ENDS = """els => els.map(el => {
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  const text = [], tops = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    for (let i = 0; i < node.length; i++) {
      const range = document.createRange();
      range.setStart(node, i); range.setEnd(node, i + 1);
      const rect = range.getClientRects()[0];
      // the last character of a text node may end a line anyway (a <br>)
      if (rect) { text.push(i + 1 < node.length ? node.data[i] : " "); tops.push(Math.round(rect.top)); }
    }
  }
  return text.filter((c, i) => i + 1 < tops.length && tops[i + 1] > tops[i]);
})"""


@pytest.mark.parametrize("case", ["tf_keras_regularizer", "tf_keras_uneven_batches"])
def test_long_names_wrap_between_their_parts_not_inside_one(visit, pages, case):
    # A TF module's file name read "...data_226__.7.before_op" / "timizations.txt"
    # at 1280 px: a cell wrapped it wherever the line was full.
    tab = visit(pages(case)).tab
    ends = tab.locator("td.path, td.mono, .where .mono, .files .mono").evaluate_all(_LINE_ENDS)
    assert any(ends)  # some name does wrap here, or this tests nothing
    assert all(end in "._/,= " for element in ends for end in element), ends


def test_an_elided_constant_lists_its_changed_elements_behind_an_expander(visit, pages):
    tab = visit(pages("jax_int4_elided")).tab
    literal = tab.locator("#cause-1 details.literal")
    assert "480 of 512 elements differ" in literal.locator("summary").inner_text()
    rows = literal.locator("tr")
    assert not rows.first.is_visible()
    literal.locator("summary").click()
    assert rows.count() == 65  # a header and the first 64 differing elements
    assert rows.nth(1).inner_text().split() == ["[0]", "-3", "0"]


def test_a_script_in_an_op_name_does_not_run(visit, tmp_path):
    from test_html import SCRIPT, hostile_module
    runs = []
    for run, rate in (("run_a", "0.01"), ("run_b", "0.02")):
        folder = tmp_path / run
        folder.mkdir()
        (folder / "module_0001.jit_step.before_optimizations.txt").write_text(hostile_module(rate))
        runs.append(folder)
    out = tmp_path / "hostile.html"
    run_cli("diff", str(runs[0]), str(runs[1]), "--format", "html", "-o", str(out), expect=1)
    tab = visit(out).tab
    tab.locator('#cause-1 .node.focus[data-run="b"]').first.click()
    assert tab.evaluate("window.pwned") is None
    assert SCRIPT in tab.locator("#cause-1 .origin").inner_text()
    assert SCRIPT in tab.locator("#cause-1 .node-panel").inner_text()
    assert tab.locator("img").count() == 0


def test_the_recompiles_page_walks_every_recompilation(visit, tmp_path):
    out = tmp_path / "recompiles.html"
    run_cli("recompiles", str(CORPUS / "jax_recompile_python_float" / "run"), "--format", "html",
            "-o", str(out), expect=1)
    tab = visit(out).tab
    assert tab.locator("#verdict h1").inner_text().startswith("Recompiles")
    assert tab.locator(".recompilation").count() == 2
    tab.keyboard.press("j")
    tab.keyboard.press("j")
    second = tab.locator("#cause-2")
    assert "current" in second.get_attribute("class")
    assert second.locator(".change .new").inner_text() == "-0.0025"
    assert second.locator(".origin .source").inner_text() == "corpus/gen/jax_library_cases.py:123"


def test_a_page_of_runs_in_a_deep_folder_fits_a_narrow_window(visit, tmp_path):
    # CI's clone lay deeper than this machine's: the footer's "run_a vs run_b"
    # paths, one word of 100 characters, made an 800 px window scroll sideways.
    import shutil
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    shutil.copytree(CORPUS / "jax_learning_rate", deep / "jax_learning_rate")
    out = tmp_path / "page.html"
    run_cli("diff", str(deep / "jax_learning_rate" / "run_a"),
            str(deep / "jax_learning_rate" / "run_b"), "--format", "html", "-o", str(out),
            expect=None)
    tab = visit(out, width=800).tab
    assert str(deep) in tab.locator("footer").inner_text()
    assert tab.evaluate("document.documentElement.scrollWidth") <= 800
