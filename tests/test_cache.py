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
    entries = list(cache.cache_dir().iterdir())
    assert len(entries) == 1
    start = time.perf_counter()
    second = _diff_json(case / "run_a", case / "run_b")
    assert second == first
    assert list(cache.cache_dir().iterdir()) == entries
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
    (entry,) = cache.cache_dir().iterdir()
    data = entry.read_bytes()
    entry.write_bytes(data[:-10] + b"garbage!!!")
    assert _diff_json(case / "run_a", case / "run_b") == first
    assert entry.read_bytes() == data
    entry.write_bytes(b"not even the header")
    assert _diff_json(case / "run_a", case / "run_b") == first


def test_no_cache_writes_nothing():
    case = CORPUS / "jax_seed"
    _diff_json(case / "run_a", case / "run_b", "--no-cache")
    assert not cache.cache_dir().exists() or not any(cache.cache_dir().iterdir())


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
