"""Generate the JAX cases of the hlodiff real-data corpus.

Usage (from the repository root, with the JAX virtualenv):

    /root/venvs/jax/bin/python corpus/gen/jax_cases.py            # all cases
    /root/venvs/jax/bin/python corpus/gen/jax_cases.py jax_seed   # some cases

For every case the script starts this same file twice as a child process
(``--run CASE a|b``), each with its own ``XLA_FLAGS=--xla_dump_to=...``, the
way a user would run a program twice.  The dumps land in
``corpus/<case>/run_a`` and ``corpus/<case>/run_b``; afterwards sanitize.py
replaces absolute paths and (for most cases) bulky sidecar files are removed.

truth.json files are NOT written by this script: they were written by reading
the dumps (see README.md).  check_truth.py verifies them.

NOTE: source line numbers of this file are recorded in the dumps and in the
truth files.  Editing this file moves them: regenerate and re-check.
"""
import inspect
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)

# Per-case configuration of run_a and run_b.  Keys not given take DEFAULTS.
DEFAULTS = dict(
    lr=0.01,              # Adam learning rate (Python float, baked in)
    dropout=0.1,          # dropout rate (Python float, baked in)
    temperature=1.0,      # attention softmax temperature (Python float)
    refine_steps=3,       # trip count of a lax.fori_loop in the forward pass
    seed=0,               # PRNGKey(seed) created inside the jitted step
    class_w_hot=2.0,      # one element of a small closed-over numpy array
    frozen_scale=1.0,     # scales the frozen embedding table
    embed_closed=False,   # close over the embedding table (a large constant,
                          # printed elided as constant({...})) instead of
                          # passing it as a jit argument
    batch=16,             # batch size (shape)
    mlp_dtype="float32",  # compute dtype of the MLP matmuls
    squash_input=False,   # adds one tanh op on the input
    lr_as_arg=False,      # pass lr as a jit argument instead of a constant
    warmup=False,         # compile unrelated helper functions first
    mlp_scope="mlp",      # name of a jax.named_scope
    small=False,          # small program only (used with per-pass dumps)
    extra_flags="",       # added to XLA_FLAGS
    prune=True,           # delete bulky sidecar files after the run
)

CASES = {
    # -- runs that should share an executable but do not ---------------------
    "jax_learning_rate": dict(a=dict(lr=0.01), b=dict(lr=0.02), keep_stablehlo=True),
    # small program, every file XLA wrote kept (only sanitised): .ll, .o,
    # buffer assignment, live ranges, per-module folders with module.mlir ...
    "jax_temperature": dict(a=dict(small=True, temperature=1.0),
                            b=dict(small=True, temperature=0.5), prune=False),
    "jax_dropout_rate": dict(a=dict(dropout=0.1), b=dict(dropout=0.2)),
    "jax_loop_trip_count": dict(a=dict(refine_steps=3), b=dict(refine_steps=4)),
    "jax_seed": dict(a=dict(seed=0), b=dict(seed=1)),
    "jax_frozen_small": dict(a=dict(class_w_hot=2.0), b=dict(class_w_hot=3.0)),
    # the only case with a large closed-over constant (elided in the HLO text;
    # module.mlir holds its values)
    "jax_frozen_large": dict(a=dict(frozen_scale=1.0, embed_closed=True),
                             b=dict(frozen_scale=1.5, embed_closed=True)),
    "jax_batch_size": dict(a=dict(batch=16), b=dict(batch=32)),
    "jax_dtype": dict(a=dict(mlp_dtype="float32"), b=dict(mlp_dtype="bfloat16")),
    "jax_op_added": dict(a=dict(squash_input=False), b=dict(squash_input=True)),
    "jax_two_causes": dict(a=dict(lr=0.01, batch=16), b=dict(lr=0.02, batch=32)),
    "jax_constant_to_parameter": dict(a=dict(lr_as_arg=False), b=dict(lr_as_arg=True)),
    # -- controls: the same executable ---------------------------------------
    "jax_extra_compilations": dict(a=dict(warmup=False), b=dict(warmup=True), keep_stablehlo=True),
    "jax_named_scope_rename": dict(a=dict(mlp_scope="mlp"), b=dict(mlp_scope="feedforward"), keep_stablehlo=True),
    "jax_timestamp_control": dict(
        a=dict(small=True, extra_flags="--xla_dump_include_timestamp"),
        b=dict(small=True, extra_flags="--xla_dump_include_timestamp"), keep_stablehlo=True),
    # -- per-pass dumps of a small program ------------------------------------
    "jax_pass_dump_temperature": dict(
        a=dict(small=True, temperature=2.0, extra_flags="--xla_dump_hlo_pass_re=.*"),
        b=dict(small=True, temperature=4.0, extra_flags="--xla_dump_hlo_pass_re=.*")),
}

SEQ, D_MODEL, D_HIDDEN, N_CLASSES, VOCAB = 8, 32, 64, 10, 64


# ---------------------------------------------------------------------------
# The model.  Everything below runs in the child process.
# ---------------------------------------------------------------------------
def run(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax import lax

    mlp_dtype = jnp.dtype(cfg["mlp_dtype"])
    rng = np.random.RandomState(1234)
    # small frozen weights: 10 class weights, closed over (printed in full)
    class_weights = np.ones((N_CLASSES,), np.float32)
    class_weights[2] = cfg["class_w_hot"]
    # large frozen weights: a frozen embedding table; a jit argument, or
    # (embed_closed) closed over, i.e. a constant printed elided as {...}
    frozen_embed = (rng.standard_normal((VOCAB, D_MODEL)).astype(np.float32)
                    * np.float32(0.02 * cfg["frozen_scale"]))

    if cfg["warmup"]:
        # unrelated compilations before the main program: module ids shift
        jax.jit(lambda v: jnp.cumsum(v * 3.0))(jnp.arange(5.0)).block_until_ready()
        jax.jit(lambda a, b: jnp.outer(a, b).max())(jnp.ones(3), jnp.ones(4)).block_until_ready()

    if cfg["small"]:
        return run_small(cfg)

    def init_params(seed):
        # deterministic, cheap init (a side module: jit_init_params)
        shapes = {"wqkv": (D_MODEL, 3 * D_MODEL), "w1": (D_MODEL, D_HIDDEN),
                  "w2": (D_HIDDEN, D_MODEL), "wout": (D_MODEL, N_CLASSES)}
        params = {}
        for n, (name, (i, o)) in enumerate(shapes.items()):
            grid = jnp.arange(i * o, dtype=jnp.float32).reshape(i, o)
            params[name] = jnp.sin(grid * 0.618 + seed + n) / jnp.sqrt(float(i))
        return params

    def forward(params, embed, tokens, x, dropout_key):
        with jax.named_scope("embed"):
            h = x + jnp.take(embed, tokens, axis=0)
            if cfg["squash_input"]:
                with jax.named_scope("input_squash"):
                    h = jnp.tanh(h)
        with jax.named_scope("attention"):
            q, k, v = jnp.split(h @ params["wqkv"], 3, axis=-1)
            scores = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(float(D_MODEL))
            probs = jax.nn.softmax(scores / cfg["temperature"], axis=-1)
            h = h + jnp.einsum("bqk,bkd->bqd", probs, v)
        with jax.named_scope(cfg["mlp_scope"]):
            z = jnp.dot(h.astype(mlp_dtype), params["w1"].astype(mlp_dtype))
            z = jax.nn.relu(z.astype(jnp.float32))
            with jax.named_scope("dropout"):
                keep = jax.random.bernoulli(dropout_key, 1.0 - cfg["dropout"], z.shape)
                z = jnp.where(keep, z / (1.0 - cfg["dropout"]), 0.0)
            h = h + jnp.dot(z.astype(mlp_dtype), params["w2"].astype(mlp_dtype)).astype(jnp.float32)
        with jax.named_scope("refine"):
            def body(i, carry):
                return carry + 0.1 * jnp.tanh(carry @ params["w2"][:D_MODEL])
            h = lax.fori_loop(0, cfg["refine_steps"], body, h)
        with jax.named_scope("head"):
            return jnp.mean(h, axis=1) @ params["wout"]

    def loss_fn(params, embed, tokens, x, y, dropout_key):
        logits = forward(params, embed, tokens, x, dropout_key)
        with jax.named_scope("loss"):
            logp = jax.nn.log_softmax(logits)
            nll = -jnp.take_along_axis(logp, y[:, None], axis=1)[:, 0]
            w = jnp.asarray(class_weights)[y]
            return jnp.sum(w * nll) / jnp.sum(w)

    def adam_update(params, opt_state, grads, lr):
        m, v, count = opt_state
        count = count + 1
        b1, b2, eps = 0.9, 0.999, 1e-8
        m = jax.tree.map(lambda mm, g: b1 * mm + (1 - b1) * g, m, grads)
        v = jax.tree.map(lambda vv, g: b2 * vv + (1 - b2) * g * g, v, grads)
        c = count.astype(jnp.float32)
        mhat_scale = 1.0 / (1.0 - b1 ** c)
        vhat_scale = 1.0 / (1.0 - b2 ** c)
        params = jax.tree.map(
            lambda p, mm, vv: p - lr * (mm * mhat_scale) / (jnp.sqrt(vv * vhat_scale) + eps),
            params, m, v)
        return params, (m, v, count)

    def train_step(params, opt_state, tokens, x, y, step, embed, lr):
        with jax.named_scope("train_step"):
            key = jax.random.PRNGKey(cfg["seed"])
            dropout_key = jax.random.fold_in(key, step)
            with jax.named_scope("grad"):
                loss, grads = jax.value_and_grad(loss_fn)(params, embed, tokens, x, y, dropout_key)
            with jax.named_scope("adam_update"):
                params, opt_state = adam_update(params, opt_state, grads, lr)
            return params, opt_state, loss

    # embed and lr are either closed over (baked-in constants) or jit arguments
    bound, extra = {}, []
    if cfg["embed_closed"]:
        bound["embed"] = frozen_embed
    else:
        extra.append(frozen_embed)
    if cfg["lr_as_arg"]:
        extra.append(np.float32(cfg["lr"]))
    else:
        bound["lr"] = cfg["lr"]
    step_fn = jax.jit(train_step_closure(train_step, bound))
    call = lambda *a: step_fn(*a, *extra)

    # side modules: jit_init_params, jit_zeros_like_tree, jit_normalize_batch.
    # Host data are numpy arrays (jnp.asarray / jnp.int32 and a per-leaf
    # jnp.zeros_like would each add a tiny jit_* module).
    params = jax.jit(init_params)(np.float32(0.5))
    zeros = jax.jit(zeros_like_tree)(params)
    opt_state = (zeros, zeros, np.zeros((), np.int32))

    @jax.jit
    def normalize_batch(x):
        return (x - jnp.mean(x)) / (jnp.std(x) + 1e-6)

    b = cfg["batch"]
    x = normalize_batch(rng.standard_normal((b, SEQ, D_MODEL)).astype(np.float32))
    tokens = rng.randint(0, VOCAB, (b, SEQ)).astype(np.int32)
    y = rng.randint(0, N_CLASSES, (b,)).astype(np.int32)
    params, opt_state, loss = call(params, opt_state, tokens, x, y, np.int32(0))
    print("loss", float(loss))


def train_step_closure(train_step, bound):
    # a named function so the module is called jit_train_step; the names in
    # bound are closed over, the others ("embed", "lr", in this order) are
    # trailing jit arguments
    free = [n for n in ("embed", "lr") if n not in bound]

    def train_step_(params, opt_state, tokens, x, y, step, *rest):
        kw = dict(bound)
        kw.update(zip(free, rest))
        return train_step(params, opt_state, tokens, x, y, step, **kw)
    # name the trailing parameters (HLO op_name "embed"/"lr", not "rest[0]")
    sig = inspect.signature(train_step_)
    train_step_.__signature__ = sig.replace(parameters=list(sig.parameters.values())[:-1] + [
        inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in free])
    train_step_.__name__ = "train_step"
    train_step_.__qualname__ = "train_step"
    return train_step_


def run_small(cfg):
    import jax
    import jax.numpy as jnp

    def scaled_softmax(x):
        with jax.named_scope("scaled_softmax"):
            return jax.nn.softmax(x / cfg["temperature"], axis=-1)

    x = jnp.asarray([[1.0, 2.0, 3.0, 4.0]], jnp.float32)  # side module: a cast
    x = jax.jit(lambda v: v - jnp.mean(v))(x)             # side module: a helper
    print(jax.jit(scaled_softmax)(x))


def zeros_like_tree(tree):
    import jax
    import jax.numpy as jnp
    return jax.tree.map(jnp.zeros_like, tree)


# ---------------------------------------------------------------------------
# Driver (parent process)
# ---------------------------------------------------------------------------
BULKY = ("-buffer-assignment-values.txt", "-buffer-assignment.txt", ".ll", ".o", ".html", "-live-range.txt",
         "-memory-usage-report.txt")


def prune(d, main_substr, keep_all=False):
    """Drop bulky sidecars.  Of the per-module folders keep only module.mlir (the StableHLO JAX
    hashes: every constant's value, the results' names), the main program's or (keep_all, a case's
    keep_stablehlo) every module's: a side program's "no recompile" needs it.  Drop the
    side modules' debug_options (the same flags as the main module's)."""
    for root, dirs, files in os.walk(d):
        for f in files:
            if root != d and f == "module.mlir" and (keep_all or main_substr in os.path.basename(root)):
                continue
            if (f.endswith(BULKY) or root != d
                    or (f.endswith(".debug_options") and main_substr not in f)):
                os.remove(os.path.join(root, f))
    for root, dirs, files in os.walk(d, topdown=False):
        if root != d and not os.listdir(root):
            os.rmdir(root)


def prune_pass_dump(d, keep_module_substr="jit_scaled_softmax"):
    """Keep the per-pass files only for the main program (side modules keep
    their ordinary stage files), and drop the non-HLO sidecars."""
    prune(d, keep_module_substr)
    for f in os.listdir(d):
        p = os.path.join(d, f)
        if os.path.isfile(p) and keep_module_substr not in f:
            stage = f.endswith((".before_optimizations.txt", ".cpu_after_optimizations.txt",
                                ".debug_options", "-buffer-assignment.txt"))
            if not stage:
                os.remove(p)


def compact(d):
    """Re-create d so its directory entry is small again after pruning."""
    tmp = d + ".compact"
    shutil.copytree(d, tmp)
    shutil.rmtree(d)
    os.rename(tmp, d)


def make_case(name):
    spec = CASES[name]
    case_dir = os.path.join(CORPUS, name)
    for run_id in ("a", "b"):
        cfg = dict(DEFAULTS)
        cfg.update({k: v for k, v in spec.items() if k not in ("a", "b")})
        cfg.update(spec[run_id])
        out = os.path.join(case_dir, "run_" + run_id)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        env = dict(os.environ)
        env["XLA_FLAGS"] = ("--xla_dump_to=%s %s" % (out, cfg["extra_flags"])).strip()
        env["JAX_PLATFORMS"] = "cpu"
        subprocess.run([sys.executable, os.path.abspath(__file__), "--run", json.dumps(cfg)],
                       env=env, check=True)
        if "--xla_dump_hlo_pass_re" in cfg["extra_flags"]:
            prune_pass_dump(out)
        elif cfg["prune"]:
            prune(out, "jit_scaled_softmax" if cfg["small"] else "jit_train_step", cfg.get("keep_stablehlo", True))
        compact(out)
    subprocess.run([sys.executable, os.path.join(HERE, "sanitize.py"), case_dir], check=True)


def main(argv):
    if argv[:1] == ["--run"]:
        run(json.loads(argv[1]))
        return
    for name in (argv or list(CASES)):
        print("==", name, flush=True)
        make_case(name)


if __name__ == "__main__":
    main(sys.argv[1:])
