"""Rich text for a terminal: the one module that uses rich."""

from __future__ import annotations

import os
import threading
import time
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table
from rich.text import Text

from ..analysis.constants import ConstantSite, abbreviate
from ..dumps import DumpFile, Listing, human_size
from ..dumps import explain_name


def console(stream: TextIO | None = None) -> Console:
    """A console that colours only real terminals and honours NO_COLOR.

    Output that is not a terminal (a pipe, a file, a CI log) gets a wide page
    rather than rich's default of 80 columns, so tables do not fold. When
    git runs us with its pager (GIT_PAGER_IN_USE), colour as git itself does
    on a terminal: the pager shows it.
    """
    paged = stream is None and bool(os.environ.get("GIT_PAGER_IN_USE"))
    out = Console(file=stream, highlight=False, soft_wrap=False, force_terminal=paged or None)
    if not out.is_terminal or paged:
        out = Console(file=stream, highlight=False, soft_wrap=False, width=160,
                      force_terminal=paged or None)
    return out


def constants_table(path: str, module_name: str, sites: list[ConstantSite],
                    stream: TextIO | None = None) -> None:
    out = console(stream)
    table = Table(title=escape(f"{len(sites)} constants in {module_name} ({path})"), title_justify="left",
                  show_lines=False)
    table.add_column("line", justify="right", style="dim")
    table.add_column("constant")
    table.add_column("shape")
    table.add_column("value", overflow="fold")
    table.add_column("op_name (origin)", overflow="fold")
    table.add_column("source", overflow="fold")
    for site in sites:
        # Names, values and origins come from the dump: never read them as markup.
        value = escape(abbreviate(site.instruction))
        if site.instruction.literal is not None and site.instruction.literal.elided:
            value = f"[yellow]{value}[/]"
        op_name = escape(site.origin.op_name or "")
        if site.origin_via and op_name:
            op_name += f" [dim](via {escape(site.origin_via[0])})[/]"
        table.add_row(str(site.instruction.line), escape(site.name), escape(str(site.shape)), value,
                      op_name, escape(site.origin.location or ""))
    out.print(table)
    if any(s.instruction.literal is not None and s.instruction.literal.elided for s in sites):
        out.print("[yellow]{...}[/] values were not printed by XLA; dump again with "
                  "XLA_FLAGS=--xla_dump_large_constants to see them.")


# Show a progress bar once reading is this big or this slow, and only on a terminal.
PROGRESS_MIN_ITEMS = 200
PROGRESS_AFTER_SECONDS = 2.0


@contextmanager
def progress(total: int, what: str, stream: TextIO | None = None) -> Iterator[Callable[..., None]]:
    """Yield ``advance()``; a transient bar on stderr appears for long reads only.

    Short reads stay silent so a quick ``hlodiff ls`` does not flicker, and
    a non-terminal stderr (a pipe, CI logs) never gets control codes.
    """
    out = Console(stderr=True) if stream is None else console(stream)
    if not out.is_terminal:
        yield lambda *_: None
        return
    bar = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeElapsedColumn(), console=out, transient=True)
    task = bar.add_task(what, total=total)
    started = time.monotonic()

    def advance(*_: object) -> None:
        if not bar.live.is_started and (total > PROGRESS_MIN_ITEMS or
                                        time.monotonic() - started > PROGRESS_AFTER_SECONDS):
            bar.start()
        bar.advance(task)

    try:
        yield advance
    finally:
        if bar.live.is_started:
            bar.stop()


@contextmanager
def status(quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """Yield ``say(text)``; a spinner on stderr shows the latest text once the
    work has run for PROGRESS_AFTER_SECONDS. Quick runs, ``--quiet`` and a
    stderr that is not a terminal get nothing."""
    out = Console(stderr=True)
    if quiet or not out.is_terminal:
        yield lambda _: None
        return
    spinner = out.status("working")
    timer = threading.Timer(PROGRESS_AFTER_SECONDS, spinner.start)
    timer.daemon = True
    timer.start()
    try:
        yield spinner.update
    finally:
        timer.cancel()
        spinner.stop()


def ls_table(listing: Listing, *, explain: bool = False, stream: TextIO | None = None) -> None:
    """One row per module, the main program marked and why it was chosen."""
    out = console(stream)
    dump = listing.dump
    table = Table(title=f"{_count(len(listing.rows), 'module')} in {dump.root}",
                  title_justify="left")
    table.add_column("id", justify="right")
    table.add_column("program", overflow="fold")
    table.add_column("stages")
    table.add_column("size", justify="right")
    table.add_column("instructions", justify="right")
    table.add_column("main")
    for row in listing.rows:
        module = row.module
        count = "" if row.instructions is None else str(row.instructions)
        if row.error:
            count = "[red]unreadable[/]"
        style = "bold" if row.is_main else None
        table.add_row("" if module.module_id is None else str(module.module_id),
                      escape(module.normalised or module.label), ", ".join(module.stages) or "-",
                      human_size(module.size), count, "[green]main[/]" if row.is_main else "",
                      style=style)
    out.print(table)
    main = listing.main.module
    number = "" if main.module_id is None else f"module {main.module_id}, "
    out.print(f"main program: {number}{main.normalised} ({listing.main.reason})", markup=False)
    out.print(f"  {main.path}", style="dim", markup=False)
    for row in listing.rows:
        if row.error:
            out.print(f"[red]{escape(row.module.label)}:[/] {escape(row.error)}", markup=True)
    if dump.unknown:
        names = ", ".join(f.relative for f in dump.unknown[:10])
        more = f" and {len(dump.unknown) - 10} more" if len(dump.unknown) > 10 else ""
        out.print(f"{_count(len(dump.unknown), 'file')} not named the way XLA names dumps "
                  f"(listed, not read): {names}{more}", markup=False)
    if explain:
        _explain_names(out, listing)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _explain_names(out: Console, listing: Listing) -> None:
    """Each module's file names cut into parts, every distinct part explained once."""
    out.print()
    out.print("[bold]What the file names mean[/]")
    for row in listing.rows:
        module = row.module
        out.print(f"{module.label}.*  ({len(module.files)} files)", style="cyan", markup=False)
        _explain_files(out, module.files)
    if listing.dump.unknown:
        out.print("other files", style="cyan")
        _explain_files(out, listing.dump.unknown)


def _explain_files(out: Console, files: tuple[DumpFile, ...]) -> None:
    grid = Table.grid(padding=(0, 2))
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    explained: set[str] = set()
    per_kernel: dict[str, int] = {}
    for file in files:
        if file.detail:  # one .ll or .o per kernel: explain the first of each kind
            per_kernel[file.kind] = per_kernel.get(file.kind, 0) + 1
            if per_kernel[file.kind] > 1:
                continue
        for part in explain_name(file):
            if part.text not in explained:
                explained.add(part.text)
                grid.add_row(Text("  " + part.text), Text(part.meaning))
    for kind, count in per_kernel.items():
        if count > 1:
            grid.add_row(Text(""), Text(f"(and {count - 1} more {kind} files, one per kernel)"))
    out.print(grid)


def varying_constants_table(paths: list[str], varying, stream: TextIO | None = None) -> None:
    """Constants whose value is not the same in every run: one column per run."""
    out = console(stream)
    if not varying:
        out.print(f"No constant varies across the {len(paths)} runs.")
        return
    table = Table(title=f"{len(varying)} constants vary across {len(paths)} runs",
                  title_justify="left")
    table.add_column("constant")
    table.add_column("shape")
    for n, _ in enumerate(paths, 1):
        table.add_column(f"run {n}", overflow="fold")
    table.add_column("op_name (origin)", overflow="fold")
    table.add_column("source", overflow="fold")
    for item in varying:
        site = item.site
        values = ["[dim](none)[/]" if v is None else escape(_short(v)) for v in item.values]
        table.add_row(escape(site.name), escape(str(site.shape)), *values,
                      escape(site.origin.op_name or ""), escape(site.origin.location or ""))
    out.print(table)
    for n, path in enumerate(paths, 1):
        out.print(f"[dim]run {n}: {escape(str(path))}[/]")


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


_VERDICT_STYLE = {True: "bold green", False: "bold red", None: "bold yellow"}


def report(rep, stream: TextIO | None = None, details: int = 5, rows: int = 15,
           title: str | None = None) -> None:
    """The diff report: verdict, compared modules, ranked findings, details, hashes.

    ``title`` (the path in the repository, under git) heads it, so several
    files in one ``git diff`` stay apart.
    """
    from ..analysis.hashes import HASHES
    from .report import verdict_line

    out = console(stream)
    if title:
        out.print(f"[bold]{escape(title)}[/]")
    out.print(f"[{_VERDICT_STYLE[rep.same_executable]}]{escape(verdict_line(rep))}[/]")
    for module in rep.modules:
        out.print(f"[dim]{escape(f'compared {module.a} with {module.b} (paired by {module.how})')}[/]")
    shown = [f for f in rep.findings if f.moves_a_hash or f.kind == "elided_constant"]
    shown = (shown or list(rep.findings))[:rows]
    if rep.findings:
        table = Table(title_justify="left", show_lines=False)
        for name, justify in (("#", "right"), ("kind", "left"), ("stage", "left"),
                              ("old -> new", "left"), ("count", "right"),
                              ("origin", "left"), ("moves", "left")):
            table.add_column(name, justify=justify, overflow="fold")
        for n, f in enumerate(shown, 1):
            change = f"{_short(f.old or '(none)', 40)} -> {_short(f.new or '(none)', 40)}"
            origin = "\n".join(filter(None, (f.origin.op_name, f.origin.location)))
            table.add_row(str(n), f.kind, _STAGE_SHORT.get(f.stage, f.stage), escape(change),
                          str(f.count), escape(origin), ", ".join(_HASH_SHORT[h] for h in f.affects)
                          or "[dim]nothing[/]")
        out.print(table)
        rest = len(rep.findings) - len(shown)
        if rest:
            out.print(f"[dim]... and {rest} more finding{'s' if rest != 1 else ''} "
                      "(metadata and other differences that move no cache key; "
                      "--format json lists them all)[/]")
        for n, f in enumerate(shown[:details], 1):
            _finding_details(out, n, f)
    hashes = "  ".join(f"{h.title}: {_yes_no(rep.hashes.get(h.name))}" for h in HASHES)
    out.print(f"[dim]{hashes}[/]")
    for note in rep.notes:
        out.print(f"[yellow]note:[/] {escape(note)}")


_STAGE_SHORT = {"before_optimizations": "before", "after_optimizations": "after"}
_HASH_SHORT = {"xla_fingerprint": "XLA", "jax_cache_key": "JAX", "graphcore_hlo_hash": "Graphcore"}


def _yes_no(value) -> str:
    return {True: "changed", False: "unchanged", None: "cannot tell"}[value]


def _finding_details(out: Console, n: int, finding) -> None:
    lines = []
    if finding.detail:
        lines.append(finding.detail)
    stack = " < ".join(f"{f.function} ({f.file}:{f.line})" for f in finding.origin.stack[:4])
    if stack:
        lines.append(f"stack: {stack}")
    places = ", ".join(f"{_short(w.computation, 40)}/{w.b or w.a}" for w in finding.where[:4])
    if places:
        more = f" and {len(finding.where) - 4} more" if len(finding.where) > 4 else ""
        lines.append(f"at {places}{more}")
    for d in finding.derived:
        lines.append(f"follows from it: {d.count} {d.kind} change{'s' if d.count != 1 else ''}"
                     + (f" (e.g. {_short(d.old or '', 30)} -> {_short(d.new or '', 30)})"
                        if d.old or d.new else ""))
    if lines:
        out.print(f"[bold]{n}.[/] " + escape("\n   ".join(lines)))


def one_sided(path: str, *, added: bool, stream: TextIO | None = None) -> None:
    """A file git shows as added or deleted: nothing to compare it with."""
    out = console(stream)
    what = "added: a new program, compiled for the first time" if added else \
        "deleted: its program is no longer compiled"
    out.print(f"[bold]{escape(path)}[/]: {what}")


def git_setup(settings, applied_to=None, stream: TextIO | None = None) -> None:
    """The git settings as lines to paste, or where they were written."""
    out = console(stream)
    if applied_to is not None:
        out.print(f"wrote {len(settings.config)} settings to {applied_to}/.git/config and "
                  f"{len(settings.attributes)} lines to {applied_to}/.gitattributes", markup=False)
        return
    out.print("# .gitattributes", markup=False)
    for line in settings.attributes:
        out.print(line, markup=False)
    out.print("\n# git config (run inside the repository)", markup=False)
    for key, value in settings.config:
        out.print(f"git config {key} {_shell_quote(value)}", markup=False)
    out.print("\n# one-off: git -c diff.external='hlodiff diff' diff   "
              "or   git difftool -t hlodiff", markup=False)


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def baseline_written(path, document, stream: TextIO | None = None) -> None:
    """Which programs a baseline file now holds."""
    out = console(stream)
    programs = ", ".join(m["program"] for m in document["modules"])
    out.print(f"recorded {_count(len(document['modules']), 'module')} ({programs}) in {path}",
              markup=False)
