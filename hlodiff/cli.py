"""The ``hlodiff`` command line: argument handling and exit codes only.

Exit codes follow diff(1): 0 same, 1 different (or undecidable), 2 a usage
or input error. Every ``HlodiffError`` becomes one line
``hlodiff: error: PATH[:LINE:COL]: what is wrong`` on stderr, never a traceback.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import click

from . import render
from .analysis.compare import compare
from .analysis.constants import constant_sites, varying_constants
from .errors import HlodiffError, HloSyntaxError
from .render import json as render_json
from .render import text as render_text
from .render.escape import terminal
from .render.report import markdown, report_document, verdict_line

EXIT_SAME = 0
EXIT_DIFFERENT = 1
EXIT_ERROR = 2
# A path argument or option: hlodiff reads it itself, so that one it cannot
# read is its one-line error, not click's usage text ("is not readable").
PATH = click.Path(path_type=Path, readable=False)


def format_option(*choices: render.Format):
    """``--format`` limited to the formats a command supports."""
    return click.option("--format", "fmt", type=click.Choice([c.value for c in choices]),
                        default=choices[0].value, show_default=True, help="Output format.")


strict_option = click.option(
    "--strict", is_flag=True,
    help="Read the HLO with the complete grammar (grammar/hlo_full.lark) and check every "
         "attribute value and literal: reject what XLA's parser rejects.")


def read_strictly(target: str | Path) -> None:
    """``--strict``: every HLO text file of ``target`` (a file or a dump
    directory), read with the complete grammar before the command runs."""
    from .dumps import load_target
    from .syntax.parser import parse_file
    for module in load_target(target).modules:
        for file in module.hlo_files:
            parse_file(module.root / file.relative, strict=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="hlodiff")
def cli() -> None:
    """Explain why two runs of a model did not share a compiled XLA executable."""


def module_file(target: Path) -> Path:
    """An HLO file as given, or the main program's file in a dump directory."""
    if target.is_dir():
        from .dumps import load_dump
        return load_dump(target).main_program().path
    if not target.exists():
        raise HlodiffError(f"{target}: no such file or directory")
    return target


@cli.command()
@click.argument("targets", nargs=-1, required=True, type=PATH)
@format_option(render.Format.TEXT, render.Format.JSON)
@strict_option
def constants(targets: tuple[Path, ...], fmt: str, strict: bool) -> int:
    """List the constants of a module with their values and origins.

    With one TARGET (an HLO text file, or a dump directory whose main
    program is used, as `hlodiff ls` picks it): every constant. With several
    runs: only the constants whose value varies across them, with each
    run's value, and those printed as {...} in every run, which the text
    cannot compare (hlodiff diff reads JAX's module.mlir). Exits 1 when
    some constant varies or cannot be compared.
    """
    paths = [module_file(t) for t in targets]
    from .syntax.parser import parse_file
    modules = [parse_file(p, strict=strict) for p in paths]
    if len(modules) == 1:
        sites = constant_sites(modules[0])
        if fmt == render.Format.JSON.value:
            render_json.dump(render_json.constants_document(str(paths[0]), modules[0].name, sites),
                             sys.stdout)
        else:
            render_text.constants_table(str(paths[0]), modules[0].name, sites)
        return EXIT_SAME
    varying = varying_constants(modules)
    if fmt == render.Format.JSON.value:
        render_json.dump(render_json.varying_constants_document([str(p) for p in paths], varying),
                         sys.stdout)
    else:
        render_text.varying_constants_table([str(p) for p in paths], varying)
    return EXIT_DIFFERENT if varying else EXIT_SAME


def output_option(function):
    """``-o FILE``: where ``--format html`` writes its page."""
    return click.option("-o", "--output", type=PATH, default=None,
                        help="With --format html: the file to write the page to.")(function)


def wants_page(fmt: str, output: Path | None) -> bool:
    """Is a page asked for? ``--format html`` and ``-o FILE`` go together."""
    html = fmt == render.Format.HTML.value
    if html and output is None:
        raise click.UsageError("--format html needs -o FILE")
    if output is not None and not html:
        raise click.UsageError("-o/--output is for --format html")
    return html


def write_page(report, output: Path, *, run_a: str, run_b: str, title: str = "") -> None:
    """The HTML page into ``output``, and the verdict on stderr."""
    from .render.html import page
    _write(output, page(report, run_a=run_a, run_b=run_b, title=title))
    click.echo(terminal(f"hlodiff: {verdict_line(report)} Page: {output}"), err=True)


def _write(output: Path, text: str) -> None:
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as err:
        raise HlodiffError(f"{output}: cannot write: {err.strerror}") from None


@cli.command()
@click.argument("paths", nargs=-1, required=True, metavar="A B")
@click.option("--module", "select", metavar="REGEX",
              help="Compare the modules whose program name matches REGEX, not only the main one.")
@click.option("--all", "all_modules", is_flag=True, help="Compare every pair of modules.")
@click.option("--exit-code", is_flag=True,
              help="Under git too, exit 1 when the executables differ (git stops on it).")
@click.option("--no-cache", is_flag=True,
              help="Diff again even if these exact files were diffed before.")
@click.option("--quiet", "-q", is_flag=True, help="No progress display on stderr.")
@click.option("--verbose", "-v", is_flag=True,
              help="Say on stderr why a cached answer was not used.")
@format_option(render.Format.TEXT, render.Format.JSON, render.Format.MARKDOWN, render.Format.HTML)
@output_option
@strict_option
def diff(paths: tuple[str, ...], select: str | None, all_modules: bool, exit_code: bool,
         no_cache: bool, quiet: bool, verbose: bool, fmt: str, output: Path | None,
         strict: bool) -> int:
    """Explain why A and B do not share a compiled executable.

    A and B are dump directories (XLA_FLAGS=--xla_dump_to=DIR) or HLO text
    files. Exits 0 when the executable is the same and nothing recompiles
    it, 1 when it recompiles, differs or the dumps cannot decide, 2 on a
    usage or input error. Also takes the 7
    (or, for a rename, 9) arguments git passes to an external diff; under
    git it exits 0 unless --exit-code is given. --format html -o FILE writes
    one self-contained page: verdict, causes with their lines side by side
    and a graph of each change's neighbourhood.
    """
    html = wants_page(fmt, output)
    from .integrations.gitdiff import diff_request, is_hlo, plain_diff, starts_as_hlo
    if len(paths) == 1:
        raise HlodiffError(_one_run(Path(paths[0])))
    request = _readable_twice(diff_request(paths, os.environ))
    lenient = request.under_git and not exit_code
    if request.under_git and not is_hlo(request):  # a dump's other files: as git shows them
        sys.stdout.write(plain_diff(request))
        return EXIT_SAME if lenient else EXIT_DIFFERENT
    if request.a is None or request.b is None:
        if starts_as_hlo(request.a or request.b):
            render_text.one_sided(request.title or request.a or request.b,
                                  added=request.a is None)
        else:  # a binary or other file under an HLO name: as git would show it
            sys.stdout.write(plain_diff(request))
        return EXIT_SAME if lenient else EXIT_DIFFERENT
    try:
        if strict:
            read_strictly(request.a)
            read_strictly(request.b)
        with render_text.status(quiet) as say:
            report = compare(request.a, request.b, select=select, all=all_modules,
                             cache=not no_cache, step=say,
                             say=_stderr if verbose else lambda _: None, context=html)
    except HlodiffError as err:
        if not lenient:
            raise
        # one file hlodiff cannot read must not stop git's diff of the rest:
        # said, then shown as git would show it
        click.echo(error_line(err), err=True)
        sys.stdout.write(plain_diff(request))
        return EXIT_SAME
    if html:
        write_page(report, output, run_a=request.a, run_b=request.b, title=request.title or "")
    elif fmt == render.Format.JSON.value:
        render_json.dump(report_document(report), sys.stdout)
    elif fmt == render.Format.MARKDOWN.value:
        sys.stdout.write(markdown(report))
    else:
        render_text.report(report, title=request.title)
    if not request.under_git and _same_path(request.a, request.b):  # said once it is read
        _stderr(f"note: {request.a} and {request.b} are the same "
                f"{'folder' if Path(request.a).is_dir() else 'file'}: one run against itself")
    if lenient:
        return EXIT_SAME
    return EXIT_SAME if report.shares_executable else EXIT_DIFFERENT


@cli.command("ls")
@click.argument("target", type=PATH)
@click.option("--explain", is_flag=True, help="Spell out what each part of each file name means.")
@click.option("--no-count", is_flag=True, help="Do not parse modules to count instructions.")
@format_option(render.Format.TEXT, render.Format.JSON)
@strict_option
def ls(target: Path, explain: bool, no_count: bool, fmt: str, strict: bool) -> int:
    """List the modules of a dump directory and pick the main program.

    TARGET is a directory written by XLA_FLAGS=--xla_dump_to=DIR (or one
    HLO text file). One row per module; the main program (the user's
    training step before an initialiser, then the most arguments, then the
    largest) is marked with the reason it was chosen. Exits 2 when a module
    cannot be read (listed, with its error).
    """
    from .dumps import list_dump, load_target
    if strict:
        read_strictly(target)
    dump = load_target(target)
    with render_text.progress(len(dump.modules), "reading modules") as advance:
        listing = list_dump(dump, count=not no_count, on_module=advance)
    if fmt == render.Format.JSON.value:
        render_json.dump(render_json.ls_document(listing, explain=explain), sys.stdout)
    else:
        render_text.ls_table(listing, explain=explain)
    unreadable = [row.error for row in listing.rows if row.error]
    if unreadable:  # listed above; the exit's one line says the first
        more = f" (and {len(unreadable) - 1} more modules)" if len(unreadable) > 1 else ""
        click.echo(terminal(f"hlodiff: error: {unreadable[0]}{more}"), err=True)
        return EXIT_ERROR
    return EXIT_SAME



@cli.command()
@click.argument("target", type=PATH)
@click.option("--metadata", is_flag=True,
              help="Keep op_type, op_name and source, with stack frames resolved.")
@click.option("--textconv", is_flag=True,
              help="As git's textconv: a file hlodiff cannot read is printed as it is, byte "
                   "for byte, a binary one as a line with its size and sha256 (the error on "
                   "stderr), so git goes on with the other files.")
@strict_option
def canon(target: Path, metadata: bool, textconv: bool, strict: bool) -> None:
    """Print a module canonically: stable names, no frame tables, no metadata.

    TARGET is an HLO text file (or a dump directory: its main program).
    Renumbered instructions and computations print the same, so as git's
    textconv (`hlodiff git-setup`) a renumber-only change shows no diff.
    """
    from .integrations.canon import View, canonical_text
    from .integrations.gitdiff import textconv_as_is
    from .syntax.parser import parse_file
    from .render.escape import hlo
    try:
        module = parse_file(module_file(target), strict=strict)
    except HlodiffError as err:
        if not textconv or not target.is_file():
            raise
        try:
            data = target.read_bytes()
        except OSError:
            raise err from None
        click.echo(error_line(err), err=True)
        click.echo(textconv_as_is(data), nl=False)
        return
    text = hlo(canonical_text(module, View(metadata=metadata)))
    if textconv:  # git reads bytes: UTF-8 whatever the locale spells
        click.echo(text.encode("utf-8"), nl=False)
    else:
        sys.stdout.write(text)


@cli.command("git-setup")
@click.option("--apply", "apply_", is_flag=True,
              help="Write the settings into this repository's .git/config and .gitattributes.")
def git_setup(apply_: bool) -> None:
    """Print (or --apply) the git settings that diff HLO files through hlodiff."""
    from .integrations.gitdiff import apply_settings, git_settings
    settings = git_settings()
    root, added = apply_settings(settings, Path.cwd()) if apply_ else (None, 0)
    render_text.git_setup(settings, applied_to=root, lines_added=added)



@cli.command("baseline")
@click.argument("dump_dir", type=PATH)
@click.option("-o", "--output", type=PATH, default=Path("hlo-baseline.json"),
              show_default=True, help="Where to write the baseline.")
@click.option("--all", "all_modules", is_flag=True, help="Record every module, not only the main one.")
def baseline_command(dump_dir: Path, output: Path, all_modules: bool) -> None:
    """Record DUMP_DIR's program as the baseline `hlodiff check` compares against.

    Keeps the normalised program name, a fingerprint per cache key, the
    parameter shapes, every constant with its origin and the module text
    itself, so a later change is explained without the old dump.
    """
    from .analysis.compare import OP_BY_OP, op_by_op
    from .integrations.baseline import record, write
    from .dumps import load_dump
    dump = load_dump(dump_dir)
    document = record(dump, all=all_modules)
    write(document, output)
    main = dump.main_program()
    eager = None if all_modules else op_by_op(dump, main)
    warning = "" if eager is None else (
        f"{main.program}, the largest program of the user's, holds {eager[0]} instructions "
        f"among {eager[1]} such programs: no program of this run is the model. {OP_BY_OP}, "
        "so a check against this baseline sees that one operation only; compile the step "
        "(jax.jit, jit_compile=True) to gate the model")
    render_text.baseline_written(output, document, warning=warning)


@cli.command()
@click.option("--baseline", "baseline_file", required=True, type=PATH,
              help="A file written by `hlodiff baseline`.")
@click.argument("dump_dir", type=PATH)
@click.option("--update", is_flag=True, help="Accept the change: rewrite the baseline from DUMP_DIR.")
@format_option(render.Format.TEXT, render.Format.JSON, render.Format.MARKDOWN,
               render.Format.GITHUB, render.Format.HTML)
@output_option
def check(baseline_file: Path, dump_dir: Path, update: bool, fmt: str,
          output: Path | None) -> int:
    """Does DUMP_DIR still compile to the baseline's executable, from the same cache entry?

    Exits 0 when unchanged, 1 with the explanation `hlodiff diff` gives
    when it changed or a cache key moved (it recompiles), 2 on error.
    --update rewrites the baseline (exit 0). --format html -o FILE writes
    the explanation as a page (a CI artifact).
    """
    from .integrations.baseline import check as check_dump, read, record, write
    from .dumps import load_dump
    from .render import github
    html = wants_page(fmt, output)
    result = check_dump(baseline_file, dump_dir, context=html)
    if html:
        write_page(result.report, output, run_a=f"baseline {baseline_file}", run_b=str(dump_dir),
                   title=f"{dump_dir} against baseline {baseline_file}")
    elif fmt == render.Format.JSON.value:
        render_json.dump(report_document(result.report), sys.stdout)
    elif fmt == render.Format.MARKDOWN.value:
        sys.stdout.write(markdown(result.report))
    elif fmt == render.Format.GITHUB.value:
        github.annotations(result.report, sys.stdout, subject=f"{dump_dir} vs {baseline_file}")
    else:
        render_text.report(result.report, title=f"{dump_dir} against baseline {baseline_file}")
    if update:
        document = record(load_dump(dump_dir), all=bool(read(baseline_file).get("all")))
        write(document, baseline_file)
        render_text.baseline_written(baseline_file, document, stream=sys.stderr)
        return EXIT_SAME
    return EXIT_SAME if result.unchanged else EXIT_DIFFERENT



@cli.command("log")
@click.argument("files", nargs=-1, required=True, type=PATH)
@click.option("--dump", "dump_dir", type=PATH,
              help="The run's --xla_dump_to directory: explain each recompilation from it.")
@format_option(render.Format.TEXT, render.Format.JSON)
def log(files: tuple[Path, ...], dump_dir: Path | None, fmt: str) -> int:
    """Find every compilation in a run's logs; count and explain recompilations per program.

    Reads JAX (JAX_LOG_COMPILES, JAX_EXPLAIN_CACHE_MISSES, persistent cache
    lines), XLA (TF_CPP_VMODULE=py_executable=1), TensorFlow
    (TF_CPP_VMODULE=device_compiler=3; =1 and default logging say less),
    PyTorch/XLA (PT_XLA_DEBUG_LEVEL=1 or 2) and Graphcore logs. Loads from a
    persistent cache are not compilations. The first compilation of a
    program is its warm-up. With --dump, each recompilation is matched to
    its modules (by program name and order) and explained next to the
    log's own cause. Exits 1 when a user program recompiled (or, unnamed,
    cannot be told apart, or the logs show no compilation at all), 0 otherwise.
    """
    from .integrations.compile_log import scan, summarise
    from .integrations.recompiles import explain_log
    from .dumps import load_dump
    from .render import compile_log as render_log
    programs = summarise(scan(list(files)), load_dump(dump_dir) if dump_dir else None)
    logged = explain_log(programs) if dump_dir else None
    if fmt == render.Format.JSON.value:
        render_json.dump(render_log.log_document(programs, logged), sys.stdout)
    else:
        render_log.log_text(programs, logged)
    # nothing logged: no run compiles nothing, so logging was off (cannot tell)
    return EXIT_DIFFERENT if not programs or any(p.recompiled for p in programs) else EXIT_SAME


@cli.command()
@click.argument("dump_dir", type=PATH)
@format_option(render.Format.TEXT, render.Format.JSON, render.Format.HTML)
@output_option
def recompiles(dump_dir: Path, fmt: str, output: Path | None) -> int:
    """Why one run compiled a program more than once.

    DUMP_DIR is one run's --xla_dump_to directory. Every program it holds
    under several module ids is listed in one line, each recompilation
    explained against the latest earlier compilation with the same input
    shapes (else the one before it), with its source line; then the full
    diff of each. Exits 1 when a user program recompiled, 0 otherwise
    (JAX's eager set-up ops compile once per shape and do not count).
    --format html -o FILE writes it as a page.
    """
    from .integrations.recompiles import find_recompilations
    from .dumps import load_dump
    from .render import compile_log as render_log
    html = wants_page(fmt, output)
    programs = find_recompilations(load_dump(dump_dir), context=html)
    if html:
        from .render.html import recompiles_page
        _write(output, recompiles_page(str(dump_dir), programs))
        recompiled = [p.program for p in programs if p.user]
        click.echo(terminal(f"hlodiff: {len(recompiled)} user program"
                            f"{'s' if len(recompiled) != 1 else ''} recompiled"
                            + (f" ({', '.join(recompiled)})" if recompiled else "")
                            + f". Page: {output}"), err=True)
    elif fmt == render.Format.JSON.value:
        render_json.dump(render_log.recompiles_document(str(dump_dir), programs), sys.stdout)
    else:
        render_log.recompiles_text(str(dump_dir), programs)
    return EXIT_DIFFERENT if any(p.user for p in programs) else EXIT_SAME


_TEMPORARY: list[str] = []  # removed when the command ends (main)


def _readable_twice(request):
    """The request with a pipe (``<(git show HEAD:model.hlo)``) read into a
    temporary file: a diff reads a file more than once (its size, its head,
    its text), and a pipe gives its text to the first read only."""
    import dataclasses
    import stat
    import tempfile

    sides = {}
    for side in ("a", "b"):
        path = getattr(request, side)
        try:
            if path is None or not stat.S_ISFIFO(os.stat(path).st_mode):
                continue
        except OSError:
            continue  # the diff says what is wrong with it
        with open(path, "rb") as pipe, tempfile.NamedTemporaryFile(
                prefix="hlodiff-", suffix=".hlo", delete=False) as copy:
            copy.write(pipe.read())
        _TEMPORARY.append(copy.name)
        sides[side] = copy.name
    return dataclasses.replace(request, title=request.title or (
        f"{request.a} vs {request.b}" if sides else None), **sides) if sides else request


def _same_path(a: str, b: str) -> bool:
    """Are ``a`` and ``b`` one file or folder (a symlink, a path spelt twice)?"""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False  # the diff says what is wrong with them


def _one_run(target: Path) -> str:
    """What ``diff`` with one argument should have been."""
    from .dumps import load_target
    from .integrations.recompiles import compiled_more_than_once
    twice = compiled_more_than_once(load_target(target)) if target.is_dir() else []
    if twice:
        names = ", ".join(f"{name} ({len(modules)} times)" for name, modules in twice[:3])
        return (f"{target}: diff compares two runs (A B); this one run compiled {names}: "
                f"hlodiff recompiles {target} explains each recompilation")
    if target.is_dir():
        return (f"{target}: diff compares two runs (A B), got one, which compiled each program "
                "once: give the dump of a second run to compare it with")
    return f"{target}: diff compares two runs (A B), got one file: give the other run's file too"


def _stderr(message: str) -> None:
    click.echo(terminal(f"hlodiff: {message}"), err=True)


def error_line(err: HlodiffError) -> str:
    """The one line an error is: it quotes file names and lines of the input,
    so their control characters are shown, not obeyed."""
    if isinstance(err, HloSyntaxError):
        return terminal(f"hlodiff: error: {err.location}: {err.reason}")
    return terminal(f"hlodiff: error: {err}")


def usage_line(err: click.UsageError, args: list[str]) -> str:
    """A usage error as one line, like every other error, and where help is:
    click's own three lines (Usage:, Try, Error:) bury the one that matters.
    Some errors come without the command they are about (an option missing
    its value): it is the first of ``args`` that names one."""
    if err.ctx is not None and err.ctx.command is not cli:
        command = err.ctx.command_path
    else:
        named = next((a for a in args if a in cli.commands), None)
        command = f"hlodiff {named}" if named else "hlodiff"
    return terminal(f"hlodiff: error: {_sentence(err.format_message())} "
                    f"(see {command} --help)")


def _sentence(message: str) -> str:
    """click's message as the rest of a line: one line, lower-case start, no full stop."""
    message = " ".join(message.split()).rstrip(".")
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    return message


def main(argv: list[str] | None = None) -> None:
    if argv is None and hasattr(signal, "SIGPIPE"):
        # Run as a command: a reader that goes away (| head) ends hlodiff as
        # it ends cat or git, quietly and with the shell's 141; click and rich
        # would exit 1, which here means "different executables".
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if argv is None:
        _bearable_output()
    try:
        code = cli.main(args=argv, prog_name="hlodiff", standalone_mode=False)
    except HlodiffError as err:
        click.echo(error_line(err), err=True)
        code = EXIT_ERROR
    except click.exceptions.Abort:
        click.echo("hlodiff: interrupted", err=True)
        code = EXIT_ERROR
    except click.exceptions.NoArgsIsHelpError as err:  # bare `hlodiff`: the help it asks for
        err.show()
        code = err.exit_code
    except click.UsageError as err:
        click.echo(usage_line(err, sys.argv[1:] if argv is None else argv), err=True)
        code = err.exit_code
    except click.ClickException as err:
        click.echo(terminal(f"hlodiff: error: {_sentence(err.format_message())}"), err=True)
        code = EXIT_ERROR
    except RecursionError:
        click.echo("hlodiff: error: input nests too deeply to read", err=True)
        code = EXIT_ERROR
    finally:
        _remove_temporary()
    sys.exit(code if isinstance(code, int) else EXIT_SAME)


def _bearable_output() -> None:
    """Output in a locale that cannot spell every character (ISO-8859-1,
    ASCII) gets ``?`` for those (the ellipsis, the cross of a Markdown
    table): it raised UnicodeEncodeError, a traceback and exit 1."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError):  # not a text file that can change: as it is
            pass


def _remove_temporary() -> None:
    while _TEMPORARY:
        try:
            os.unlink(_TEMPORARY.pop())
        except OSError:
            pass
