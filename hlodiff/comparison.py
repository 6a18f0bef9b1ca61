"""What ``hlodiff.compare`` returns: the report, and how it shows itself.

A ``Comparison`` is the ``Report`` of hlodiff/analysis/explain.py (every
attribute of the report reads through: ``same_executable``, ``recompiles``,
``findings``, ``top``...) plus the names of the two sides, and the display
protocols of the places people look at it: ``str()`` is the text
``hlodiff diff`` prints, and so is what IPython shows; a rich console
(``rich.print``, ``rich.pretty.install()``) gets that text in colour at its
width; the plain REPL shows the verdict line; a notebook shows the HTML report.
It lives above the renderers because the model must not import them.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from typing import Any

from .analysis.explain import Report


@dataclass(frozen=True)
class Comparison:
    """Two programs compared: ``report`` and what ``a`` and ``b`` were."""

    report: Report
    a: str
    b: str

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # protocols a Report does not have stay absent
            raise AttributeError(name)
        return getattr(self.report, name)

    def __str__(self) -> str:
        from .render.text import page_width
        return drawn(self.report, page_width())

    def __repr__(self) -> str:
        from .render.report import verdict_line
        return f"<hlodiff.Comparison of {self.a} and {self.b}: {verdict_line(self.report)}>"

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """IPython (terminal and notebook plain text): the whole text report."""
        printer.text(str(self).rstrip("\n"))

    def _repr_html_(self) -> str:
        """A notebook's view: hlodiff's HTML report (``--format html``) in a
        sandboxed frame, where its own style, script and Content-Security-Policy
        apply and none of them reaches the notebook around it."""
        from html import escape

        from .render.html import page
        document = page(self.report, run_a=self.a, run_b=self.b)
        return (f'<iframe title="hlodiff: {escape(self.a)} vs {escape(self.b)}" '
                f'sandbox="allow-scripts" style="width: 100%; height: 720px; border: 0" '
                f'srcdoc="{escape(document, quote=True)}"></iframe>')

    def __rich_console__(self, console, options):
        """The text report laid out to the width rich offers, in its colours."""
        from rich.text import Text
        text = drawn(self.report, options.max_width, console.color_system)
        yield Text.from_ansi(text.rstrip("\n"), no_wrap=True)


def drawn(report: Report, width: int, colours: str | None = None) -> str:
    """The text report ``hlodiff diff`` prints, laid out to ``width``, in ANSI
    ``colours`` (a rich colour system) or none. Drawn apart from any console
    of the caller's: rich would send it to a notebook as a display of its own."""
    from rich.console import Console

    from .render import text
    console = Console(file=io.StringIO(), width=width, color_system=colours,
                      force_terminal=colours is not None, force_jupyter=False,
                      markup=False, emoji=False, highlight=False)
    text.report(report, out=console)
    return re.sub(r" +\n", "\n", console.file.getvalue())
