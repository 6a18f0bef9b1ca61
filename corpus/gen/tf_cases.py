"""Generate the TensorFlow cases of the hlodiff real-data corpus.

Usage (from the repository root, with the TensorFlow virtualenv):

    /root/venvs/tf/bin/python corpus/gen/tf_cases.py             # all cases
    /root/venvs/tf/bin/python corpus/gen/tf_cases.py tf_seed     # some cases

Each run is a separate child process (``--run CFG``) with
``XLA_FLAGS=--xla_dump_to=corpus/<case>/run_<a|b> --xla_dump_hlo_as_text``;
the train step is a ``tf.function(jit_compile=True)`` so XLA compiles it.
Afterwards bulky sidecars are removed and sanitize.py rewrites paths.
truth.json files were written by reading the dumps; check_truth.py checks them.

NOTE: line numbers of this file may be recorded in the dumps; editing it
moves them: regenerate and re-check.
"""
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)

DEFAULTS = dict(
    lr=0.01, dropout=0.1, refine_steps=3, seed=0, class_w_hot=2.0,
    frozen_scale=1.0, batch=16, mlp_dtype="float32", squash_input=False,
    lr_as_arg=False, warmup=False, mlp_scope="mlp",
    # embed_closed: the frozen embedding table is a closed-over numpy array (a
    # large constant, printed elided as constant({...})) instead of a
    # non-trainable tf.Variable (a parameter of the XLA program)
    embed_closed=False,
)

CASES = {
    "tf_learning_rate": dict(a=dict(lr=0.01), b=dict(lr=0.02)),
    "tf_loop_trip_count": dict(a=dict(refine_steps=3), b=dict(refine_steps=4)),
    "tf_seed": dict(a=dict(seed=0), b=dict(seed=1)),
    "tf_frozen_small": dict(a=dict(class_w_hot=2.0), b=dict(class_w_hot=3.0)),
    # the only case with a large closed-over constant (elided in the HLO text)
    "tf_frozen_large": dict(a=dict(frozen_scale=1.0, embed_closed=True),
                            b=dict(frozen_scale=1.5, embed_closed=True)),
    "tf_batch_size": dict(a=dict(batch=16), b=dict(batch=32)),
    "tf_dtype": dict(a=dict(mlp_dtype="float32"), b=dict(mlp_dtype="bfloat16")),
    "tf_op_added": dict(a=dict(squash_input=False), b=dict(squash_input=True)),
    "tf_constant_to_parameter": dict(a=dict(lr_as_arg=False), b=dict(lr_as_arg=True)),
    # controls
    "tf_extra_compilations": dict(a=dict(warmup=False), b=dict(warmup=True)),
    "tf_name_scope_rename": dict(a=dict(mlp_scope="mlp"), b=dict(mlp_scope="feedforward")),
}

D_IN, D_HIDDEN, N_CLASSES, VOCAB = 32, 64, 10, 64


def run(cfg):
    import numpy as np
    import tensorflow as tf

    rng = np.random.RandomState(1234)
    class_weights = np.ones((N_CLASSES,), np.float32)
    class_weights[2] = cfg["class_w_hot"]
    frozen_embed = (rng.standard_normal((VOCAB, D_IN)).astype(np.float32)
                    * np.float32(0.02 * cfg["frozen_scale"]))
    mlp_dtype = tf.dtypes.as_dtype(cfg["mlp_dtype"])

    if cfg["warmup"]:
        # unrelated compiled functions first: function counters and module ids shift
        @tf.function(jit_compile=True)
        def running_mean(v):
            return tf.math.cumsum(v * 3.0) / 5.0

        @tf.function(jit_compile=True)
        def outer_max(a, b):
            return tf.reduce_max(tf.tensordot(a, b, axes=0))

        running_mean(tf.range(5.0))
        outer_max(tf.ones(3), tf.ones(4))

    # side module: an init function.  The index grids are arguments: a
    # tf.range inside would be constant-folded by TF into large constants.
    @tf.function(jit_compile=True)
    def init_values(offset, g1, g2, g3):
        def grid(g, n):
            return tf.sin(g * 0.618 + offset + n) / tf.sqrt(float(g.shape[0]))
        return grid(g1, 0.0), grid(g2, 1.0), grid(g3, 2.0)

    def index_grid(i, o):
        return tf.constant(np.arange(i * o, dtype=np.float32).reshape(i, o))

    w1, w2, wout = [tf.Variable(t) for t in init_values(
        tf.constant(0.5), index_grid(D_IN, D_HIDDEN), index_grid(D_HIDDEN, D_HIDDEN),
        index_grid(D_HIDDEN, N_CLASSES))]
    b1 = tf.Variable(tf.zeros((D_HIDDEN,)))
    params = [w1, b1, w2, wout]
    ms = [tf.Variable(tf.zeros_like(p)) for p in params]
    vs = [tf.Variable(tf.zeros_like(p)) for p in params]
    count = tf.Variable(0.0)
    if cfg["embed_closed"]:
        embed = frozen_embed  # a numpy array: a constant in the program
    else:
        embed = tf.Variable(frozen_embed, trainable=False)  # a parameter

    # side module: a small helper
    @tf.function(jit_compile=True)
    def normalize_batch(x):
        return (x - tf.reduce_mean(x)) / (tf.math.reduce_std(x) + 1e-6)

    def forward(tokens, x):
        with tf.name_scope("embed"):
            h = x + tf.reduce_mean(tf.gather(embed, tokens), axis=1)
            if cfg["squash_input"]:
                with tf.name_scope("input_squash"):
                    h = tf.tanh(h)
        with tf.name_scope(cfg["mlp_scope"]):
            z = tf.matmul(tf.cast(h, mlp_dtype), tf.cast(w1, mlp_dtype))
            z = tf.nn.relu(tf.cast(z, tf.float32) + b1)
            with tf.name_scope("dropout"):
                u = tf.random.stateless_uniform(tf.shape(z), seed=[cfg["seed"], 7], alg="threefry")
                z = tf.where(u >= cfg["dropout"], z / (1.0 - cfg["dropout"]), 0.0)
            z = tf.cast(tf.matmul(tf.cast(z, mlp_dtype), tf.cast(w2, mlp_dtype)), tf.float32)
        with tf.name_scope("refine"):
            for _ in tf.range(cfg["refine_steps"]):
                z = z + 0.1 * tf.tanh(z)
        with tf.name_scope("head"):
            return tf.matmul(z, wout)

    def train_step_impl(tokens, x, y, lr):
        with tf.name_scope("train_step"):
            with tf.GradientTape() as tape:
                logits = forward(tokens, x)
                with tf.name_scope("loss"):
                    nll = tf.nn.sparse_softmax_cross_entropy_with_logits(y, logits)
                    w = tf.gather(tf.constant(class_weights), y)
                    loss = tf.reduce_sum(w * nll) / tf.reduce_sum(w)
            grads = tape.gradient(loss, params)
            with tf.name_scope("adam_update"):
                count.assign_add(1.0)
                b1_, b2_, eps = 0.9, 0.999, 1e-8
                for p, g, m, v in zip(params, grads, ms, vs):
                    m.assign(b1_ * m + (1 - b1_) * g)
                    v.assign(b2_ * v + (1 - b2_) * g * g)
                    mhat = m / (1.0 - tf.pow(b1_, count))
                    vhat = v / (1.0 - tf.pow(b2_, count))
                    p.assign_sub(lr * mhat / (tf.sqrt(vhat) + eps))
            return loss

    if cfg["lr_as_arg"]:
        @tf.function(jit_compile=True)
        def train_step(tokens, x, y, lr):
            return train_step_impl(tokens, x, y, lr)
        call = lambda t, x, y: train_step(t, x, y, tf.constant(cfg["lr"], tf.float32))
    else:
        @tf.function(jit_compile=True)
        def train_step(tokens, x, y):
            return train_step_impl(tokens, x, y, cfg["lr"])
        call = train_step

    b = cfg["batch"]
    x = normalize_batch(tf.constant(rng.standard_normal((b, D_IN)), tf.float32))
    tokens = tf.constant(rng.randint(0, VOCAB, (b, 4)), tf.int32)
    y = tf.constant(rng.randint(0, N_CLASSES, (b,)), tf.int32)
    print("loss", float(call(tokens, x, y)))


BULKY = ("-buffer-assignment-values.txt", "-buffer-assignment.txt", ".ll", ".o", ".html",
         ".mlir", "-live-range.txt", "-memory-usage-report.txt")


def prune(d, main_substr="a_inference_train_step"):
    """Drop bulky sidecars, per-module folders and the side modules'
    debug_options (the same flags as the main module's)."""
    for root, dirs, files in os.walk(d):
        for f in files:
            if (f.endswith(BULKY) or root != d
                    or (f.endswith(".debug_options") and main_substr not in f)):
                os.remove(os.path.join(root, f))
    for root, dirs, files in os.walk(d, topdown=False):
        if root != d and not os.listdir(root):
            os.rmdir(root)


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
        cfg.update(spec[run_id])
        out = os.path.join(case_dir, "run_" + run_id)
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        env = dict(os.environ)
        env["XLA_FLAGS"] = "--xla_dump_to=%s --xla_dump_hlo_as_text" % out
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        env["CUDA_VISIBLE_DEVICES"] = ""
        subprocess.run([sys.executable, os.path.abspath(__file__), "--run", json.dumps(cfg)],
                       env=env, check=True)
        prune(out)
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
