"""The cache: a repeated diff is read back; a damaged, planted or foreign entry
is ignored and the answer computed afresh; nothing in an entry can run code."""

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
    """The diff results in the cache (not Lark's grammar analysis)."""
    directory = cache.cache_dir()
    return sorted(p for p in directory.iterdir() if p.name.startswith("compare-")) \
        if directory.exists() else []


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
    from hlodiff.analysis.compare import _cache_inputs
    from hlodiff.dumps import load_target
    case = tmp_path / "case"
    shutil.copytree(CORPUS / "jax_learning_rate", case)

    def key(dumps):
        return cache.key("compare", (None,), *_cache_inputs(dumps))

    dumps = [load_target(case / "run_a"), load_target(case / "run_b")]
    monkeypatch.setattr(cache, "_PARALLEL_BYTES", 10 ** 15)
    alone = key(dumps)
    monkeypatch.setattr(cache, "_PARALLEL_BYTES", 0)
    assert key(dumps) == alone
    main_b = next((case / "run_b").glob("*jit_train_step.before_optimizations.txt"))
    main_b.write_text(main_b.read_text().replace("constant(0.02)", "constant(0.03)"))
    assert key([dumps[0], load_target(case / "run_b")]) != alone


def test_the_key_covers_hlodiffs_own_code(monkeypatch, tmp_path):
    # An upgrade or a local edit that changes an answer must not reuse an old one.
    before = cache.key("compare", (), [], [])
    edited = tmp_path / "edited.py"
    edited.write_text("# an edit\n")
    real = cache.package_files
    monkeypatch.setattr(cache, "package_files", lambda: real() + [edited])
    cache.program_identity.cache_clear()
    try:
        assert cache.key("compare", (), [], []) != before
    finally:
        cache.program_identity.cache_clear()


def test_the_grammar_analysis_is_kept_and_a_damaged_copy_is_rebuilt(tmp_path, monkeypatch):
    # Lark's analysis of the grammars is kept between runs; a damaged copy
    # must be rebuilt, never trusted.
    from hlodiff.syntax import grammars
    from hlodiff.syntax.parser import parse
    monkeypatch.setenv("HLODIFF_CACHE_DIR", str(tmp_path / "cache"))
    text = (CORPUS / "jax_seed" / "run_a").glob("*jit_train_step.before_optimizations.txt")
    text = next(text).read_text()
    grammars.lalr.cache_clear()
    expected = parse(text)
    (kept,) = (tmp_path / "cache").glob("grammar-hlo-*")
    whole = kept.read_bytes()
    kept.write_bytes(whole[:100])
    grammars.lalr.cache_clear()
    assert parse(text) == expected
    assert len(kept.read_bytes()) > 100  # written again whole
    grammars.lalr.cache_clear()
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
               "print(sorted(m for m in ('lark', 'rapidfuzz', 'hlodiff.syntax.parser') if m in sys.modules),"
               " file=sys.stderr)",
               str(case / "run_a"), str(case / "run_b")]
    first = subprocess.run(command, env=env, capture_output=True, text=True)
    again = subprocess.run(command, env=env, capture_output=True, text=True)
    assert first.stderr.strip().endswith("['hlodiff.syntax.parser', 'lark', 'rapidfuzz']")
    assert again.stdout == first.stdout
    assert again.stderr.strip().endswith("[]")


# --- a cache someone else can write --------------------------------------------------------

class _Plant:
    """What an attacker's pickle would do when loaded: create a file."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


def _planted_entries(proof):
    """Entries built the way an attacker would: the entry's own name, the old
    format's magic and checksum over a pickle that creates ``proof``, and the
    new format's magic with a signature made with a key of their own."""
    import hashlib
    import hmac
    import pickle
    payload = pickle.dumps(_Plant(proof))
    old_format = b"hlodiff-cache-1\n" + hashlib.sha256(payload).digest() + payload
    yield old_format

    def signed_with(key, entry, body):
        return b"hlodiff-cache-2\n" + hmac.new(key, entry.encode() + b"\0" + body,
                                                 hashlib.sha256).hexdigest().encode() + b"\n" + body
    yield signed_with
    yield payload


def test_a_planted_entry_never_runs_and_is_recomputed(tmp_path):
    case = CORPUS / "jax_learning_rate"
    first = _diff_json(case / "run_a", case / "run_b")
    (entry,) = _results()
    genuine = entry.read_bytes()
    proof = tmp_path / "pwned"
    for planted in _planted_entries(proof):
        if callable(planted):  # their own key: a valid-looking signature
            planted = planted(b"k" * 32, entry.name, b'{"same_executable": true}')
        entry.write_bytes(planted)
        verbose = run_cli("diff", str(case / "run_a"), str(case / "run_b"), "--format", "json",
                          "--verbose", expect=1)
        assert verbose.stdout == first, "a planted entry changed the answer"
        assert not proof.exists(), "loading a cache entry ran code"
        notes = [line for line in verbose.stderr.splitlines() if "cache:" in line]
        assert len(notes) == 1 and "ignored, computing afresh" in notes[0], verbose.stderr
        assert entry.read_bytes() == genuine  # replaced by the true answer


def test_an_entry_moved_to_another_name_is_rejected(tmp_path):
    # A genuine entry of another diff, copied under this diff's name, must
    # not answer for it: the signature covers the name.
    seed, rate = CORPUS / "jax_seed", CORPUS / "jax_learning_rate"
    _diff_json(seed / "run_a", seed / "run_b")
    (seed_entry,) = _results()
    expected = _diff_json(rate / "run_a", rate / "run_b")
    (rate_entry,) = [p for p in _results() if p != seed_entry]
    rate_entry.write_bytes(seed_entry.read_bytes())
    assert _diff_json(rate / "run_a", rate / "run_b") == expected


def test_without_a_private_key_nothing_is_cached(tmp_path, monkeypatch):
    shared = tmp_path / "shared-secret"
    shared.mkdir(mode=0o777)
    shared.chmod(0o777)  # others could read or replace the key: not trusted
    monkeypatch.setenv("HLODIFF_SECRET_DIR", str(shared))
    cache._signing_key.cache_clear()
    case = CORPUS / "jax_seed"
    _diff_json(case / "run_a", case / "run_b")
    assert _results() == []
    assert not (shared / "cache.key").exists()


def test_an_entry_that_is_not_a_regular_file_is_skipped_not_waited_on(tmp_path):
    # Others may write the cache folder (a helper session's run): a FIFO under
    # an entry's name hung every diff, a link to /dev/zero ate the memory.
    case = CORPUS / "jax_learning_rate"
    first = _diff_json(case / "run_a", case / "run_b")
    (entry,) = _results()
    for plant in (lambda: os.mkfifo(entry), lambda: entry.symlink_to("/dev/zero")):
        entry.unlink()
        plant()
        verbose = run_cli("diff", str(case / "run_a"), str(case / "run_b"), "--format", "json",
                          "--verbose", expect=1)
        assert verbose.stdout == first
        assert "unreadable" in verbose.stderr and "computing afresh" in verbose.stderr


def test_a_file_the_cache_key_cannot_read_is_the_parsers_error(tmp_path):
    # The cache's key reads every file of a diff before the parser does: one
    # it could not read (mode 000, a helper session's run without root's
    # override) gave a PermissionError traceback and exit 1 ("different").
    from hlodiff.errors import HlodiffError
    try:
        cache._file_digest(tmp_path)  # a folder: unreadable as a file, to root as well
    except HlodiffError as err:
        assert str(err) == f"{tmp_path}: cannot read: Is a directory"
    else:
        raise AssertionError("read a folder as a file")
