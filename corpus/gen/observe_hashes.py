"""Observe, with real JAX runs, which hashes move for each JAX corpus case.

    python corpus/gen/observe_hashes.py [--write] [--logs] [-v] [--keep DIR] [CASE ...]

Run from the repository root with any Python 3 (the parent needs no JAX; if
the ``farmhash`` module of the PyPI package ``cityhash`` is importable it also
recomputes every printed fingerprint from the dumped text, see HASHES.md):

    /root/venvs/jax-hashes-tools/bin/python corpus/gen/observe_hashes.py --write

For every case the two runs are started exactly as the case's generator
starts them (jax_cases.py: ``jax_cases.py --run CFG`` with
``XLA_FLAGS=--xla_dump_to=DIR <extra>`` and ``JAX_PLATFORMS=cpu``;
jax_compile_options_cases.py: ``jax_compile_options_child.py MODE`` from the
repository root), with these environment variables added (ENV_HASHES):

* ``TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=py_executable=1``: jaxlib logs
  ``py_executable.cc:...] Fingerprint for executable jit_NAME: N`` (stderr);
* ``JAX_COMPILATION_CACHE_DIR=/tmp/hlodiff-jaxcache`` (the same directory for
  every run, emptied before each run), ``JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0``,
  ``JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=-1``: every program is written
  to the persistent cache, file ``<key>-cache``;
* ``JAX_EXPLAIN_CACHE_MISSES=1``: JAX logs ``PERSISTENT COMPILATION CACHE MISS
  for 'jit_NAME' with key 'KEY'``.

The dumps go to a scratch directory (default /tmp/hlodiff-observe/<case>/run_x)
and are compared with the committed corpus/<case>/run_x files (after the same
path sanitising sanitize.py does); the committed dumps are never touched.

Prints, per case, the main program's fingerprint and cache key of both runs,
the dump comparison and the formula check (-v: list the other committed
files that differ, e.g. debug_options, which name the cache directory;
--logs: keep each run's stderr next to its scratch dump).  With ``--write`` the key
``observed`` of corpus/<case>/truth.json is (re)written; nothing else in the
file changes.  Exits 1 if a main-program dump differs from the committed one,
a printed fingerprint does not match the dumped text, or a cache key is
missing.
"""
import datetime
import glob
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)
ROOT = os.path.dirname(CORPUS)
JAX_PYTHON = os.environ.get("HLODIFF_JAX_PYTHON", "/root/venvs/jax/bin/python")
CACHE_DIR = "/tmp/hlodiff-jaxcache"
SCRATCH = "/tmp/hlodiff-observe"

ENV_HASHES = {
    "TF_CPP_MIN_LOG_LEVEL": "0",
    "TF_CPP_VMODULE": "py_executable=1",
    "JAX_COMPILATION_CACHE_DIR": CACHE_DIR,
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1",
    "JAX_EXPLAIN_CACHE_MISSES": "1",
}

# jax_compile_options_cases.py: case -> run -> (child mode, extra XLA flags),
# as its main() calls run()
COMPILE_OPTIONS_CASES = {
    "jax_donation": {"run_a": ("keep", ""), "run_b": ("donate", "")},
    "jax_xla_flag": {"run_a": ("keep", ""),
                     "run_b": ("keep", "--xla_cpu_enable_fast_math=true")},
    "jax_device_count": {"run_a": ("1", "--xla_force_host_platform_device_count=1"),
                         "run_b": ("2", "--xla_force_host_platform_device_count=2")},
    "jax_mesh_shape": {"run_a": ("8x1", "--xla_force_host_platform_device_count=8"),
                       "run_b": ("4x2", "--xla_force_host_platform_device_count=8")},
    "jax_result_sharding": {"run_a": ("4x2", "--xla_force_host_platform_device_count=8"),
                            "run_b": ("4x2_result_replicated",
                                      "--xla_force_host_platform_device_count=8")},
    "jax_partition_spec": {"run_a": ("4x2", "--xla_force_host_platform_device_count=8"),
                           "run_b": ("4x2_weights_replicated",
                                     "--xla_force_host_platform_device_count=8")},
}
# the program each of those cases runs, where it is not jax_compile_options_child.py
CHILDREN = {"jax_device_count": "corpus/gen/jax_device_count_child.py",
            "jax_mesh_shape": "corpus/gen/jax_mesh_child.py",
            "jax_result_sharding": "corpus/gen/jax_mesh_child.py",
            "jax_partition_spec": "corpus/gen/jax_mesh_child.py"}


def _load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(HERE, name + ".py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


jax_cases = _load("jax_cases")      # no JAX import at module level
sanitize = _load("sanitize")


# ---------------------------------------------------------------------------
# running one process and reading its hashes
# ---------------------------------------------------------------------------
FP_RE = re.compile(r"py_executable\.cc:\d+\] Fingerprint for executable (\S+): (\d*)\s*$")
MISS_RE = re.compile(r"PERSISTENT COMPILATION CACHE MISS for '([^']+)' with key '([^']+)'")
HIT_RE = re.compile(r"Persistent compilation cache hit for '([^']+)' with key '([^']+)'")


def parse_log(text):
    """[(program, fingerprint or None, key or None)] in the order of the
    fingerprint lines (a key seen without a fingerprint line comes last).

    A compiling run logs the cache MISS (with the key) before jaxlib logs the
    fingerprint; a run that loads from the cache logs the hit after it.  So
    each key line goes to the earliest fingerprint of its program still
    without a key, else waits for the next fingerprint of that program."""
    out, pending = [], {}
    for line in text.splitlines():
        m = MISS_RE.search(line) or HIT_RE.search(line)
        if m:
            name, key = m.group(1), m.group(2)
            waiting = [r for r in out if r[0] == name and r[2] is None]
            if waiting:
                waiting[0][2] = key
            else:
                pending.setdefault(name, []).append(key)
            continue
        m = FP_RE.search(line)
        if m:
            name = m.group(1)
            key = pending[name].pop(0) if pending.get(name) else None
            out.append([name, m.group(2), key])
    for name, keys in pending.items():      # a key without a fingerprint line
        out.extend([name, None, k] for k in keys)
    return out


def cache_keys_on_disk(cache_dir):
    keys = set()
    for f in os.listdir(cache_dir):
        if f.endswith("-cache"):
            keys.add(f[: -len("-cache")])
    return keys


def run_observed(argv, env_extra, cwd=None, cache_dir=CACHE_DIR, log_path=None):
    """Run argv with ENV_HASHES (+ env_extra; a value None unsets) and a
    fresh cache_dir.

    Returns (records, keys_on_disk, stderr) where records is parse_log()."""
    shutil.rmtree(cache_dir, ignore_errors=True)
    os.makedirs(cache_dir)
    env = dict(os.environ)
    env.update(ENV_HASHES)
    env["JAX_COMPILATION_CACHE_DIR"] = cache_dir
    env.update(env_extra)
    env = {k: v for k, v in env.items() if v is not None}   # None: unset
    p = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    if log_path:
        with open(log_path, "w") as f:
            f.write(p.stderr)
    if p.returncode:
        sys.stderr.write(p.stderr[-3000:])
        raise RuntimeError("%s failed (%d)" % (argv, p.returncode))
    return parse_log(p.stderr), cache_keys_on_disk(cache_dir), p.stderr


def by_program(records):
    """{name: {"xla_executable_fingerprint", "jax_cache_key"}}; a program
    compiled more than once in a run is listed as NAME, NAME#2, ..."""
    out, seen = {}, {}
    for name, fp, key in records:
        seen[name] = seen.get(name, 0) + 1
        label = name if seen[name] == 1 else "%s#%d" % (name, seen[name])
        out[label] = {"xla_executable_fingerprint": fp, "jax_cache_key": key}
    return out


# ---------------------------------------------------------------------------
# the printed fingerprint recomputed from the dump (see HASHES.md)
# ---------------------------------------------------------------------------
def _farmhash():
    try:
        import farmhash
        return farmhash
    except ImportError:
        return None


_M64 = (1 << 64) - 1


def _cat64(a, b):
    # the 64-bit combining step of tsl::FingerprintCat64, re-derived
    k = 0xC6A4A7935BD1E995
    r = a ^ k
    x = (b * k) & _M64
    r ^= ((x ^ (x >> 47)) * k) & _M64
    r = (r * k) & _M64
    r = ((r ^ (r >> 47)) * k) & _M64
    return r ^ (r >> 47)


def cpu_fingerprint(text_bytes):
    """The number PjRtCpuExecutable prints, from the module text it hashed
    (for an entry computation with parameters; with none it prints "").

    fingerprint = FingerprintCat128(Fingerprint128(""), Fingerprint128(text)),
    printed as decimal low64 followed by decimal high64.  None if the
    farmhash module is not importable."""
    fh = _farmhash()
    if fh is None:
        return None

    def fp128(b):
        v = fh.Fingerprint128(b)   # this binding packs (low64 << 64) | high64
        return v >> 64, v & _M64
    e, t = fp128(b""), fp128(text_bytes)
    return "%d%d" % (_cat64(e[0], t[0]), _cat64(e[1], t[1]))


def after_file_for(dump_dir, program):
    """The cpu_after_optimizations.txt of program (exact module name)."""
    pat = re.compile(r"(?:^|\.)module_\d+\.%s\.cpu_after_optimizations\.txt$" % re.escape(program))
    return [os.path.join(dump_dir, f) for f in sorted(os.listdir(dump_dir)) if pat.search(f)]


# ---------------------------------------------------------------------------
# a corpus case
# ---------------------------------------------------------------------------
def case_runs(case):
    """[(run_name, argv, env_extra, cwd, describe)] as the generator runs them."""
    runs = []
    if case in jax_cases.CASES:
        spec = jax_cases.CASES[case]
        for rid in ("a", "b"):
            cfg = dict(jax_cases.DEFAULTS)
            cfg.update({k: v for k, v in spec.items() if k not in ("a", "b")})
            cfg.update(spec[rid])
            argv = [JAX_PYTHON, os.path.join(HERE, "jax_cases.py"), "--run", json.dumps(cfg)]
            runs.append(("run_" + rid, argv, {"JAX_PLATFORMS": "cpu"}, None, cfg["extra_flags"]))
    elif case in COMPILE_OPTIONS_CASES:
        for rname, (mode, extra) in COMPILE_OPTIONS_CASES[case].items():
            argv = [JAX_PYTHON, CHILDREN.get(case, "corpus/gen/jax_compile_options_child.py"), mode]
            runs.append((rname, argv, {}, ROOT, extra))
    else:
        raise KeyError("not a JAX corpus case: %s" % case)
    return runs


MOD_RE = re.compile(r"^(?:\d{10,}\.)?module_(\d+)\.([^./]+)(.*)$")


def _index_files(top):
    """{(program, n-th module of that name, rest of path): path} for a dump.

    Module ids are not compared: with the persistent cache on, JAX 0.10.2
    numbers modules 0, 3, 6, ... instead of 0, 2, 4, ... (see HASHES.md), and
    --xla_dump_include_timestamp prefixes names with microseconds."""
    files, ids = {}, {}
    for root, _d, fs in os.walk(top):
        for f in fs:
            rel = os.path.relpath(os.path.join(root, f), top)
            m = MOD_RE.match(rel)
            if m:
                ids.setdefault(m.group(2), set()).add(int(m.group(1)))
    order = {name: {i: k for k, i in enumerate(sorted(s))} for name, s in ids.items()}
    for root, _d, fs in os.walk(top):
        for f in fs:
            rel = os.path.relpath(os.path.join(root, f), top)
            m = MOD_RE.match(rel)
            key = ((m.group(2), order[m.group(2)][int(m.group(1))], m.group(3)) if m
                   else ("", 0, rel))
            files[key] = os.path.join(root, f)
    return files


def compare_dumps(committed, observed, main_program):
    """Compare every committed file with the observed file of the same
    program, module ordinal and suffix, after sanitising the observed bytes.

    Returns (main_diffs, other_diffs, missing): lists of committed names; a
    main-program before/after file that was not written counts as differing."""
    obs = _index_files(observed)
    main_diffs, other_diffs, missing = [], [], []
    for key, path in sorted(_index_files(committed).items()):
        rel = os.path.relpath(path, committed)
        is_main = key[0] == main_program and key[2] in (
            ".before_optimizations.txt", ".cpu_after_optimizations.txt")
        if key not in obs:
            (main_diffs if is_main else missing).append(rel)
            continue
        with open(path, "rb") as fh:
            want = fh.read()
        with open(obs[key], "rb") as fh:
            got = sanitize.sanitize_bytes(fh.read(), observed)
        # xla_dump_to: sanitize_bytes made it relative to the repository
        got = got.replace(os.path.relpath(observed, ROOT).encode(),
                          os.path.relpath(committed, ROOT).encode())
        if got != want:
            (main_diffs if is_main else other_diffs).append(rel)
    return sorted(main_diffs), sorted(other_diffs), sorted(missing)


def jax_versions():
    out = subprocess.run([JAX_PYTHON, "-c", "import jax, jaxlib; print(jax.__version__, jaxlib.__version__)"],
                         capture_output=True, text=True, check=True).stdout.split()
    return out[0], out[1]


def cpu_name(dump_dir):
    """LLVM's CPU name from a dumped topology.textproto (e.g. znver5), or None."""
    for p in glob.glob(os.path.join(dump_dir, "*", "topology.textproto")):
        m = re.search(r"linux-gnu\\022\\[0-7]{3}([A-Za-z0-9_.-]+?)\\", open(p).read())
        if m:
            return m.group(1)
    return None


def how_text(case, versions, cpu, n_formula):
    gen = "jax_cases.py" if case in jax_cases.CASES else "jax_compile_options_cases.py"
    # written as sanitize.py writes /tmp/ (no absolute paths in the corpus)
    env = " ".join("%s=%s" % kv for kv in ENV_HASHES.items()).replace("/tmp/", "<tmp>/")
    return ("corpus/gen/observe_hashes.py: both runs started as %s starts them "
            "(XLA_FLAGS=--xla_dump_to=<scratch dir> plus the case's extra flags), with %s "
            "(cache dir emptied before each run); fingerprint from jaxlib's log line "
            "'Fingerprint for executable NAME: N', key from 'PERSISTENT COMPILATION CACHE MISS "
            "for NAME with key K' (equal to the cache file names); jax %s, jaxlib %s, CPU "
            "(LLVM cpu %s), %s. The main program's before/after_optimizations dumps of these "
            "runs are byte-identical to the committed ones (after sanitize.py's path "
            "rewriting); each of the %d printed fingerprints equals FingerprintCat128("
            "Fingerprint128(''), Fingerprint128(<its cpu_after_optimizations.txt bytes>)) "
            "(empty for a program without parameters), see corpus/gen/HASHES.md."
            % (gen, env, versions[0], versions[1], cpu or "?",
               datetime.date.today().isoformat(), n_formula))


def observe_case(case, scratch, versions, logs):
    truth_path = os.path.join(CORPUS, case, "truth.json")
    truth = json.load(open(truth_path))
    main = truth["main_program"]
    per_run, problems = {}, []
    for rname, argv, env_extra, cwd, extra in case_runs(case):
        out = os.path.join(scratch, case, rname)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        env_extra = dict(env_extra)
        env_extra["XLA_FLAGS"] = ("--xla_dump_to=%s %s" % (out, extra)).strip()
        log_path = os.path.join(scratch, case, rname + ".stderr.log") if logs else None
        records, disk_keys, _ = run_observed(argv, env_extra, cwd=cwd, log_path=log_path)
        logged_keys = {k for _n, _f, k in records if k}
        if logged_keys != disk_keys:
            problems.append("%s: logged keys %s != cache files %s"
                            % (rname, sorted(logged_keys - disk_keys), sorted(disk_keys - logged_keys)))
        for name, fp, key in records:
            if fp is None or key is None:
                problems.append("%s: %s lacks a %s" % (rname, name, "fingerprint" if fp is None else "key"))
        # the printed fingerprint, recomputed from the dumped text
        formula = []
        for name in sorted({n for n, _f, _k in records}):
            fps = [f for n, f, _k in records if n == name]
            files = after_file_for(out, name)
            if len(files) != len(fps) or cpu_fingerprint(b"") is None:
                continue
            for f, fp in zip(files, fps):   # dump module ids follow compile order
                text = open(f, "rb").read()
                if fp == "":
                    # PjRtCpuExecutable returns before hashing when the entry
                    # computation has no parameters: the printed value is empty
                    good = b"entry_computation_layout={()->" in text.split(b"\n", 1)[0]
                    formula.append((name, good))
                    if not good:
                        problems.append("%s: %s printed an empty fingerprint but has "
                                        "parameters" % (rname, name))
                    continue
                calc = cpu_fingerprint(text)
                formula.append((name, calc == fp))
                if calc != fp:
                    problems.append("%s: %s printed %s, dump text hashes to %s"
                                    % (rname, name, fp, calc))
        main_d, other_d, missing = compare_dumps(os.path.join(CORPUS, case, rname), out, main)
        if main_d:
            problems.append("%s: main-program dump differs from the committed one: %s" % (rname, main_d))
        per_run[rname] = dict(records=records, main_diffs=main_d, other_diffs=other_d,
                              missing=missing, formula=formula)
    programs = {}
    for rname in ("run_a", "run_b"):
        for label, h in by_program(per_run[rname]["records"]).items():
            programs.setdefault(label, {"run_a": None, "run_b": None})[rname] = h
    mp = programs.get(main)
    if mp is None or mp["run_a"] is None or mp["run_b"] is None:
        problems.append("main program %s not observed in both runs" % main)
        changed = None
    else:
        changed = {h: mp["run_a"][h] != mp["run_b"][h]
                   for h in ("xla_executable_fingerprint", "jax_cache_key")}
    n_formula = sum(len(r["formula"]) for r in per_run.values())
    if cpu_fingerprint(b"") is None:
        problems.append("farmhash not importable: fingerprints not checked against the dumps")
    cpu = cpu_name(os.path.join(scratch, case, "run_a"))
    observed = {"how": how_text(case, versions, cpu, n_formula), "programs": programs,
                "main_program_changed": changed}
    return truth, truth_path, observed, per_run, problems


def main(argv):
    write = "--write" in argv
    logs = "--logs" in argv
    verbose = "-v" in argv
    scratch = SCRATCH
    args = [a for a in argv if a not in ("--write", "--logs", "-v")]
    if "--keep" in args:
        i = args.index("--keep")
        scratch = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    cases = args or sorted(list(jax_cases.CASES) + list(COMPILE_OPTIONS_CASES))
    if cpu_fingerprint(b"") is None:
        print("note: farmhash not importable: printed fingerprints are not recomputed from the dumps")
    versions = jax_versions()
    failed = 0
    for case in cases:
        truth, path, observed, per_run, problems = observe_case(case, scratch, versions, logs)
        main = truth["main_program"]
        mp = observed["programs"].get(main, {})
        print("== %s (main %s)" % (case, main))
        for rname in ("run_a", "run_b"):
            h = mp.get(rname) or {}
            r = per_run[rname]
            ok = sum(1 for _n, good in r["formula"] if good)
            print("  %s fp=%s key=%s" % (rname, h.get("xla_executable_fingerprint"),
                                          h.get("jax_cache_key")))
            print("     main dumps differ: %s; fingerprint == f(dump) for %d/%d programs; "
                  "other committed files that differ: %d, not written: %d"
                  % (r["main_diffs"] or "no", ok, len(r["formula"]),
                     len(r["other_diffs"]), len(r["missing"])))
            for kind in ("other_diffs", "missing"):
                if r[kind] and verbose:
                    print("       %s: %s" % (kind, " ".join(r[kind])))
        print("  main_program_changed:", json.dumps(observed["main_program_changed"]))
        for p in problems:
            print("  PROBLEM:", p)
        failed += bool(problems)
        if write:
            truth["observed"] = observed
            with open(path, "w", encoding="utf-8") as f:
                f.write(json.dumps(truth, indent=2, ensure_ascii=False) + "\n")
    print("%d cases, %d with problems" % (len(cases), failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
