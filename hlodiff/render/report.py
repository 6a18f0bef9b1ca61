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
      "extra_compilations": [{"run": "a" | "b", "module", "program", "again", "smaller"}],
      "splits": [{"run": "a" | "b", "program", "whole", "modules": [...], "holders": [...],
                  "moved", "missing"}],
      "stages": {"before_optimizations": {"a": path, "b": path, "changes": n}, ...},
      "modules": [{"a": label, "b": label, "how": evidence}],
      "findings": [{                            # ranked: most explanatory first
        "program": name,
        "kind": one of hlodiff.analysis.diff.KINDS, or "replaced", "op_moved", "parameter_order",
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
      "notes": [str],
      "warnings": [str]                         # the comparison itself may be the wrong one
    }
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from ..analysis.explain import Finding, Report, Where, loaded_by
from ..analysis.hashes import HASHES, rule
from .escape import markdown_code, markdown_text
from .records import origin_record
from .shorten import program

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
        "extra_compilations": [{"run": e.run, "module": e.module, "program": e.program,
                                "again": e.again, "smaller": e.smaller}
                               for e in report.extra_compilations],
        "splits": [{"run": s.run, "program": s.program, "whole": s.whole,
                    "modules": list(s.modules),
                    "holders": list(s.holders), "moved": s.moved, "missing": s.missing}
                   for s in report.splits],
        "stages": {name: dict(info) for name, info in report.stages.items()},
        "modules": [{"a": m.a, "b": m.b, "how": m.how} for m in report.modules],
        "findings": [finding_record(f) for f in report.findings],
        "hashes": [{"name": h.name, "title": h.title, "stage": h.stage, "observed": h.observed,
                    "changed": report.hashes[h.name], "source": h.source}
                   for h in HASHES if h.name in report.hashes],
        "notes": list(report.notes),
        "warnings": list(report.warnings),
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


def compared(report: Report) -> tuple[list, list[str]]:
    """The module pairings worth a line of their own (the main program and
    every program that differs), and the names of the other programs, the
    same in both runs, to be counted in one line."""
    shown, same = [], []
    for verdict in report.programs:  # each has the pairing's a, b and how
        if verdict.main or verdict.recompiles is not False or verdict.same_executable is not True:
            shown.append(verdict)
        else:
            same.append(verdict.program)
    return sorted(shown, key=lambda v: not v.main), same  # the main program's line first


def differs(verdict) -> bool:
    """Does the program certainly recompile or compile to another executable?"""
    return verdict.recompiles is True or verdict.same_executable is False


def programs_that(verdicts: list) -> str:
    """What a group of programs listed past the first few have in common:
    ``that differ``; ``that may differ`` where none certainly does (a run
    that loaded its executables from a cache dumps no compile input);
    ``whose differences recompile nothing`` (names, metadata); else how
    many of them differ."""
    count = sum(map(differs, verdicts))
    unknown = sum(1 for v in verdicts if not differs(v) and
                  (v.recompiles is None or v.same_executable is None))
    if count == len(verdicts):
        return "that differ"
    if count == 0:
        return "that may differ" if unknown else "whose differences recompile nothing"
    return f"({count} of them differ)"


# The programs a line names before "and N more": Keras with jit_compile=False
# compiles every operation as a program, and a report named all 91 alike in
# 25 lines at 100 columns, above the findings.
_NAMED = 8


def same_programs_line(names: list[str], shown=str) -> str:
    """``3 other programs are the same in both runs: a, b, c``, each name as
    ``shown`` writes it (a code span in Markdown); past eight, ``and 83
    more`` (the JSON lists every pairing)."""
    listed = ", ".join(map(shown, names[:_NAMED]))
    if len(names) > _NAMED:
        listed += f" and {len(names) - _NAMED} more (--format json lists every pairing)"
    return (f"{len(names)} other program{'s are' if len(names) > 1 else ' is'} the same in both "
            f"runs: {listed}")


def extra_compilations(report: Report) -> tuple[list[str], list[str]]:
    """The labels of the modules compiled only in run a, and only in run b."""
    return ([e.module for e in report.extra_compilations if e.run == "a"],
            [e.module for e in report.extra_compilations if e.run == "b"])


def verdict_line(report: Report, spell: Spelling = PLAIN) -> str:
    """One sentence a person reads first: does it recompile, is it the same
    executable, and, when it differs, the cause and which programs."""
    differing = [p for p in report.programs if p.recompiles or p.same_executable is False]
    names = ", ".join(spell.value(p.program) for p in differing[:3]) + \
        (f" and {len(differing) - 3} more" if len(differing) > 3 else "")
    top = report.top
    cause = f" Top cause: {describe(top, spell)}." if explains(top, report) else ""
    # the top finding's removed operations run in the split's other graphs; a
    # split of another program (eager helpers a model's set-up compiled one
    # way in one run, another way in the other) does not explain it
    split = next((s for s in report.splits if top is None or s.program == top.program), None)
    if split is not None:
        cause = f" Top cause: {spell.value(split.sentence)}."
    extra = len(report.extra_compilations)
    again = compiled_again(report, spell)
    extra_text = f"; {extra} extra compilation{'s' if extra != 1 else ''} in one run" + \
        (f": {again}" if again else "") if extra else ""
    if not cause and extra:
        # nothing both runs compiled explains the verdict: what one run alone
        # compiled does (Keras with jit_compile=False compiles a new layer's
        # operations, run by run, as programs of their own)
        cause = f" Top cause: {alone_compiled(report, spell)}."
    if report.shares_executable:
        quiet = len(report.findings)
        # each may still move a fingerprint (metadata): the table says which
        tail = f"; {quiet} difference{'s' if quiet != 1 else ''} that recompile" \
            f"{'' if quiet != 1 else 's'} nothing" \
            if quiet else ""
        loads = Counter(filter(None, map(loaded_by, report.programs)))
        if loads:  # nothing to compare the compile input with, and nothing compiled
            run, count = loads.most_common(1)[0]
            every = "every program" if count == len(report.programs) else \
                f"{count} of {len(report.programs)} programs"
            return f"Same executable, no recompile: {run} loaded {every} from JAX's persistent " \
                f"cache" + tail + extra_text + "."
        return "Same executable, no recompile: nothing the compiler sees differs" + tail + \
            extra_text + "."
    if report.recompiles is None and report.same_executable is None:
        reason = next((p.reason for p in report.programs if p.reason), "")
        return f"Cannot tell{': ' + spell.value(reason) if reason else ''}."
    parts = []
    if report.recompiles:
        parts.append(f"Recompiles ({names})" if names else "Recompiles")
    elif report.recompiles is None:
        # which program, and why: a pruned dump's helper said only "cannot tell"
        why = next((p.reason for p in report.programs
                    if p.recompiles is None and p.reason), "")
        parts.append("Recompiles: cannot tell" + (f" ({spell.value(why)})" if why else ""))
    else:
        parts.append("No recompile")
    if report.same_executable is True:
        parts.append("but XLA produces the same executable" if report.recompiles
                     else "same executable")
    elif report.same_executable is False:
        parts.append("different executables")
    else:
        reason = next((p.reason for p in report.programs
                       if p.same_executable is None and p.reason), "")
        parts.append("same executable: cannot tell"
                     + (f" ({spell.value(reason)})" if reason else ""))
    main = next((p for p in report.programs if p.main), None)
    if main is not None and differing and main not in differing and len(report.programs) > 1 \
            and main.recompiles is False and main.same_executable is True:
        # the helpers recompiled; the program a user came for did not
        extra_text += f"; the main program {spell.value(main.program)} is the same"
    return ", ".join(parts) + extra_text + "." + cause


def explains(finding: Finding | None, report: Report) -> bool:
    """Is ``finding`` a cause of what the headline says differs? It must move
    a cache key, and belong to the whole run or to a program that may
    differ: a finding of a program both runs compiled alike (its metadata,
    say) explains nothing. Keras with jit_compile=False compiles each
    operation on first use, so ``jit_select_n`` carried relu's stack in one
    run and a new Dropout's in the other, and that metadata led the
    headline of a run that differed by the Dropout's own programs."""
    if finding is None or not finding.moves_a_hash:
        return False
    alike = {p.program for p in report.programs
             if p.recompiles is False and p.same_executable is True}
    return finding.program not in alike


def compiled_again(report: Report, spell: Spelling = PLAIN) -> str:
    """``run b compiled jit_train_step again for other inputs, f32[8,16] ->
    f32[4,16]``: a program both runs compiled that one run compiled once
    more (a short last batch), which the verdict on the programs both runs
    compiled does not cover; "" when none was."""
    found = next((e for e in report.extra_compilations if e.again), None)
    if found is None:
        return ""
    how = "with the same input shapes" if found.again == "the same input shapes" \
        else f"for other inputs, {spell.value(found.again)}"
    hint = " (smaller: a short last batch?)" if found.smaller else ""
    return f"run {found.run} compiled {spell.value(found.program)} again {how}{hint}"


def alone_compiled(report: Report, spell: Spelling = PLAIN) -> str:
    """``run b alone compiled 7 modules: jit_multiply, jit_add, jit__bernoulli
    and 3 other programs``: the extra compilations, run by run, each program
    named once, in compile order."""
    said = []
    for run in ("a", "b"):
        modules = [e for e in report.extra_compilations if e.run == run]
        if not modules:
            continue
        names = list(dict.fromkeys(e.program or e.module for e in modules))
        listed = ", ".join(spell.value(n) for n in names[:3])
        if len(names) > 3:
            rest = len(names) - 3
            listed += f" and {rest} other program{'s' if rest != 1 else ''}"
        count = len(modules)
        said.append(f"run {run} alone compiled {count} module{'s' if count != 1 else ''}: "
                    f"{listed}")
    return "; ".join(said)


def describe(finding: Finding, spell: Spelling = PLAIN) -> str:
    """``constant 0.01 -> 0.02 at jit(f)/sgd/mul (train.py:57)``"""
    change = " -> ".join("(none)" if v is None else spell.value(v)
                         for v in (finding.old, finding.new))
    said = finding.summary or change  # the summary quotes names from the dump: a value
    text = spell.value(finding.summary) if finding.summary else f"{finding.kind} {change}"
    # what the summary does not say already of the origin
    op_name, location = (part if part and part not in said else None
                         for part in (finding.origin.op_name, finding.origin.location))
    where = spell.op_name(op_name) if op_name else ""
    if location:
        location = spell.location(location)
        where = f"{where} ({location})" if where else location
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
    icon = "✅" if report.shares_executable else \
        "❔" if report.same_executable is None and report.recompiles is None else "❌"
    lines = []
    for warning in report.warnings:  # doubt about the comparison comes before its answer
        lines += [f"> **Warning:** {markdown_text(warning)}", ""]
    lines += [f"### {icon} hlodiff: {verdict_line(report, _Markdown())}", ""]
    shown, same = compared(report)
    for module in shown:
        lines.append(f"Compared {_name(module.a)} with {_name(module.b)} "
                     f"(paired by {markdown_text(module.how)}).")
    if same:
        lines.append(same_programs_line(same, markdown_code) + ".")
    lines.append("")
    findings = list(report.findings)
    if findings:
        cells = _Markdown(table=True)
        lines += ["| # | kind | stage | old → new | count | origin | moves |",
                  "|---|---|---|---|---|---|---|"]
        for n, f in enumerate(findings[:_MARKDOWN_ROWS], 1):
            origin = " ".join(cells.value(text) for text in (f.origin.op_name, f.origin.location)
                              if text)
            count = f"{f.count}, then {f.optimized} optimized differently" if f.optimized \
                else str(f.count)
            lines.append(f"| {n} | {f.kind} | {STAGE_WORDS.get(f.stage, f.stage)} | "
                         f"{_cell(f.old)} → {_cell(f.new)} | {count} | {origin or '—'} | "
                         f"{', '.join(rule(h).short for h in f.affects) or 'nothing'} |")
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
        if h.name in report.hashes:
            lines.append(f"| {h.label} | {_yes_no(report.hashes[h.name])} |")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)) + "\n"


def _name(label: str | None) -> str:
    return markdown_code(program(label)) if label else "(none)"


def _yes_no(value: bool | None) -> str:
    return {True: "yes", False: "no", None: "cannot tell"}[value]
