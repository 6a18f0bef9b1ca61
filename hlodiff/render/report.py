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

from typing import Any

from ..analysis.explain import Finding, Report, Where
from ..analysis.hashes import HASHES
from .records import origin_record

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


def verdict_line(report: Report) -> str:
    """One sentence a person reads first."""
    moving = [f for f in report.findings if f.moves_a_hash]
    if report.same_executable is True:
        quiet = len(report.findings)
        tail = f"; {quiet} difference{'s' if quiet != 1 else ''} that move no cache key" if quiet else ""
        return "Same executable: nothing the compiler sees differs" + tail + "."
    if report.same_executable is None:
        return ("Cannot tell: the only differences are constants XLA printed as {...}; "
                "dump again with XLA_FLAGS=--xla_dump_large_constants.")
    changed = [h.title for h in HASHES if report.hashes.get(h.name)]
    top = report.top
    cause = f"{describe(top)}" if top else ""
    return (f"Different executables: {len(moving)} finding{'s' if len(moving) != 1 else ''} "
            f"move{'' if len(moving) != 1 else 's'} {', '.join(changed) or 'no cache key'}. "
            f"Top cause: {cause}.")


def describe(finding: Finding) -> str:
    """``constant 0.01 -> 0.02 at jit(f)/sgd/mul (train.py:57)``"""
    change = f"{finding.old if finding.old is not None else '(none)'} -> " \
             f"{finding.new if finding.new is not None else '(none)'}"
    where = finding.origin.op_name or ""
    location = finding.origin.location
    if location:
        where = f"{where} ({location})" if where else location
    text = f"{finding.kind} {change}"
    return f"{text} at {where}" if where else text


def _cell(text: str | None, limit: int = 80) -> str:
    if text is None:
        return "—"
    text = text.replace("|", "\\|").replace("\n", " ")
    return f"`{text[:limit]}{'…' if len(text) > limit else ''}`"


def markdown(report: Report) -> str:
    """A pull-request comment."""
    icon = {True: "✅", False: "❌", None: "❔"}[report.same_executable]
    lines = [f"### {icon} hlodiff: {verdict_line(report)}", ""]
    for module in report.modules:
        lines.append(f"Compared `{module.a}` with `{module.b}` (paired by {module.how}).")
    lines.append("")
    if report.findings:
        lines += ["| # | kind | stage | old → new | count | origin | moves |",
                  "|---|---|---|---|---|---|---|"]
        for n, f in enumerate(report.findings[:30], 1):
            origin = " ".join(filter(None, (f.origin.op_name and f"`{f.origin.op_name}`",
                                            f.origin.location)))
            lines.append(f"| {n} | {f.kind} | {f.stage} | {_cell(f.old)} → {_cell(f.new)} | "
                         f"{f.count} | {origin or '—'} | {', '.join(f.affects) or 'nothing'} |")
        if len(report.findings) > 30:
            lines.append(f"\n… and {len(report.findings) - 30} more findings (see `--format json`).")
    lines += [f"> {note}" for note in report.notes]
    lines += ["", "| cache key | changed |", "|---|---|"]
    for h in HASHES:
        lines.append(f"| {h.title} | {_yes_no(report.hashes.get(h.name))} |")
    return "\n".join(lines) + "\n"


def _yes_no(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "cannot tell"}[value]
