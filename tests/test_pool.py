"""Reading many files on every core (hlodiff/dumps/pool.py) must give exactly what
reading them one by one gives, errors included, and survive a dead worker."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import CORPUS, ROOT, run_cli
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


def test_a_hlodiff_folder_where_hlodiff_runs_is_not_what_the_worker_runs(tmp_path, monkeypatch):
    # python -m and -c put the current directory first on the path: a checkout
    # of another hlodiff there must not answer for this one.
    shadow = tmp_path / "hlodiff"
    (shadow / "dumps").mkdir(parents=True)
    marker = tmp_path / "shadow-ran"
    (shadow / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    (shadow / "dumps" / "__init__.py").write_text("")
    (shadow / "dumps" / "pool.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.chdir(tmp_path)
    path = sorted((CORPUS / "jax_learning_rate" / "run_a").glob("*.txt"))[0]
    pending = pool.elsewhere((count_instructions, (path,)))
    assert pending.outcome(0) == pool._call(count_instructions, (path,))
    pending.cancel()
    assert not marker.exists()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel ends it on Linux")
def test_a_worker_ends_when_the_process_that_started_it_is_killed(tmp_path):
    # A diff killed (SIGTERM, SIGKILL) leaves no worker computing for no one.
    script = ("import sys, time; from hlodiff.dumps import pool\n"
              "pending = pool.elsewhere((time.sleep, (60,)))\n"
              "print(pending._worker.pid, flush=True); time.sleep(60)\n")
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                              env=dict(os.environ, PYTHONPATH=str(ROOT)))
    worker = int(parent.stdout.readline())
    assert _alive(worker)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(worker)


def _alive(pid: int) -> bool:
    """Is ``pid`` a process that has not ended (a zombie has)?"""
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_a_worker_started_early_is_the_one_a_diff_asks(monkeypatch):
    # hlodiff/command.py starts it before loading the rest of hlodiff.
    monkeypatch.setattr(pool, "_early", None)
    monkeypatch.setattr(pool, "MIN_BYTES", 0)
    monkeypatch.setattr(pool.os, "cpu_count", lambda: 2)
    run = CORPUS / "jax_learning_rate" / "run_a"
    pool.start_early(["--no-cache", str(run), str(run)])
    early = pool._early
    assert early is not None and early.poll() is None
    path = sorted(run.glob("*.txt"))[0]
    pending = pool.elsewhere((count_instructions, (path,)))
    assert pending._worker is early and pool._early is None
    assert pending.outcome(0) == pool._call(count_instructions, (path,))
    pending.cancel()


def test_arguments_holding_little_start_no_early_worker(monkeypatch):
    monkeypatch.setattr(pool, "_early", None)
    monkeypatch.setattr(pool.os, "cpu_count", lambda: 2)
    run = CORPUS / "jax_learning_rate" / "run_a"
    assert sum(f.stat().st_size for f in run.iterdir()) * 2 < pool.MIN_BYTES
    pool.start_early([str(run), str(run), "--format", "json", "/no/such/dump"])
    assert pool._early is None


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc tells whether it ended")
def test_an_early_worker_never_asked_ends_with_its_process(tmp_path):
    # The diff came from the cache, say: the worker must not outlive hlodiff.
    script = ("import os, sys; from hlodiff.dumps import pool\n"
              "pool.MIN_BYTES = 0; pool.os.cpu_count = lambda: 2\n"
              f"pool.start_early([{str(CORPUS / 'jax_learning_rate' / 'run_a')!r}])\n"
              "print(pool._early.pid, flush=True)\n")
    parent = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    worker = int(parent.stdout)
    deadline = time.monotonic() + 10
    while _alive(worker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(worker)
