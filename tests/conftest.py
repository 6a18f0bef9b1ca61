"""Shared test helpers: where the corpus is, and one way to run the CLI."""

from __future__ import annotations

import compileall
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
CONFORMANCE = CORPUS / "xla-conformance"


def pytest_sessionstart(session) -> None:
    """Byte-compile hlodiff once. The tests start many Python processes
    that import it (the command, the pool's workers), and where
    PYTHONDONTWRITEBYTECODE is set, as on CI here, each compiled all of it
    again (0.15 s a process; the deep-clone CI 928 s -> 882 s): an
    installed hlodiff is compiled once, by pip."""
    compileall.compile_dir(str(ROOT / "hlodiff"), quiet=1)


@dataclass
class CliResult:
    exit_code: int
    stdout: str
    stderr: str


PROGRAMS = Path(__file__).parent / "programs"


def dump_runs(folder: Path, program: str, *variants: str, env: dict | None = None) -> None:
    """Run ``tests/programs/PROGRAM.py VARIANT`` once per variant, on the CPU,
    with XLA dumping into ``folder/VARIANT``: two real runs to diff."""
    import os
    import subprocess
    import sys
    for variant in variants:
        subprocess.run([sys.executable, str(PROGRAMS / f"{program}.py"), variant],
                       env={**os.environ, "JAX_PLATFORMS": "cpu",
                            "XLA_FLAGS": f"--xla_dump_to={folder / variant}", **(env or {})},
                       check=True, capture_output=True)


def run_cli(*args: str, expect: int | None = 0) -> CliResult:
    """Run ``hlodiff ARGS`` in-process and check its exit code.

    Goes through ``hlodiff.cli.main`` (not the click group) so error handling
    and exit codes are exactly what a user sees.
    """
    from hlodiff.cli import main

    runner = CliRunner()
    outcome = runner.invoke(_as_command(main), list(args))
    if outcome.exception is not None and not isinstance(outcome.exception, SystemExit):
        raise outcome.exception
    got = CliResult(outcome.exit_code, outcome.stdout, outcome.stderr)
    if expect is not None:
        assert got.exit_code == expect, f"exit {got.exit_code}, expected {expect}\n{got.stderr}{got.stdout}"
    return got


def _as_command(main):
    import click

    @click.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                     "help_option_names": []})
    @click.argument("args", nargs=-1, type=click.UNPROCESSED)
    def wrapper(args):
        main(list(args))

    return wrapper


@pytest.fixture
def corpus() -> Path:
    return CORPUS


@pytest.fixture(autouse=True)
def private_cache(tmp_path_factory, monkeypatch):
    """Each test gets an empty cache and a signing key of its own, never the user's."""
    monkeypatch.setenv("HLODIFF_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    secret = tmp_path_factory.mktemp("secret")
    secret.chmod(0o700)
    monkeypatch.setenv("HLODIFF_SECRET_DIR", str(secret))
    from hlodiff import cache
    cache._signing_key.cache_clear()
