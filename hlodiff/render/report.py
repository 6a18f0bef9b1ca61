"""A diff ``Report`` as JSON-ready data (schema below) and as Markdown.

JSON schema, version 1 (``schema_version``)::

    {
      "schema_version": 1,
      "same_executable": true | false | null,   # null: the dumps cannot decide
      "stages": {"before_optimizations": {"a": path, "b": path, "changes": n}, ...},
      "modules": [{"a": label, "b": label, "how": evidence}],
      "findings": [{                            # ranked: most explanatory first
        "kind": one of hlodiff.diff.KINDS,
        "stage": "before_optimizations" | "after_optimizations" | "both" | "hlo",
        "old": str | null, "new": str | null,   # as printed in the HLO
        "count": n,                             # places this same change was seen
        "affects": ["xla_fingerprint", "jax_cache_key", "graphcore_hlo_hash"],
        "origin": {"op_name", "op_type", "source_file", "source_line",
                   "stack": [{"file", "function", "line"}]},
        "where": {"a": name | null, "b": name | null, "computation": name},
        "detail": str,
        "origins": [origin, ...],               # every distinct origin, first = "origin"
        "places": [where + {"old", "new"}, ...],  # every place, with its own values
        "derived": [{"kind", "count", "old", "new", "detail"}]   # changes that follow from it
      }],
      "hashes": [{"name", "title", "changed": true | false | null, "source"}],
      "notes": [str]                            # e.g. another module differs too
    }
"""

from __future__ import annotations

import re
from typing import Any

from ..analysis.explain import Finding, Report, Where
from ..analysis.hashes import HASHES
from .escape import markdown_code, markdown_text
from .records import origin_record
from .shorten import program

SCHEMA_VERSION = 1
_PLACES_LIMIT = 200


def _where(where: Where) -> dict[str, Any]:
    return {"a": where.a, "b": where.b, "computation": where.computation}


def _place(where: Where) -> dict[str, Any]:
    return dict(_where(where), old=where.old, new=where.new)


def finding_record(finding: Finding) -> dict[str, Any]:
    return {
        "kind": finding.kind,
        "stage": finding.stage,
        "old": finding.old,
        "new": finding.new,
        "count": finding.count,
        "affects": list(finding.affects),
        "origin": origin_record(finding.origin),
        "where": _where(finding.where[0]) if finding.where else None,
        "detail": finding.detail,
        "origins": [origin_record(o) for o in finding.origins[:_PLACES_LIMIT]],
        "places": [_place(w) for w in finding.where[:_PLACES_LIMIT]],
        "derived": [{"kind": d.kind, "count": d.count, "old": d.old, "new": d.new,
                     "detail": d.detail} for d in finding.derived],
    }


def report_document(report: Report) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "same_executable": report.same_executable,
        "stages": {name: dict(info) for name, info in report.stages.items()},
        "modules": [{"a": m.a, "b": m.b, "how": m.how} for m in report.modules],
        "findings": [finding_record(f) for f in report.findings],
        "hashes": [{"name": h.name, "title": h.title, "changed": report.hashes.get(h.name),
                    "source": h.source} for h in HASHES],
        "notes": list(report.notes),
    }


class Spelling:
    """How a format writes the strings of a dump inside its own sentences.

    The plain spelling writes them as they are (the caller escapes the
    whole line); Markdown puts each in a code span; the terminal shortens
    names to fit its width.
    """

    def value(self, text: str) -> str:
        return text

    def op_name(self, text: str) -> str:
        return text

    def location(self, text: str) -> str:
        return text


PLAIN = Spelling()


# Modules compiled in one run only: reported apart from the compared
# program's findings, as compilations the other run did not do.
EXTRA_COMPILATION = frozenset({"module_added", "module_removed"})


def extra_compilations(report: Report) -> tuple[list[str], list[str]]:
    """The labels of the modules compiled only in run a, and only in run b."""
    extra = [f for f in report.findings if f.kind in EXTRA_COMPILATION]
    return ([w.a for f in extra if f.kind == "module_removed" for w in f.where[:1] if w.a],
            [w.b for f in extra if f.kind == "module_added" for w in f.where[:1] if w.b])


def verdict_line(report: Report, spell: Spelling = PLAIN) -> str:
    """One sentence a person reads first."""
    moving = [f for f in report.findings if f.moves_a_hash]
    if report.same_executable is True:
        quiet = sum(f.kind not in EXTRA_COMPILATION for f in report.findings)
        extra = sum(map(len, extra_compilations(report)))
        tail = "".join((
            f"; {quiet} difference{'s' if quiet != 1 else ''} that move no cache key" if quiet
            else "",
            f"; {extra} extra compilation{'s' if extra != 1 else ''} in one run" if extra
            else ""))
        return "Same executable: nothing the compiler sees differs" + tail + "."
    if report.same_executable is None:
        return ("Cannot tell: the only differences are constants XLA printed as {...}; "
                "dump again with XLA_FLAGS=--xla_dump_large_constants.")
    changed = [h.title for h in HASHES if report.hashes.get(h.name)]
    top = report.top
    cause = describe(top, spell) if top else ""
    return (f"Different executables: {len(moving)} finding{'s' if len(moving) != 1 else ''} "
            f"move{'' if len(moving) != 1 else 's'} {', '.join(changed) or 'no cache key'}. "
            f"Top cause: {cause}.")


def describe(finding: Finding, spell: Spelling = PLAIN) -> str:
    """``constant 0.01 -> 0.02 at jit(f)/sgd/mul (train.py:57)``"""
    change = " -> ".join("(none)" if v is None else spell.value(v)
                         for v in (finding.old, finding.new))
    where = spell.op_name(finding.origin.op_name) if finding.origin.op_name else ""
    location = finding.origin.location
    if location:
        location = spell.location(location)
        where = f"{where} ({location})" if where else location
    text = f"{finding.kind} {change}"
    return f"{text} at {where}" if where else text


# How a stage is named to people, in text, Markdown and git mode alike; JSON
# keeps the identifiers, which are the words of XLA's file names.
STAGE_WORDS = {"before_optimizations": "before", "after_optimizations": "after", "both": "both",
               "hlo": "unknown"}


class _Markdown(Spelling):
    """Every string from the dump in a code span: nothing in it is Markdown."""

    def __init__(self, table: bool = False):
        self.table = table

    def value(self, text: str) -> str:
        return markdown_code(text, table=self.table)

    op_name = location = value


_MARKDOWN_ROWS = 30
_CELL_LIMIT = 80


def _cell(text: str | None) -> str:
    if text is None:
        return "—"
    short = text if len(text) <= _CELL_LIMIT else text[:_CELL_LIMIT] + "…"
    return markdown_code(short, table=True) or "—"


def markdown(report: Report) -> str:
    """A pull-request comment: every string from the dump is in a code span,
    so one finding is one table row and nothing else in it is Markdown."""
    icon = {True: "✅", False: "❌", None: "❔"}[report.same_executable]
    lines = [f"### {icon} hlodiff: {verdict_line(report, _Markdown())}", ""]
    for module in report.modules:
        lines.append(f"Compared {_name(module.a)} with {_name(module.b)} "
                     f"(paired by {markdown_text(module.how)}).")
    lines.append("")
    findings = [f for f in report.findings if f.kind not in EXTRA_COMPILATION]
    if findings:
        cells = _Markdown(table=True)
        lines += ["| # | kind | stage | old → new | count | origin | moves |",
                  "|---|---|---|---|---|---|---|"]
        for n, f in enumerate(findings[:_MARKDOWN_ROWS], 1):
            origin = " ".join(cells.value(text) for text in (f.origin.op_name, f.origin.location)
                              if text)
            lines.append(f"| {n} | {f.kind} | {STAGE_WORDS.get(f.stage, f.stage)} | "
                         f"{_cell(f.old)} → {_cell(f.new)} | {f.count} | {origin or '—'} | "
                         f"{', '.join(f.affects) or 'nothing'} |")
        if len(findings) > _MARKDOWN_ROWS:
            lines.append(f"\n… and {len(findings) - _MARKDOWN_ROWS} more findings "
                         "(see `--format json`).")
    for run, labels in zip("ab", extra_compilations(report)):
        if labels:
            lines += ["", f"Extra compilations: run {run} alone compiled "
                          + ", ".join(_name(label) for label in labels) + "."]
    if report.notes:
        lines += ["", "\n>\n".join(f"> note: {markdown_code(note)}"
                                   for note in dict.fromkeys(report.notes))]
    lines += ["", "| cache key | changed |", "|---|---|"]
    for h in HASHES:
        lines.append(f"| {h.title} | {_yes_no(report.hashes.get(h.name))} |")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)) + "\n"


def _name(label: str | None) -> str:
    return markdown_code(program(label)) if label else "(none)"


def _yes_no(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "cannot tell"}[value]
