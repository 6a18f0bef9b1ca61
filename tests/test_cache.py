"""The result cache: a repeated diff is read back; a damaged entry is redone."""

from __future__ import annotations

import json
import os
import shutil
import time

from conftest import CORPUS, run_cli

from hlodiff import cache


def _diff_json(a, b, *extra):
    return run_cli("diff", str(a), str(b), "--format", "json", *extra, expect=1).stdout


def test_repeated_diff_reads_the_cache_and_says_the_same(tmp_path):
    case = CORPUS / "jax_learning_rate"
    first = _diff_json(case / "run_a", case / "run_b")
    entries = _results()
    assert len(entries) == 1
    start = time.perf_counter()
    second = _diff_json(case / "run_a", case / "run_b")
    assert second == first
    assert _results() == entries
    assert time.perf_counter() - start < 5


def test_a_changed_file_is_not_served_from_the_cache(tmp_path):
    case = tmp_path / "case"
    shutil.copytree(CORPUS / "jax_learning_rate", case)
    first = json.loads(_diff_json(case / "run_a", case / "run_b"))
    main_b = next((case / "run_b").glob("*jit_train_step.before_optimizations.txt"))
    main_b.write_text(main_b.read_text().replace("constant(0.02)", "constant(0.03)"))
    second = json.loads(_diff_json(case / "run_a", case / "run_b"))
    assert first["findings"][0]["new"] == "0.02"
    assert second["findings"][0]["new"] == "0.03"


def test_a_corrupt_entry_is_ignored_and_replaced():
    case = CORPUS / "jax_seed"
    first = _diff_json(case / "run_a", case / "run_b")
    (entry,) = _results()
    data = entry.read_bytes()
    entry.write_bytes(data[:-10] + b"garbage!!!")
    assert _diff_json(case / "run_a", case / "run_b") == first
    assert entry.read_bytes() == data
    entry.write_bytes(b"not even the header")
    assert _diff_json(case / "run_a", case / "run_b") == first


def test_no_cache_stores_no_result():
    case = CORPUS / "jax_seed"
    _diff_json(case / "run_a", case / "run_b", "--no-cache")
    assert _results() == []


def _results() -> list:
    """The diff results in the cache (grammars/ holds Lark's grammar analysis)."""
    directory = cache.cache_dir()
    return sorted(p for p in directory.iterdir() if p.name != "grammars") if directory.exists() else []


def test_an_unwritable_cache_is_skipped(tmp_path, monkeypatch):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache directory should be")
    monkeypatch.setenv("HLODIFF_CACHE_DIR", str(blocked / "cache"))
    case = CORPUS / "jax_seed"
    assert json.loads(_diff_json(case / "run_a", case / "run_b"))["same_executable"] is False
    assert os.path.isfile(blocked)


def test_hashing_on_several_threads_gives_the_same_key(tmp_path, monkeypatch):
    # Big dumps are hashed a file per thread; the key must not depend on it,
    # or entries written one way would be missed the other way.
    from hlodiff.dumps import load_target
    case = tmp_path / "case"
    shutil.copytree(CORPUS / "jax_learning_rate", case)
    dumps = [load_target(case / "run_a"), load_target(case / "run_b")]
    monkeypatch.setattr(cache, "_PARALLEL_BYTES", 10 ** 15)
    alone = cache.key(dumps, ("compare",))
    monkeypatch.setattr(cache, "_PARALLEL_BYTES", 0)
    assert cache.key(dumps, ("compare",)) == alone
    main_b = next((case / "run_b").glob("*jit_train_step.before_optimizations.txt"))
    main_b.write_text(main_b.read_text().replace("constant(0.02)", "constant(0.03)"))
    assert cache.key([dumps[0], load_target(case / "run_b")], ("compare",)) != alone


def test_the_grammar_analysis_is_kept_and_a_damaged_copy_is_rebuilt(tmp_path, monkeypatch):
    # Lark's analysis of the grammars is kept between runs (a tenth of a
    # small diff); a damaged copy must be rebuilt, never trusted.
    from hlodiff import grammar_files
    from hlodiff.parser import parse
    monkeypatch.setenv("HLODIFF_CACHE_DIR", str(tmp_path / "cache"))
    text = (CORPUS / "jax_seed" / "run_a").glob("*jit_train_step.before_optimizations.txt")
    text = next(text).read_text()
    grammar_files.lalr.cache_clear()
    expected = parse(text)
    kept = tmp_path / "cache" / "grammars" / "grammar-hlo.lark-cache"
    assert kept.is_file()
    kept.write_bytes(kept.read_bytes()[:100])
    grammar_files.lalr.cache_clear()
    assert parse(text) == expected
    assert kept.stat().st_size > 100  # written again whole
    grammar_files.lalr.cache_clear()
    assert parse(text) == expected  # and read from it


def test_a_diff_read_from_the_cache_loads_no_parser(tmp_path):
    # A repeated diff costs start-up and little else; Lark and rapidfuzz are
    # most of start-up, and a cached report needs neither.
    import subprocess
    import sys
    case = CORPUS / "jax_learning_rate"
    env = dict(os.environ, HLODIFF_CACHE_DIR=str(tmp_path / "cache"))
    command = [sys.executable, "-c",
               "import sys\nfrom hlodiff.cli import main\n"
               "try:\n    main(['diff', sys.argv[1], sys.argv[2], '--format', 'json'])\n"
               "except SystemExit:\n    pass\n"
               "print(sorted(m for m in ('lark', 'rapidfuzz', 'hlodiff.parser') if m in sys.modules),"
               " file=sys.stderr)",
               str(case / "run_a"), str(case / "run_b")]
    first = subprocess.run(command, env=env, capture_output=True, text=True)
    again = subprocess.run(command, env=env, capture_output=True, text=True)
    assert first.stderr.strip().endswith("['hlodiff.parser', 'lark', 'rapidfuzz']")
    assert again.stdout == first.stdout
    assert again.stderr.strip().endswith("[]")
