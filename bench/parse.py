"""Benchmark hlodiff's HLO text parser against XLA's own C++ parser.

For each HLO text file it measures, in one run:

  (a) XLA's C++ parser, ``jax._src.lib.hlo.hlo_module_from_text(text)``;
  (b) hlodiff's ``hlodiff.parse(text)`` (``--strict``: ``strict=True``, which
      also reads every attribute value and literal instead of leaving them lazy);

both with the text already in memory, best of N runs (``--runs``, default 3;
2 runs above 30 MB, 1 above 100 MB), after a warm-up parse of a tiny module
so that building hlodiff's Lark parser is not counted; and

  (c) hlodiff's peak memory for the parse, in a fresh subprocess that imports
      hlodiff, warms it up, reads the file, then takes
      ``resource.getrusage(RUSAGE_SELF).ru_maxrss`` as the baseline. Reading a
      file into a str briefly needs about twice its size, so the child first
      resets the kernel's peak-RSS mark (``/proc/self/clear_refs``, Linux) to
      keep that transient out of the baseline. The memory subprocesses are all
      run before the parent reads any file or imports jax, because a process
      inherits its parent's peak RSS through fork+exec.

It prints a plain-text table (file, MB, C++ MB/s, hlodiff MB/s, their ratio,
hlodiff's seconds per MB,
absolute peak RSS, the parse's own memory = peak - baseline, and both as
multiples of the file size) and the instruction counts from both parsers as a
sanity check. ``--json`` prints the same figures as JSON instead.

Usage (from a checkout; the checkout's hlodiff is used, no install needed)::

    python bench/parse.py /work/bigdumps --min-mb 1          # every HLO *.txt under the dir
    python bench/parse.py --files a.txt b.txt --runs 5
    python bench/parse.py /work/bigdumps --json > figures.json

Targets (see bench/README.md): hlodiff >= 0.5x the C++ parser's MB/s on files
>= 50 MB (0.4x on files >= 10 MB); parse memory <= 10x the file size; time per
MB flat from 5 to 200 MB (the ``hlodiff s/MB`` column).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))  # benchmark the checkout this script lives in

TINY = "HloModule warmup\n\nENTRY main {\n  ROOT p = f32[2]{0} parameter(0)\n}\n"
MB = 1e6


def _maxrss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def _reset_peak() -> bool:
    """Reset this process's peak-RSS mark (Linux >= 4.0); False if not possible."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _mem_child(path: str, strict: bool) -> None:
    """Runs in a fresh interpreter: peak memory of hlodiff.parse on one file."""
    import hlodiff

    hlodiff.parse(TINY)
    text = Path(path).read_text()
    gc.collect()
    reset = _reset_peak()
    base = _maxrss_bytes()
    t0 = time.perf_counter()
    module = hlodiff.parse(text, path=path, strict=strict)
    seconds = time.perf_counter() - t0
    peak = _maxrss_bytes()
    print(json.dumps({"baseline": base, "peak": peak, "peak_reset": reset,
                      "seconds": seconds, "instructions": module.instruction_count}))


def _measure_memory(path: Path, strict: bool) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--_mem", str(path)]
    proc = subprocess.run(cmd + ["--strict"] * strict,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        return {"error": proc.stderr.strip().splitlines()[-1] if proc.stderr.strip()
                else f"exit code {proc.returncode}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _best_of(runs: int, fn) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(runs):
        result = None
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def _runs_for(size: int, runs: int) -> int:
    if size > 100 * MB:
        return 1
    if size > 30 * MB:
        return min(runs, 2)
    return runs


def _is_hlo(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(64).lstrip().startswith(b"HloModule")
    except OSError:
        return False


def _find(args: argparse.Namespace) -> list[Path]:
    files = [Path(f) for f in args.files or []]
    for root in args.paths:
        root = Path(root)
        if root.is_file():
            files.append(root)
            continue
        if not root.is_dir():
            sys.exit(f"bench/parse.py: no such file or directory: {root}")
        found = [p for p in root.rglob("*.txt")
                 if p.stat().st_size >= args.min_mb * MB and _is_hlo(p)]
        files.extend(found)
    unique = {p.resolve(): p for p in files}
    return sorted(unique.values(), key=lambda p: p.stat().st_size, reverse=True)


def _fmt_table(rows: list[dict]) -> str:
    head = ["file", "MB", "C++ MB/s", "hlodiff MB/s", "hlodiff/C++", "hlodiff s/MB", "peak MB",
            "parse MB",
            "peak/file", "parse/file", "instr C++", "instr hlodiff"]
    lines = []
    for r in rows:
        m = r.get("memory", {})
        size = r["bytes"] / MB
        cpp = r.get("cpp_mb_s")
        hd = r.get("hlodiff_mb_s")

        def f(x, spec):
            return "-" if x is None else format(x, spec)

        peak = m.get("peak")
        parse = None if peak is None else max(0, peak - m["baseline"])
        lines.append([
            r["name"], f(size, ".1f"), f(cpp, ".1f"), f(hd, ".2f"),
            f(None if cpp is None or hd is None else hd / cpp, ".3f"),
            f(None if not hd else 1 / hd, ".3f"),  # flat across sizes when the parse is linear
            f(None if peak is None else peak / MB, ".0f"),
            f(None if parse is None else parse / MB, ".0f"),
            f(None if peak is None else peak / r["bytes"], ".1f"),
            f(None if parse is None else parse / r["bytes"], ".1f"),
            f(r.get("cpp_instructions"), "d"), f(r.get("hlodiff_instructions"), "d"),
        ])
    widths = [max(len(h), *(len(l[i]) for l in lines)) if lines else len(h)
              for i, h in enumerate(head)]
    out = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in
                     enumerate(zip(head, widths)))]
    out.append("  ".join("-" * w for w in widths))
    for l in lines:
        out.append("  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in
                             enumerate(zip(l, widths))))
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", help="directories to search for HLO *.txt files "
                    "(or files)")
    ap.add_argument("--files", nargs="+", help="HLO text files to measure")
    ap.add_argument("--min-mb", type=float, default=0.0,
                    help="skip files found under a directory smaller than this (MB)")
    ap.add_argument("--runs", type=int, default=3, help="timing runs per parser (best is kept)")
    ap.add_argument("--strict", action="store_true",
                    help="time hlodiff.parse(text, strict=True): every attribute value and "
                    "literal read at once (the default leaves them lazy)")
    ap.add_argument("--no-memory", action="store_true", help="skip the memory subprocess")
    ap.add_argument("--no-cpp", action="store_true", help="skip XLA's C++ parser")
    ap.add_argument("--json", action="store_true", help="print JSON instead of the table")
    ap.add_argument("--_mem", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._mem:
        _mem_child(args._mem, args.strict)
        return
    if not args.paths and not args.files:
        ap.error("give a directory (or files) to search, or --files")
    files = _find(args)
    if not files:
        sys.exit("bench/parse.py: no HLO text files found")

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    rows = [{"name": f"{p.parent.name}/{p.name}", "path": str(p), "bytes": p.stat().st_size}
            for p in files]
    # Memory first: a child inherits the parent's peak RSS, so measure while we are small.
    if not args.no_memory:
        for r in rows:
            log(f"memory: {r['name']} ({r['bytes'] / MB:.1f} MB)")
            r["memory"] = _measure_memory(Path(r["path"]), args.strict)
            if "error" in r["memory"]:
                log(f"  hlodiff failed: {r['memory']['error']}")

    import hlodiff
    hlodiff.parse(TINY)
    hlo = None
    if not args.no_cpp:
        from jax._src.lib import hlo
        hlo.hlo_module_from_text(TINY)

    for r in rows:
        text = Path(r["path"]).read_text()
        size, runs = r["bytes"], _runs_for(r["bytes"], args.runs)
        r["runs"] = runs
        if hlo is not None:
            log(f"C++:     {r['name']} x{runs}")
            try:
                secs, m = _best_of(runs, lambda: hlo.hlo_module_from_text(text))
                r["cpp_seconds"] = secs
                r["cpp_mb_s"] = size / MB / secs
                r["cpp_instructions"] = sum(len(c.instructions()) for c in m.computations())
            except Exception as err:  # noqa: BLE001 - report and go on
                r["cpp_error"] = str(err).splitlines()[0]
                log(f"  C++ parser failed: {r['cpp_error']}")
            m = None
        log(f"hlodiff: {r['name']} x{runs}")
        try:
            secs, m = _best_of(runs, lambda: hlodiff.parse(text, strict=args.strict))
            r["hlodiff_seconds"] = secs
            r["hlodiff_mb_s"] = size / MB / secs
            r["hlodiff_instructions"] = m.instruction_count
        except Exception as err:  # noqa: BLE001
            r["hlodiff_error"] = str(err).splitlines()[0]
            log(f"  hlodiff failed: {r['hlodiff_error']}")
        m = text = None
        gc.collect()
        mem = r.get("memory", {})
        if "peak" in mem:
            mem["parse_bytes"] = max(0, mem["peak"] - mem["baseline"])
            mem["peak_per_file"] = mem["peak"] / size
            mem["parse_per_file"] = mem["parse_bytes"] / size
        if "cpp_mb_s" in r and "hlodiff_mb_s" in r:
            r["ratio"] = r["hlodiff_mb_s"] / r["cpp_mb_s"]

    if args.json:
        print(json.dumps({"python": sys.version.split()[0], "cpus": os.cpu_count(),
                          "strict": args.strict,
                          "date": time.strftime("%Y-%m-%d"), "files": rows}, indent=2))
        return
    print(f"hlodiff.parse(strict={args.strict}); best of {args.runs} runs "
          f"(fewer above 30 MB); {os.cpu_count()} CPUs; Python {sys.version.split()[0]}")
    print(_fmt_table(rows))
    for r in rows:
        ci, hi = r.get("cpp_instructions"), r.get("hlodiff_instructions")
        if ci is not None and hi is not None and ci != hi:
            print(f"note: instruction counts differ for {r['name']}: C++ {ci}, hlodiff {hi}")
        for key in ("cpp_error", "hlodiff_error"):
            if key in r:
                print(f"note: {r['name']}: {key.split('_')[0]} failed: {r[key]}")
        if "error" in r.get("memory", {}):
            print(f"note: {r['name']}: memory run failed: {r['memory']['error']}")
        elif r.get("memory") and not r["memory"].get("peak_reset"):
            print(f"note: {r['name']}: could not reset peak RSS; baseline includes reading")


if __name__ == "__main__":
    main()
