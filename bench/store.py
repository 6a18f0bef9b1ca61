"""The cache store: hlodiff's signed JSON files against diskcache (issue 13).

Both keep the same entries, the JSON of real diff reports (hlodiff/plain.py's
form of what ``hlodiff diff`` caches), in a temporary folder. Timed per entry,
median of ``--runs``: writing it, and reading it back as a repeated diff
does (for hlodiff: the file, the HMAC check; for diskcache: its SQLite
index, then the value file). diskcache runs with ``JSONDisk``: its default
``Disk`` unpickles values, which would let anyone who can write the cache
directory run code (issue 22). Needs ``pip install diskcache`` (not a
dependency of hlodiff):

    python bench/store.py corpus/jax_learning_rate corpus/jax_flax_batch_size
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def _timed(function, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("cases", nargs="+", type=Path, help="folders holding run_a and run_b")
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    import diskcache
    with tempfile.TemporaryDirectory() as folder:
        os.environ["XDG_CACHE_HOME"] = f"{folder}/cache"
        os.environ["HLODIFF_SECRET_DIR"] = f"{folder}/secret"
        os.makedirs(f"{folder}/secret", mode=0o700)
        from hlodiff import cache
        from hlodiff.analysis.compare import compare
        from hlodiff.plain import to_plain
        other = diskcache.Cache(f"{folder}/diskcache", disk=diskcache.JSONDisk)
        print(f"{'case':32} {'entry KB':>9} {'hlodiff write':>14} {'diskcache write':>16} "
              f"{'hlodiff read':>13} {'diskcache read':>15}")
        for case in args.cases:
            report = compare(case / "run_a", case / "run_b")
            payload = json.dumps(to_plain(report), separators=(",", ":")).encode()
            plain = json.loads(payload)
            entry = f"diff-{case.name}"
            figures = [
                _timed(lambda: cache.store_bytes(entry, payload), args.runs),
                _timed(lambda: other.set(entry, plain), args.runs),
                _timed(lambda: json.loads(cache.load_bytes(entry)), args.runs),
                _timed(lambda: other.get(entry), args.runs),
            ]
            assert json.loads(cache.load_bytes(entry)) == other.get(entry) == plain
            print(f"{case.name:32} {len(payload) / 1000:9.1f} "
                  + " ".join(f"{t * 1000:{w}.2f} ms" for t, w in zip(figures, (11, 13, 10, 12))))
        other.close()


if __name__ == "__main__":
    main()
