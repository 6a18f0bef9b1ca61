"""TensorFlow cases of the real-data corpus that come from library usage
patterns (captures, tf.stack, Keras), plus a single-run recompilation case
and the observation of TF's own cache keys for every tf_* case.

Usage (from the repository root, with the TensorFlow virtualenv):

    /root/venvs/tf/bin/python corpus/gen/tf_library_cases.py              # all cases
    /root/venvs/tf/bin/python corpus/gen/tf_library_cases.py tf_concat_vs_stack
    /root/venvs/tf/bin/python corpus/gen/tf_library_cases.py --observe [CASE ...]

Two-run cases: each run is a separate child process (``--run CFG``) with
``XLA_FLAGS=--xla_dump_to=corpus/<case>/run_<a|b> --xla_dump_hlo_as_text``.
Single-run case (tf_recompile_new_shape): one process, one dump directory
``corpus/<case>/run`` and its log ``corpus/<case>/run.log``.

``--observe`` re-runs the runs of tf_* cases (these and the ones of
tf_cases.py, whose own ``--run`` is used) with TF's compilation log and its
persistent XLA cache switched on, dumping into a scratch directory; it checks
that the dumps are identical to the committed ones and writes what TF printed
and keyed into truth.json under "observed".  See HASHES_tf_torch.md.

NOTE: line numbers of this file may be recorded in the dumps; editing it
above a model line moves them: regenerate and re-check.
"""
import datetime
import glob
import json
import os
import platform
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)
REPO = os.path.dirname(CORPUS)

CASES = {
    # a closed-over tf.Variable (run_a) is appended after the explicit
    # arguments; passed explicitly first (run_b) it leads: the entry
    # parameters are permuted
    "tf_capture_vs_argument": dict(a=dict(model="capture", w_as_arg=False),
                                   b=dict(model="capture", w_as_arg=True)),
    # a closed-over tf.Variable (run_a: a resource, read as it is) vs a
    # closed-over tf.constant of the same values (run_b: a tensor argument,
    # which TensorFlow reshapes on entry, a reshape with no op_name)
    "tf_variable_vs_constant": dict(a=dict(model="capture", w_as_arg=False),
                                    b=dict(model="capture", w_as_arg=False, w_constant=True)),
    # Python-unrolled tf.concat accumulation vs a list + tf.stack
    "tf_concat_vs_stack": dict(a=dict(model="collect", use_stack=False),
                               b=dict(model="collect", use_stack=True)),
    # Keras 3 (TF backend) fit with jit_compile=True at two batch sizes
    "tf_keras_batch_size": dict(a=dict(model="keras", batch=32),
                                b=dict(model="keras", batch=48)),
}
SINGLE = {
    # one process: a new input shape retraces and compiles a second program
    "tf_recompile_new_shape": dict(model="recompile"),
}

D_IN, D_OUT, ROWS = 16, 4, 8


def run_capture(cfg):
    import numpy as np
    import tensorflow as tf

    rng = np.random.RandomState(7)
    w = (tf.constant if cfg.get("w_constant") else tf.Variable)(
        rng.standard_normal((D_IN, D_OUT)).astype(np.float32) * 0.1, name="w")
    x = tf.constant(rng.standard_normal((ROWS, D_IN)).astype(np.float32))
    scale = tf.constant(np.linspace(0.5, 1.5, ROWS).astype(np.float32))
    def body(w_, x_, scale_):
        with tf.name_scope("dense"):
            h = tf.nn.relu(tf.matmul(x_, w_))
        with tf.name_scope("score"):
            return tf.reduce_sum(h * h, axis=1) * scale_

    if cfg["w_as_arg"]:
        @tf.function(jit_compile=True)
        def predict(w_, x_, scale_):
            return body(w_, x_, scale_)
        out = predict(w, x, scale)
    else:
        @tf.function(jit_compile=True)
        def predict(x_, scale_):
            return body(w, x_, scale_)  # w is a capture: appended after the arguments
        out = predict(x, scale)
    print("out", float(tf.reduce_sum(out)))


def run_collect(cfg):
    import numpy as np
    import tensorflow as tf

    rng = np.random.RandomState(3)
    x = tf.constant(rng.standard_normal((3, 8)).astype(np.float32))

    @tf.function(jit_compile=True)
    def collect(x_):
        with tf.name_scope("collect"):
            if cfg["use_stack"]:
                rows = []
                for i in range(4):
                    rows.append(tf.tanh(x_ * float(i + 1)))
                out = tf.stack(rows)
            else:
                out = None
                for i in range(4):
                    row = tf.expand_dims(tf.tanh(x_ * float(i + 1)), 0)
                    out = row if out is None else tf.concat([out, row], axis=0)
        with tf.name_scope("pool"):
            return tf.reduce_sum(out, axis=1)

    print("out", float(tf.reduce_sum(collect(x))))


def run_keras(cfg):
    os.environ["KERAS_BACKEND"] = "tensorflow"
    import numpy as np
    import keras

    keras.utils.set_random_seed(0)
    model = keras.Sequential([
        keras.Input((32,)),
        keras.layers.Dense(16, activation="relu", name="hidden"),
        keras.layers.Dense(10, name="logits"),
    ])
    model.compile(optimizer=keras.optimizers.SGD(0.01),
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  jit_compile=True)
    rng = np.random.RandomState(1234)
    b = cfg["batch"]
    x = rng.standard_normal((b, 32)).astype(np.float32)
    y = rng.randint(0, 10, (b,)).astype(np.int32)
    hist = model.fit(x, y, batch_size=b, epochs=1, verbose=0, shuffle=False)
    print("loss", hist.history["loss"])


def run_recompile(cfg):
    import numpy as np
    import tensorflow as tf

    rng = np.random.RandomState(5)
    w = (tf.constant if cfg.get("w_constant") else tf.Variable)(
        rng.standard_normal((D_IN, D_OUT)).astype(np.float32) * 0.1, name="w")

    @tf.function(jit_compile=True)
    def score(x_):
        with tf.name_scope("score"):
            return tf.reduce_mean(tf.tanh(tf.matmul(x_, w)), axis=0)

    small = tf.constant(rng.standard_normal((8, D_IN)).astype(np.float32))
    large = tf.constant(rng.standard_normal((12, D_IN)).astype(np.float32))
    print("first", score(small).numpy().sum())
    print("again", score(small).numpy().sum())   # same shape: cache hit
    print("larger", score(large).numpy().sum())  # new shape: retrace + compile


RUNNERS = dict(capture=run_capture, collect=run_collect, keras=run_keras,
               recompile=run_recompile)

BULKY = ("-buffer-assignment-values.txt", "-buffer-assignment.txt", ".ll", ".o", ".html",
         ".mlir", "-live-range.txt", "-memory-usage-report.txt")


def prune(d):
    """Drop bulky sidecars and per-module folders (as tf_cases.py does).
    These programs are small: every module keeps its debug_options."""
    for root, dirs, files in os.walk(d):
        for f in files:
            if f.endswith(BULKY) or root != d:
                os.remove(os.path.join(root, f))
    for root, dirs, files in os.walk(d, topdown=False):
        if root != d and not os.listdir(root):
            os.rmdir(root)


def compact(d):
    tmp = d + ".compact"
    shutil.copytree(d, tmp)
    shutil.rmtree(d)
    os.rename(tmp, d)


def child_env(out):
    env = dict(os.environ)
    env["XLA_FLAGS"] = "--xla_dump_to=%s --xla_dump_hlo_as_text" % out
    env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    env["CUDA_VISIBLE_DEVICES"] = ""
    env["KERAS_BACKEND"] = "tensorflow"
    return env


def make_case(name):
    spec = CASES[name]
    case_dir = os.path.join(CORPUS, name)
    for run_id in ("a", "b"):
        out = os.path.join(case_dir, "run_" + run_id)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        subprocess.run([sys.executable, os.path.abspath(__file__), "--run",
                        json.dumps(spec[run_id])], env=child_env(out), check=True)
        prune(out)
        compact(out)
    subprocess.run([sys.executable, os.path.join(HERE, "sanitize.py"), case_dir], check=True)


def make_single(name):
    case_dir = os.path.join(CORPUS, name)
    out = os.path.join(case_dir, "run")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    env = child_env(out)
    env["TF_CPP_MIN_LOG_LEVEL"] = "0"
    env["TF_CPP_VMODULE"] = "device_compiler=3"
    log = os.path.join(case_dir, "run.log")
    with open(log, "wb") as fh:
        subprocess.run([sys.executable, os.path.abspath(__file__), "--run",
                        json.dumps(SINGLE[name])], env=env, check=True,
                       stdout=fh, stderr=subprocess.STDOUT)
    prune(out)
    compact(out)
    # sanitize.py handles run_* directories; the single run and its log by hand
    sys.path.insert(0, HERE)
    import sanitize
    for p in [log] + [os.path.join(out, f) for f in os.listdir(out)]:
        with open(p, "rb") as fh:
            data = fh.read()
        new = sanitize.sanitize_bytes(data, out)
        # log lines start with a wall-clock timestamp and thread id: keep
        # them (they are what TF prints) but nothing else machine-specific
        if new != data:
            with open(p, "wb") as fh:
                fh.write(new)


# --- observation of TF's cache keys ---------------------------------------------
OBS_ROOT = "/tmp/hlodiff_obs_tf"
CACHE_DIR = "/tmp/hlodiff_tf_xla_cache"   # one fixed path for every run
RENUMBER_NOTE = (
    "file contents are byte-identical (after sanitising); only the module_NNNN numbers "
    "differ: with TF_XLA_FLAGS=--tf_xla_persistent_cache_directory set, every module "
    "compiled after k saved cache entries is numbered k higher (saving an entry takes "
    "module ids); a control run with the same logging but without the persistent cache "
    "reproduced the committed numbers (module_0000/0001/0154 for tf_learning_rate run_a)"
)
SIG_RE = re.compile(r"Instantly compiling for signature: (\S.*)$")
HIT_RE = re.compile(r"Already Compiled for signature: (\S.*)$")


def generator_of(case):
    """(script, cfg_a, cfg_b) for a tf_* case of this file or of tf_cases.py."""
    if case in CASES:
        return os.path.abspath(__file__), CASES[case]["a"], CASES[case]["b"]
    sys.path.insert(0, HERE)
    import tf_cases
    a = dict(tf_cases.DEFAULTS)
    a.update(tf_cases.CASES[case]["a"])
    b = dict(tf_cases.DEFAULTS)
    b.update(tf_cases.CASES[case]["b"])
    return os.path.join(HERE, "tf_cases.py"), a, b


def program_key(fn):
    """__inference_train_step_480 -> train_step (the counter moves with tracing)."""
    return re.sub(r"_\d+$", "", re.sub(r"^_*inference_", "", fn))


def observe_run(case, run_id, script, cfg, prune_fn):
    out = os.path.join(OBS_ROOT, case, "run_" + run_id)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    shutil.rmtree(CACHE_DIR, ignore_errors=True)
    os.makedirs(CACHE_DIR)
    env = child_env(out)
    env["TF_CPP_MIN_LOG_LEVEL"] = "0"
    env["TF_CPP_VMODULE"] = "device_compiler=3"
    env["TF_XLA_FLAGS"] = "--tf_xla_persistent_cache_directory=%s" % CACHE_DIR
    proc = subprocess.run([sys.executable, script, "--run", json.dumps(cfg)], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=True)
    log = proc.stdout.decode("utf-8", "replace")
    with open(out + ".log", "w") as fh:
        fh.write(log)
    prune_fn(out)
    compilations = []
    for line in log.splitlines():
        m = SIG_RE.search(line)
        if m:
            sig = m.group(1).strip()
            fn = re.match(r"[^\[,]+", sig).group(0)
            compilations.append(dict(function=fn, tf_compile_signature=sig))
    hits = [HIT_RE.search(l).group(1).strip() for l in log.splitlines() if HIT_RE.search(l)]
    # persistent cache files: <signature fingerprint>__<HLO proto fingerprint>__<device>.pb;
    # the entry holds the HloModuleProto whose name starts with the function name
    files = sorted(os.listdir(CACHE_DIR))
    for c in compilations:
        mine = [f for f in files if c["function"].encode() + b"[" in
                open(os.path.join(CACHE_DIR, f), "rb").read()]
        if len(mine) == 1:
            parts = mine[0][:-len(".pb")].split("__")
            c["tf_persistent_cache_key"] = mine[0]
            c["signature_fingerprint"], c["hlo_proto_fingerprint"] = parts[-3], parts[-2]
        else:
            c["tf_persistent_cache_key"] = None
            c["persistent_cache_files_matching"] = mine
        # the dump names the module "a" + the function name without its first "_"
        prefix = "a" + c["function"][1:]
        mods = [os.path.basename(m) for m in sorted(glob.glob(os.path.join(
                    out, "module_*before_optimizations.txt")))]
        mods = [m for m in mods if re.match(r"module_\d+\.%s(?!\d)" % re.escape(prefix), m)]
        c["module"] = mods[0][:-len(".before_optimizations.txt")] if len(mods) == 1 else mods
    return dict(out=out, compilations=compilations, cache_hits=hits,
                persistent_cache_files=files)


def same_as_committed(case, run_id, out):
    """Compare the scratch dump (sanitised in memory) with the committed one.

    Returns (problems, renumbered): content or file-set differences, and the
    module numbers (module_NNNN) that differ between files of equal content."""
    sys.path.insert(0, HERE)
    import sanitize
    committed = os.path.join(CORPUS, case, "run_" + run_id)

    def by_stem(d):
        return {re.sub(r"^module_\d+\.", "", n): n for n in sorted(os.listdir(d))}
    names_c, names_o = by_stem(committed), by_stem(out)
    problems, renumbered = [], {}
    if set(names_c) != set(names_o):
        problems.append("file names differ: only committed %s, only observed %s" % (
            sorted(set(names_c) - set(names_o))[:4], sorted(set(names_o) - set(names_c))[:4]))
    rel = os.path.relpath(committed, REPO).encode()
    for stem in sorted(set(names_c) & set(names_o)):
        nc, no = names_c[stem], names_o[stem]
        with open(os.path.join(out, no), "rb") as fh:
            data = fh.read().replace(out.encode(), rel)
        data = sanitize.sanitize_bytes(data, committed)
        with open(os.path.join(committed, nc), "rb") as fh:
            if fh.read() != data:
                problems.append("content differs: " + nc)
        if nc != no:
            renumbered[nc.split(".", 1)[0]] = no.split(".", 1)[0]
    return problems, renumbered


def tf_versions():
    out = subprocess.run([sys.executable, "-c",
                          "import tensorflow as tf, keras, numpy; "
                          "print(tf.__version__, keras.__version__, numpy.__version__)"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=dict(
                             os.environ, TF_CPP_MIN_LOG_LEVEL="3"), check=True)
    return out.stdout.decode().split()


def observe(case, versions, today):
    script, cfg_a, cfg_b = generator_of(case)
    if script == os.path.abspath(__file__):
        prune_fn = prune
    else:
        import tf_cases
        prune_fn = tf_cases.prune
    truth_path = os.path.join(CORPUS, case, "truth.json")
    truth = json.load(open(truth_path))
    runs = {}
    for run_id, cfg in (("a", cfg_a), ("b", cfg_b)):
        r = observe_run(case, run_id, script, cfg, prune_fn)
        r["problems"], r["renumbered"] = same_as_committed(case, run_id, r["out"])
        # name the modules as the committed dump does
        back = {v: k for k, v in r["renumbered"].items()}
        for c in r["compilations"]:
            if isinstance(c.get("module"), str):
                num, rest = c["module"].split(".", 1)
                c["module"] = back.get(num, num) + "." + rest
        runs["run_" + run_id] = r
    programs = {}
    for rid, r in runs.items():
        for c in r["compilations"]:
            key = program_key(c["function"])
            entry = {k: v for k, v in c.items() if k != "function"}
            programs.setdefault(key, {})[rid] = entry
    main = program_key(truth["main_program"].replace("a_inference_", "__inference_"))
    mp = programs.get(main, {})
    changed = {}
    if "run_a" in mp and "run_b" in mp:
        for k in ("tf_compile_signature", "tf_persistent_cache_key", "signature_fingerprint",
                  "hlo_proto_fingerprint"):
            changed[k] = mp["run_a"].get(k) != mp["run_b"].get(k)
    problems = {rid: r["problems"] for rid, r in runs.items() if r["problems"]}
    renumbered = {rid: r["renumbered"] for rid, r in runs.items() if r["renumbered"]}
    how = ("%s; tensorflow-cpu %s, keras %s, numpy %s, Python %s, CPU; %s; each run a fresh "
           "process: %s --run CFG with TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=device_compiler=3 "
           "TF_XLA_FLAGS=--tf_xla_persistent_cache_directory=%s (emptied before each run) "
           "XLA_FLAGS='--xla_dump_to=<scratch> --xla_dump_hlo_as_text'; signatures from the "
           "'Instantly compiling for signature:' log lines, persistent keys = file names "
           "written into the cache directory (<signature fingerprint>__<HloModuleProto "
           "fingerprint>__<device>.pb), matched to a program by the module name inside "
           "the entry" % (today, versions[0], versions[1], versions[2],
                          platform.python_version(), "tf_library_cases.py --observe",
                          os.path.relpath(script, REPO), CACHE_DIR.replace("/tmp/", "<tmp>/")))
    observed = {
        "how": how,
        "dumps_identical_to_committed": not problems and not renumbered,
        "dump_contents_identical_to_committed": not problems,
        "programs": programs,
        "main_program": main,
        "main_program_changed": changed,
    }
    if problems:
        observed["dump_differences"] = problems
    if renumbered:
        # same file contents, other module_NNNN numbers (committed -> observed)
        observed["dump_module_numbers"] = renumbered
        observed["dump_module_numbers_note"] = RENUMBER_NOTE
    hits = {rid: r["cache_hits"] for rid, r in runs.items() if r["cache_hits"]}
    if hits:
        observed["in_process_cache_hits"] = hits
    truth["observed"] = observed
    with open(truth_path, "w") as fh:
        json.dump(truth, fh, indent=2)
        fh.write("\n")
    print("observed", case, "identical" if not problems else problems,
          "renumbered" if renumbered else "", changed)


def main(argv):
    if argv[:1] == ["--run"]:
        cfg = json.loads(argv[1])
        RUNNERS[cfg["model"]](cfg)
        return
    if argv[:1] == ["--observe"]:
        cases = argv[1:] or sorted(
            d for d in os.listdir(CORPUS)
            if d.startswith("tf_") and os.path.isdir(os.path.join(CORPUS, d, "run_a")))
        versions = tf_versions()
        today = datetime.date.today().isoformat()
        for case in cases:
            print("== observe", case, flush=True)
            observe(case, versions, today)
        return
    for name in (argv or list(CASES) + list(SINGLE)):
        print("==", name, flush=True)
        if name in SINGLE:
            make_single(name)
        else:
            make_case(name)


if __name__ == "__main__":
    main(sys.argv[1:])
