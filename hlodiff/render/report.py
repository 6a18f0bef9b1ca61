"""A diff ``Report`` as JSON-ready data (schema below) and as Markdown.

JSON schema, version 2 (``schema_version``). Version 1 had one verdict,
``same_executable``, for the main program only; version 2 says for the run
and for every program paired across the runs whether it recompiles (the
compile-input cache keys move) and whether XLA produced the same executable
(the optimized program, names and metadata aside); findings name their
program, carry a summary, advice and what follows from them; modules
compiled in one run only are ``extra_compilations``, not findings::

    {
      "schema_version": 2,
      "recompiles": true | false | null,        # null: the dumps cannot decide (see reason)
      "same_executable": true | false | null,
      "programs": [{"program", "a", "b", "how", "recompiles", "same_executable",
                    "hashes": {name: true | false | null}, "causes": n, "reason": str,
                    "main": bool}],                # the main program first among equals
      "extra_compilations": [{"run": "a" | "b", "module", "program"}],
      "stages": {"before_optimizations": {"a": path, "b": path, "changes": n}, ...},
      "modules": [{"a": label, "b": label, "how": evidence}],
      "findings": [{                            # ranked: most explanatory first
        "program": name,
        "kind": one of hlodiff.analysis.diff.KINDS, or "replaced", "parameter_order",
        "stage": "before_optimizations" | "after_optimizations" | "both" | "hlo",
        "old": str | null, "new": str | null,   # as printed in the HLO
        "summary": str,                         # the cause in the user's words ("" = old -> new)
        "advice": str,                          # what to do about it
        "count": n,                             # places this same change was seen
        "affects": ["jax_cache_key", "xla_executable_fingerprint", "graphcore_hlo_hash"],
        "origin": {"op_name", "op_type", "source_file", "source_line",
                   "stack": [{"file", "function", "line"}]},
        "where": {"a": name | null, "b": name | null, "computation": name,
                  "line_a": n | null, "line_b": n | null},
        "detail": str,
        "origins": [origin, ...],               # every distinct origin, first = "origin"
        "places": [where + {"old", "new"}, ...],  # every place, with its own values
        "derived": [{"kind", "count", "old", "new", "detail"}],  # changes that follow from it
        "optimized": n                          # instructions XLA then optimized differently
      }],
      "hashes": [{"name", "title", "stage", "observed", "changed": true | false | null,
                  "source"}],
      "notes": [str]
    }
"""

from __future__ import annotations

from typing import Any

from ..analysis.explain import Finding, Report, Where
from ..analysis.hashes import HASHES
from .records import origin_record

SCHEMA_VERSION = 2
_PLACES_LIMIT = 200


def _where(where: Where) -> dict[str, Any]:
    return {"a": where.a, "b": where.b, "computation": where.computation,
            "line_a": where.line_a, "line_b": where.line_b}


def _place(where: Where) -> dict[str, Any]:
    return dict(_where(where), old=where.old, new=where.new)


def finding_record(finding: Finding) -> dict[str, Any]:
    return {
        "program": finding.program,
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
        "summary": finding.summary,
        "advice": finding.advice,
        "optimized": finding.optimized,
    }


def report_document(report: Report) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "recompiles": report.recompiles,
        "same_executable": report.same_executable,
        "programs": [{"program": p.program, "a": p.a, "b": p.b, "how": p.how,
                      "recompiles": p.recompiles, "same_executable": p.same_executable,
                      "hashes": dict(p.hashes), "causes": p.causes, "reason": p.reason,
                      "main": p.main}
                     for p in report.programs],
        "extra_compilations": [{"run": e.run, "module": e.module, "program": e.program}
                               for e in report.extra_compilations],
        "stages": {name: dict(info) for name, info in report.stages.items()},
        "modules": [{"a": m.a, "b": m.b, "how": m.how} for m in report.modules],
        "findings": [finding_record(f) for f in report.findings],
        "hashes": [{"name": h.name, "title": h.title, "stage": h.stage, "observed": h.observed,
                    "changed": report.hashes[h.name], "source": h.source}
                   for h in HASHES if h.name in report.hashes],
        "notes": list(report.notes),
    }


def verdict_line(report: Report) -> str:
    """One sentence a person reads first: does it recompile, is it the same
    executable, and, when it differs, the cause and which programs."""
    differing = [p for p in report.programs if p.recompiles or p.same_executable is False]
    names = ", ".join(p.program for p in differing[:3]) + \
        (f" and {len(differing) - 3} more" if len(differing) > 3 else "")
    top = report.top
    cause = f" Top cause: {describe(top)}." if top is not None and top.moves_a_hash else ""
    if report.recompiles is False and report.same_executable is True:
        quiet = len(report.findings)
        tail = f"; {quiet} difference{'s' if quiet != 1 else ''} that move no cache key" \
            if quiet else ""
        return "Same executable, no recompile: nothing the compiler sees differs" + tail + "."
    if report.recompiles is None and report.same_executable is None:
        reason = next((p.reason for p in report.programs if p.reason), "")
        return f"Cannot tell{': ' + reason if reason else ''}."
    parts = []
    if report.recompiles:
        parts.append(f"Recompiles ({names})" if names else "Recompiles")
    elif report.recompiles is None:
        parts.append("Recompiles: cannot tell")
    else:
        parts.append("No recompile")
    if report.same_executable is True:
        parts.append("but XLA produces the same executable" if report.recompiles
                     else "same executable")
    elif report.same_executable is False:
        parts.append("different executables")
    else:
        reason = next((p.reason for p in report.programs if p.reason), "")
        parts.append("same executable: cannot tell" + (f" ({reason})" if reason else ""))
    return ", ".join(parts) + "." + cause


def describe(finding: Finding) -> str:
    """``constant 0.01 -> 0.02 at jit(f)/sgd/mul (train.py:57)``"""
    change = f"{finding.old if finding.old is not None else '(none)'} -> " \
             f"{finding.new if finding.new is not None else '(none)'}"
    where = finding.origin.op_name or ""
    location = finding.origin.location
    if location:
        where = f"{where} ({location})" if where else location
    text = finding.summary if finding.summary else f"{finding.kind} {change}"
    return f"{text} at {where}" if where else text


def _cell(text: str | None, limit: int = 80) -> str:
    if text is None:
        return "—"
    text = text.replace("|", "\\|").replace("\n", " ")
    return f"`{text[:limit]}{'…' if len(text) > limit else ''}`"


def markdown(report: Report) -> str:
    """A pull-request comment."""
    icon = "✅" if report.same_executable is True and report.recompiles is False else \
        "❔" if report.same_executable is None and report.recompiles is None else "❌"
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
        if h.name in report.hashes:
            lines.append(f"| {h.title} | {_yes_no(report.hashes[h.name])} |")
    return "\n".join(lines) + "\n"


def _yes_no(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "cannot tell"}[value]
