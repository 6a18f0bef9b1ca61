"""Tiny JAX 0.10.2 experiments: what moves XLA's printed executable
fingerprint and JAX's persistent-cache key?  (See ../HASHES.md.)

    /root/venvs/jax-hashes-tools/bin/python corpus/gen/hash_experiments/experiments.py [NAME ...]

The parent needs no JAX (each variant runs in a child process of
HLODIFF_JAX_PYTHON, default /root/venvs/jax/bin/python); with the
``farmhash`` module (PyPI ``cityhash``) it also recomputes each printed
fingerprint from the dumped ``*.cpu_after_optimizations.txt``.

Every variant is one child process running a small generated script with
the logging / persistent-cache environment of observe_hashes.py (cache dir
emptied first unless the experiment says otherwise) and, unless the variant
says otherwise, ``XLA_FLAGS=--xla_dump_to=/tmp/hlodiff-hx/dump`` (one fixed
dump dir).  Scripts are written to /tmp/hlodiff-hx/<dir>/prog.py; the same
path for all variants of an experiment unless the path is the question.

Prints, per experiment, each variant's fingerprint and cache key of the
program jit_f (or the named one) and whether they equal the first
variant's; appends the same lines to results.txt next to this file when
run with --save.
"""
import difflib
import importlib.util
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.dirname(HERE)
spec = importlib.util.spec_from_file_location("observe_hashes", os.path.join(GEN, "observe_hashes.py"))
oh = importlib.util.module_from_spec(spec)
spec.loader.exec_module(oh)

BASE = "/tmp/hlodiff-hx"
DUMP = os.path.join(BASE, "dump")
OUT = []


def say(*a):
    line = " ".join(str(x) for x in a)
    print(line, flush=True)
    OUT.append(line)


# ---------------------------------------------------------------------------
PROG = '''import jax, jax.numpy as jnp, numpy as np
{pre}
def {fn}(x):
    with jax.named_scope("{scope}"):
        return jnp.tanh(x * {lr}) + 1.0
print(jax.jit({fn})(np.ones((4, 8), np.float32)))
'''

LARGE = '''import jax, jax.numpy as jnp, numpy as np
TABLE = np.arange(64, dtype=np.float32).reshape(8, 8) * np.float32({scale})
def f(x):
    return x @ TABLE + 1.0
print(jax.jit(f)(np.ones((4, 8), np.float32)))
'''

# an unused op: does it survive to XLA (and only shift instruction names)?
UNUSED = '''import jax, jax.numpy as jnp, numpy as np
def f(x):
    {extra}
    return jnp.tanh(x * 0.01) + 1.0
print(jax.jit(f)(np.ones((4, 8), np.float32)))
'''

# an HLO module compiled through jaxlib (HLO text -> StableHLO -> compile),
# to vary instruction names and op_name metadata independently
HLO_PROG = '''import sys
import jax
from jax._src import compiler
from jax._src.interpreters import mlir
from jax._src.lib import xla_client as xc
from jax._src.lib.mlir import ir
TEXT = """HloModule jit_f, entry_computation_layout={{(f32[4,8]{{1,0}})->f32[4,8]{{1,0}}}}

ENTRY main {{
  {x} = f32[4,8] parameter(0), metadata={{op_name="{ox}"}}
  {c} = f32[] constant(0.01), metadata={{op_name="{oc}"}}
  {b} = f32[4,8] broadcast({c}), dimensions={{}}, metadata={{op_name="{ob}"}}
  {m} = f32[4,8] multiply({x}, {b}), metadata={{op_name="{om}"}}
  ROOT {t} = f32[4,8] tanh({m}), metadata={{op_name="{ot}"}}
}}
"""
hlo = xc.hlo.hlo_module_from_text(TEXT)
stablehlo = xc._xla.mlir.hlo_to_stablehlo(hlo.as_serialized_hlo_module_proto())
backend = jax.devices()[0].client
with mlir.make_ir_context():
    module = ir.Module.parse(stablehlo)
    opts = compiler.get_compile_options(num_replicas=1, num_partitions=1, backend=backend)
    compiler.backend_compile_and_load(backend, module, xc.DeviceList(tuple(jax.devices()[:1])), opts, [])
'''


def hlo_prog(names, op_names):
    x, c, b, m, t = names.split(",")
    ox, oc, ob, om, ot = op_names.split(",")
    return HLO_PROG.format(x=x, c=c, b=b, m=m, t=t, ox=ox, oc=oc, ob=ob, om=om, ot=ot)


# big enough for the CPU backend to split loops over threads
BIG = '''import jax, jax.numpy as jnp, numpy as np
def f(x):
    return jnp.sin(x) * jnp.cos(x) + jnp.tanh(x * 0.5)
print(jax.jit(f)(np.ones((512, 1024), np.float32)).sum())
'''


TWO_JITS = '''import jax, jax.numpy as jnp, numpy as np
def f(x):
    return x * 2.0
def g(x):
    return x + 1.0
def h(x):
    return x - 1.0
x = np.ones((4,), np.float32)
print(jax.jit(h)(jax.jit(g)(jax.jit(f)(x))))
'''


# fast math changes this program's machine code (division, reductions)
FASTMATH = '''import jax, jax.numpy as jnp, numpy as np
def f(x, y):
    return jnp.sum(x / y, axis=1) + jnp.max(x, axis=1) + jnp.exp(x).mean(axis=1)
print(jax.jit(f)(np.ones((64, 256), np.float32), np.full((64, 256), 3.0, np.float32)))
'''


def prog(**kw):
    d = dict(pre="", fn="f", scope="s", lr="0.01")
    d.update(kw)
    return PROG.format(**d)


def run(src, script_dir="p", xla_flags="", dump=True, env=None, cache_dir=oh.CACHE_DIR,
        fresh_cache=True, prefix=(), program="jit_f", dump_dir=DUMP):
    """One child process; returns dict(fp, key, after, debug_options, hit)."""
    sdir = os.path.join(BASE, script_dir)
    os.makedirs(sdir, exist_ok=True)
    script = os.path.join(sdir, "prog.py")
    with open(script, "w") as f:
        f.write(src)
    shutil.rmtree(dump_dir, ignore_errors=True)
    os.makedirs(dump_dir)
    flags = (("--xla_dump_to=%s " % dump_dir) if dump else "") + xla_flags
    e = {"JAX_PLATFORMS": "cpu"}
    if flags.strip():
        e["XLA_FLAGS"] = flags.strip()
    e.update(env or {})
    argv = list(prefix) + [oh.JAX_PYTHON, script]
    if fresh_cache:
        records, disk, stderr = oh.run_observed(argv, e, cache_dir=cache_dir)
    else:   # keep the cache: run_observed would empty it
        env2 = dict(os.environ)
        env2.update(oh.ENV_HASHES)
        env2["JAX_COMPILATION_CACHE_DIR"] = cache_dir
        env2.update(e)
        env2 = {k: v for k, v in env2.items() if v is not None}
        p = subprocess.run(argv, env=env2, capture_output=True, text=True, check=True)
        stderr = p.stderr
        records = oh.parse_log(stderr)
    recs = [r for r in records if r[0] == program]
    fp = recs[0][1] if recs else None
    key = recs[0][2] if recs else None
    after_files = oh.after_file_for(dump_dir, program) if dump else []
    if dump and not after_files:
        # a run that loaded the executable from the persistent cache dumps
        # module_NNNN.<name>.after_optimizations.txt (no "cpu_")
        after_files = [os.path.join(dump_dir, f) for f in sorted(os.listdir(dump_dir))
                       if f.endswith("." + program + ".after_optimizations.txt")]
    after = open(after_files[0], "rb").read() if after_files else None
    objs = {} if not dump else {f.split(program + ".", 1)[1]: open(os.path.join(dump_dir, f), "rb").read()
                                for f in os.listdir(dump_dir) if f.endswith(".o") and ("." + program + ".") in f}
    dbg = [f for f in os.listdir(dump_dir) if f.endswith(program + ".debug_options")] if dump else []
    debug_options = open(os.path.join(dump_dir, dbg[0])).read() if dbg else ""
    hit = bool(re.search(r"Persistent compilation cache hit for '%s'" % program, stderr))
    return dict(fp=fp, key=key, after=after, debug_options=debug_options, hit=hit, objs=objs,
                dump_files=sorted(os.listdir(dump_dir)) if dump else [])


def formula(r):
    if r["after"] is None or r["fp"] is None:
        return "no after_optimizations dump"
    calc = oh.cpu_fingerprint(r["after"])
    if calc is None:
        return "farmhash missing"
    return "fp == f(dump)" if calc == r["fp"] else "fp != f(dump) (%s)" % calc


def short(key):
    return key.split("-", 1)[1][:16] if key else None


def compare(title, variants, show_diff=True):
    """variants: [(label, result)]; the first is the reference."""
    say("\n## " + title)
    ref = variants[0][1]
    for label, r in variants:
        say("  %-44s fp=%s key=%s.. %s%s" % (
            label, r["fp"], short(r["key"]), formula(r), "  [cache hit]" if r["hit"] else ""))
    for label, r in variants[1:]:
        same_text = (r["after"] == ref["after"]) if (r["after"] is not None and ref["after"] is not None) else None
        say("  -> %s vs %s: fingerprint %s, cache key %s, after_optimizations text %s" % (
            label, variants[0][0],
            "CHANGED" if r["fp"] != ref["fp"] else "same",
            "CHANGED" if r["key"] != ref["key"] else "same",
            "n/a" if same_text is None else ("same" if same_text else "differs")))
        if show_diff and same_text is False:
            a = ref["after"].decode().splitlines()
            b = r["after"].decode().splitlines()
            diff = [l for l in difflib.unified_diff(a, b, lineterm="", n=0)
                    if not l.startswith(("---", "+++", "@@"))]
            for l in diff[:6]:
                say("       " + (l[:150] + " ..." if len(l) > 150 else l))
            if len(diff) > 6:
                say("       ... %d diff lines" % len(diff))


META_RE = re.compile(r',\s*metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')


def text_diff_kinds(a, b):
    """Which parts of two module texts differ: instruction/computation names
    (%identifiers, renamed by first appearance), metadata (metadata={...} and
    the FileNames/FunctionNames/FileLocations/StackFrames tables), or more."""
    def norm(t, names, meta):
        if meta:
            t = META_RE.sub("", t)
            head, _, rest = t.partition("\n")
            m = re.search(r"^(%|ENTRY)", rest, re.M)
            t = head + "\n" + rest[m.start():] if m else t
        if names:
            seen = {}
            t = re.sub(r"%[\w.\-]+", lambda m: "%%v%d" % seen.setdefault(m.group(0), len(seen)), t)
        return t
    a, b = a.decode(), b.decode()
    return dict(equal=a == b,
                equal_ignoring_names=norm(a, True, False) == norm(b, True, False),
                equal_ignoring_metadata=norm(a, False, True) == norm(b, False, True),
                equal_ignoring_names_and_metadata=norm(a, True, True) == norm(b, True, True))


# ---------------------------------------------------------------------------
def exp_determinism():
    compare("same program, two processes (determinism)",
            [("run 1", run(prog())), ("run 2", run(prog()))])


def exp_float_constant():
    compare("scalar float constant 0.01 -> 0.02 (like a learning rate)",
            [("x*0.01", run(prog(lr="0.01"))), ("x*0.02", run(prog(lr="0.02")))])


def exp_named_scope():
    a, b = run(prog(scope="mlp")), run(prog(scope="feedforward"))
    compare("jax.named_scope renamed (op_name metadata only)", [("scope mlp", a), ("scope feedforward", b)])
    say("  text:", text_diff_kinds(a["after"], b["after"]))
    c, d = (run(prog(scope="mlp"), env={"JAX_COMPILATION_CACHE_INCLUDE_METADATA_IN_KEY": "true"}),
            run(prog(scope="feedforward"), env={"JAX_COMPILATION_CACHE_INCLUDE_METADATA_IN_KEY": "true"}))
    compare("named_scope renamed, JAX_COMPILATION_CACHE_INCLUDE_METADATA_IN_KEY=true",
            [("scope mlp", c), ("scope feedforward", d)], show_diff=False)


def exp_source_line():
    a, b = run(prog(pre="")), run(prog(pre="\n\n"))
    compare("source line moved (two blank lines above def f)", [("def f at line 3", a), ("def f at line 5", b)])
    say("  text:", text_diff_kinds(a["after"], b["after"]))


def exp_file_path():
    a, b = run(prog(), script_dir="dirA"), run(prog(), script_dir="dirB_other")
    compare("same script at another absolute path", [("<tmp>/hlodiff-hx/dirA/prog.py", a),
                                                     ("<tmp>/hlodiff-hx/dirB_other/prog.py", b)])
    say("  text:", text_diff_kinds(a["after"], b["after"]))


def exp_module_name():
    a, b = run(prog(fn="f")), run(prog(fn="g"), program="jit_g")
    compare("function renamed f -> g (module jit_f -> jit_g), same body", [("def f", a), ("def g", b)])
    say("  key hex part:", a["key"].split("-", 1)[1][:16], "vs", b["key"].split("-", 1)[1][:16],
        "(same)" if a["key"].split("-", 1)[1] == b["key"].split("-", 1)[1] else "(differs)")


def exp_instruction_names():
    a = run(UNUSED.format(extra="pass"))
    b = run(UNUSED.format(extra="_unused = jnp.sin(x) * 3.0"))
    compare("an unused op in the traced function (JAX drops it before XLA sees it)", [("no unused op", a),
                                                                               ("unused sin*3", b)])
    say("  text:", text_diff_kinds(a["after"], b["after"]))


def exp_hlo_names():
    # no persistent cache key: this path compiles without JAX's cache
    a = run(hlo_prog("x,c,b,m,t", "p,k,bc,mul,th"))
    b = run(hlo_prog("p0,cst,bcast,prod,out", "p,k,bc,mul,th"))
    c = run(hlo_prog("x,c,b,m,t", "p,k,bcX,mulX,thX"))
    compare("HLO module compiled via jaxlib: instruction names vs op_name metadata",
            [("names x,c,b,m,t / op_names p,k,bc,mul,th", a),
             ("names p0,cst,bcast,prod,out / same op_names", b),
             ("names x,c,b,m,t / op_names p,k,bcX,mulX,thX", c)])
    say("  after_optimizations instruction names: %s | %s | %s" % tuple(
        " ".join(sorted(set(re.findall(r"^\s*(?:ROOT )?(%[\w.\-]+) =", r["after"].decode(), re.M))))
        for r in (a, b, c)))


def exp_large_constant():
    a, b = run(LARGE.format(scale="1.0")), run(LARGE.format(scale="1.5"))
    compare("closed-over f32[8,8] table scaled 1.0 -> 1.5 (printed constant({...}))",
            [("scale 1.0", a), ("scale 1.5", b)])
    c = run(LARGE.format(scale="1.0"), xla_flags="--xla_dump_large_constants=true")
    d = run(LARGE.format(scale="1.5"), xla_flags="--xla_dump_large_constants=true")
    compare("the same, both runs with --xla_dump_large_constants=true",
            [("scale 1.0 +large", c), ("scale 1.5 +large", d)], show_diff=False)
    compare("--xla_dump_large_constants=true vs not, same program (has a large constant)",
            [("scale 1.0", a), ("scale 1.0 +large", c)], show_diff=False)
    e = run(prog(), xla_flags="--xla_dump_large_constants=true")
    compare("--xla_dump_large_constants=true vs not, program without a large constant",
            [("plain", run(prog())), ("plain +large", e)])


def exp_xla_flag():
    a, b = run(FASTMATH), run(FASTMATH, xla_flags="--xla_cpu_enable_fast_math=true")
    compare("XLA flag --xla_cpu_enable_fast_math=true (compile option, not HLO)",
            [("no flag", a), ("fast math", b)], show_diff=True)
    say("  object files (.o) of jit_f: %d vs %d, identical bytes: %s" % (
        len(a["objs"]), len(b["objs"]), a["objs"] == b["objs"]))


def exp_threads():
    a = run(BIG)
    b = run(BIG, prefix=("taskset", "-c", "0"))
    compare("same program, process pinned to 1 core (taskset -c 0) vs 2 cores",
            [("2 cores", a), ("taskset -c 0", b)])
    say("  text:", text_diff_kinds(a["after"], b["after"]))


def exp_dump_flags():
    p = prog()
    variants = [
        ("no XLA_FLAGS at all", run(p, dump=False)),
        ("--xla_dump_to=X", run(p)),
    ]
    variants.append(("--xla_dump_to=Y (another dir)", run(p, dump_dir=os.path.join(BASE, "dump_other"))))
    for label, flags in [
            ("X + --xla_dump_hlo_pass_re=.*", "--xla_dump_hlo_pass_re=.*"),
            ("X + --xla_dump_include_timestamp", "--xla_dump_include_timestamp"),
            ("X + --xla_dump_hlo_as_proto", "--xla_dump_hlo_as_proto"),
            ("X + --xla_dump_disable_metadata", "--xla_dump_disable_metadata"),
            ("X + --xla_dump_hlo_as_long_text=false", "--xla_dump_hlo_as_long_text=false"),
            ("X + --xla_dump_large_constants=true", "--xla_dump_large_constants=true")]:
        variants.append((label, run(p, xla_flags=flags)))
    variants.append(("--xla_dump_disable_metadata, no dump", run(p, dump=False, xla_flags="--xla_dump_disable_metadata")))
    compare("dump flags (same program)", variants, show_diff=False)


def exp_cache_dir():
    p = prog()
    a = run(p, cache_dir="/tmp/hlodiff-cacheA")
    b = run(p, cache_dir="/tmp/hlodiff-cache-B")
    compare("persistent cache dir <tmp>/hlodiff-cacheA vs <tmp>/hlodiff-cache-B", [("cache A", a), ("cache B", b)])
    for label, r in (("cache A", a), ("cache B", b)):
        say("  %s debug_options: %s" % (label, " | ".join(
            l.replace("/tmp/", "<tmp>/") for l in r["debug_options"].splitlines() if "cache" in l)))
    off = {"JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES": "none"}
    c = run(p, cache_dir="/tmp/hlodiff-cacheA", env=off)
    d = run(p, cache_dir="/tmp/hlodiff-cache-B", env=off)
    compare("the same with JAX_PERSISTENT_CACHE_ENABLE_XLA_CACHES=none", [("cache A", c), ("cache B", d)],
            show_diff=False)
    say("  cache A (xla caches none) debug_options: %s" % " | ".join(
        l for l in c["debug_options"].splitlines() if "cache" in l))
    nocache = run(p, env={"JAX_COMPILATION_CACHE_DIR": None})
    say("  persistent cache off (JAX_COMPILATION_CACHE_DIR unset): fp=%s (%s the cached runs' fp), key logged: %s" % (
        nocache["fp"], "same as" if nocache["fp"] == a["fp"] else "DIFFERS from", nocache["key"]))
    two = TWO_JITS
    on, off = run(two), run(two, env={"JAX_COMPILATION_CACHE_DIR": None})
    say("  dump file prefixes, program with 3 jitted functions: cache on %s; cache off %s" % (
        [f.rsplit(".", 2)[0] for f in on["dump_files"] if f.endswith("before_optimizations.txt")],
        [f.rsplit(".", 2)[0] for f in off["dump_files"] if f.endswith("before_optimizations.txt")]))


def exp_cache_hit():
    p = prog()
    a = run(p)                                  # fresh cache: compile, write
    b = run(p, fresh_cache=False, env={"JAX_LOG_COMPILES": "1"})   # load from the cache
    compare("second process reads the executable from the persistent cache", [("compiled", a), ("cache hit", b)],
            show_diff=True)
    say("  cache-hit run wrote dump files: %s" % (b["dump_files"] or "none"))


EXPERIMENTS = [exp_determinism, exp_float_constant, exp_named_scope, exp_source_line, exp_file_path,
               exp_module_name, exp_instruction_names, exp_hlo_names, exp_large_constant, exp_xla_flag, exp_threads,
               exp_dump_flags, exp_cache_dir, exp_cache_hit]


def main(argv):
    save = "--save" in argv
    names = [a for a in argv if a != "--save"]
    chosen = [e for e in EXPERIMENTS if not names or e.__name__[4:] in names]
    say("# jax/jaxlib %s, %s" % (" ".join(oh.jax_versions()), "farmhash ok" if oh.cpu_fingerprint(b"") else
                                  "farmhash missing"))
    for e in chosen:
        e()
    if save:
        with open(os.path.join(HERE, "results.txt"), "w") as f:
            # no absolute paths in the repository (as sanitize.py writes /tmp/)
            f.write("\n".join(OUT).replace("/tmp/", "<tmp>/") + "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
