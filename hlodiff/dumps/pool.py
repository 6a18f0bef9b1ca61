"""Reading many HLO files at once, in worker processes, where it pays.

A dump holds a module per compilation. ``hlodiff ls`` counts the
instructions of each (hlodiff/dumps/catalogue.py), and pairing two runs by structure
reads an opcode histogram of each (hlodiff/dumps/pairing.py). Those answers are
small plain data, so, unlike a parsed
module (whose unpickling costs half a parse: see bench/README.md), they come
back from another process for nothing. With more than one core and at least
``MIN_BYTES`` to read, the files are shared out, largest first, between this
process and up to cores - 1 workers; otherwise they are read here.

Workers are fresh Python processes fed through pipes, not
``multiprocessing`` children: those either fork this process (unsafe while a
progress display runs a thread) or run the caller's main module again (a
script without an ``if __name__ == "__main__"`` guard would start over). A
worker imports this very hlodiff, never a ``hlodiff/`` folder in the
directory it was started from (``python -m`` would put that first), and on
Linux it ends when this process does. A worker that fails for any reason is
not trusted: its work is done here.

``elsewhere`` runs one call in such a worker while this process goes on
(hlodiff/analysis/compare.py diffs the compile input's stage so, beside the
optimized one): its answer is pickled back, so it pays only for work that
costs much more than unpickling what it returns.
"""

from __future__ import annotations

import importlib
import os
import pickle
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

from ..collector import paused
from ..errors import HlodiffError

MIN_BYTES = 4_000_000  # about half a second of parsing: a worker starts in a third of that

Outcome = tuple[Any, str | None]  # (answer, None) or (None, first line of the error)
Reader = Callable[[Path], Any]  # a module-level function (a worker imports it by name)


def read_files(reader: Reader, paths: list[Path],
               on_read: Callable[[int], None] | None = None) -> list[Outcome]:
    """``reader`` applied to each file, in order; its answers must be plain
    data. An ``HlodiffError`` is an outcome, not raised, so that one bad
    file leaves the others' answers. ``on_read(i)`` is called as file i is
    done here (a worker's files, when it finishes)."""
    sizes = [_size(path) for path in paths]
    shares = _shares(sizes, min(len(paths), os.cpu_count() or 1))
    if len(shares) < 2 or sum(sizes) < MIN_BYTES:
        shares = [list(range(len(paths)))]
    workers = [(share, Pending(_start([(reader, (paths[i],)) for i in share])))
               for share in shares[1:]]
    outcomes: dict[int, Outcome] = {}
    for i in shares[0]:
        outcomes[i] = _call(reader, (paths[i],))
        if on_read is not None:
            on_read(i)
    for share, worker in workers:
        answers = [worker.outcome(k) for k in range(len(share))]
        worker.cancel()
        if None in answers:  # a worker that failed is not trusted at all
            answers = [_call(reader, (paths[i],)) for i in share]
        for i, outcome in zip(share, answers):
            outcomes[i] = outcome
            if on_read is not None:
                on_read(i)
    return [outcomes[i] for i in range(len(paths))]


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _shares(sizes: list[int], count: int) -> list[list[int]]:
    """Indices split into ``count`` shares of about equal bytes, largest first."""
    shares: list[list[int]] = [[] for _ in range(max(count, 1))]
    loads = [0] * len(shares)
    for i in sorted(range(len(sizes)), key=lambda i: -sizes[i]):
        least = loads.index(min(loads))
        shares[least].append(i)
        loads[least] += sizes[i]
    return [sorted(share) for share in shares if share]


class Pending:
    """Calls running in a worker process, one after the other (see ``elsewhere``)."""

    def __init__(self, worker: subprocess.Popen | None):
        self._worker = worker
        self._outcomes: list[Outcome] = []

    def outcome(self, k: int = 0) -> Outcome | None:
        """The outcome of call ``k``, waiting for it; None when the worker did
        not deliver it (the caller then makes the call itself). The worker
        sends each outcome as soon as its call is done."""
        while len(self._outcomes) <= k and self._worker is not None:
            outcome = _receive(self._worker)
            if outcome is None:
                self.cancel()
            else:
                self._outcomes.append(outcome)
        return self._outcomes[k] if k < len(self._outcomes) else None

    def cancel(self) -> None:
        """Stop the worker (done or not) and wait for it to end."""
        if self._worker is not None:
            self._worker.kill()
            self._worker.stdout.close()
            self._worker.wait()
            self._worker = None


def elsewhere(*calls: tuple[Callable[..., Any], tuple]) -> Pending:
    """Each ``(function, args)`` of ``calls`` started, in turn, in one worker
    process; each function is module-level, its arguments and answer
    picklable."""
    return Pending(_start(list(calls)))


def _call(function: Callable[..., Any], args: tuple) -> Outcome:
    try:
        return function(*args), None
    except HlodiffError as err:
        return None, str(err).splitlines()[0]


# What a worker runs: this hlodiff first on its path (``-c`` would put the
# current directory there), then the calls it is sent.
_BOOT = "import sys; sys.path[0] = sys.argv[1]; from hlodiff.dumps.pool import _serve; _serve()"


def _start(calls: list[tuple[Callable[..., Any], tuple]]) -> subprocess.Popen | None:
    global _early
    worker, _early = _early, None
    try:
        if worker is None or worker.poll() is not None:
            worker = _spawn()
        named = [(f"{function.__module__}:{function.__qualname__}", args) for function, args in calls]
        pickle.dump(named, worker.stdin)  # a few paths: no deadlock
        worker.stdin.close()
    except OSError:
        return None
    return worker


def _spawn() -> subprocess.Popen:
    """A worker, waiting for its calls on stdin; raises OSError."""
    package_root = str(Path(__file__).resolve().parents[2])  # this hlodiff, not another
    return subprocess.Popen([sys.executable, "-c", _BOOT, package_root, str(os.getpid())],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)


# A worker started before it was asked for (see ``start_early``), taken by the first call.
_early: subprocess.Popen | None = None


def start_early(arguments: list[str]) -> None:
    """Start a worker now when ``arguments`` name files or dump directories
    holding ``MIN_BYTES`` or more, with a core to spare: the diff of big
    dumps hands a worker the compile input, and a worker takes a tenth of a
    second to start, as long as this process takes to load the command
    line, the analysis and the renderers. Started first, it is ready when
    asked. Never asked (the diff came from the cache, say), it ends with
    this process: its stdin closes."""
    global _early
    if _early is not None or (os.cpu_count() or 1) < 2:
        return
    if sum(map(_bytes_in, arguments)) < MIN_BYTES:
        return
    try:
        _early = _spawn()
    except OSError:
        pass


def _bytes_in(argument: str) -> int:
    """The bytes of a file, or of the files directly in a directory (a dump);
    0 for anything else."""
    try:
        if os.path.isdir(argument):
            with os.scandir(argument) as entries:
                return sum(entry.stat().st_size for entry in entries if entry.is_file())
        return os.path.getsize(argument)
    except OSError:
        return 0


def _receive(worker: subprocess.Popen) -> Outcome | None:
    """The worker's next outcome, or None when it sent none."""
    try:
        with paused():  # a parsed module is millions of objects, none of them garbage
            outcome = pickle.load(worker.stdout)
    except Exception:  # killed, out of memory, an interpreter without hlodiff...
        return None
    return outcome if isinstance(outcome, tuple) and len(outcome) == 2 else None


def _serve() -> None:
    """A worker: ("module:function", argument tuple) pairs in on stdin, the
    outcome of each call out on stdout as soon as it is made."""
    _end_with_parent(int(sys.argv[2]))
    try:
        calls = pickle.load(sys.stdin.buffer)
    except EOFError:  # started early, never asked
        return
    for name, args in calls:
        module, qualname = name.split(":")
        outcome = _call(getattr(importlib.import_module(module), qualname), args)
        # Pickled whole before it is written: pickled into the pipe, it would
        # be made as the caller reads it, on the caller's time (a big diff:
        # 0.2 s), since the pipe holds only a few pages.
        sys.stdout.buffer.write(pickle.dumps(outcome, protocol=pickle.HIGHEST_PROTOCOL))
        sys.stdout.buffer.flush()


def _end_with_parent(parent: int) -> None:
    """On Linux, have the kernel end this worker when the process that started
    it ends (killed, say): its work would be for no one. Elsewhere the worker
    ends at its next answer, which nobody reads."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            return
    if os.getppid() != parent:  # it ended before that was asked
        os._exit(1)
