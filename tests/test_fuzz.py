"""Fuzzing: real HLO files, mutated (tokens dropped, duplicated or swapped,
text cut off, characters and bytes injected), must parse or raise
``HloSyntaxError``, nothing else, within a bounded time; the CLI must answer
with an exit code, never a traceback.

The default run is small (about 200 inputs in all). A longer campaign, by hand::

    HLODIFF_FUZZ_EXAMPLES=20000 HLODIFF_FUZZ_SAVE=/tmp/fuzz python -m pytest -q tests/test_fuzz.py

``HLODIFF_FUZZ_EXAMPLES`` multiplies nothing: it is the example count of each
test. ``HLODIFF_FUZZ_SAVE`` names a folder where every input that failed is
written; copy the small ones to tests/fuzz_regressions/, which
``test_regressions_replay`` replays forever after.
"""

from __future__ import annotations

import hashlib
import os
import re
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hlodiff
from conftest import CONFORMANCE, CORPUS, run_cli
from hlodiff.errors import HlodiffError, HloSyntaxError
from hlodiff.model import Module

REGRESSIONS = Path(__file__).parent / "fuzz_regressions"
CAMPAIGN = os.environ.get("HLODIFF_FUZZ_EXAMPLES")
SAVE = os.environ.get("HLODIFF_FUZZ_SAVE")


def _seeds() -> list[str]:
    """Small real files of every frontend and XLA's own parser tests."""
    paths = sorted(p for p in CORPUS.glob("*/run_a/*optimizations.txt")
                   if 1_000 < p.stat().st_size < 40_000)
    frontends: dict[str, list[Path]] = {}
    for p in paths:
        frontends.setdefault(p.parts[-3].split("_")[0], []).append(p)
    chosen = [p for group in frontends.values() for p in group[::max(1, len(group) // 4)]]
    chosen += sorted((CONFORMANCE / "valid").glob("*.hlo"))[::10]
    texts = []
    for p in chosen:
        try:
            texts.append(p.read_text())
        except OSError:  # the corpus is being regenerated: fewer seeds this time
            continue
    return texts


SEEDS = _seeds()
TOKEN = re.compile(r"\s+|%?[A-Za-z_][\w.\-]*|-?\d+(?:\.\d+)?|\S")
# Characters that matter to the scanner, and some that do not.
NASTY = st.sampled_from(list('{}()[]<>"\'/*\\=,:#%\n\r\t\0') + ["/*", "*/", "//", "->", "ROOT ",
                                                                   "ENTRY ", "\u00e9", "\ufeff"])


def _budget(default: int) -> settings:
    return settings(max_examples=int(CAMPAIGN) if CAMPAIGN else default,
                    deadline=timedelta(seconds=5 if CAMPAIGN else 3),
                    suppress_health_check=list(HealthCheck), derandomize=not CAMPAIGN,
                    database=None)


@st.composite
def mutated(draw) -> str:
    """A seed with one to four mutations."""
    text = draw(st.sampled_from(SEEDS))
    for _ in range(draw(st.integers(1, 4))):
        tokens = TOKEN.findall(text)
        if not tokens:
            break
        i = draw(st.integers(0, len(tokens) - 1))
        how = draw(st.sampled_from(["drop", "duplicate", "swap", "truncate", "inject", "replace"]))
        if how == "drop":
            del tokens[i]
        elif how == "duplicate":
            tokens.insert(i, tokens[i])
        elif how == "swap":
            j = draw(st.integers(0, len(tokens) - 1))
            tokens[i], tokens[j] = tokens[j], tokens[i]
        elif how == "truncate":
            tokens = tokens[:i]
        elif how == "inject":
            tokens.insert(i, draw(st.one_of(NASTY, st.text(max_size=4))))
        else:
            tokens[i] = draw(st.sampled_from(tokens))
        text = "".join(tokens)
    return text


def _save(data: str | bytes, suffix: str) -> None:
    if not SAVE:
        return
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    folder = Path(SAVE)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{hashlib.sha1(raw).hexdigest()[:12]}{suffix}").write_bytes(raw)


def parses_or_syntax_error(text: str) -> None:
    """``parse`` returns a Module or raises HloSyntaxError, lazily and strictly."""
    try:
        for strict in (False, True):
            try:
                module = hlodiff.parse(text, path="fuzz.hlo", strict=strict)
            except HloSyntaxError as err:
                assert err.path == "fuzz.hlo" and str(err)
                return
            assert isinstance(module, Module)
    except Exception:
        _save(text, ".hlo")
        raise


def cli_answers(tmp_path: Path, data: bytes) -> None:
    """Every command exits 0, 1 or 2 with no traceback (run_cli re-raises any)."""
    broken = tmp_path / "module_0001.jit_f.before_optimizations.txt"
    broken.write_bytes(data)
    original = tmp_path / "original.txt"
    try:
        for args in (("constants", str(broken)), ("diff", str(broken), str(original)),
                     ("diff", str(broken), str(broken), "--format", "json"), ("ls", str(tmp_path))):
            result = run_cli(*args, expect=None)
            assert result.exit_code in (0, 1, 2)
            assert "Traceback" not in result.stderr + result.stdout
            if result.exit_code == 2:
                assert len(result.stderr.splitlines()) == 1
                assert result.stderr.startswith("hlodiff: error: ")
    except Exception:
        _save(data, ".txt")
        raise


@pytest.mark.skipif(not SEEDS, reason="no corpus files to mutate")
@_budget(120)
@given(mutated())
def test_mutated_text_parses_or_is_a_syntax_error(text: str) -> None:
    parses_or_syntax_error(text)


@pytest.mark.skipif(not SEEDS, reason="no corpus files to mutate")
@_budget(30)
@given(st.sampled_from(SEEDS), st.data())
def test_injected_bytes_give_one_error_line_or_an_answer(tmp_path_factory, seed: str,
                                                         data) -> None:
    raw = seed.encode()
    at = data.draw(st.integers(0, len(raw)))
    junk = data.draw(st.binary(min_size=1, max_size=8))
    tmp = tmp_path_factory.mktemp("bytes")
    (tmp / "original.txt").write_text(seed)
    cli_answers(tmp, raw[:at] + junk + raw[at:])


@pytest.mark.skipif(not SEEDS, reason="no corpus files to mutate")
@_budget(40)
@given(mutated())
def test_cli_on_mutated_files_never_prints_a_traceback(tmp_path_factory, text: str) -> None:
    tmp = tmp_path_factory.mktemp("cli")
    (tmp / "original.txt").write_text(SEEDS[0])
    cli_answers(tmp, text.encode("utf-8", "surrogatepass"))


def _regressions() -> list[Path]:
    return sorted(REGRESSIONS.glob("*")) if REGRESSIONS.is_dir() else []


@pytest.mark.parametrize("path", _regressions(), ids=lambda p: p.name)
def test_regressions_replay(tmp_path: Path, path: Path) -> None:
    """Every input that once broke hlodiff, replayed through the parser and the CLI."""
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    if text is not None:
        parses_or_syntax_error(text)
    try:
        hlodiff.parse_file(path)
    except HlodiffError:
        pass
    (tmp_path / "original.txt").write_text(SEEDS[0] if SEEDS else "ENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n")
    cli_answers(tmp_path, raw)
