"""Text for a terminal or a pipe, printed by rich, laid out as layout.py lays it.

Every string that comes from a dump or a log (op_names, file and module
names, values, log lines) is passed through ``escape.terminal`` and printed
by a console that reads no markup and no emoji codes, so it can neither
drive the terminal nor style itself. Output wraps to the page width
(``page_width``); a name too long for its column is shortened in the middle
(``shorten``), never split across lines.
"""

from __future__ import annotations

import os
import re
import sys
import threading
import time
from collections import Counter
from contextlib import contextmanager
from typing import Callable, Iterator, TextIO

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..analysis.constants import ConstantSite, abbreviate
from ..dumps import Listing, human_size, legend
from . import shorten
from .escape import terminal
from .layout import name_widths, pin_widths, prose, ruled_table, widest
from .report import (STAGE_WORDS, Spelling, compared, extra_compilations, programs_that,
                     same_programs_line, verdict_line)

# Output that reaches no terminal at all (a CI log, a file written by a
# job) and no COLUMNS: a wide page, so tables keep their rows on one line.
PIPED_WIDTH = 160
_NARROWEST = 40


def page_width(stream: TextIO | None = None) -> int:
    """How wide to lay text out: ``COLUMNS`` when set; else the width of the
    terminal the output goes to; else, when it is piped (to a pager, a
    file, ``grep``) from a terminal, that terminal's width, since a person
    reads it there; else PIPED_WIDTH."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return max(int(columns), _NARROWEST)
    for target in (stream or sys.stdout, sys.stderr):
        try:
            columns = os.get_terminal_size(target.fileno()).columns
        except (AttributeError, OSError, ValueError):
            continue
        if columns > 0:  # a terminal that reports 0 x 0 (script(1), some CI) says nothing
            return max(columns, _NARROWEST)
    return PIPED_WIDTH


def console(stream: TextIO | None = None) -> Console:
    """A console laid out to ``page_width`` that colours only real terminals
    and honours NO_COLOR. When git runs us with its pager
    (GIT_PAGER_IN_USE), colour as git itself does on a terminal: the pager
    shows it."""
    paged = stream is None and bool(os.environ.get("GIT_PAGER_IN_USE"))
    target = stream or sys.stdout
    if not paged and not _is_terminal(target):
        target = _Trimmed(target)
    return Console(file=target, width=page_width(stream), force_terminal=paged or None,
                   **_LITERAL)


# Strings print as written: no [markup], no :emoji: codes, no highlighting,
# whoever wrote them.
_LITERAL = dict(markup=False, emoji=False, highlight=False, soft_wrap=False)


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


class _Trimmed:
    """A stream without the spaces rich pads table lines with: in a file, a
    CI log or a diff of two reports, trailing blanks are noise."""

    def __init__(self, stream: TextIO):
        self._stream = stream

    def write(self, text: str) -> int:
        return self._stream.write(_TRAILING_BLANKS.sub("", text))

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


_TRAILING_BLANKS = re.compile(r" +(?=\n)")


def _text(text: str, style: str | None = None) -> Text:
    """Text from a dump or a log, with its control characters made visible."""
    return Text(terminal(text), style=style or "")


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


class _Fitted(Spelling):
    """Strings from the dump made visible; names shortened to ``width``, less
    the punctuation a sentence puts after a name (``).``), which would
    otherwise be wrapped onto a line of its own."""

    def __init__(self, width: int):
        self.width = width - 2

    def value(self, text: str) -> str:
        return terminal(text)

    def op_name(self, text: str) -> str:
        return shorten.op_name(terminal(text), self.width)

    def location(self, text: str) -> str:
        return shorten.location(terminal(text), self.width)


# --- constants ----------------------------------------------------------------------------

def constants_table(path: str, module_name: str, sites: list[ConstantSite],
                    stream: TextIO | None = None) -> None:
    """Every constant of a module: value, shape and where it came from."""
    out = console(stream)
    prose(out, _text(f"{_plural(len(sites), 'constant')} in {module_name}", style="bold"))
    prose(out, path, style="dim")
    rows = [(str(s.instruction.line), terminal(s.name), terminal(str(s.shape)),
             terminal(abbreviate(s.instruction)), terminal(s.origin.op_name or ""),
             terminal(s.origin_via[0]) if s.origin_via and s.origin.op_name else "",
             terminal(s.origin.location or ""),
             s.instruction.literal is not None and s.instruction.literal.elided) for s in sites]
    table = ruled_table(("line", "right"), ("constant", "left"), ("shape", "left"),
                        ("value", "left"), ("origin (op_name, source)", "left"))
    fixed = [widest([h] + [r[i] for r in rows]) for i, h in ((0, "line"), (2, "shape"))]
    fixed.append(min(widest(["value"] + [r[3] for r in rows]), max(out.width // 5, 12)))
    name, origin = name_widths(out.width, fixed, [
        widest(["constant"] + [r[1] for r in rows]),
        widest(["origin (op_name, source)"] + [f"{r[4]}  {r[6]}".strip() for r in rows])])
    table.columns[3].width = fixed[2]
    table.columns[3].overflow = "fold"
    pin_widths(table, {1: name, 4: origin})
    table.columns[4].no_wrap = False  # its cells fit already; its header wraps, not cut
    for line, constant, shape, value, op_name, via, location, elided in rows:
        table.add_row(line, shorten.token(constant, name), shape,
                      Text(shorten.each_word(value, fixed[2]), style="yellow" if elided else ""),
                      _origin(op_name, location, origin, via))
    out.print(table)
    if any(r[7] for r in rows):
        prose(out, Text.assemble(("{...}", "yellow"), " values were not printed by XLA; dump "
                                 "again with XLA_FLAGS=--xla_dump_large_constants to see them."))


def _origin(op_name: str, location: str, width: int, via: str = "") -> Text:
    """op_name and file:line on one line when they fit in ``width``, else one
    above the other, each shortened in the middle; the instruction the
    origin was borrowed from under them."""
    together = f"{op_name}  {location}" if op_name and location else op_name or location
    if len(together) > width:
        together = "\n".join(filter(None, (shorten.op_name(op_name, width),
                                            shorten.location(location, width))))
    text = Text(together, style="cyan")
    if via:
        text.append("\n" + shorten.middle(f"(via {via})", width), style="dim")
    return text


def varying_constants_table(paths: list[str], varying, stream: TextIO | None = None) -> None:
    """Constants whose value is not the same in every run: one column per run;
    then how many were printed as {...} everywhere, which the text cannot compare."""
    out = console(stream)
    undecided = [v for v in varying if v.undecided]
    varying = [v for v in varying if not v.undecided]
    if undecided:
        said = "constant was" if len(undecided) == 1 else "constants were"
        note = (f"{len(undecided)} {said} printed as {{...}} in every run and not compared "
                "(hlodiff diff reads their values from JAX's module.mlir; or dump with "
                "XLA_FLAGS=--xla_dump_large_constants)")
    if not varying:
        out.print(f"No printed constant varies across the {len(paths)} runs." if undecided
                  else f"No constant varies across the {len(paths)} runs.")
        if undecided:
            out.print(note)
        return
    varies = "constant varies" if len(varying) == 1 else "constants vary"
    out.print(f"{len(varying)} {varies} across {len(paths)} runs", style="bold")
    runs = [f"run {n}" for n in range(1, len(paths) + 1)]
    table = ruled_table(("constant", "left"), ("shape", "left"), *((r, "left") for r in runs),
                        ("origin (op_name, source)", "left"))
    rows = [(terminal(i.site.name), terminal(str(i.site.shape)),
             ["(none)" if v is None else _short(terminal(v)) for v in i.values],
             terminal(i.site.origin.op_name or ""), terminal(i.site.origin.location or ""))
            for i in varying]
    fixed = [widest(["constant"] + [r[0] for r in rows]),
             widest(["shape"] + [r[1] for r in rows])]
    fixed += [widest([run] + [r[2][n] for r in rows]) for n, run in enumerate(runs)]
    (origin,) = name_widths(out.width, fixed, [widest(["origin (op_name, source)"] + [
        f"{r[3]}  {r[4]}".strip() for r in rows])], floor=20)
    pin_widths(table, {len(fixed): origin})
    table.columns[len(fixed)].no_wrap = False  # its cells fit already; its header wraps
    for constant, shape, values, op_name, location in rows:
        table.add_row(constant, shape, *values, _origin(op_name, location, origin))
    out.print(table)
    for run, path in zip(runs, paths):
        prose(out, f"{run}: {path}", style="dim", hanging="  ")
    if undecided:
        out.print(note)


def _short(text: str, limit: int = 60) -> str:
    return shorten.words(text, limit)


# --- progress -----------------------------------------------------------------------------

# Show a progress bar once reading is this big or this slow, and only on a terminal.
PROGRESS_MIN_ITEMS = 200
PROGRESS_AFTER_SECONDS = 2.0


@contextmanager
def progress(total: int, what: str, stream: TextIO | None = None) -> Iterator[Callable[..., None]]:
    """Yield ``advance()``; a transient bar on stderr appears for long reads only.

    Short reads stay silent so a quick ``hlodiff ls`` does not flicker, and
    a non-terminal stderr (a pipe, CI logs) never gets control codes.
    """
    out = Console(stderr=True, **_LITERAL) if stream is None else console(stream)
    if not out.is_terminal:
        yield lambda *_: None
        return
    # Imported here: most runs show no bar, and a diff read from the cache
    # should not pay for loading it.
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn,
                               TimeElapsedColumn)
    bar = Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                   MofNCompleteColumn(), TimeElapsedColumn(), console=out, transient=True)
    task = bar.add_task(terminal(what), total=total)
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
    stderr that is not a terminal get nothing. The texts name modules of
    the dump: they are shown as text, never read as markup."""
    out = Console(stderr=True, **_LITERAL)
    if quiet or not out.is_terminal:
        yield lambda _: None
        return
    spinner = out.status("working")
    timer = threading.Timer(PROGRESS_AFTER_SECONDS, spinner.start)
    timer.daemon = True
    timer.start()
    try:
        yield lambda text: spinner.update(_text(shorten.program(text)))
    finally:
        timer.cancel()
        spinner.stop()


# --- ls -----------------------------------------------------------------------------------

def ls_table(listing: Listing, *, explain: bool = False, stream: TextIO | None = None) -> None:
    """One row per module, the main program marked and why it was chosen."""
    out = console(stream)
    dump = listing.dump
    prose(out, f"{_plural(len(listing.rows), 'module')} in {terminal(str(dump.path))}",
          style="bold")
    table = ruled_table(("id", "right"), ("program", "left"), ("stages", "left"), ("size", "right"),
                        ("instructions", "right"), ("main", "left"))
    rows = []
    for row in listing.rows:
        module = row.module
        count = Text("unreadable", style="red") if row.error else \
            Text("" if row.instructions is None else str(row.instructions))
        rows.append(("" if module.module_id is None else str(module.module_id),
                     terminal(shorten.program(module.normalised or module.label)),
                     ", ".join(module.stages) or "-", human_size(module.size), count,
                     Text("main", style="green") if row.is_main else "", row.is_main))
    fixed = [widest(["id"] + [r[0] for r in rows]), widest(["stages"] + [r[2] for r in rows]),
             widest(["size"] + [r[3] for r in rows]), len("instructions"), len("main")]
    (name,) = name_widths(out.width, fixed, [widest(["program"] + [r[1] for r in rows])])
    pin_widths(table, {1: name})
    for ident, program, stages, size, count, main, is_main in rows:
        table.add_row(ident, shorten.middle(program, name), stages, size, count, main,
                      style="bold" if is_main else None)
    out.print(table)
    main = listing.main.module
    number = "" if main.module_id is None else f"module {main.module_id}, "
    prose(out, _text(f"main program: {number}{main.normalised or main.label} "
                     f"({listing.main.reason})"))
    prose(out, str(main.path), style="dim", indent="  ")
    loaded = sum(1 for row in listing.rows if row.module.loaded_from_cache)
    if loaded:
        prose(out, _text(f"{_plural(loaded, 'module')} loaded from JAX's persistent cache, not "
                         "compiled: the dump holds their optimized text alone (after)"))
    for row in listing.rows:
        if row.error:  # it names the file
            prose(out, _text(row.error, style="red"), hanging="  ")
    if dump.unknown:
        names = ", ".join(f.relative for f in dump.unknown[:10])
        more = f" and {len(dump.unknown) - 10} more" if len(dump.unknown) > 10 else ""
        prose(out, _text(f"{_plural(len(dump.unknown), 'file')} not named the way XLA names dumps "
                         f"(listed, not read): {names}{more}"))
    if explain:
        _legend(out, listing)


def _legend(out: Console, listing: Listing) -> None:
    """Each kind of part the dump's file names are made of, explained once."""
    parts = legend(listing.dump.files)
    out.print()
    out.print("What the file names mean", style="bold")
    grid = Table.grid(padding=(0, 2))
    names = [terminal(shorten.program(p.text)) for p in parts]
    width = min(widest(names), max(out.width // 3, 30))
    grid.add_column(no_wrap=True, width=width)
    grid.add_column(overflow="fold")
    for name, part in zip(names, parts):
        grid.add_row(Text(shorten.middle(name, width), style="cyan"), _text(part.meaning))
    out.print(grid)


# --- diff -----------------------------------------------------------------------------------

def _verdict_style(report) -> str:
    """Green for the same executable and no recompile, yellow where the dumps
    cannot tell, red otherwise."""
    if report.shares_executable:
        return "bold green"
    if report.same_executable is False or report.recompiles is True:
        return "bold red"
    return "bold yellow"
# Short names for the moves column; a key not listed here shows by its name.
_VALUE_LIMIT = 40
_STACK_FRAMES = 2  # the innermost frames; JSON keeps the whole stack
_DERIVED_KINDS = 3  # more kinds of consequences than this are counted on one line


def report(rep, stream: TextIO | None = None, details: int = 5, rows: int = 15,
           title: str | None = None, out: Console | None = None, subtitle: str = "") -> None:
    """The diff report: verdict, compared modules, ranked findings, details, hashes.

    ``title`` (the path in the repository, under git) heads it, so several
    files in one ``git diff`` stay apart. The table shows the findings that
    move a cache key (or might), at most ``rows``; a footer counts what it
    leaves out, by kind. ``out`` is a console of the caller's instead of
    one for ``stream`` (a rich display laid out to its own width).
    ``subtitle`` says under the title what run a and run b stand for.
    """
    from ..analysis.hashes import HASHES

    out = out or console(stream)
    spell = _Fitted(out.width)
    if title:
        prose(out, title, style="bold", hanging="  ")
    if subtitle:
        prose(out, subtitle, style="dim")
    for warning in rep.warnings:  # doubt about the comparison comes before its answer
        prose(out, Text.assemble(("warning:", "bold yellow"), " ", terminal(warning)))
    prose(out, Text(verdict_line(rep, spell), style=_verdict_style(rep)))
    shown, same = compared(rep)
    # the table stays on the first screen; one program past the first few
    # keeps its own line ("compared 1 more programs" took as much room)
    paired = len(shown) if len(shown) <= _PAIRINGS_SHOWN + 1 else _PAIRINGS_SHOWN
    for module in shown[:paired]:
        prose(out, _text(f"compared {_label(module.a)} with {_label(module.b)} "
                         f"(paired by {module.how})", style="dim"))
    if len(shown) > paired:
        rest = [shorten.program(m.program) for m in shown[paired:]]
        names = ", ".join(rest[:4]) + (f" and {len(rest) - 4} more" if len(rest) > 4 else "")
        prose(out, _text(f"compared {len(rest)} more programs "
                         f"{programs_that(shown[paired:])}: {names} "
                         "(--format json lists every pairing)", style="dim"))
    if same:
        prose(out, _text(same_programs_line(same, shorten.program), style="dim"))
    findings = list(rep.findings)
    eligible = [f for f in findings if f.moves_a_hash or f.kind == "elided_constant"]
    shown = (eligible or findings)[:rows]
    if shown:
        out.print(_findings_table(shown, out.width))
        hidden = [f for f in findings if f not in shown]
        if hidden:
            prose(out, Text(_hidden(hidden), style="dim"))
        for n, finding in enumerate(shown[:details], 1):
            _finding_details(out, n, finding)
    for run, labels in zip("ab", extra_compilations(rep)):
        if labels:
            prose(out, Text.assemble(
                ("extra compilations:", "yellow"),
                f" run {run} alone compiled {_plural(len(labels), 'module')}: ",
                ", ".join(terminal(shorten.program(label)) for label in labels)))
    hashes = [f"{h.label}: {_yes_no(rep.hashes[h.name])}" for h in HASHES if h.name in rep.hashes]
    if len("  ".join(hashes)) > out.width:
        for line in hashes:
            out.print(line, style="dim")
    else:
        out.print("  ".join(hashes), style="dim")
    for note in dict.fromkeys(rep.notes):
        prose(out, Text.assemble(("note:", "yellow"), " ", terminal(note)))


def _label(label: str | None) -> str:
    return shorten.program(label) if label else "(none)"


def _change(old: str | None, new: str | None, limit: int = _VALUE_LIMIT) -> str:
    """``old -> new``, each shortened; TensorFlow's program names to their
    function and counter. Where the two differ only past what fits, both
    are shown from a little before where they part."""
    shown = [None if not v else terminal(shorten.program(v)) for v in (old, new)]
    start = 0
    if None not in shown and shown[0] != shown[1] and \
            _short(shown[0], limit) == _short(shown[1], limit):
        parting = next((i for i, (x, y) in enumerate(zip(*shown)) if x != y),
                       min(map(len, shown)))
        start = max(0, parting - limit // 3)
        word = shown[0].rfind(" ", 0, start + 1) + 1  # from the start of a word, if near
        start = word if start - word < limit // 3 else start
    return " -> ".join("(none)" if v is None else
                       (shorten.ELLIPSIS if start else "") + _short(v[start:], limit)
                       for v in shown)


_PAIRINGS_SHOWN = 3  # "compared A with B" lines before the rest are counted in one


def _findings_table(findings, width: int) -> Table:
    """One row per finding. The wide column holds what changed, and under it
    where it came from (op_name, then file:line), shortened to the column;
    the stage sits under the kind."""
    from ..analysis.hashes import rule

    table = ruled_table(("#", "right"), ("kind", "left"), ("old -> new, origin", "left"),
                        ("count", "right"), ("moves", "left"))
    rows = []
    for n, f in enumerate(findings, 1):
        # a summary says it better than values: an attribute's, or metadata that
        # differs at many places ("source locations moved at 357 places")
        summarised = f.summary and (f.kind == "attribute" or not (f.old or f.new))
        said = terminal(f.summary.removeprefix("attribute ")) if summarised \
            else _change(f.old, f.new)
        rows.append((str(n), f.kind, STAGE_WORDS.get(f.stage, f.stage), said,
                     str(f.count), terminal(f.origin.op_name or ""),
                     terminal(f.origin.location or ""),
                     [rule(h).short for h in f.affects]))
    fixed = [widest(["#"] + [r[0] for r in rows]), widest(["kind"] + [r[1] for r in rows] +
                                                           [r[2] for r in rows]),
             widest(["count"] + [r[4] for r in rows])]
    natural = widest(["old -> new, origin"] + [r[3] for r in rows] +
                     [f"{r[5]}  {r[6]}".strip() for r in rows])
    moves = widest(["moves"] + [", ".join(r[7]) or "nothing" for r in rows])
    (change,) = name_widths(width, fixed + [moves], [natural], floor=20)
    if change < min(natural, 40):  # narrow: one hash name a line leaves more for the change
        moves = widest(["moves"] + [name + "," for r in rows for name in r[7] or ["nothing"]])
        (change,) = name_widths(width, fixed + [moves], [natural], floor=20)
    beside = sum(fixed) + moves + 2 * (len(fixed) + 1) + 20 <= width
    if not beside:  # narrower still: what each finding moves goes under its change
        table.columns.pop()
        (change,) = name_widths(width, fixed, [natural], floor=20)
    table.columns[2].width = change
    table.columns[2].overflow = "fold"
    if beside:
        table.columns[4].width = moves
    programs = {f.program for f in findings if f.program}
    for (n, kind, stage, text, count, op_name, location, hashes), f in zip(rows, findings):
        # the cell wraps at spaces; a word too long for the column is
        # shortened, never split across lines
        cell = Text(shorten.each_word(text, change))
        if len(programs) > 1 and f.program:  # which program, when they are several
            cell.append("\n").append(shorten.each_word(f"in {terminal(f.program)}", change),
                                      style="dim")
        if op_name or location:
            cell.append("\n").append_text(_origin(op_name, location, change))
        moved = Text(", ".join(hashes)) if hashes else Text("nothing", style="dim")
        if not beside:
            cell.append("\n").append_text(Text.assemble(("moves ", "dim"), moved))
        table.add_row(n, Text.assemble(kind, "\n", (stage, "dim")), cell, count,
                      *([moved] if beside else []))
    return table


def _hidden(hidden) -> str:
    """What the table left out, told truly: how many move a cache key, how
    many might, how many move none, each by kind."""
    groups = (("that move a cache key", [f for f in hidden if f.moves_a_hash]),
              ("that might (constants XLA did not print)",
               [f for f in hidden if not f.moves_a_hash and f.kind == "elided_constant"]),
              ("that move no cache key",
               [f for f in hidden if not f.moves_a_hash and f.kind != "elided_constant"]))
    parts = []
    for what, findings in groups:
        if findings:
            kinds = Counter(f.kind for f in findings)
            parts.append(f"{len(findings)} {what} ("
                         + ", ".join(f"{n} {kind}" for kind, n in kinds.items()) + ")")
    return f"... and {_plural(len(hidden), 'more finding')}: " + "; ".join(parts) + \
        "; --format json lists them all"


def _place(where) -> str:
    """``computation/instruction``, or whichever of the two there is."""
    name = where.b or where.a
    computation = shorten.program(terminal(where.computation or ""))
    return "/".join(filter(None, (computation, terminal(name) if name else "")))


def _finding_details(out: Console, n: int, finding) -> None:
    """The lines under the table for one finding: detail, call stack, places,
    and the changes that follow from it."""
    width = out.width - 4
    lines = []
    if finding.detail:
        lines.append(terminal(finding.detail))
    if finding.advice:
        lines.append(f"what to do: {terminal(finding.advice)}")
    frames = finding.origin.stack
    stack = " < ".join(f"{shorten.middle(terminal(f.function), width)} "
                       f"({shorten.location(terminal(f'{f.file}:{f.line}'), width - 2)})"
                       for f in frames[:_STACK_FRAMES])
    if stack:
        more = f" < {len(frames) - _STACK_FRAMES} more" if len(frames) > _STACK_FRAMES else ""
        lines.append(f"stack: {stack}{more}")
    places = [p for p in (_place(w) for w in finding.where) if p]
    if places:
        more = f" and {len(places) - 4} more" if len(places) > 4 else ""
        lines.append("at " + ", ".join(shorten.middle(p, width - 1) for p in places[:4]) + more)
    lines += _derived_lines(finding.derived)
    if finding.optimized:  # as the README and the page say it
        lines.append(f"XLA then optimized {_plural(finding.optimized, 'instruction')} "
                     "differently because of it")
    if lines:
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True, width=3, style="bold")
        grid.add_column()
        grid.add_row(f"{n}.", Text("\n".join(lines)))
        out.print(grid)


def _derived_lines(derived) -> list[str]:
    """What follows from a finding: a line per kind with an example when there
    are few kinds, else one line that counts them (JSON lists every one)."""
    counts: Counter = Counter()
    examples = {}
    for d in derived:  # several programs' derived changes of one kind count together
        counts[d.kind] += d.count
        examples.setdefault(d.kind, d)
    if len(counts) <= _DERIVED_KINDS:
        return [f"follows from it: {_plural(n, kind + ' change')}"
                + (f" (e.g. {_change(examples[kind].old, examples[kind].new, 30)})"
                   if examples[kind].old or examples[kind].new else "")
                for kind, n in counts.items()]
    total = sum(counts.values())
    return [f"follows from it: {_plural(total, 'change')} ("
            + ", ".join(f"{n} {kind}" for kind, n in counts.items()) + ")"]


def _yes_no(value) -> str:
    return {True: "changed", False: "unchanged", None: "cannot tell"}[value]


def one_sided(path: str, *, added: bool, stream: TextIO | None = None) -> None:
    """A file git shows as added or deleted: nothing to compare it with."""
    out = console(stream)
    what = "added: a new program, compiled for the first time" if added else \
        "deleted: its program is no longer compiled"
    prose(out, Text.assemble((terminal(path), "bold"), f": {what}"))


# --- git, baseline, log ----------------------------------------------------------------------

def git_setup(settings, applied_to=None, lines_added: int = 0,
              stream: TextIO | None = None) -> None:
    """The git settings as lines to paste, or where they were written."""
    out = console(stream)
    if applied_to is not None:
        lines = f"added {lines_added} line{'s' if lines_added != 1 else ''} to " \
            f"{applied_to}/.gitattributes" if lines_added else \
            f"{applied_to}/.gitattributes had every line already"
        prose(out, _text(f"set {len(settings.config)} settings in {applied_to}/.git/config; "
                         f"{lines}"))
        return
    out.print("# .gitattributes")
    for line in settings.attributes:
        out.print(line)
    out.print("\n# git config (run inside the repository)")
    for key, value in settings.config:
        # a command too wide goes on with a backslash, so it still pastes as one
        command = f"git config {key} {_shell_quote(value)}"
        if len(command) > out.width:
            command = f"git config {key} \\\n    {_shell_quote(value)}"
        out.print(command, soft_wrap=True)
    out.print("\n# one-off: git -c diff.external='hlodiff diff' diff", soft_wrap=True)
    out.print("#      or: git difftool -t hlodiff", soft_wrap=True)


def _shell_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def baseline_written(path, document, stream: TextIO | None = None, warning: str = "") -> None:
    """Which programs a baseline file now holds (after what makes it doubtful)."""
    out = console(stream)
    if warning:
        prose(out, Text.assemble(("warning:", "bold yellow"), " ", terminal(warning)))
    programs = ", ".join(m["program"] for m in document["modules"])
    recorded = _plural(len(document["modules"]), "module")
    prose(out, _text(f"recorded {recorded} ({programs}) in {path}"))
