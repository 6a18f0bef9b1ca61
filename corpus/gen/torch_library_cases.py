"""PyTorch/XLA cases of the real-data corpus built from nn.Module library
layers, and the observation of torch_xla's own graph hashes for every
torch_* case.

Usage (from the repository root, with the torch virtualenv):

    /root/venvs/torch/bin/python corpus/gen/torch_library_cases.py              # all cases
    /root/venvs/torch/bin/python corpus/gen/torch_library_cases.py torch_layernorm_added
    /root/venvs/torch/bin/python corpus/gen/torch_library_cases.py --observe [CASE ...]

Each run is a separate child process (``--run CFG``) with PJRT_DEVICE=CPU,
XLA_HLO_DEBUG=1 and ``XLA_FLAGS=--xla_dump_to=corpus/<case>/run_<a|b>``.

``--observe`` re-runs the runs of torch_* cases (these and the ones of
torch_cases.py, whose own ``--run`` is used) with PT_XLA_DEBUG_LEVEL=2 and
the persistent compilation cache (XLA_PERSISTENT_CACHE_PATH) switched on,
dumping into a scratch directory; it checks that the dumps are identical to
the committed ones and writes what torch_xla printed and keyed into
truth.json under "observed".  See HASHES_tf_torch.md.

NOTE: line numbers of this file are recorded in the dumps (source_line=...);
editing it above a model line moves them: regenerate and re-check.
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
    # nn.LayerNorm inserted after the ReLU: two new parameters (weight, bias)
    "torch_layernorm_added": dict(a=dict(layernorm=False, batch=16),
                                  b=dict(layernorm=True, batch=16)),
    # plain mean cross-entropy (no class weights): 1/B enters the graph
    # (torch_batch_size of torch_cases.py uses a weighted loss)
    "torch_batch_size_mean": dict(a=dict(layernorm=False, batch=16),
                                  b=dict(layernorm=False, batch=24)),
}

D_IN, D_HIDDEN, N_CLASSES = 32, 64, 10


def run(cfg):
    import numpy as np
    import torch
    import torch.nn.functional as F
    import torch_xla

    torch.manual_seed(0)
    dev = torch_xla.device()
    rng = np.random.RandomState(1234)

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = torch.nn.Linear(D_IN, D_HIDDEN)
            self.act = torch.nn.ReLU()
            if cfg["layernorm"]:
                self.norm = torch.nn.LayerNorm(D_HIDDEN)
            self.fc2 = torch.nn.Linear(D_HIDDEN, N_CLASSES)

        def forward(self, x):
            h = self.act(self.fc1(x))
            if cfg["layernorm"]:
                h = self.norm(h)
            return self.fc2(h)

    model = Net().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    b = cfg["batch"]
    x = torch.tensor(rng.standard_normal((b, D_IN)), dtype=torch.float32, device=dev)
    y = torch.tensor(rng.randint(0, N_CLASSES, (b,)), dtype=torch.long, device=dev)

    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    torch_xla.sync()
    print("loss", loss.item())


BULKY = ("-buffer-assignment-values.txt", "-buffer-assignment.txt", ".ll", ".o", ".html",
         ".mlir", "-live-range.txt", "-memory-usage-report.txt")


def prune(d):
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
    env["XLA_FLAGS"] = "--xla_dump_to=%s" % out
    env["PJRT_DEVICE"] = "CPU"
    env["XLA_HLO_DEBUG"] = "1"
    env["CUDA_VISIBLE_DEVICES"] = ""
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


# --- observation of torch_xla's hashes ------------------------------------------
OBS_ROOT = "/tmp/hlodiff_obs_torch"
CACHE_DIR = "/tmp/hlodiff_torch_xla_cache"   # one fixed path for every run
RENUMBER_NOTE = (
    "file contents are byte-identical (after sanitising); only the module_NNNN numbers "
    "differ: with XLA_PERSISTENT_CACHE_PATH set, every module compiled after k saved "
    "cache entries is numbered k higher (serialising an entry takes module ids); control "
    "runs of torch_batch_size run_a: PT_XLA_DEBUG_LEVEL=2 alone gave the committed "
    "module_0000/module_0001, XLA_PERSISTENT_CACHE_PATH alone gave "
    "module_0000/module_0002"
)
GRAPH_HASH_RE = re.compile(r"^Compilation Analysis:\s+Graph Hash: ([0-9a-f]+)")
COMP_HASH_RE = re.compile(r"^Computation hash: ([0-9a-f]+)")
EXEC_HASH_RE = re.compile(r"^Execution Analysis:\s+Graph Hash: ([0-9a-f]+)")
FRAME_RE = re.compile(r"^Compilation Analysis:\s+(\S+) \((.+):(\d+)\)$")


def generator_of(case):
    if case in CASES:
        return os.path.abspath(__file__), CASES[case]["a"], CASES[case]["b"]
    sys.path.insert(0, HERE)
    import torch_cases
    a = dict(torch_cases.DEFAULTS)
    a.update(torch_cases.CASES[case]["a"])
    b = dict(torch_cases.DEFAULTS)
    b.update(torch_cases.CASES[case]["b"])
    return os.path.join(HERE, "torch_cases.py"), a, b


def observe_run(case, run_id, script, cfg):
    out = os.path.join(OBS_ROOT, case, "run_" + run_id)
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    shutil.rmtree(CACHE_DIR, ignore_errors=True)
    os.makedirs(CACHE_DIR)
    env = child_env(out)
    env["PT_XLA_DEBUG_LEVEL"] = "2"
    env["XLA_PERSISTENT_CACHE_PATH"] = CACHE_DIR
    proc = subprocess.run([sys.executable, script, "--run", json.dumps(cfg)], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=True)
    log = proc.stdout.decode("utf-8", "replace")
    with open(out + ".log", "w") as fh:
        fh.write(log)
    prune(out)
    # compilations in order: Graph Hash of each "Compilation Analysis" block,
    # then the "Computation hash" of the post-compilation analysis
    comps, cause, want_cause = [], None, False
    for line in log.splitlines():
        if want_cause:
            cause, want_cause = line.split(":", 1)[1].strip(), False
            continue
        if line.startswith("Compilation Analysis: Compilation Cause"):
            want_cause = True
            continue
        m = GRAPH_HASH_RE.match(line)
        if m:
            comps.append(dict(torch_xla_graph_hash=m.group(1), cause=cause))
            continue
        m = FRAME_RE.match(line)
        if m and comps and "where" not in comps[-1]:
            if "site-packages" not in m.group(2):
                comps[-1]["where"] = "%s:%s" % (os.path.basename(m.group(2)), m.group(3))
            continue
        m = COMP_HASH_RE.match(line)
        if m and comps:
            comps[-1]["torch_xla_computation_hash"] = m.group(1)
    files = sorted(os.listdir(CACHE_DIR))
    for c in comps:
        # the persistent cache names each entry by the graph hash in decimal
        dec = str(int(c["torch_xla_graph_hash"], 16))
        c["torch_xla_persistent_cache_key"] = dec if dec in files else None
    modules = sorted(os.path.basename(p)[:-len(".before_optimizations.txt")]
                     for p in glob.glob(os.path.join(out, "*before_optimizations.txt")))
    if len(modules) == len(comps):
        for c, m in zip(comps, modules):
            c["module"] = m
    return dict(out=out, compilations=comps, modules=modules, persistent_cache_files=files)


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


def torch_versions():
    out = subprocess.run([sys.executable, "-c",
                          "import torch, torch_xla, numpy; "
                          "print(torch.__version__, torch_xla.__version__, numpy.__version__)"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         env=dict(os.environ, PJRT_DEVICE="CPU"), check=True)
    return out.stdout.decode().split()[-3:]


def role_names(modules, main_module):
    """torch_xla names every program SyncTensorsGraph: name them by role."""
    names, n = [], 0
    for m in modules:
        if m == main_module:
            names.append("train_step")
        else:
            n += 1
            names.append("side_%d" % n)
    return names


def main_module_of(out, main_program):
    cands = [p for p in glob.glob(os.path.join(out, "*before_optimizations.txt"))
             if main_program in os.path.basename(p)]
    best = max(cands, key=os.path.getsize)
    return os.path.basename(best)[:-len(".before_optimizations.txt")]


def observe(case, versions, today):
    script, cfg_a, cfg_b = generator_of(case)
    truth_path = os.path.join(CORPUS, case, "truth.json")
    truth = json.load(open(truth_path))
    runs = {}
    for run_id, cfg in (("a", cfg_a), ("b", cfg_b)):
        r = observe_run(case, run_id, script, cfg)
        r["problems"], r["renumbered"] = same_as_committed(case, run_id, r["out"])
        # name the modules as the committed dump does
        back = {v: k for k, v in r["renumbered"].items()}
        for c in r["compilations"]:
            if isinstance(c.get("module"), str):
                num, rest = c["module"].split(".", 1)
                c["module"] = back.get(num, num) + "." + rest
        num, rest = main_module_of(r["out"], truth["main_program"]).split(".", 1)
        r["main"] = back.get(num, num) + "." + rest
        runs["run_" + run_id] = r
    programs = {}
    for rid, r in runs.items():
        comps = r["compilations"]
        if all("module" in c for c in comps):
            names = role_names([c["module"] for c in comps], r["main"])
        else:
            names = ["compilation_%d" % (i + 1) for i in range(len(comps))]
        for name, c in zip(names, comps):
            programs.setdefault(name, {})[rid] = c
    mp = programs.get("train_step", {})
    changed = {}
    if "run_a" in mp and "run_b" in mp:
        for k in ("torch_xla_graph_hash", "torch_xla_computation_hash",
                  "torch_xla_persistent_cache_key"):
            changed[k] = mp["run_a"].get(k) != mp["run_b"].get(k)
    problems = {rid: r["problems"] for rid, r in runs.items() if r["problems"]}
    renumbered = {rid: r["renumbered"] for rid, r in runs.items() if r["renumbered"]}
    how = ("%s; torch %s, torch-xla %s, numpy %s, Python %s, PJRT_DEVICE=CPU; %s; each run a "
           "fresh process: %s --run CFG with XLA_HLO_DEBUG=1 PT_XLA_DEBUG_LEVEL=2 "
           "XLA_PERSISTENT_CACHE_PATH=%s (emptied before each run) "
           "XLA_FLAGS=--xla_dump_to=<scratch>; graph hash = 'Compilation Analysis: Graph "
           "Hash:' (the key of torch_xla's computation cache), computation hash = "
           "'Computation hash:' of the post-compilation analysis (hash of the "
           "deterministically serialised HloModuleProto), persistent key = the file name "
           "written into the cache directory (the graph hash in decimal); compilations "
           "are paired with dump modules in order" % (
               today, versions[0], versions[1], versions[2], platform.python_version(),
               "torch_library_cases.py --observe", os.path.relpath(script, REPO), CACHE_DIR.replace("/tmp/", "<tmp>/")))
    observed = {
        "how": how,
        "dumps_identical_to_committed": not problems and not renumbered,
        "dump_contents_identical_to_committed": not problems,
        "programs": programs,
        "main_program": "train_step",
        "main_program_changed": changed,
    }
    if problems:
        observed["dump_differences"] = problems
    if renumbered:
        # same file contents, other module_NNNN numbers (committed -> observed)
        observed["dump_module_numbers"] = renumbered
        observed["dump_module_numbers_note"] = RENUMBER_NOTE
    truth["observed"] = observed
    with open(truth_path, "w") as fh:
        json.dump(truth, fh, indent=2)
        fh.write("\n")
    print("observed", case, "identical" if not problems else problems,
          "renumbered" if renumbered else "", changed)


def main(argv):
    if argv[:1] == ["--run"]:
        run(json.loads(argv[1]))
        return
    if argv[:1] == ["--observe"]:
        cases = argv[1:] or sorted(
            d for d in os.listdir(CORPUS)
            if d.startswith("torch_") and os.path.isdir(os.path.join(CORPUS, d, "run_a")))
        versions = torch_versions()
        today = datetime.date.today().isoformat()
        for case in cases:
            print("== observe", case, flush=True)
            observe(case, versions, today)
        return
    for name in (argv or list(CASES)):
        print("==", name, flush=True)
        make_case(name)


if __name__ == "__main__":
    main(sys.argv[1:])
