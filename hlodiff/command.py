"""The ``hlodiff`` command as installed: a worker started first, then the command line.

A diff of big dumps hands the compile input to a worker process
(hlodiff/analysis/compare.py). Started when the diff gets there, the worker
spends its first tenth of a second loading Python and hlodiff while this
process waits for it at the end. Started here, before this process loads
the command line, the analysis and the renderers, it is ready when asked
(hlodiff/dumps/pool.py, ``start_early``).
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    try:
        from .dumps import pool
        if sys.argv[1:2] == ["diff"]:
            pool.start_early(sys.argv[2:])
        from .cli import main as command_line
        command_line()
    except SystemExit as end:
        _exit_now(end.code)
    except KeyboardInterrupt:  # Ctrl-C while the modules load, before click can catch it
        print("hlodiff: interrupted", file=sys.stderr)
        _exit_now(2)


def _exit_now(code: object) -> None:
    """End the process with ``code`` once its output is out, without tearing
    the interpreter down: that frees, one object at a time, every module a
    diff loaded (Lark, rich, click, hlodiff) and what they hold, 0.03-0.04 s
    that the system does at once. The command's files are written and
    closed by then: nothing is left for ``atexit``."""
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # what SystemExit does with a message
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)
