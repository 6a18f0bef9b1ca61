"""Benchmark ``hlodiff diff`` end to end on a pair of big dumps.

For a pair made by ``make_big.py --pair`` (two runs differing only in the
learning rate), measures in one run of this script:

* XLA's C++ parser (jaxlib) parsing both main after_optimizations files,
  text already in memory: the reference a diff is compared with;
* ``hlodiff diff A B`` in a fresh process with no result cached (the grammar
  analysis kept, as after any earlier command; wall
  time and peak RSS), and the same command again, served from the cache;

and prints the ratios: diff / C++ parse of both (target <= 1.0), peak
memory (target <= 3 GB) and repeated / first diff (target <= 0.10).

    python bench/diff.py /work/bigdumps/pair20/run_a /work/bigdumps/pair20/run_b
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hlodiff.dumps import AFTER, load_dump  # noqa: E402


def cpp_parse_seconds(paths: list[Path], runs: int) -> float:
    from jax._src.lib import hlo

    texts = [p.read_text() for p in paths]
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for text in texts:
            hlo.hlo_module_from_text(text)
        best = min(best, time.perf_counter() - start)
    return best


def timed_diff(a: Path, b: Path, cache_dir: str) -> tuple[float, float, int]:
    """(seconds, peak RSS in MB, exit code) of ``hlodiff diff a b`` in a new process."""
    env = dict(os.environ, HLODIFF_CACHE_DIR=cache_dir, PYTHONPATH=str(ROOT))
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-m", "hlodiff", "diff", str(a), str(b),
                                "--format", "json"], env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    return seconds, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def keep_grammars(cache_dir: str) -> None:
    """Leave Lark's grammar analysis in the cache, as any earlier hlodiff
    command on this machine would have: the first diff of a pair is timed
    with no result cached, not as the first command ever run."""
    env = dict(os.environ, HLODIFF_CACHE_DIR=cache_dir, PYTHONPATH=str(ROOT))
    subprocess.run([sys.executable, "-c", "import hlodiff; hlodiff.parse('ENTRY e {\\n"
                    "  ROOT c = f32[] constant(0)\\n}')"], env=env, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_a", type=Path)
    parser.add_argument("run_b", type=Path)
    parser.add_argument("--runs", type=int, default=2, help="C++ timing runs (best is kept)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    files = [load_dump(run).main_program().stage_file(AFTER) for run in (args.run_a, args.run_b)]
    paths = [run / f.relative for run, f in zip((args.run_a, args.run_b), files)]
    sizes = [p.stat().st_size / 1e6 for p in paths]
    cpp = cpp_parse_seconds(paths, args.runs)
    # An installed hlodiff is byte-compiled (pip does it); a checkout run with
    # PYTHONDONTWRITEBYTECODE would compile every module on every start, which
    # a user never pays: do it once here, so start-up is timed as installed.
    compileall.compile_dir(ROOT / "hlodiff", quiet=1)
    with tempfile.TemporaryDirectory() as cache_dir:
        keep_grammars(cache_dir)
        first, peak, code = timed_diff(args.run_a, args.run_b, cache_dir)
        again, peak_again, _ = timed_diff(args.run_a, args.run_b, cache_dir)
    figures = {
        "after_optimizations_mb": [round(s, 1) for s in sizes],
        "cpp_parse_both_s": round(cpp, 2),
        "diff_s": round(first, 2),
        "diff_over_cpp_parse": round(first / cpp, 2),
        "diff_peak_mb": round(peak),
        "repeated_diff_s": round(again, 2),
        "repeated_over_first": round(again / first, 3),
        "exit_code": code,
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"pair: {args.run_a} / {args.run_b}")
    print(f"main after_optimizations files: {sizes[0]:.1f} MB and {sizes[1]:.1f} MB")
    print(f"XLA C++ parser, both files:     {cpp:8.2f} s")
    print(f"hlodiff diff (empty cache):     {first:8.2f} s   ratio {first / cpp:.2f} (target <= 1.0)")
    print(f"  peak memory:                  {peak:8.0f} MB  (target <= 3000)")
    print(f"hlodiff diff again (cached):    {again:8.2f} s   {again / first:.1%} of the first "
          f"(target <= 10%)")


if __name__ == "__main__":
    main()
