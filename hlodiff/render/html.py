"""A diff ``Report`` as one self-contained HTML page, for a person reviewing a change.

Top of the page: the verdict (does it recompile, is it the same executable),
the cache keys that move, the two runs with the modules paired and how, and
what each stage holds. Then one card per cause: kind, old -> new, count,
origin (op_name, source line, call stack), what to do; its HLO lines, run a
beside run b, with the changed tokens marked and the rest dimmed; a big
literal as its changed elements; the neighbourhood of the change as a graph
(hlodiff/render/graph.py); and the changes that follow from it, collapsed.

Everything is inline (CSS, the small script, SVG): the page works from
``file://`` with no network, and its Content-Security-Policy lets nothing
else load or run: the style and the script are allowed by their hashes, so
even a string that escaped escaping could not run. Every string from a dump
goes through ``escape.html``.

The lines and graphs come from ``Report.context`` (``compare(...,
context=True)``); without it the page still shows every cause.
"""

from __future__ import annotations

import base64
import hashlib
import re
from collections import Counter
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..analysis.context import FindingContext, LiteralChange, Node, Place, Side
from ..analysis.explain import Finding, ProgramVerdict, Report
from ..analysis.hashes import HASHES
from . import graph
from .escape import html
from .report import STAGE_WORDS, programs_that, verdict_line

if TYPE_CHECKING:
    from ..integrations.recompiles import RecompiledProgram

ASSETS = Path(__file__).with_name("assets")
VALUE_LIMIT = 160  # characters of an old or new value in a heading
ELEMENTS_INLINE = 4  # changed elements of a literal named before the expander
ORIGINS_LISTED = 8
DERIVED_SHOWN = 12  # groups of derived changes listed under a cause (context.DERIVED_GROUPS)
PROGRAMS_SHOWN = 6  # rows of the programs table before the rest fold away
STACK_SHOWN = 4  # innermost frames of a call stack shown; the rest behind an expander


@cache
def _asset(name: str) -> str:
    return (ASSETS / name).read_text(encoding="utf-8")


# A word long enough to overflow a cell (a module's file name, an HLO line's
# operand list), and where it may break: after each part's end.
_LONG_WORD = re.compile(r"[^\s<>]{20,}")
_PART_END = re.compile(r"([._/,=])(?=\S)")


def _code(text: str) -> str:
    """``text`` escaped (escape.html), with a place to break the line
    (``<wbr>``, which copies as nothing) after each '.', '_', '/', ',' and
    '=' of a long word: a file name or an HLO line wraps between its parts,
    not in the middle of one (``before_op`` / ``timizations.txt``). The
    stylesheet's ``overflow-wrap: anywhere`` is left for a part too long
    for its cell."""
    return _LONG_WORD.sub(lambda word: _PART_END.sub(r"\1<wbr>", word.group()), html(text))


def _hash(source: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()


def page(report: Report, *, run_a: str, run_b: str, title: str = "") -> str:
    """The whole page. ``run_a`` and ``run_b`` are what was compared, as the user named it."""
    heading = title or f"{run_a} vs {run_b}"
    return _frame(heading, _verdict(report), _facts(report, run_a, run_b), report.findings,
                  _causes(report, 1) or _no_causes(report))


def recompiles_page(dump: str, programs: list[RecompiledProgram]) -> str:
    """One run's recompilations as a page: a line per recompiled program, then
    each recompilation of a user program with its causes, numbered through the
    page so that j / k walk them all."""
    user = [p for p in programs if p.user]
    mood, main, second = ("bad", "Recompiles", f"{len(user)} user program"
                          f"{'s' if len(user) != 1 else ''} compiled more than once") if user \
        else ("good", "No recompile", "no user program compiled more than once")
    lines = "".join(
        f'<li class="{"" if p.user else "muted"}"><span class="mono">{_code(p.summary)}</span>'
        + ("" if p.user else " (framework set-up op: compiled once per shape by design)")
        + "</li>" for p in programs)
    verdict = _header(mood, main, second, after=f'<ul class="notes">{lines}</ul>')
    facts = (f'<div class="facts"><section><h2>Run</h2><table><tr><th>dump</th>'
             f'<td class="path">{_code(dump)}</td></tr></table></section></div>')
    sections, findings, n = [], [], 1
    for p in user:
        for r in p.recompilations:
            causes = _causes(r.report, n)
            n += len(r.report.findings)
            findings += r.report.findings
            sections.append(
                f'<section class="recompilation"><h2 class="mono">{_code(p.program)} '
                f'{html(r.line)}</h2><p class="muted">run a below is the compilation in '
                f'{_code(r.before.label)}, run b the one in {_code(r.after.label)}: '
                f'{html(verdict_line(r.report))}</p>'
                f'{causes or _no_causes(r.report)}</section>')
    empty = f'<section class="cause"><p>No program was compiled more than once in ' \
            f'{_code(dump)}.</p></section>'
    return _frame(f"recompilations in {dump}", verdict, facts, tuple(findings),
                  "".join(sections) or empty)


def _causes(report: Report, first: int) -> str:
    """The report's causes as cards numbered from ``first``."""
    contexts = report.context if len(report.context) == len(report.findings) else \
        (FindingContext(),) * len(report.findings)
    return "".join(_cause(n, f, c)
                   for n, (f, c) in enumerate(zip(report.findings, contexts), first))


def _frame(heading: str, verdict: str, facts: str, findings: tuple[Finding, ...],
           main: str) -> str:
    """The page around its parts: the policy, the style and the script, the
    toolbar over ``findings``."""
    css, js = _asset("report.css"), _asset("report.js")
    policy = (f"default-src 'none'; style-src '{_hash(css)}'; script-src '{_hash(js)}'; "
              "img-src data:; base-uri 'none'; form-action 'none'")
    return "".join([
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">",
        f'<meta http-equiv="Content-Security-Policy" content="{policy}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>hlodiff: {html(heading)}</title><style>{css}</style></head><body>",
        verdict,
        '<div class="top">', facts, "</div>",
        _toolbar(findings),
        graph.ARROW,
        f'<main id="causes">{main}</main>',
        f'<footer>hlodiff: {_code(heading)}</footer>',
        f"<script>{js}</script></body></html>\n",
    ])


# --- top of the page ---------------------------------------------------------------------

def _verdict(report: Report) -> str:
    if report.shares_executable:
        mood, main, second = "good", "Same executable", "no recompile"
    elif report.recompiles is None and report.same_executable is None:
        mood, main, second = "unsure", "Cannot tell", "the dumps do not show enough"
    else:
        mood = "bad" if report.recompiles or report.same_executable is False else "unsure"
        main = {True: "Recompiles", False: "No recompile", None: "Recompile: cannot tell"}[
            report.recompiles]
        second = {True: "same executable", False: "different executables",
                  None: "same executable: cannot tell"}[report.same_executable]
    keys = "".join(_key(rule.label, report.hashes[rule.name]) for rule in HASHES
                   if rule.name in report.hashes)
    warnings = "".join(f'<p class="warning"><b>Check the comparison:</b> {html(w)}</p>'
                       for w in report.warnings)  # doubt about the comparison comes first
    return _header(mood, main, second, before=warnings,
                   after=f'<p class="lead">{html(verdict_line(report))}</p>'
                         f'<ul class="keys" aria-label="cache keys">{keys}</ul>')


def _header(mood: str, main: str, second: str, before: str = "", after: str = "") -> str:
    """The verdict at the top of a page, coloured by ``mood`` (bad, good, unsure)."""
    return (f'<header class="verdict {mood}" id="verdict"><div class="inner">{before}'
            f'<h1><span class="main">{main}</span><span class="second">{second}</span></h1>'
            f'{after}</div></header>')


def _key(title: str, moved: bool | None) -> str:
    state, word = {True: ("moves", "moves"), False: ("stays", "unchanged"),
                   None: ("unknown", "cannot tell")}[moved]
    return f'<li class="key {state}"><b>{html(title)}</b>: {word}</li>'


def _facts(report: Report, run_a: str, run_b: str) -> str:
    runs = (f'<section><h2>Runs</h2><table><tr><th>run a</th><td class="path">{_code(run_a)}'
            f'</td></tr><tr><th>run b</th><td class="path">{_code(run_b)}</td></tr></table>'
            "</section>")
    return (f'<div class="facts">{runs}{_files(report)}{_programs(report)}'
            f"{_extra(report)}{_notes(report)}</div>")


def _files(report: Report) -> str:
    """The files of the main program's stages that differ (the programs table
    counts every program's changes)."""
    main = next((p.program for p in report.programs if p.main), None)
    single = len(report.programs) <= 1
    rows = []
    for name, info in report.stages.items():
        program, _, stage = name.rpartition(": ")
        if not info.get("changes") or not single and program != main:
            continue
        a, b = _base(info.get("a")), _base(info.get("b"))
        files = _code(a) if a == b else f"{_code(a)}<br>{_code(b)}"
        rows.append(f'<tr><td>{html(STAGE_WORDS.get(stage, stage))}</td><td>{info["changes"]}</td>'
                    f'<td class="path">{files}</td></tr>')
    if not rows:
        return ""
    title = "Stages that differ" if single else \
        f'Stages that differ in <span class="mono">{_code(main)}</span>'
    return (f'<section><h2>{title}</h2><table><tr><th>stage</th><th>changes</th>'
            f'<th>file (run a, run b)</th></tr>{"".join(rows)}</table></section>')


def _programs(report: Report) -> str:
    """Every program paired across the runs: its modules, how they were paired,
    its changes per stage and its verdicts; past the first few, and those the
    same in both runs, folded away."""
    if not report.programs:
        return ""
    changes: dict[str, list[str]] = {}
    for name, info in report.stages.items():
        program, _, stage = name.rpartition(": ")
        changes.setdefault(program, []).append(
            f"{STAGE_WORDS.get(stage, stage)} {info.get('changes', 0)}")
    single = len(report.programs) == 1

    def row(p: ProgramVerdict) -> str:
        counts = ", ".join(changes.get("" if single else p.program, []))
        reason = f'<div class="muted">{html(p.reason)}</div>' if p.reason else ""
        return (f'<tr><td class="mono">{_code(p.program)}{" (main)" if p.main else ""}{reason}</td>'
                f'<td class="path">{_code(p.a or "(none)")}</td>'
                f'<td class="path">{_code(p.b or "(none)")}</td><td>{html(p.how)}</td>'
                f"<td>{html(counts)}</td><td>{_yes_no(p.recompiles)}</td>"
                f"<td>{_yes_no(p.same_executable, good=True)}</td><td>{p.causes}</td></tr>")
    head = ('<tr><th>program</th><th>run a module</th><th>run b module</th><th>paired by</th>'
            '<th>changes</th><th>recompiles</th><th>same executable</th><th>causes</th></tr>')
    differ = [p for p in report.programs if not _unchanged(p)]
    same = [p for p in report.programs if _unchanged(p)]
    shown, rest = (differ or same)[:PROGRAMS_SHOWN], (differ or same)[PROGRAMS_SHOWN:]
    folds = [(rest, programs_that(rest)), (same if differ else [], "the same in both runs")]
    folded = "".join(
        f'<details><summary>{len(group)} more program{"s" if len(group) != 1 else ""} paired, '
        f'{what}</summary><table>{head}{"".join(row(p) for p in group)}</table></details>'
        for group, what in folds if group)
    return (f'<section class="wide"><h2>Programs paired</h2><table>{head}'
            f'{"".join(row(p) for p in shown)}</table>{folded}</section>')


def _unchanged(program: ProgramVerdict) -> bool:
    return program.recompiles is False and program.same_executable is True and not program.causes


def _extra(report: Report) -> str:
    if not report.extra_compilations:
        return ""
    items = "".join(f'<li>run {e.run} alone compiled <span class="mono">{_code(e.module)}</span></li>'
                    for e in report.extra_compilations)
    return f'<section class="wide"><h2>Extra compilations</h2><ul class="notes">{items}</ul></section>'


def _notes(report: Report) -> str:
    notes = "".join(f"<li>{html(note)}</li>" for note in dict.fromkeys(report.notes))
    return f'<section class="wide"><h2>Notes</h2><ul class="notes">{notes}</ul></section>' \
        if notes else ""


def _yes_no(value: bool | None, good: bool = False) -> str:
    """yes / no / cannot tell, red where it costs a compilation."""
    if value is None:
        return '<span class="unsure-text">cannot tell</span>'
    bad = value is not good
    return f'<span class="{"yes" if bad else "no"}">{"yes" if value else "no"}</span>'


def _base(path: object) -> str:
    return Path(str(path)).name if path else "(none)"


def _toolbar(findings: tuple[Finding, ...]) -> str:
    kinds = sorted(Counter(f.kind for f in findings).items())
    stages = sorted(Counter(f.stage for f in findings).items())
    kind_options = "".join(f'<option value="{html(k)}">{html(k)} ({n})</option>' for k, n in kinds)
    stage_options = "".join(f'<option value="{html(s)}">{html(STAGE_WORDS.get(s, s))} ({n})'
                            "</option>" for s, n in stages)
    return ('<nav class="toolbar" aria-label="causes"><div class="inner">'
            f'<span class="count">Causes: <b id="shown">{len(findings)} of {len(findings)}</b>'
            "</span>"
            f'<label>kind <select id="filter-kind"><option value="">all</option>{kind_options}'
            "</select></label>"
            f'<label>stage <select id="filter-stage"><option value="">all</option>{stage_options}'
            "</select></label>"
            '<label>op_name <input id="search" type="search" placeholder="search op_names" '
            'autocomplete="off"></label>'
            '<span class="keys-help"><kbd>j</kbd> / <kbd>k</kbd> next / previous cause, '
            "<kbd>/</kbd> search</span></div></nav>")


def _no_causes(report: Report) -> str:
    return ('<section class="cause"><p>Nothing differs between the two runs that hlodiff '
            "can see.</p></section>" if not report.findings else "")


# --- one cause -------------------------------------------------------------------------------

def _cause(n: int, finding: Finding, context: FindingContext) -> str:
    ops = " | ".join(dict.fromkeys(o.op_name for o in _all_origins(finding) if o.op_name))
    quiet = "" if finding.moves_a_hash or finding.kind == "elided_constant" else " quiet"
    moves = (f'<span class="tag moves">moves {html(", ".join(_hash_titles(finding.affects)))}'
             "</span>" if finding.affects else '<span class="tag nomove">moves no cache key</span>')
    program = f'<span class="tag">{html(finding.program)}</span>' if finding.program else ""
    count = f'<span class="tag">{_count(finding)}</span>'
    summary = f'<p class="summary">{html(finding.summary)}</p>' if finding.summary else ""
    # a change of the program's structure (a checkpoint, an unroll) has no
    # old and new values: its sentence is the heading, not "(none) → (none)"
    heading = _change(finding.old, finding.new)
    if finding.old is None and finding.new is None and summary:
        heading, summary = html(finding.summary), ""
    body = [_origin(finding), _advice(finding)]
    if finding.detail and finding.detail not in finding.summary:
        body.append(f'<p class="detail">{html(finding.detail)}</p>')
    if finding.optimized:
        body.append(f'<p class="detail">XLA then optimized {finding.optimized} instruction'
                    f'{"s" if finding.optimized != 1 else ""} differently because of it.</p>')
    body.append(_places(context.places, context, finding.count))
    if context.graph is not None:
        body.append(_graph(n, context))
    body.append(_derived(finding, context))
    return (f'<article class="cause{quiet}" id="cause-{n}" tabindex="-1" '
            f'data-kind="{html(finding.kind)}" data-stage="{html(finding.stage)}" '
            f'data-ops="{html(ops)}">'
            f'<header><span class="n">{n}</span><div class="tags">'
            f'<span class="tag kind">{html(finding.kind)}</span>'
            f'<span class="tag">{html(STAGE_WORDS.get(finding.stage, finding.stage))}</span>'
            f"{count}{moves}{program}</div>"
            f'<h2 class="change">{heading}</h2>{summary}</header>'
            f'<div class="body">{"".join(body)}</div></article>')


def _count(finding: Finding) -> str:
    if any(w.a or w.b for w in finding.where):
        return f'{finding.count} place{"s" if finding.count != 1 else ""}'
    return f'seen {finding.count} time{"s" if finding.count != 1 else ""}'


def _all_origins(finding: Finding):
    yield from finding.origins
    for derived in finding.derived:
        yield from derived.origins


def _hash_titles(names: tuple[str, ...]) -> list[str]:
    titles = {rule.name: rule.label for rule in HASHES}
    return [titles.get(name, name) for name in names]


def _short(text: str, limit: int = VALUE_LIMIT) -> str:
    return text if len(text) <= limit else f"{text[:limit - 1]}… ({len(text)} characters)"


def _change(old: str | None, new: str | None) -> str:
    def one(value: str | None, side: str) -> str:
        if not value:
            return '<span class="none">(none)</span>'
        return f'<span class="{side}">{_code(_short(value))}</span>'
    return f'{one(old, "old")}<span class="arrow">→</span>{one(new, "new")}'


def _origin(finding: Finding) -> str:
    origin = finding.origin
    rows = []
    if origin.location:
        rows.append(f'<dt>source line</dt><dd><span class="source">{_code(origin.location)}'
                    "</span></dd>")
    if origin.op_name:
        rows.append(f'<dt>op_name</dt><dd class="mono">{_code(origin.op_name)}</dd>')
    if origin.op_type:
        rows.append(f'<dt>op_type</dt><dd class="mono">{_code(origin.op_type)}</dd>')
    if origin.stack:
        frames = [f'<li><span class="fn">{html(f.function)}</span> '
                  f'<span class="path">{_code(f"{f.file}:{f.line}")}</span></li>'
                  for f in origin.stack]
        shown = "".join(frames[:STACK_SHOWN])
        rest = len(frames) - STACK_SHOWN
        more = (f'<details class="more-frames"><summary>{rest} outer frame{"s" if rest != 1 else ""}'
                f'</summary><ol class="stack" start="{STACK_SHOWN + 1}">'
                f'{"".join(frames[STACK_SHOWN:])}</ol></details>') if rest > 0 else ""
        rows.append(f'<dt>call stack</dt><dd><ol class="stack">{shown}</ol>{more}</dd>')
    others = [o for o in finding.origins if o != origin and o.op_name]
    if others:
        listed = ", ".join(f'<span class="mono">{_code(o.op_name)}</span>'
                           + (f" ({html(o.location)})" if o.location else "")
                           for o in others[:ORIGINS_LISTED])
        more = f" and {len(others) - ORIGINS_LISTED} more" if len(others) > ORIGINS_LISTED else ""
        rows.append(f"<dt>also at</dt><dd>{listed}{more}</dd>")
    return f'<dl class="origin">{"".join(rows)}</dl>' if rows else ""


def _advice(finding: Finding) -> str:
    return f'<p class="advice"><b>What to do:</b> {html(finding.advice)}</p>' \
        if finding.advice else ""


# --- lines ---------------------------------------------------------------------------------

def _places(places: tuple[Place, ...], context: FindingContext, count: int) -> str:
    if not places:
        return ""
    more = count - len(places)
    tail = f'<p class="muted">and {more} more place{"s" if more != 1 else ""} like ' \
           "these.</p>" if more > 0 else ""
    return f"<h3>The change in the HLO</h3>{_files_of(context)}{_lines(places)}{tail}"


def _files_of(context: FindingContext) -> str:
    """The files the lines are in, once: run a's and b's are usually named alike."""
    a, b = _base(context.path_a), _base(context.path_b)
    files = f'<span class="mono">{_code(a)}</span>' if a == b else \
        f'run a <span class="mono">{_code(a)}</span>, run b <span class="mono">{_code(b)}</span>'
    return f'<div class="files">in {files}</div>'


def _lines(places: tuple[Place, ...]) -> str:
    """Each place's lines, with its computation where it changes from the place before."""
    out, computation = [], None
    for place in places:
        where = "" if place.computation == computation else \
            f'<div class="where">computation <span class="mono">{_code(place.computation)}</span></div>'
        computation = place.computation
        out.append(f'<div class="place">{where}<div class="pair">{_run("a", place.a)}'
                   f'{_run("b", place.b)}</div>{_literal(place.literal)}</div>')
    return "".join(out)


def _run(run: str, line) -> str:
    if line is None:
        return f'<div class="run {run} missing">not in run {run}</div>'
    code = "".join(f'<span class="{"chg" if p.changed else "dim"}">{_code(p.text)}</span>'
                   for p in line.pieces)
    return (f'<div class="run {run}"><div class="label"><b>run {run}</b> · line {line.number}</div>'
            f"<code>{code}</code></div>")


def _literal(change: LiteralChange | None) -> str:
    if change is None or not change.differing:
        return ""
    inline = ", ".join(f'<span class="el">[{e.index}]: {html(e.old)} → {html(e.new)}</span>'
                       for e in change.elements[:ELEMENTS_INLINE])
    source = " (values from module.mlir: XLA printed {...})" if change.source == "module.mlir" \
        else ""
    rows = "".join(f'<tr><td>[{e.index}]</td><td class="old">{html(e.old)}</td>'
                   f'<td class="new">{html(e.new)}</td></tr>' for e in change.elements)
    listed = len(change.elements)
    shown = f"the first {listed}" if listed < change.differing else f"all {listed}"
    return (f'<details class="literal"><summary><b>{change.differing} of {change.total} elements '
            f"differ</b>{html(source)}: {inline}{', …' if change.differing > ELEMENTS_INLINE else ''}"
            f'</summary><table><tr><th>element</th><th>run a</th><th>run b</th></tr>{rows}</table>'
            f'<p class="muted">{shown} differing elements; the literal is never shown whole.</p>'
            "</details>")


# --- graph ---------------------------------------------------------------------------------

def _graph(n: int, context: FindingContext) -> str:
    halves, templates = [], []
    for run, side in (("a", context.graph.a), ("b", context.graph.b)):
        ids = {node.name: f"node-{n}-{run}-{i}" for i, node in enumerate(side.nodes)}
        templates += [_node_template(ids[node.name], run, node) for node in side.nodes]
        halves.append(_half(run, side, ids))
    legend = ('<div class="legend"><span><i class="swatch changed"></i>changed</span>'
              '<span><i class="swatch added"></i>added (run b only)</span>'
              '<span><i class="swatch removed"></i>removed (run a only)</span>'
              '<span><i class="swatch same"></i>same</span>'
              '<span><i class="swatch focus"></i>this cause</span>'
              "<span>click a node for its line and origin</span></div>")
    return (f'<h3>Around the change</h3><div class="graph"><div class="halves">{"".join(halves)}'
            f'</div>{legend}<div class="node-panel" aria-live="polite"></div>'
            f'{"".join(templates)}</div>')


def _half(run: str, side: Side, ids: dict[str, str]) -> str:
    where = f' · <span class="mono" title="{html(side.computation)}">{html(side.computation)}</span>' \
        if side.computation else ""
    left = f'<div class="left-out">{side.left_out} more neighbour' \
        f'{"s" if side.left_out != 1 else ""} not drawn</div>' if side.left_out else ""
    label = f'<div class="label"><b>run {run}</b>{where}</div>{left}'
    if not side.nodes:
        text = "nothing here in this run" if side.computation else \
            f"this computation is not in run {run}"
        return f'<div class="half">{label}<div class="empty">{text}</div></div>'
    return f'<div class="half">{label}{graph.svg(side, run, ids)}</div>'


def _node_template(identifier: str, run: str, node: Node) -> str:
    rows = [f'<div class="head">run {run}: <span class="mono">{_code(node.name)}</span> '
            f"({html(node.status)}), line {node.number}</div>",
            f"<code>{html(node.line)}</code>"]
    if node.location:
        rows.append(f'<div>source line <span class="source mono">{html(node.location)}</span></div>')
    if node.op_name:
        rows.append(f'<div>op_name <span class="mono">{_code(node.op_name)}</span></div>')
    if node.stack:
        frames = "".join(f"<li>{html(frame)}</li>" for frame in node.stack)
        rows.append(f'<ol class="stack">{frames}</ol>')
    if node.partner:
        rows.append(f'<div class="muted">paired with <span class="mono">{_code(node.partner)}'
                    f"</span> in run {'b' if run == 'a' else 'a'}</div>")
    return f'<template id="{identifier}">{"".join(rows)}</template>'


# --- derived -------------------------------------------------------------------------------

def _derived(finding: Finding, context: FindingContext) -> str:
    if not finding.derived:
        return ""
    total = sum(d.count for d in finding.derived)
    by_kind = Counter()
    for d in finding.derived:
        by_kind[d.kind] += d.count
    kinds = ", ".join(f"{n} {kind}" for kind, n in by_kind.items())
    places = context.derived + ((),) * (len(finding.derived) - len(context.derived))
    items = "".join(_derived_item(d, p) for d, p in zip(finding.derived[:DERIVED_SHOWN], places))
    rest = len(finding.derived) - DERIVED_SHOWN
    more = f'<p class="muted">and {rest} more groups (--format json lists them all)</p>' \
        if rest > 0 else ""
    return (f'<details class="derived"><summary>{total} change{"s" if total != 1 else ""} '
            f"follow from it ({html(kinds)})</summary>{items}{more}</details>")


def _derived_item(derived: Finding, places: tuple[Place, ...]) -> str:
    values = f" e.g. <code>{html(_short(derived.old or '(none)', 80))}</code> → " \
             f"<code>{html(_short(derived.new or '(none)', 80))}</code>" \
        if derived.old or derived.new else ""
    detail = f'<div class="muted">{html(derived.detail)}</div>' if derived.detail else ""
    lines = _lines(places)
    return (f'<div class="derived-item"><div class="what"><b>{derived.count} {html(derived.kind)}'
            f"</b>{values}</div>{detail}{lines}</div>")
