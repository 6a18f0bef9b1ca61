"""Output formats. This package is the only place that prints.

Each renderer takes the records the core returns (never a parsed module
alone) and writes them to a stream: rich text for people, JSON for
programs, Markdown for pull-request comments, a self-contained HTML page
for a person reviewing a change.
"""

from __future__ import annotations

from enum import Enum


class Format(str, Enum):
    TEXT = "text"
    JSON = "json"
    MARKDOWN = "markdown"
    GITHUB = "github"  # workflow commands: ::error file=...,line=...::message
    HTML = "html"  # one self-contained page (hlodiff/render/html.py), written with -o FILE
