"""``hlodiff log`` and ``hlodiff recompiles``: compilations of one run, as text and JSON.

The text puts one row (log) or one line (recompiles) per program first, so
a person sees at once what recompiled, then every cause in full: the
framework's own words from the log are never cut, and each recompilation
found in a dump gets the whole diff report.
"""

from __future__ import annotations

from typing import Any, TextIO

from rich.text import Text

from ..integrations.compile_log import Program
from ..integrations.recompiles import LoggedRecompilation, Recompilation, RecompiledProgram
from . import shorten
from .escape import terminal
from .json import SCHEMA_VERSION
from .layout import name_widths, pin_widths, prose, ruled_table, widest
from .report import report_document
from .text import console, report as report_text


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _quoted(out, text: str, indent: str = "    ") -> None:
    """Several lines from a log, each made safe for a terminal, indented and
    wrapped at spaces, their continuations further in: the framework's own
    words, none left out and none split."""
    prose(out, text, indent=indent, hanging="  ")


# --- hlodiff log -----------------------------------------------------------------------


_NOTHING = ("No compilations found, so whether anything recompiled cannot be told. Turn the "
            "framework's logging on: JAX_LOG_COMPILES=1 "
            "JAX_EXPLAIN_CACHE_MISSES=1 (JAX), TF_CPP_MIN_LOG_LEVEL=0 "
            "TF_CPP_VMODULE=device_compiler=3 (TensorFlow), PT_XLA_DEBUG_LEVEL=2 (PyTorch/XLA).")
_UNNAMED = ("TensorFlow does not say what it compiled at TF_CPP_VMODULE=device_compiler=1: "
            "log with device_compiler=3, or give the run's dump (--dump DIR) to name them.")


def log_text(programs: list[Program], logged: list[LoggedRecompilation] | None = None,
             stream: TextIO | None = None) -> None:
    """A row per program, then every recompilation's cause in full (and, with the dump,
    its explanation)."""
    out = console(stream)
    if not programs:
        prose(out, _NOTHING)
        return
    compiled = sum(len(p.compilations) for p in programs if not p.from_dump)
    dumped = sum(len(p.compilations) for p in programs if p.from_dump)
    loads = sum(p.loads for p in programs)
    recompiled = [p for p in programs if p.recompiled]
    unlogged = [p for p in programs if _not_logged(p)]
    counted = _count(compiled, "compilation") if not unlogged else (
        f"{_count(compiled, 'compilation')} logged (TensorFlow's default logging names no "
        f"compilation of the {len(unlogged)} retraced program{'s' if len(unlogged) != 1 else ''}; "
        "TF_CPP_VMODULE=device_compiler=1 counts them)")
    if dumped:
        from_dump = (f"{_count(dumped, 'compilation')} counted from the dump (TensorFlow's "
                     "default logging shows none of them)")
        counted = f"{counted} and {from_dump}" if compiled or unlogged else from_dump
    named = [p for p in recompiled if p.name]
    said = f"{_count(len(named), 'user program')} recompiled"
    if len(named) < len(recompiled):  # TensorFlow's level 1 names nothing: cannot tell
        said += (f"{' and' if named else ','} {len(recompiled) - len(named)} compiled more "
                 "than once unnamed: cannot tell")
    title = (f"{_count(len(programs), 'program')}: {counted}, "
             f"{_count(loads, 'load')} from a persistent cache; {said}")
    keys = any(p.keys for p in programs)
    modules = any(p.modules for p in programs)
    columns = [("program", "left"), ("compiled", "right"), ("recompiled", "right"),
               ("loads", "right")] + [("keys", "right")] * keys + [("modules", "left")] * modules
    rows = []
    for p in programs:
        # Retraces stand in only where no compilation is logged: TensorFlow's
        # warning counts the traces of every signature, the row one signature's.
        recompilations = f"{p.retraces} retraces" if _not_logged(p) else str(p.recompilations)
        row = [terminal(shorten.program(p.name) if p.name else "(not named in the log)"),
               "not logged" if _not_logged(p) else
               f"{len(p.compilations)} (dump)" if p.from_dump else str(len(p.compilations)),
               recompilations if p.name else "?", str(p.loads)]
        if keys:
            row.append(str(len(p.keys)))
        if modules:
            row.append(", ".join("?" if m is None else str(m.module_id) for m in p.modules))
        rows.append((p, row))
    # the counts keep their width; names and module lists share what is left,
    # shortened in the middle, never broken across lines
    named = [0] + ([len(columns) - 1] if modules else [])
    fixed = [widest([columns[i][0]] + [r[i] for _, r in rows])
             for i in range(len(columns)) if i not in named]
    setup = " (framework set-up)"
    wanted = [widest([columns[0][0]] + [r[0] + (setup if not p.user else "") for p, r in rows])]
    if modules:
        wanted.append(widest([columns[-1][0]] + [r[-1] for _, r in rows]))
    shares = dict(zip(named, name_widths(out.width, fixed, wanted)))
    table = ruled_table(*columns)
    pin_widths(table, shares)
    for p, row in rows:
        label = Text(shorten.phrase(row[0], shares[0] - (0 if p.user else len(setup))))
        if not p.user:
            label.append(setup, style="dim")
        if modules:
            row[-1] = shorten.middle(row[-1], shares[len(columns) - 1])
        table.add_row(label, *row[1:], style="bold red" if p.recompiled else None)
    prose(out, title)
    out.print(table)
    joined = {entry.program for entry in logged or ()}
    for p in programs:
        _program_details(out, p, causes=p.name not in joined)
    if logged:
        out.print()
        for entry in logged:
            _logged(out, entry)


def _not_logged(program: Program) -> bool:
    """Retraced, but the log holds none of its compilations: TensorFlow's
    default logging warns of retracing and never says what XLA compiled."""
    return bool(program.retraces) and not program.requests


def _program_details(out, program: Program, causes: bool) -> None:
    name = shorten.program(program.name) if program.name else "(not named in the log)"
    if len(program.concrete_functions) > 1 or any(n > 1 for _, n in program.concrete_functions):
        functions = ", ".join(f"{c} ({_count(n, 'compilation')})"
                              for c, n in program.concrete_functions)
        prose(out, f"{name}: concrete functions (one per trace): {functions}", hanging="  ")
    if program.trace_warning:
        prose(out, f"{name}: traced at least {program.traces} times; TensorFlow says:",
              hanging="  ")
        _quoted(out, program.trace_warning)
    if program.from_dump:
        prose(out, f"{name}: the log shows none of its compilations; the "
              f"{_count(len(program.compilations), 'compilation')} are counted from the dump, "
              "one module per concrete function, in module order", hanging="  ")
    if not program.name:
        prose(out, program.note or _UNNAMED)
    if not program.recompiled or not causes:
        return
    for number, c in enumerate(program.compilations[1:], 2):
        said = c.cause or (f"key: {c.key}" if c.key else "")
        if not said and not c.where:
            continue
        where = f" at {c.where}" if c.where else ""
        prose(out, f"{name} compilation #{number} ({c.file}:{c.line}){where}", hanging="  ")
        if said:
            _quoted(out, said)


def _logged(out, entry: LoggedRecompilation) -> None:
    c = entry.logged
    where = (" (not in the log: counted from the dump)" if c.source == "dump"
             else f" ({c.file}:{c.line})")
    prose(out, Text.assemble((terminal(f"{entry.program} #{entry.number}"), "bold"),
                             terminal(where)), hanging="  ")
    said = c.cause or (f"key: {c.key}" if c.key else "")
    if said:
        out.print("  the log says:")
        _quoted(out, said)
    if entry.explained is None:
        prose(out, "the dump has no module for it (or for the compilation before it)",
              indent="  ")
        return
    r = entry.explained
    prose(out, f"the dump says: {r.line}", indent="  ", hanging="  ")
    report_text(r.report, stream=out.file, title=f"{shorten.program(r.before.label)} -> "
                                                 f"{shorten.program(r.after.label)}",
                subtitle=_runs_are_compilations(r))


def _runs_are_compilations(r: Recompilation) -> str:
    """The report compares two compilations of one run as run a and run b:
    which is which, as the page says (html.recompiles_page)."""
    return (f"run a below is compilation #{r.against}, run b compilation #{r.number}, both of "
            "this run")


def log_document(programs: list[Program],
                 logged: list[LoggedRecompilation] | None = None) -> dict[str, Any]:
    """Per program: every request found, with the dump module of each compilation; with
    the dump, each recompilation explained."""
    document: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "programs": [{
        "program": p.name or None,
        "framework": p.framework,
        "user_program": p.user,
        "compilations": None if _not_logged(p) else len(p.compilations),
        "counted_from": None if _not_logged(p) else "dump" if p.from_dump else "log",
        # unnamed, or shown only by TensorFlow's retracing warning: cannot tell
        "recompilations": p.recompilations if p.name and not _not_logged(p) else None,
        "loads": p.loads,
        "traces_at_least": p.traces or None,
        "recompiled": p.recompiled,
        "keys": list(p.keys),
        "concrete_functions": [{"concrete_function": c, "compilations": n}
                               for c, n in p.concrete_functions],
        "modules": [None if m is None else {"id": m.module_id, "path": str(m.path)}
                    for m in p.modules],
        "requests": [{"file": c.file, "line": c.line, "framework": c.framework,
                      "module": c.module, "loaded": c.loaded, "cache": c.cache, "key": c.key,
                      "fingerprint": c.fingerprint, "cause": c.cause, "where": c.where,
                      "source": c.source}
                     for c in p.requests],
        "trace_warning": p.trace_warning or None,
        "note": p.note or None,
    } for p in programs]}
    if logged is not None:
        document["recompilations"] = [{
            "program": e.program, "number": e.number,
            "counted_from": e.logged.source,
            "log": None if e.logged.source == "dump" else {
                "file": e.logged.file, "line": e.logged.line, "cause": e.logged.cause,
                "where": e.logged.where},
            "dump": None if e.explained is None else _recompilation_record(e.explained),
        } for e in logged]
    return document


# --- hlodiff recompiles ----------------------------------------------------------------------


def recompiles_text(dump: str, programs: list[RecompiledProgram],
                    stream: TextIO | None = None) -> None:
    """One line per recompiled program, then each recompilation's diff report."""
    out = console(stream)
    if not programs:
        prose(out, f"No program was compiled more than once in {dump}.")
        return
    for p in programs:
        style = "bold red" if p.user else "dim"
        setup = " (framework set-up op: compiled once per shape by design)" if not p.user else ""
        prose(out, p.summary + setup, style=style, hanging="  ")
    for p in programs:
        if not p.user:
            continue
        for r in p.recompilations:
            out.print()
            report_text(r.report, stream=out.file,
                        title=f"{p.program} #{r.number}: {shorten.program(r.before.label)} -> "
                              f"{shorten.program(r.after.label)}",
                        subtitle=_runs_are_compilations(r))


def recompiles_document(dump: str, programs: list[RecompiledProgram]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "dump": dump,
        "programs": [{
            "program": p.program,
            "user_program": p.user,
            "compilations": len(p.modules),
            "modules": [{"id": m.module_id, "path": str(m.path)} for m in p.modules],
            "summary": p.summary,
            "recompilations": [_recompilation_record(r) for r in p.recompilations],
        } for p in programs],
    }


def _recompilation_record(r: Recompilation) -> dict[str, Any]:
    return {"number": r.number, "against": r.against, "before": r.before.label,
            "after": r.after.label, "cause": r.cause, "where": r.where, "hint": r.hint or None,
            "line": r.line, "report": report_document(r.report)}
