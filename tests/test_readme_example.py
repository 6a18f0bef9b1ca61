"""The first screen the README shows is what hlodiff prints today.

README.md's "What it looks like" holds the text output of a real pair of
Keras runs at 80 columns; a change to the report that forgets the README
fails here, so the example a new user reads is never a stale one.
"""

from __future__ import annotations

import re
from pathlib import Path

from conftest import CORPUS, run_cli

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_shows_the_first_screen_hlodiff_prints(monkeypatch):
    section = README.read_text().split("## What it looks like", 1)[1]
    shown = re.search(r"```\n(.*?)\n```", section, re.S).group(1)
    monkeypatch.setenv("COLUMNS", "80")
    case = CORPUS / "tf_keras_batch_size"
    printed = run_cli("diff", str(case / "run_a"), str(case / "run_b"), expect=1).stdout
    assert shown == printed.rstrip("\n")
