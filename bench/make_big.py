"""Make big, realistic XLA HLO text dumps with JAX on CPU, for benchmarking hlodiff.

Why: the HLO dumps hlodiff is meant for come from real training jobs and run
to tens or hundreds of MB. The conformance corpus is small, so parser speed
and memory on big inputs cannot be judged from it. This script makes such
dumps on a laptop-class machine (CPU only, no GPU, no internet).

How: a decoder-only transformer train step written with jax.numpy --
embedding, N layers of (layer norm, causal multi-head attention, layer norm,
GELU MLP) with residuals, a cross-entropy loss, ``jax.grad`` and a
hand-written Adam update whose learning rate is a Python float (so it is
baked into the HLO as a constant). The layers are unrolled by a Python
``for`` loop, which is where the size comes from: the model dims stay tiny
(d_model 64, seq 16, batch 2) so compiling fits in RAM and time. Every layer
sits inside nested ``jax.named_scope``s (``--scope-depth`` adds more wrapper
scopes) so the ``metadata={op_name=...}`` strings are long, as in real
Flax/Praxis models; deeper nesting grows the text cheaply without growing
the graph.

The jitted train step is run once with ``XLA_FLAGS=--xla_dump_to=DIR``; the
flag must be set before jax is imported, so the work is done in a child
process (this same file, re-executed with ``--_child``). Parameters and
data are made with NumPy, so the train step is the only module XLA compiles.

Usage::

    python bench/make_big.py --layers 12 --out /work/bigdumps/l12
    python bench/make_big.py --layers 24 --out /work/bigdumps/l24 --scope-depth 6
    python bench/make_big.py --layers 20 --out /work/bigdumps/model20 --pair model

``--pair KIND`` makes DIR/run_a and DIR/run_b differing in one thing: the
learning rate (``lr``: ``--lr`` vs ``--lr-b``, default 0.001 vs 0.002), one
op more in the middle layer (``model``: run_b multiplies the MLP output of
layer N//2 by 0.5, 3 ops more and everything after renumbered) or the dtype
of the network (``dtype``: run_b casts the embedded input and each layer's
weights to bfloat16, which retypes every activation, gradient and
constant). run_a is the same program for the three; each run_b alone is
``--lr 0.002``, ``--extra-op`` or ``--dtype bfloat16``. Measured (2
cores): text grows about as layers^1.7; see bench/README.md for sizes,
times and peak RAM.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

# Model dims: kept small on purpose; size comes from the unrolled layers.
D_MODEL = 64
N_HEADS = 4
D_FF = 256
SEQ = 16
BATCH = 2
VOCAB = 512


def _child(args: argparse.Namespace) -> None:
    """Build and run the train step once; XLA_FLAGS is already set by the parent."""
    import numpy as np
    import jax
    import jax.numpy as jnp

    n_layers, lr, depth = args.layers, args.lr, args.scope_depth
    scaled_layer = n_layers // 2 if args.extra_op else -1
    dtype = jnp.dtype(args.dtype)
    rng = np.random.default_rng(0)

    def w(*shape):
        return (rng.standard_normal(shape) / np.sqrt(shape[0])).astype(np.float32)

    def layer_params():
        return {
            "ln1": {"scale": np.ones(D_MODEL, np.float32), "bias": np.zeros(D_MODEL, np.float32)},
            "attn": {"wq": w(D_MODEL, D_MODEL), "wk": w(D_MODEL, D_MODEL),
                     "wv": w(D_MODEL, D_MODEL), "wo": w(D_MODEL, D_MODEL)},
            "ln2": {"scale": np.ones(D_MODEL, np.float32), "bias": np.zeros(D_MODEL, np.float32)},
            "mlp": {"w1": w(D_MODEL, D_FF), "b1": np.zeros(D_FF, np.float32),
                    "w2": w(D_FF, D_MODEL), "b2": np.zeros(D_MODEL, np.float32)},
        }

    params = {
        "embed": w(VOCAB, D_MODEL),
        "pos": w(SEQ, D_MODEL),
        "layers": [layer_params() for _ in range(n_layers)],
        "ln_f": {"scale": np.ones(D_MODEL, np.float32), "bias": np.zeros(D_MODEL, np.float32)},
        "unembed": w(D_MODEL, VOCAB),
    }
    tokens = rng.integers(0, VOCAB, size=(BATCH, SEQ + 1)).astype(np.int32)

    def layer_norm(p, x):
        with jax.named_scope("layer_norm"):
            mean = jnp.mean(x, axis=-1, keepdims=True)
            var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
            return (x - mean) * jax.lax.rsqrt(var + 1e-6) * p["scale"] + p["bias"]

    def attention(p, x):
        b, s, d = x.shape
        hd = d // N_HEADS
        with jax.named_scope("self_attention"):
            with jax.named_scope("qkv_projection"):
                q = (x @ p["wq"]).reshape(b, s, N_HEADS, hd)
                k = (x @ p["wk"]).reshape(b, s, N_HEADS, hd)
                v = (x @ p["wv"]).reshape(b, s, N_HEADS, hd)
            with jax.named_scope("dot_product_attention"):
                logits = jnp.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(hd).astype(np.float32)
                mask = jnp.tril(jnp.ones((s, s), bool))
                logits = jnp.where(mask, logits, -1e9)
                probs = jax.nn.softmax(logits, axis=-1)
                out = jnp.einsum("bhqk,bkhd->bqhd", probs, v).reshape(b, s, d)
            with jax.named_scope("output_projection"):
                return out @ p["wo"]

    def mlp(p, x, scaled):
        with jax.named_scope("feed_forward"):
            with jax.named_scope("intermediate_dense"):
                h = jax.nn.gelu(x @ p["w1"] + p["b1"])
            with jax.named_scope("output_dense"):
                out = h @ p["w2"] + p["b2"]
            if scaled:  # the model change: one op more in one middle layer
                with jax.named_scope("extra_scale"):
                    out = out * 0.5
            return out

    def wrapped(names, fn):
        """Run fn inside nested named scopes, outermost first."""
        if not names:
            return fn()
        with jax.named_scope(names[0]):
            return wrapped(names[1:], fn)

    extra = [f"sublayer_group_{k}" for k in range(depth)]

    def forward(params, tokens):
        inputs, targets = tokens[:, :-1], tokens[:, 1:]
        with jax.named_scope("model"):
            with jax.named_scope("embedding"):
                # The dtype change: the embedded input, and with it every
                # activation, gradient and constant of the network, retyped.
                x = (params["embed"][inputs] + params["pos"]).astype(dtype)
            for i, lp in enumerate(params["layers"]):
                lp = jax.tree.map(lambda p: p.astype(dtype), lp)

                def block(lp=lp, x=x, i=i):
                    with jax.named_scope("pre_attention_norm"):
                        h = layer_norm(lp["ln1"], x)
                    x = x + attention(lp["attn"], h)
                    with jax.named_scope("pre_mlp_norm"):
                        h = layer_norm(lp["ln2"], x)
                    return x + mlp(lp["mlp"], h, i == scaled_layer)
                x = wrapped(["decoder_stack", f"transformer_block_{i:03d}", *extra,
                             "residual_block"], block)
            with jax.named_scope("final_norm"):
                x = layer_norm(params["ln_f"], x.astype(jnp.float32))
            with jax.named_scope("logits"):
                logits = x @ params["unembed"]
        with jax.named_scope("cross_entropy_loss"):
            logp = jax.nn.log_softmax(logits, axis=-1)
            nll = -jnp.take_along_axis(logp, targets[..., None], axis=-1)
            return jnp.mean(nll)

    b1, b2, eps = 0.9, 0.999, 1e-8

    def train_step(params, m, v, step, tokens):
        loss, grads = jax.value_and_grad(forward)(params, tokens)
        with jax.named_scope("adam_update"):
            step = step + 1
            t = step.astype(jnp.float32)
            m = jax.tree.map(lambda m_, g: b1 * m_ + (1 - b1) * g, m, grads)
            v = jax.tree.map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, v, grads)
            corr = jnp.sqrt(1 - b2 ** t) / (1 - b1 ** t)
            params = jax.tree.map(
                lambda p, m_, v_: p - lr * corr * m_ / (jnp.sqrt(v_) + eps), params, m, v)
        return params, m, v, step, loss

    zeros = jax.tree.map(np.zeros_like, params)
    t0 = time.perf_counter()
    out = jax.jit(train_step, donate_argnums=(0, 1, 2))(
        params, zeros, jax.tree.map(np.zeros_like, params), np.int32(0), tokens)
    loss = float(out[-1])
    elapsed = time.perf_counter() - t0
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"loss": loss, "seconds": elapsed, "peak_rss_mb": rss_mb}))


def _largest(out: Path, suffix: str) -> Path | None:
    files = sorted(out.glob(f"*{suffix}"), key=lambda p: p.stat().st_size)
    return files[-1] if files else None


def _one(args: argparse.Namespace, out: Path, lr: float, extra_op: bool = False,
         dtype: str = "float32") -> dict:
    """Run the child with the dump flag set; report what it produced."""
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + f" --xla_dump_to={out}").strip()
    env["JAX_PLATFORMS"] = "cpu"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--_child", "--layers",
           str(args.layers), "--lr", repr(lr), "--scope-depth", str(args.scope_depth),
           "--dtype", dtype, "--out", str(out), *(["--extra-op"] if extra_op else [])]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        sys.exit(f"make_big: child failed with exit code {proc.returncode}")
    info = json.loads(proc.stdout.strip().splitlines()[-1])
    info["wall_seconds"] = wall
    if not args.keep_ir:
        # XLA:CPU also dumps LLVM IR and object files per kernel; hlodiff needs none of them.
        for junk in [*out.glob("*.ll"), *out.glob("*.o")]:
            junk.unlink()
    info["dir"] = str(out)
    print(f"{out}: layers={args.layers} scope_depth={args.scope_depth} lr={lr} "
          f"extra_op={extra_op} dtype={dtype} "
          f"wall={wall:.1f}s (jit+run {info['seconds']:.1f}s) "
          f"peak RSS={info['peak_rss_mb']:.0f} MB loss={info['loss']:.4f}")
    for suffix in ("before_optimizations.txt", "after_optimizations.txt"):
        path = _largest(out, suffix)
        if path is None:
            print(f"  no *{suffix} in {out}")
            continue
        size = path.stat().st_size
        info[suffix] = {"path": str(path), "bytes": size}
        print(f"  {path}  {size / 1e6:.1f} MB")
    return info


# What run_b of each --pair changes, from run_a's settings.
_PAIRS = {
    "lr": lambda args: dict(lr=args.lr_b, extra_op=args.extra_op, dtype=args.dtype),
    "model": lambda args: dict(lr=args.lr, extra_op=True, dtype=args.dtype),
    "dtype": lambda args: dict(lr=args.lr, extra_op=args.extra_op, dtype="bfloat16"),
}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--layers", type=int, required=True, help="transformer layers (unrolled)")
    ap.add_argument("--out", type=Path, required=True, help="dump directory")
    ap.add_argument("--lr", type=float, default=0.001, help="learning rate (Python float)")
    ap.add_argument("--lr-b", type=float, default=0.002, help="learning rate of run_b (--pair)")
    ap.add_argument("--scope-depth", type=int, default=0,
                    help="extra nested named scopes per layer (longer op_names)")
    ap.add_argument("--pair", nargs="?", const="lr", choices=sorted(_PAIRS),
                    help="make OUT/run_a and OUT/run_b differing in one thing: the learning rate "
                         "(lr, the default), one op more in a middle layer (model) or the "
                         "dtype of the whole network (dtype)")
    ap.add_argument("--extra-op", action="store_true",
                    help="multiply the MLP output of the middle layer by 0.5")
    ap.add_argument("--dtype", default="float32", help="dtype of the activations and layers")
    ap.add_argument("--json", action="store_true", help="also print a JSON summary")
    ap.add_argument("--keep-ir", action="store_true",
                    help="keep the LLVM IR (*.ll) and object (*.o) files XLA:CPU dumps too")
    ap.add_argument("--_child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args._child:
        _child(args)
        return
    if args.pair:
        run_b = _PAIRS[args.pair](args)
        results = [_one(args, args.out / "run_a", args.lr, args.extra_op, args.dtype),
                   _one(args, args.out / "run_b", **run_b)]
    else:
        results = [_one(args, args.out, args.lr, args.extra_op, args.dtype)]
    if args.json:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
