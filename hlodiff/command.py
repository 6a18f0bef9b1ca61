"""The ``hlodiff`` command as installed: a worker started first, then the command line.

A diff of big dumps hands the compile input to a worker process
(hlodiff/analysis/compare.py). Started when the diff gets there, the worker
spends its first tenth of a second loading Python and hlodiff while this
process waits for it at the end. Started here, before this process loads
the command line, the analysis and the renderers, it is ready when asked
(hlodiff/dumps/pool.py, ``start_early``).
"""

from __future__ import annotations

import sys


def main() -> None:
    from .dumps import pool
    if sys.argv[1:2] == ["diff"]:
        pool.start_early(sys.argv[2:])
    from .cli import main as command_line
    command_line()
