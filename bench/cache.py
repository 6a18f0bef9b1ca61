"""How much a cached ``hlodiff diff`` costs next to an uncached one.

The cache (hlodiff/cache.py) keeps each diff as signed JSON: a repeated
diff of the same files hashes them, checks the entry's HMAC, rebuilds the
report from JSON and prints it. Issue 22's target is that this costs at
most 10% of computing the diff. For each pair given, in fresh processes
(``python -m hlodiff diff A B --format json``, as a user or a CI job runs
it, byte-compiled as installed):

* uncached: the result entry removed first (the grammar analysis kept, as
  after any earlier command on the machine), so the diff is computed,
  its files hashed and the entry written;
* cached: the same command again, served from the entry.

Each is the median of ``--runs`` runs, as wall time and as the process's
CPU time (user + system). The cache and the signing key live in
a temporary folder, never the user's.

    python bench/cache.py corpus/jax_learning_rate /work/bigdumps/lr20
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _environment(folder: Path) -> dict[str, str]:
    secret = folder / "secret"
    secret.mkdir(mode=0o700, exist_ok=True)
    return dict(os.environ, HLODIFF_CACHE_DIR=str(folder / "cache"),
                HLODIFF_SECRET_DIR=str(secret), PYTHONPATH=str(ROOT))


def _diff_seconds(pair: Path, env: dict[str, str]) -> tuple[float, float]:
    """(wall, CPU) seconds of one ``hlodiff diff`` of ``pair`` in a new process."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "hlodiff", "diff", str(pair / "run_a"),
                                str(pair / "run_b"), "--format", "json"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):
        raise SystemExit(f"hlodiff diff failed on {pair}")
    return wall, usage.ru_utime + usage.ru_stime


def measure(pair: Path, runs: int) -> dict[str, float]:
    """Median wall and CPU seconds of the uncached and the cached diff of
    ``pair``. On a machine others share, CPU time is the steadier figure."""
    with tempfile.TemporaryDirectory() as folder:
        env = _environment(Path(folder))
        _diff_seconds(pair, env)  # Lark's grammar analysis and the key, as on any used machine
        uncached, cached = [], []
        for _ in range(runs):
            for entry in (Path(folder) / "cache").glob("compare-*"):
                entry.unlink()
            uncached.append(_diff_seconds(pair, env))
            cached.append(_diff_seconds(pair, env))
    figures = {}
    for what, index in (("wall", 0), ("cpu", 1)):
        first = statistics.median(t[index] for t in uncached)
        again = statistics.median(t[index] for t in cached)
        figures |= {f"uncached_{what}_s": round(first, 3), f"cached_{what}_s": round(again, 3),
                    f"cached_over_uncached_{what}": round(again / first, 3)}
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pairs", nargs="+", type=Path, help="folders holding run_a and run_b")
    parser.add_argument("--runs", type=int, default=3, help="runs of each (the median is kept)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    compileall.compile_dir(ROOT / "hlodiff", quiet=1)  # as pip installs it
    figures = {}
    for pair in args.pairs:
        size = sum(f.stat().st_size for f in pair.rglob("*") if f.is_file()) / 1e6
        figures[str(pair)] = dict(measure(pair, args.runs), pair_mb=round(size, 1))
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{'pair':32} {'MB':>5}   {'wall: uncached  cached  ratio':>30}"
          f"   {'CPU: uncached  cached  ratio':>29}")
    for pair, f in figures.items():
        print(f"{pair:32} {f['pair_mb']:5.1f}   {f['uncached_wall_s']:14.2f} s "
              f"{f['cached_wall_s']:5.2f} s {f['cached_over_uncached_wall']:6.1%}"
              f"   {f['uncached_cpu_s']:13.2f} s {f['cached_cpu_s']:5.2f} s "
              f"{f['cached_over_uncached_cpu']:6.1%}")
    print("target: cached <= 10% of uncached (issue 22)")

if __name__ == "__main__":
    main()
