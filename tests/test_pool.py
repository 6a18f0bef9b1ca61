"""Reading many files on every core (hlodiff/dumps/pool.py) must give exactly what
reading them one by one gives, errors included, and survive a dead worker."""

from __future__ import annotations

import shutil

import pytest

from conftest import CORPUS, run_cli
from hlodiff.dumps import pool
from hlodiff.dumps.catalogue import count_instructions, list_dump, load_dump
from hlodiff.dumps.pairing import structure

READERS = {"instruction_count": count_instructions, "structure": structure}


def _files(tmp_path):
    """A real dump's HLO files, and one that is not HLO at all."""
    files = sorted((CORPUS / "jax_learning_rate" / "run_a").glob("*.txt"))[:6]
    bad = tmp_path / "module_0099.jit_broken.before_optimizations.txt"
    bad.write_text("HloModule broken\n\nENTRY e {\n  ROOT x = f32[] bogus-op()\n}\n")
    return [*files, bad]


@pytest.mark.parametrize("reader", ["instruction_count", "structure"])
def test_workers_answer_as_this_process_does(reader, tmp_path, monkeypatch):
    files = _files(tmp_path)
    alone = pool.read_files(READERS[reader], files)
    monkeypatch.setattr(pool, "MIN_BYTES", 0)
    monkeypatch.setattr(pool.os, "cpu_count", lambda: 3)  # two workers and this process
    done = []
    pooled = pool.read_files(READERS[reader], files, on_read=done.append)
    assert pooled == alone
    assert sorted(done) == list(range(len(files)))
    assert alone[-1][0] is None and 'unknown opcode "bogus-op"' in alone[-1][1]
    assert all(error is None for _, error in alone[:-1])


def test_a_dead_worker_leaves_its_files_to_this_process(tmp_path, monkeypatch):
    files = _files(tmp_path)
    alone = pool.read_files(count_instructions, files)
    monkeypatch.setattr(pool, "MIN_BYTES", 0)
    monkeypatch.setattr(pool.sys, "executable", "/bin/false")  # a worker that exits at once
    assert pool.read_files(count_instructions, files) == alone


def test_ls_counts_the_same_with_the_pool(tmp_path, monkeypatch):
    case = tmp_path / "run_a"
    shutil.copytree(CORPUS / "jax_learning_rate" / "run_a", case)
    alone = run_cli("ls", str(case), "--format", "json").stdout
    monkeypatch.setattr(pool, "MIN_BYTES", 0)
    assert run_cli("ls", str(case), "--format", "json").stdout == alone
    counts = [row.instructions for row in list_dump(load_dump(case)).rows]
    assert len(counts) > 1 and all(isinstance(c, int) and c > 0 for c in counts)


def test_small_inputs_start_no_worker(monkeypatch):
    started = []
    monkeypatch.setattr(pool, "_start", lambda *args: started.append(args))
    files = sorted((CORPUS / "jax_learning_rate" / "run_a").glob("*.txt"))
    assert sum(f.stat().st_size for f in files) < pool.MIN_BYTES
    pool.read_files(count_instructions, files)
    assert started == []
