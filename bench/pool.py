"""Benchmark reading many HLO files on every core (hlodiff/dumps/pool.py).

``hlodiff ls`` counts the instructions of every module of a dump; pairing
two runs by structure reads every module too. This times the counting of
``ls`` (``hlodiff.dumps.list_dump``) on a dump directory twice, each in a
fresh process: with the files shared out among worker processes, and with
the pool switched off (everything read in one process), and prints both and
their ratio (the pool pays when it is below 1). Best of ``--runs``. It also
times the standard library's way, a ``concurrent.futures`` process pool with
the spawn start method sharing out the same files, to judge whether the
hand-written pipes of pool.py earn their keep.

    python bench/pool.py /work/bigdumps/multi
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

_CHILD = """
import sys, time
from hlodiff.dumps import pool
from hlodiff.dumps import list_dump, load_dump
if sys.argv[2] == "off":
    pool.MIN_BYTES = float("inf")
elif sys.argv[2] == "futures":
    import multiprocessing, os
    from concurrent.futures import ProcessPoolExecutor
    def read_files(reader, paths, on_read=None):
        with ProcessPoolExecutor(max(1, (os.cpu_count() or 1)),
                                 mp_context=multiprocessing.get_context("spawn")) as executor:
            return list(executor.map(pool._call, [reader] * len(paths), [(p,) for p in paths]))
    pool.read_files = read_files  # what list_dump calls
dump = load_dump(sys.argv[1])
start = time.perf_counter()
rows = list_dump(dump).rows
print(time.perf_counter() - start, sum(row.instructions or 0 for row in rows),
      sum(row.instructions is not None for row in rows))
"""


def timed(directory: Path, mode: str) -> tuple[float, int, int]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, "-c", _CHILD, str(directory), mode], env=env,
                         check=True, capture_output=True, text=True).stdout.split()
    return float(out[0]), int(out[1]), int(out[2])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dump_dir", type=Path)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "hlodiff", quiet=1)  # start-up as installed (see diff.py)
    alone = min(timed(args.dump_dir, "off") for _ in range(args.runs))
    pooled = min(timed(args.dump_dir, "on") for _ in range(args.runs))
    futures = min(timed(args.dump_dir, "futures") for _ in range(args.runs))
    assert alone[1] == pooled[1] == futures[1], "the pools counted differently"
    figures = {"modules_counted": alone[2],
               "cpus": os.cpu_count(), "one_process_s": round(alone[0], 2),
               "pool_s": round(pooled[0], 2), "pool_over_one_process": round(pooled[0] / alone[0], 2),
               "futures_s": round(futures[0], 2),
               "futures_over_pool": round(futures[0] / pooled[0], 2),
               "instructions": alone[1]}
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"dump: {args.dump_dir} ({alone[2]} modules counted; {figures['cpus']} CPUs)")
    print(f"counting instructions, one process:  {alone[0]:6.2f} s")
    print(f"counting instructions, pool:         {pooled[0]:6.2f} s   "
          f"ratio {pooled[0] / alone[0]:.2f} (below 1: the pool pays)")
    print(f"counting instructions, concurrent.futures (spawn): {futures[0]:6.2f} s   "
          f"ratio to the pool {futures[0] / pooled[0]:.2f}")
    print(f"instructions counted: {alone[1]} (the same every way)")


if __name__ == "__main__":
    main()
