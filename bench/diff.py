"""Benchmark ``hlodiff diff`` end to end on pairs of big dumps, against XLA's C++ parser.

For each pair made by ``make_big.py --pair`` (two runs differing in the
learning rate, in one op of one middle layer, or in the dtype of the whole
network), measures in one run of this script:

* XLA's C++ parser (jaxlib's ``hlo_module_from_text``) parsing both main
  after_optimizations files, text already in memory: the reference;
* ``hlodiff diff --no-cache A B`` in a fresh process (wall time, and peak
  RSS of that process and the worker it starts together, sampled);
* with ``--floor``, what any Python diff pays before its first comparison:
  a fresh interpreter importing the design card's libraries and reading
  the stage files of the main program a diff reads (both runs), so that
  a goal's ratio can be set against it;

and prints their ratio against the targets of issue 16. With ``--parse`` it
also times ``hlodiff.parse`` (everything read, no pass) against the C++ parser
on run_a's file; with ``--cached``, a diff read back from the result cache
against the first. With ``--same-as CASE`` it checks that the findings of each
model-change pair are those of the small pair committed as
``corpus/CASE`` (kinds, stage, origin and source line; the layer's number in
the op_name aside, as the middle layer moves with the depth).

    python bench/diff.py /work/bigdumps/model20 /work/bigdumps/lr20 --same-as bench_model_change
    python bench/diff.py /work/bigdumps/{model10,model20,model40,lr20,dtype40} --parse --json
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hlodiff.dumps import AFTER, BEFORE, load_dump  # noqa: E402



@dataclass(frozen=True)
class Target:
    """Issue 16's goal for one kind of pair, for files below a size: diff
    time over the C++ parse of both files, and peak RSS."""

    kind: str  # what run_b changes: model, lr or dtype (the pair directory's name starts so)
    below_mb: float | None
    ratio: float | None
    peak_gb: float | None


TARGETS = (
    Target("model", 15, None, None),  # ~5 MB: printed to show how the ratio grows
    Target("model", 40, 1.0, 1.0),  # ~20 MB
    Target("model", None, 1.0, 2.0),  # ~60 MB
    Target("lr", None, 0.5, None),
    Target("dtype", None, None, 3.0),
)
PARSE_TARGET = 0.5  # hlodiff.parse MB/s over the C++ parser's


def main_files(pair: Path) -> list[Path]:
    """The main program's after_optimizations file of run_a and run_b."""
    out = []
    for run in (pair / "run_a", pair / "run_b"):
        found = load_dump(run).main_program().stage_file(AFTER)
        out.append(run / found.relative)
    return out


def cpp_seconds(texts: list[str], runs: int) -> float:
    """Best time of XLA's C++ parser reading all ``texts``, one after the other."""
    from jax._src.lib import hlo

    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        for text in texts:
            hlo.hlo_module_from_text(text)
        best = min(best, time.perf_counter() - start)
    return best


def _tree_rss_mb(pid: int) -> float:
    """The resident memory of process ``pid`` and every process under it, now."""
    total, pids = 0, [pid]
    while pids:
        at = pids.pop()
        try:
            total += int(Path(f"/proc/{at}/statm").read_text().split()[1])
            for task in Path(f"/proc/{at}/task").iterdir():
                pids.extend(map(int, (task / "children").read_text().split()))
        except (OSError, ValueError):
            continue  # gone meanwhile
    return total * os.sysconf("SC_PAGE_SIZE") / 2**20


def _sampled_peak(pid: int, ended: threading.Event, peak: list[float]) -> None:
    """Keep in ``peak[0]`` the most memory process ``pid`` and its workers
    held together, sampled every 10 ms until ``ended``: its own peak RSS does
    not count a worker's, and the two run at the same time."""
    while not ended.wait(0.01):
        peak[0] = max(peak[0], _tree_rss_mb(pid))


def timed_diff(pair: Path, runs: int) -> tuple[float, float, int, dict]:
    """Best (seconds, peak RSS in MB) of ``hlodiff diff --no-cache`` on ``pair``
    in a fresh process, its exit code and its JSON report. The peak is that
    of the process and its workers together."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    best, peak = float("inf"), 0.0
    with tempfile.TemporaryDirectory() as cache_dir:
        env["HLODIFF_CACHE_DIR"] = cache_dir  # Lark's grammar analysis, kept after the first
        for _ in range(runs + 1):  # the first builds the grammar analysis, as any earlier command
            with tempfile.TemporaryFile() as out:
                start = time.perf_counter()
                process = subprocess.Popen(
                    [sys.executable, "-m", "hlodiff", "diff", "--no-cache", "--format", "json",
                     str(pair / "run_a"), str(pair / "run_b")], env=env, stdout=out)
                together, ended = [0.0], threading.Event()
                sampler = threading.Thread(target=_sampled_peak,
                                           args=(process.pid, ended, together))
                sampler.start()
                _, status, usage = os.wait4(process.pid, 0)
                seconds = time.perf_counter() - start
                ended.set()
                sampler.join()
                out.seek(0)
                report = json.loads(out.read() or b"{}")
            if _ > 0 or runs == 0:
                best = min(best, seconds)
                peak = max(peak, usage.ru_maxrss / 1024, together[0])
    return best, peak, os.waitstatus_to_exitcode(status), report


def cached_seconds(pair: Path) -> tuple[float, float]:
    """(first, repeated) seconds of ``hlodiff diff`` with the result cache on,
    from an empty cache (issue 6: the repeated one within 10% of the first)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    times = []
    with tempfile.TemporaryDirectory() as cache_dir:
        env["HLODIFF_CACHE_DIR"] = cache_dir
        for _ in range(2):
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "hlodiff", "diff", "--format", "json",
                            str(pair / "run_a"), str(pair / "run_b")], env=env,
                           stdout=subprocess.DEVNULL)
            times.append(time.perf_counter() - start)
    return times[0], times[1]


def parse_seconds(path: Path) -> float:
    """hlodiff.parse on the whole file (no pass), in a fresh process, best of two."""
    code = ("import sys, time; from hlodiff.syntax.parser import parse; t = open(sys.argv[1]).read();"
            " parse('ENTRY e {' + chr(10) + '  ROOT c = f32[] constant(0)' + chr(10) + '}'); s = []\n"
            "for _ in range(2):\n a = time.perf_counter(); parse(t); s.append(time.perf_counter() - a)\n"
            "print(min(s))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], check=True, capture_output=True,
                         text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    return float(out.stdout.strip().splitlines()[-1])


_FLOOR = """
import sys
import click, lark, rapidfuzz, rich.console  # what a diff loads, whatever it does
for path in sys.argv[1:]:
    open(path, encoding="utf-8").read()
"""


def stage_files(pair: Path) -> list[Path]:
    """Every stage file of the main program a diff reads, of both runs."""
    out = []
    for run in (pair / "run_a", pair / "run_b"):
        main = load_dump(run).main_program()
        out += [run / main.stage_file(stage).relative for stage in (BEFORE, AFTER)
                if main.stage_file(stage) is not None]
    return out


def floor_seconds(pair: Path, runs: int) -> float:
    """Best time of a fresh interpreter loading the libraries a diff loads and
    reading the files it reads, doing nothing else: no Python diff is faster."""
    best = float("inf")
    for _ in range(runs + 1):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", _FLOOR, *map(str, stage_files(pair))], check=True)
        best = min(best, time.perf_counter() - start)
    return best


def findings(report: dict) -> list[tuple]:
    """What a report says, where in the user's code: (kind, stage, op_name
    with the layer's number left out, source file's name, source line)."""
    out = []
    for finding in report.get("findings", []):
        origin = finding["origin"]
        op_name = re.sub(r"transformer_block_\d+", "transformer_block_N", origin["op_name"] or "")
        out.append((finding["kind"], finding["stage"], op_name,
                    Path(origin["source_file"] or "").name, origin["source_line"]))
    return sorted(out)


def kind_of(pair: Path) -> str:
    return next((t.kind for t in TARGETS if pair.name.startswith(t.kind)), "model")


def verdict(kind: str, mb: float, ratio: float, peak_gb: float) -> str:
    target = next(t for t in TARGETS if t.kind == kind and (t.below_mb is None or mb < t.below_mb))
    if target.ratio is None and target.peak_gb is None:
        return "(no target at this size)"
    wanted = [f"ratio <= {target.ratio}"] if target.ratio is not None else []
    wanted += [f"RSS <= {target.peak_gb} GB"] if target.peak_gb is not None else []
    met = (target.ratio is None or ratio <= target.ratio) and \
        (target.peak_gb is None or peak_gb <= target.peak_gb)
    return f"{'met' if met else 'MISSED'} ({' and '.join(wanted)})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("pairs", type=Path, nargs="+", help="pair directories (run_a, run_b)")
    parser.add_argument("--runs", type=int, default=2, help="timing runs of each (best is kept)")
    parser.add_argument("--parse", action="store_true",
                        help="also time hlodiff.parse against the C++ parser on run_a's file")
    parser.add_argument("--cached", action="store_true",
                        help="also time a diff read back from the result cache")
    parser.add_argument("--same-as", metavar="CASE",
                        help="check each model pair's findings against corpus/CASE's")
    parser.add_argument("--floor", action="store_true",
                        help="also time a fresh Python loading the libraries and reading the files")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    # An installed hlodiff is byte-compiled (pip does it); do it once here, so
    # that start-up is timed as installed.
    compileall.compile_dir(ROOT / "hlodiff", quiet=1)
    small = None
    if args.same_as:
        small = findings(json.loads(subprocess.run(
            [sys.executable, "-m", "hlodiff", "diff", "--no-cache", "--format", "json",
             str(ROOT / "corpus" / args.same_as / "run_a"), str(ROOT / "corpus" / args.same_as / "run_b")],
            capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT))).stdout))
    rows = []
    for pair in args.pairs:
        files = main_files(pair)
        sizes = [p.stat().st_size / 1e6 for p in files]
        seconds, peak, code, report = timed_diff(pair, args.runs)
        cpp = cpp_seconds([p.read_text() for p in files], args.runs)
        row = {"pair": pair.name, "kind": kind_of(pair), "mb": [round(s, 1) for s in sizes],
               "cpp_parse_both_s": round(cpp, 2), "diff_s": round(seconds, 2),
               "ratio": round(seconds / cpp, 2), "peak_mb": round(peak), "exit": code}
        row["verdict"] = verdict(row["kind"], sizes[0], seconds / cpp, peak / 1024)
        if args.parse:
            own = parse_seconds(files[0])
            alone = cpp_seconds([files[0].read_text()], args.runs)
            row["parse_over_cpp"] = round(alone / own, 2)  # speed: hlodiff MB/s over C++'s
        if args.floor:
            row["floor_over_cpp"] = round(floor_seconds(pair, args.runs) / cpp, 2)
        if args.cached:
            first, again = cached_seconds(pair)
            row["repeated_over_first"] = round(again / first, 3)
        if small is not None and row["kind"] == "model":
            row["same_findings_as_small"] = findings(report) == small
        rows.append(row)
        if not args.json:
            print(_line(row), flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))


def _line(row: dict) -> str:
    text = (f"{row['pair']:10s} {row['mb'][0]:6.1f} MB  C++ both {row['cpp_parse_both_s']:6.2f} s  "
            f"hlodiff diff {row['diff_s']:6.2f} s  ratio {row['ratio']:5.2f}  "
            f"peak {row['peak_mb'] / 1024:4.2f} GB  exit {row['exit']}  {row['verdict']}")
    if "parse_over_cpp" in row:
        text += f"\n{'':10s} parse speed: {row['parse_over_cpp']:.2f}x the C++ parser's " \
                f"({'met' if row['parse_over_cpp'] >= PARSE_TARGET else 'MISSED'}, target >= {PARSE_TARGET})"
    if "floor_over_cpp" in row:
        text += f"\n{'':10s} a Python process loading the libraries and reading the files: " \
                f"{row['floor_over_cpp']:.2f}x the C++ parse"
    if "repeated_over_first" in row:
        text += f"\n{'':10s} a repeated diff, read from the cache: {row['repeated_over_first']:.1%} " \
                "of the first (target <= 10%)"
    if "same_findings_as_small" in row:
        text += f"\n{'':10s} findings as the small pair's: {row['same_findings_as_small']}"
    return text


if __name__ == "__main__":
    main()
