"""JAX corpus cases built with real JAX libraries (flax, optax, equinox).

    /root/venvs/jax/bin/python corpus/gen/jax_library_cases.py [CASE ...]

See README.md ("jax_library_cases.py").  The model code comes first in this
file and the driver last, so that editing the case table or the driver does
not move the source lines recorded in the dumps.  Editing a model function
does: regenerate and re-check (check_truth.py) afterwards.
"""
import json
import os
import shutil
import subprocess
import sys

D_IN, HIDDEN, N_OUT = 16, 32, 10
VOCAB, D_EMB = 32, 16


def versions():
    import importlib
    out = {}
    for mod in ("jax", "jaxlib", "flax", "optax", "equinox", "numpy", "ml_dtypes"):
        try:
            out[mod] = importlib.import_module(mod).__version__
        except Exception:
            pass
    print("VERSIONS " + json.dumps(out), flush=True)


# ---------------------------------------------------------------------------
# flax (linen) MLP trained with optax; cases jax_optax_schedule_value,
# jax_optax_constant_to_schedule, jax_flax_batch_size,
# jax_flax_after_only_init_largest, jax_recompile_last_batch
# ---------------------------------------------------------------------------
def run_flax(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp
    import flax.linen as nn
    import optax

    class MLP(nn.Module):
        n_hidden: int
        layernorm: bool
        dropout: float

        @nn.compact
        def __call__(self, x, train: bool = True):
            for _ in range(self.n_hidden):
                x = nn.Dense(HIDDEN)(x)
                if self.layernorm:
                    x = nn.LayerNorm()(x)
                x = nn.relu(x)
                if self.dropout:
                    x = nn.Dropout(self.dropout, deterministic=not train)(x)
            return nn.Dense(N_OUT)(x)

    if cfg["schedule"] == "warmup_cosine":
        lr = optax.warmup_cosine_decay_schedule(
            init_value=0.0, peak_value=cfg["peak_value"],
            warmup_steps=cfg["warmup_steps"], decay_steps=cfg["decay_steps"])
    else:
        lr = cfg["lr"]  # a Python float
    if cfg["optimizer"] == "adamw_clip":
        tx = optax.chain(optax.clip_by_global_norm(1.0),
                         optax.adamw(lr, weight_decay=1e-4))
    else:
        tx = optax.sgd(lr)

    model = MLP(cfg["n_hidden"], cfg["layernorm"], cfg["dropout"])
    init = jax.jit(model.init, static_argnames="train")
    params = init(jax.random.key(0), np.zeros((1, D_IN), np.float32), train=False)
    opt_state = jax.jit(tx.init)(params)

    def train_step(params, opt_state, x, y, dropout_key, step):
        def loss_fn(p):
            pred = model.apply(p, x, rngs={"dropout": jax.random.fold_in(dropout_key, step)})
            return jnp.mean(optax.l2_loss(pred, y))
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        return params, opt_state, loss

    step_fn = jax.jit(train_step)
    rng = np.random.RandomState(1234)
    data_x = rng.standard_normal((cfg["n_examples"], D_IN)).astype(np.float32)
    data_y = rng.standard_normal((cfg["n_examples"], N_OUT)).astype(np.float32)
    dropout_key = jax.random.key(1)
    b = cfg["batch"]
    for step, start in enumerate(range(0, cfg["n_examples"], b)):
        x, y = data_x[start:start + b], data_y[start:start + b]
        params, opt_state, loss = step_fn(params, opt_state, x, y, dropout_key, np.int32(step))
        print("step", step, "batch", len(x), "loss", float(loss), flush=True)


# ---------------------------------------------------------------------------
# flax MLP, optax.adam with a Python-float lr as a static argument that a
# hand-rolled decay halves every 2 steps; case jax_recompile_python_float
# ---------------------------------------------------------------------------
def run_flax_static_lr(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp
    import flax.linen as nn
    import optax

    class MLP(nn.Module):
        @nn.compact
        def __call__(self, x):
            x = nn.relu(nn.Dense(HIDDEN)(x))
            return nn.Dense(N_OUT)(x)

    model = MLP()
    params = jax.jit(model.init)(jax.random.key(0), np.zeros((1, D_IN), np.float32))
    opt_state = jax.jit(optax.adam(1.0).init)(params)  # adam's state does not hold lr

    def train_step(params, opt_state, x, y, lr):
        tx = optax.adam(lr)
        def loss_fn(p):
            return jnp.mean(optax.l2_loss(model.apply(p, x), y))
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    step_fn = jax.jit(train_step, static_argnames="lr")
    rng = np.random.RandomState(1234)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], N_OUT)).astype(np.float32)
    for step in range(cfg["steps"]):
        lr = cfg["lr"] * 0.5 ** (step // 2)  # hand-rolled step decay
        params, opt_state, loss = step_fn(params, opt_state, x, y, lr=lr)
        print("step", step, "lr", lr, "loss", float(loss), flush=True)


# ---------------------------------------------------------------------------
# equinox MLP with an L2 weight-decay coefficient closed over by the step;
# case jax_equinox_hyperparameter
# ---------------------------------------------------------------------------
def run_equinox(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp
    import equinox as eqx
    import optax

    model = eqx.nn.MLP(D_IN, N_OUT, width_size=HIDDEN, depth=2, key=jax.random.PRNGKey(0))
    tx = optax.adam(1e-3)
    opt_state = tx.init(eqx.filter(model, eqx.is_array))
    weight_decay = cfg["weight_decay"]

    @eqx.filter_jit
    def train_step(model, opt_state, x, y):
        def loss_fn(m):
            pred = jax.vmap(m)(x)
            mse = jnp.mean((pred - y) ** 2)
            l2 = sum(jnp.sum(layer.weight ** 2) for layer in m.layers)
            return mse + weight_decay * l2
        loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
        updates, opt_state = tx.update(grads, opt_state, eqx.filter(model, eqx.is_array))
        model = eqx.apply_updates(model, updates)
        return model, opt_state, loss

    rng = np.random.RandomState(1234)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], N_OUT)).astype(np.float32)
    model, opt_state, loss = train_step(model, opt_state, x, y)
    print("loss", float(loss), flush=True)


# ---------------------------------------------------------------------------
# plain JAX (runs under jax 0.4.30 and 0.10.2 alike): MLP with dropout from
# jax.random, hand-written Adam; cases jax_version_upgrade(_lr)
# ---------------------------------------------------------------------------
def run_plain(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp

    key = jax.random.PRNGKey(0)
    k1, k2, dropout_key = jax.random.split(key, 3)
    params = {"w1": jax.random.normal(k1, (D_IN, HIDDEN)) * 0.1,
              "b1": jnp.zeros((HIDDEN,)),
              "w2": jax.random.normal(k2, (HIDDEN, N_OUT)) * 0.1,
              "b2": jnp.zeros((N_OUT,))}
    zeros = jax.tree.map(jnp.zeros_like, params)
    opt_state = (zeros, zeros, np.zeros((), np.int32))
    lr = cfg["lr"]

    def loss_fn(params, x, y, key):
        h = jax.nn.relu(x @ params["w1"] + params["b1"])
        keep = jax.random.bernoulli(key, 0.9, h.shape)
        h = jnp.where(keep, h / 0.9, 0.0)
        pred = h @ params["w2"] + params["b2"]
        return jnp.mean((pred - y) ** 2)

    def adam(params, opt_state, grads):
        m, v, count = opt_state
        count = count + 1
        m = jax.tree.map(lambda mm, g: 0.9 * mm + 0.1 * g, m, grads)
        v = jax.tree.map(lambda vv, g: 0.999 * vv + 0.001 * g * g, v, grads)
        c = count.astype(jnp.float32)
        params = jax.tree.map(
            lambda p, mm, vv: p - lr * (mm / (1 - 0.9 ** c)) / (jnp.sqrt(vv / (1 - 0.999 ** c)) + 1e-8),
            params, m, v)
        return params, (m, v, count)

    @jax.jit
    def train_step(params, opt_state, x, y, key, step):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y, jax.random.fold_in(key, step))
        params, opt_state = adam(params, opt_state, grads)
        return params, opt_state, loss

    rng = np.random.RandomState(1234)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], N_OUT)).astype(np.float32)
    params, opt_state, loss = train_step(params, opt_state, x, y, dropout_key, np.int32(0))
    print("loss", float(loss), flush=True)


# ---------------------------------------------------------------------------
# a frozen quantized embedding table (int4 or float8_e4m3fn numpy array,
# closed over, 32x16 = 512 elements, printed constant({...})) and a trainable
# linear head; cases jax_int4_elided, jax_fp8_elided
# ---------------------------------------------------------------------------
def run_quantized(cfg):
    import numpy as np
    import ml_dtypes
    import jax
    import jax.numpy as jnp

    rng = np.random.RandomState(cfg["table_seed"])
    if cfg["table_dtype"] == "int4":
        table = rng.randint(-8, 8, (VOCAB, D_EMB)).astype(ml_dtypes.int4)
        scale = 0.125
    else:
        table = (rng.standard_normal((VOCAB, D_EMB)) * 0.5).astype(ml_dtypes.float8_e4m3fn)
        scale = 1.0

    def embed(tokens):
        # the gather keeps the table in its storage dtype inside the HLO
        return jnp.take(table, tokens, axis=0).astype(jnp.float32) * scale

    @jax.jit
    def train_step(w, tokens, y):
        def loss_fn(w):
            h = jnp.mean(embed(tokens), axis=1)
            return jnp.mean((h @ w - y) ** 2)
        loss, g = jax.value_and_grad(loss_fn)(w)
        return w - 0.05 * g, loss

    rng = np.random.RandomState(1234)
    w = (rng.standard_normal((D_EMB, N_OUT)) * 0.1).astype(np.float32)
    tokens = rng.randint(0, VOCAB, (8, 4)).astype(np.int32)
    y = rng.standard_normal((8, N_OUT)).astype(np.float32)
    w, loss = train_step(w, tokens, y)
    print("loss", float(loss), flush=True)


# ---------------------------------------------------------------------------
# plain JAX MLP, SGD by hand; with guard=True the update runs under a
# lax.cond that skips it when the loss is not finite (what a loss-scale
# optimizer does); case jax_update_under_cond
# ---------------------------------------------------------------------------
def run_guarded_sgd(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp

    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    params = {"w1": jax.random.normal(k1, (D_IN, HIDDEN)) * 0.1, "b1": jnp.zeros((HIDDEN,)),
              "w2": jax.random.normal(k2, (HIDDEN, N_OUT)) * 0.1, "b2": jnp.zeros((N_OUT,))}

    def loss_fn(params, x, y):
        h = jax.nn.relu(x @ params["w1"] + params["b1"])
        return jnp.mean((h @ params["w2"] + params["b2"] - y) ** 2)

    def sgd(operand):
        params, grads = operand
        return jax.tree.map(lambda p, g: p - cfg["lr"] * g, params, grads)

    @jax.jit
    def train_step(params, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        if cfg["guard"]:
            params = jax.lax.cond(jnp.isfinite(loss), sgd, lambda operand: operand[0],
                                  (params, grads))
        else:
            params = sgd((params, grads))
        return params, loss

    rng = np.random.RandomState(1234)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], N_OUT)).astype(np.float32)
    params, loss = train_step(params, x, y)
    print("loss", float(loss), flush=True)


# ---------------------------------------------------------------------------
# flax (linen) residual MLP blocks under nn.remat, trained with optax; cases
# jax_remat_added, jax_remat_policy, jax_remat_layer_added
# ---------------------------------------------------------------------------
def run_flax_remat(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp
    import flax.linen as nn
    import optax

    class Block(nn.Module):
        gated: bool

        @nn.compact
        def __call__(self, x):
            h = nn.Dense(HIDDEN)(nn.LayerNorm()(x))
            h = nn.gelu(h)
            if self.gated:
                h = h * nn.sigmoid(h)
            return x + nn.Dense(D_IN)(h)

    class Net(nn.Module):
        remat: str
        gated: bool

        @nn.compact
        def __call__(self, x):
            block = Block
            if self.remat == "default":
                block = nn.remat(Block)
            elif self.remat:
                block = nn.remat(Block, policy=getattr(jax.checkpoint_policies, self.remat))
            for _ in range(cfg["blocks"]):
                x = block(self.gated)(x)
            return nn.Dense(N_OUT)(x)

    model = Net(cfg["remat"], cfg["gated"])
    params = jax.jit(model.init)(jax.random.key(0), np.zeros((1, D_IN), np.float32))
    tx = optax.adamw(cfg["lr"])
    opt_state = jax.jit(tx.init)(params)

    @jax.jit
    def train_step(params, opt_state, x, y):
        def loss_fn(p):
            return jnp.mean(optax.l2_loss(model.apply(p, x), y))
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    rng = np.random.RandomState(1234)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], N_OUT)).astype(np.float32)
    params, opt_state, loss = train_step(params, opt_state, x, y)
    print("loss", float(loss), flush=True)


# ---------------------------------------------------------------------------
# plain JAX (runs under jax 0.4.30 and 0.10.2 alike): layers stacked and run
# with lax.scan, each step under jax.checkpoint with a policy; case
# jax04_scan_remat_policy
# ---------------------------------------------------------------------------
def run_scan_remat(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp

    def layer(h, w):
        return jnp.tanh(h @ w), None

    policy = getattr(jax.checkpoint_policies, cfg["policy"])

    def loss_fn(ws, x, y):
        h, _ = jax.lax.scan(jax.checkpoint(layer, policy=policy), x, ws)
        return jnp.mean((h - y) ** 2)

    @jax.jit
    def train_step(ws, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(ws, x, y)
        return ws - cfg["lr"] * grads, loss

    rng = np.random.RandomState(1234)
    ws = (rng.standard_normal((cfg["layers"], D_IN, D_IN)) * 0.1).astype(np.float32)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    ws, loss = train_step(ws, x, y)
    print("loss", float(loss), flush=True)


# ---------------------------------------------------------------------------
# plain JAX: layers stacked and run with lax.scan(..., unroll=k), trained with
# jax.grad; cases jax_scan_unroll, jax_scan_unroll_remainder,
# jax_scan_unroll_more, jax_scan_length
# ---------------------------------------------------------------------------
def run_scan_unroll(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp

    def layer(h, w):
        return jnp.tanh(h @ w), None

    def loss_fn(ws, x, y):
        h, _ = jax.lax.scan(layer, x, ws, unroll=cfg["unroll"])
        return jnp.mean((h - y) ** 2)

    @jax.jit
    def train_step(ws, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(ws, x, y)
        return ws - cfg["lr"] * grads, loss

    rng = np.random.RandomState(1234)
    ws = (rng.standard_normal((cfg["layers"], D_IN, D_IN)) * 0.1).astype(np.float32)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    ws, loss = train_step(ws, x, y)
    print("loss", float(loss), flush=True)


# ---------------------------------------------------------------------------
# flax linen: a block of Dense-tanh repeated with nn.scan(..., unroll=k),
# trained with optax.adamw; case jax_flax_scan_unroll
# ---------------------------------------------------------------------------
def run_flax_scan(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp
    import flax.linen as nn
    import optax

    class Block(nn.Module):
        @nn.compact
        def __call__(self, h, _):
            return nn.tanh(nn.Dense(D_IN)(h)), None

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            blocks = nn.scan(Block, variable_axes={"params": 0}, split_rngs={"params": True},
                             length=cfg["layers"], unroll=cfg["unroll"])
            h, _ = blocks()(x, None)
            return nn.Dense(N_OUT)(h)

    model = Net()
    params = jax.jit(model.init)(jax.random.key(0), np.zeros((1, D_IN), np.float32))
    tx = optax.adamw(cfg["lr"])
    opt_state = jax.jit(tx.init)(params)

    @jax.jit
    def train_step(params, opt_state, x, y):
        def loss_fn(p):
            return jnp.mean(optax.l2_loss(model.apply(p, x), y))
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    rng = np.random.RandomState(1234)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], N_OUT)).astype(np.float32)
    params, opt_state, loss = train_step(params, opt_state, x, y)
    print("loss", float(loss), flush=True)



# ---------------------------------------------------------------------------
# equinox residual MLP blocks under eqx.filter_checkpoint; case
# jax_eqx_remat_added
# ---------------------------------------------------------------------------
def run_equinox_remat(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp
    import equinox as eqx

    class Block(eqx.Module):
        l1: eqx.nn.Linear
        l2: eqx.nn.Linear

        def __init__(self, key):
            k1, k2 = jax.random.split(key)
            self.l1 = eqx.nn.Linear(D_IN, HIDDEN, key=k1)
            self.l2 = eqx.nn.Linear(HIDDEN, D_IN, key=k2)

        def __call__(self, x):
            return x + self.l2(jax.nn.gelu(self.l1(x)))

    class Net(eqx.Module):
        blocks: list
        out: eqx.nn.Linear

        def __init__(self, key):
            keys = jax.random.split(key, 3)
            self.blocks = [Block(keys[0]), Block(keys[1])]
            self.out = eqx.nn.Linear(D_IN, N_OUT, key=keys[2])

        def __call__(self, x):
            for block in self.blocks:
                x = eqx.filter_checkpoint(block)(x) if cfg["remat"] else block(x)
            return self.out(x)

    model = Net(jax.random.key(0))

    @eqx.filter_jit
    def train_step(model, x, y):
        def loss_fn(m):
            return jnp.mean((jax.vmap(m)(x) - y) ** 2)
        loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
        model = jax.tree_util.tree_map(lambda p, g: p - cfg["lr"] * g, model, grads)
        return model, loss

    rng = np.random.RandomState(1234)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], N_OUT)).astype(np.float32)
    model, loss = train_step(model, x, y)
    print("loss", float(loss), flush=True)


# ---------------------------------------------------------------------------
# flax (linen) blocks stacked with nn.scan over nn.remat(Block), the usual
# way of checkpointing a language model's layers; cases jax_scan_remat_added,
# jax_scan_remat_prevent_cse, jax_scan_remat_scale_in_block
# ---------------------------------------------------------------------------
def run_flax_scan_remat(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp
    import flax.linen as nn
    import optax

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x, _):
            h = nn.gelu(nn.Dense(HIDDEN)(nn.LayerNorm()(x)))
            if cfg["scale"] != 1.0:
                h = h * cfg["scale"]
            return x + nn.Dense(D_IN)(h), None

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            block = nn.remat(Block, prevent_cse=cfg["prevent_cse"]) if cfg["remat"] else Block
            x, _ = nn.scan(block, variable_axes={"params": 0}, split_rngs={"params": True},
                           length=cfg["layers"])(name="layers")(x, None)
            return nn.Dense(N_OUT)(x)

    model = Net()
    params = jax.jit(model.init)(jax.random.key(0), np.zeros((1, D_IN), np.float32))
    tx = optax.adamw(cfg["lr"])
    opt_state = jax.jit(tx.init)(params)

    @jax.jit
    def train_step(params, opt_state, x, y):
        def loss_fn(p):
            return jnp.mean(optax.l2_loss(model.apply(p, x), y))
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    rng = np.random.RandomState(1234)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], N_OUT)).astype(np.float32)
    params, opt_state, loss = train_step(params, opt_state, x, y)
    print("loss", float(loss), flush=True)



# ---------------------------------------------------------------------------
# flax (linen) residual MLP blocks stacked with nn.scan, optionally under
# nn.remat, with a change inside the scanned block (its MLP output scaled, a
# relu) or on the head beside the scan; cases jax_scan_remat_block_scale,
# jax_scan_remat_head_relu, jax_flax_scan_block_scale, jax_flax_scan_head_relu
# ---------------------------------------------------------------------------
def run_flax_scan_block(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp
    import flax.linen as nn
    import optax

    class Block(nn.Module):
        @nn.compact
        def __call__(self, x, _):
            h = nn.gelu(nn.Dense(HIDDEN)(nn.LayerNorm()(x)))
            if cfg["block_relu"]:
                h = nn.relu(h)
            h = nn.Dense(D_IN)(h)
            if cfg["block_scale"] != 1.0:
                h = h * cfg["block_scale"]
            return x + h, None

    class Net(nn.Module):
        @nn.compact
        def __call__(self, x):
            block = nn.remat(Block) if cfg["remat"] else Block
            x, _ = nn.scan(block, variable_axes={"params": 0}, split_rngs={"params": True},
                           length=cfg["layers"])(name="layers")(x, None)
            if cfg["head_relu"]:
                x = nn.relu(x)
            return nn.Dense(N_OUT)(x)

    model = Net()
    params = jax.jit(model.init)(jax.random.key(0), np.zeros((1, D_IN), np.float32))
    tx = optax.adamw(cfg["lr"])
    opt_state = jax.jit(tx.init)(params)

    @jax.jit
    def train_step(params, opt_state, x, y):
        def loss_fn(p):
            return jnp.mean(optax.l2_loss(model.apply(p, x), y))
        loss, grads = jax.value_and_grad(loss_fn)(params)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    rng = np.random.RandomState(1234)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], N_OUT)).astype(np.float32)
    params, opt_state, loss = train_step(params, opt_state, x, y)
    print("loss", float(loss), flush=True)


# ---------------------------------------------------------------------------
# plain JAX: layers stacked and run with lax.scan, optionally each step under
# jax.checkpoint, with a relu added in the scanned step; cases
# jax_scan_body_relu, jax_scan_remat_body_relu
# ---------------------------------------------------------------------------
def run_scan_body(cfg):
    import numpy as np
    import jax
    import jax.numpy as jnp

    def layer(h, w):
        h = jnp.tanh(h @ w)
        if cfg["relu"]:
            h = jax.nn.relu(h)
        return h, None

    def loss_fn(ws, x, y):
        step = jax.checkpoint(layer) if cfg["remat"] else layer
        h, _ = jax.lax.scan(step, x, ws)
        return jnp.mean((h - y) ** 2)

    @jax.jit
    def train_step(ws, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(ws, x, y)
        return ws - cfg["lr"] * grads, loss

    rng = np.random.RandomState(1234)
    ws = (rng.standard_normal((cfg["layers"], D_IN, D_IN)) * 0.1).astype(np.float32)
    x = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    y = rng.standard_normal((cfg["batch"], D_IN)).astype(np.float32)
    ws, loss = train_step(ws, x, y)
    print("loss", float(loss), flush=True)


RUNNERS = {"flax": run_flax, "flax_static_lr": run_flax_static_lr, "equinox": run_equinox,
           "plain": run_plain, "quantized": run_quantized, "guarded_sgd": run_guarded_sgd,
           "flax_remat": run_flax_remat, "scan_remat": run_scan_remat,
           "scan_unroll": run_scan_unroll, "flax_scan": run_flax_scan,
           "equinox_remat": run_equinox_remat, "flax_scan_remat": run_flax_scan_remat,
           "flax_scan_block": run_flax_scan_block, "scan_body": run_scan_body}


# ---------------------------------------------------------------------------
# Cases.  Keys not given take the runner's DEFAULTS.
# ---------------------------------------------------------------------------
# jax 0.10.2 + flax, optax, equinox (HLODIFF_JAX_PYTHON: another venv's python with those)
JAX = os.environ.get("HLODIFF_JAX_PYTHON", "/root/venvs/jax/bin/python")
# jax 0.4.30 (plain jax only; HLODIFF_JAX04_PYTHON: another venv's python with it)
JAX04 = os.environ.get("HLODIFF_JAX04_PYTHON", "/root/venvs/jax04/bin/python")

DEFAULTS = {
    "flax": dict(schedule="constant", lr=1e-3, peak_value=1e-3, warmup_steps=10,
                 decay_steps=100, optimizer="adamw_clip", n_hidden=1, layernorm=True,
                 dropout=0.1, n_examples=32, batch=32),
    "flax_static_lr": dict(lr=0.01, batch=32, steps=6),
    "equinox": dict(weight_decay=1e-4, batch=32),
    "plain": dict(lr=0.01, batch=32),
    "quantized": dict(table_dtype="int4", table_seed=1),
    "guarded_sgd": dict(lr=0.01, batch=16, guard=False),
    "flax_remat": dict(remat="", gated=False, blocks=2, lr=1e-3, batch=16),
    "scan_remat": dict(policy="nothing_saveable", layers=4, lr=0.01, batch=8),
    "scan_unroll": dict(unroll=1, layers=4, lr=0.01, batch=8),
    "flax_scan": dict(unroll=1, layers=4, lr=1e-3, batch=8),
    "equinox_remat": dict(remat=False, lr=0.01, batch=8),
    "flax_scan_remat": dict(remat=True, prevent_cse=True, scale=1.0, layers=4, lr=1e-3,
                            batch=8),
    "flax_scan_block": dict(remat=False, block_scale=1.0, block_relu=False, head_relu=False,
                            layers=4, lr=1e-3, batch=8),
    "scan_body": dict(remat=False, relu=False, layers=4, lr=0.01, batch=8),
}

CASES = {
    # what the backward pass recomputes is the cause, not the ops it moved
    "jax_remat_added": dict(runner="flax_remat", a=dict(remat=""), b=dict(remat="default")),
    "jax_remat_policy": dict(runner="flax_remat", a=dict(remat="dots_saveable"),
                             b=dict(remat="nothing_saveable")),
    # JAX 0.4.30 writes each op's parameters into its op_name and names the
    # barrier optimization_barrier: the same finding as under 0.10.2
    "jax04_scan_remat_policy": dict(
        runner="scan_remat", python=dict(a=JAX04, b=JAX04),
        a=dict(policy="dots_saveable"), b=dict(policy="nothing_saveable")),
    # an op added inside a checkpointed block: the op is the cause, and what
    # the checkpoint then recomputes follows from it
    "jax_remat_layer_added": dict(runner="flax_remat", a=dict(remat="default"),
                                  b=dict(remat="default", gated=True)),
    # lax.scan's unroll= (1 -> 2): the loop runs 2 steps per iteration, 4 -> 2
    # iterations; the same loop computes the same
    "jax_scan_unroll": dict(runner="scan_unroll", a=dict(unroll=1), b=dict(unroll=2)),
    # 5 layers, unroll 2: JAX runs the step left over outside the loop
    "jax_scan_unroll_remainder": dict(runner="scan_unroll", common=dict(layers=5),
                                      a=dict(unroll=1), b=dict(unroll=2)),
    # 8 layers, unroll 2 -> 4: 4 -> 2 iterations of 2 -> 4 steps
    "jax_scan_unroll_more": dict(runner="scan_unroll", common=dict(layers=8),
                                 a=dict(unroll=2), b=dict(unroll=4)),
    # the loop's length changed (4 -> 6 layers), not its unroll (2 in both)
    "jax_scan_length": dict(runner="scan_unroll", common=dict(unroll=2),
                            a=dict(layers=4), b=dict(layers=6)),
    # two edits at once: unroll 1 -> 2 (4 -> 2 iterations, a ratio of 1/2) and
    # the learning rate 0.01 -> 0.02 (a ratio of 2): the learning rate is a
    # cause of its own, not a consequence of the unroll
    "jax_scan_unroll_and_lr": dict(runner="scan_unroll", a=dict(unroll=1, lr=0.01),
                                   b=dict(unroll=2, lr=0.02)),
    # 8 layers, unroll 2 -> 4 (the stacked weights reshaped [4,2,...] -> [2,4,...])
    # and the learning rate 0.01 -> 0.02 at once
    "jax_scan_unroll_more_and_lr": dict(runner="scan_unroll", common=dict(layers=8),
                                        a=dict(unroll=2, lr=0.01), b=dict(unroll=4, lr=0.02)),
    # flax's nn.scan(unroll=1 -> 2) over Dense-tanh blocks, trained with optax
    "jax_flax_scan_unroll": dict(runner="flax_scan", a=dict(unroll=1), b=dict(unroll=2)),
    # equinox names a layer's scope inside its transformations
    # (jvp(vmap(eqx.nn.Linear))/dot_general) and after them when recomputed
    "jax_eqx_remat_added": dict(runner="equinox_remat", a=dict(remat=False),
                                b=dict(remat=True)),
    # nn.scan over nn.remat(Block): the scan's residual stacking changes too
    "jax_scan_remat_added": dict(runner="flax_scan_remat", a=dict(remat=False),
                                 b=dict(remat=True)),
    "jax_scan_remat_prevent_cse": dict(runner="flax_scan_remat", a=dict(prevent_cse=True),
                                       b=dict(prevent_cse=False)),
    # one multiply more in the checkpointed block, whose scope had multiplies:
    # the op, not another policy
    "jax_scan_remat_scale_in_block": dict(runner="flax_scan_remat", a=dict(scale=1.0),
                                          b=dict(scale=1.5)),
    # nn.scan over a Block: nn.remat added AND the block's MLP output scaled
    # by 0.5 (run_b); the scaling is a cause of its own beside the checkpoint
    "jax_scan_remat_block_scale": dict(runner="flax_scan_block", a=dict(remat=False),
                                       b=dict(remat=True, block_scale=0.5)),
    # nn.remat added AND a relu on the head after the scan (run_b)
    "jax_scan_remat_head_relu": dict(runner="flax_scan_block", a=dict(remat=False),
                                     b=dict(remat=True, head_relu=True)),
    # no checkpoint: only the block's MLP output scaled by 0.5 inside nn.scan
    "jax_flax_scan_block_scale": dict(runner="flax_scan_block", a=dict(block_scale=1.0),
                                      b=dict(block_scale=0.5)),
    # no checkpoint: only a relu on the head beside an unchanged nn.scan
    "jax_flax_scan_head_relu": dict(runner="flax_scan_block", a=dict(head_relu=False),
                                    b=dict(head_relu=True)),
    # plain lax.scan: a relu added in the scanned step
    "jax_scan_body_relu": dict(runner="scan_body", a=dict(relu=False), b=dict(relu=True)),
    # plain lax.scan: jax.checkpoint added on the step AND a relu in it
    "jax_scan_remat_body_relu": dict(runner="scan_body", a=dict(remat=False),
                                     b=dict(remat=True, relu=True)),
    "jax_optax_schedule_value": dict(
        runner="flax", a=dict(schedule="warmup_cosine", peak_value=1e-3),
        b=dict(schedule="warmup_cosine", peak_value=2e-3)),
    "jax_optax_constant_to_schedule": dict(
        runner="flax", a=dict(schedule="constant", lr=1e-3),
        b=dict(schedule="warmup_cosine", peak_value=1e-3)),
    # the jitted model.init (3 Dense layers, truncated-normal init) is the
    # largest module after optimization; the before_optimizations files are
    # deleted after the run (a dump of optimized modules only)
    "jax_flax_after_only_init_largest": dict(
        runner="flax", after_only=True,
        common=dict(optimizer="sgd", n_hidden=2, layernorm=False, dropout=0.0),
        a=dict(lr=0.01), b=dict(lr=0.02)),
    "jax_flax_batch_size": dict(
        runner="flax", a=dict(batch=32, n_examples=32), b=dict(batch=48, n_examples=48)),
    "jax_equinox_hyperparameter": dict(
        runner="equinox", a=dict(weight_decay=1e-4),
        b=dict(weight_decay=5e-4)),
    # the same program under jax 0.4.30 (run_a) and jax 0.10.2 (run_b); the
    # main program keeps all its sidecars
    "jax_version_upgrade": dict(
        runner="plain", python=dict(a=JAX04, b=JAX), keep_sidecars=True,
        a=dict(lr=0.01), b=dict(lr=0.01)),
    "jax_version_upgrade_lr": dict(
        runner="plain", python=dict(a=JAX04, b=JAX), keep_sidecars=True,
        a=dict(lr=0.01), b=dict(lr=0.02)),
    "jax_int4_elided": dict(
        runner="quantized", a=dict(table_dtype="int4", table_seed=1),
        b=dict(table_dtype="int4", table_seed=2)),
    "jax_fp8_elided": dict(
        runner="quantized", a=dict(table_dtype="float8_e4m3fn", table_seed=1),
        b=dict(table_dtype="float8_e4m3fn", table_seed=2)),
    # the SGD update moved under a lax.cond on a finite loss (run_b)
    "jax_update_under_cond": dict(
        runner="guarded_sgd", a=dict(guard=False), b=dict(guard=True)),
    # JAX_ENABLE_X64=1 in run_b's environment only (the model code is the same)
    "jax_enable_x64": dict(runner="flax", env=dict(b={"JAX_ENABLE_X64": "1"}), a={}, b={}),
    # JAX_DEFAULT_MATMUL_PRECISION=highest in run_b's environment only
    "jax_default_matmul_precision": dict(
        runner="flax", env=dict(b={"JAX_DEFAULT_MATMUL_PRECISION": "highest"}), a={}, b={}),
    # single runs (one dump, several compilations of jit_train_step)
    "jax_recompile_last_batch": dict(
        runner="flax", single=True, run=dict(n_examples=100, batch=32)),
    "jax_recompile_python_float": dict(
        runner="flax_static_lr", single=True, run=dict(lr=0.01, steps=6)),
}

MAIN = "jit_train_step"

# ---------------------------------------------------------------------------
# Driver (parent process)
# ---------------------------------------------------------------------------
HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.dirname(HERE)
sys.path.insert(0, HERE)
CACHE_DIR = "/tmp/hlodiff-jaxcache-lib"
LOG_DIR = "/tmp/hlodiff-jaxlib-logs"
BULKY = ("-buffer-assignment-values.txt", "-buffer-assignment.txt", ".ll", ".o", ".html",
         "-live-range.txt", "-memory-usage-report.txt")
OBS_ENV = {
    "JAX_PLATFORMS": "cpu",
    "TF_CPP_MIN_LOG_LEVEL": "0",
    "TF_CPP_VMODULE": "py_executable=1",
    "JAX_COMPILATION_CACHE_DIR": CACHE_DIR,
    "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS": "0",
    "JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES": "-1",
    # logs "Writing NAME to persistent compilation cache with key KEY" and the
    # hash of every component of the key (jax 0.10.2 prints these debug lines
    # only when the "jax" logger has a level above DEBUG: JAX_LOGGING_LEVEL;
    # each line then appears twice, once per handler)
    "JAX_DEBUG_LOG_MODULES": "jax._src.compilation_cache,jax._src.cache_key",
    "JAX_LOGGING_LEVEL": "INFO",
}


def prune(d, keep_sidecars=False, after_only=False, keep_stablehlo=False):
    """Drop bulky sidecars and the side modules' per-module folders and
    debug_options.  The main program keeps module.mlir (and, with
    keep_sidecars, its compile_options/topology textprotos and debug_options);
    with keep_stablehlo (every pair case's default) every module keeps its
    module.mlir: JAX's key hashes it, a side program's verdict needs it.
    after_only: delete every *before_optimizations.txt as well."""
    for root, _dirs, files in os.walk(d):
        main_folder = root != d and MAIN in os.path.basename(root)
        for f in files:
            p = os.path.join(root, f)
            if root != d:
                if (main_folder or keep_stablehlo) and f == "module.mlir" \
                        or main_folder and keep_sidecars:
                    continue
                os.remove(p)
            elif (f.endswith(BULKY) or (f.endswith(".debug_options") and MAIN not in f)
                  or (after_only and f.endswith("before_optimizations.txt"))):
                os.remove(p)
    for root, _dirs, _files in os.walk(d, topdown=False):
        if root != d and not os.listdir(root):
            os.rmdir(root)


def compact(d):
    tmp = d + ".compact"
    shutil.copytree(d, tmp)
    shutil.rmtree(d)
    os.rename(tmp, d)


def parse_log(text):
    """Per compilation, in log order: program name, executable fingerprint,
    persistent-cache key and the hashes of the key's components."""
    import re
    compiles, fps, vers, notes, parts = [], {}, {}, [], {}
    previous = None
    for line in text.splitlines():
        if line == previous:  # the same record through a second handler
            continue
        previous = line
        m = re.search(r"Fingerprint for executable (\S+): (\d*)", line)
        if m:
            fps.setdefault(m.group(1), []).append(m.group(2))
        m = re.search(r"get_cache_key hash of serialized (.+?): ([0-9a-f]+)$", line)
        if m:
            if m.group(1) == "computation":
                parts = {}
            parts[m.group(1)] = m.group(2)
        m = re.search(r"Writing (\S+) to persistent compilation cache with key '?([^' ]+?)'?\.?$",
                      line)
        if m:
            compiles.append({"program": m.group(1), "jax_cache_key": m.group(2),
                             "jax_cache_key_components": parts})
            parts = {}
        if line.startswith("VERSIONS "):
            vers = json.loads(line[len("VERSIONS "):])
        if "Fingerprinting executable is not supported" in line and not notes:
            notes.append("the log says 'UNIMPLEMENTED: Fingerprinting executable is not "
                         "supported.' (no 'Fingerprint for executable' line)")
    seen = {}
    for c in compiles:
        k = seen[c["program"]] = seen.get(c["program"], -1) + 1
        f = fps.get(c["program"], [])
        c["xla_executable_fingerprint"] = f[k] if k < len(f) else None
    return compiles, vers, notes


def cache_keys():
    """{program: [key, ...]} from the file names in the cache directory."""
    keys = {}
    for f in sorted(os.listdir(CACHE_DIR)) if os.path.isdir(CACHE_DIR) else []:
        if f.endswith("-atime"):
            continue
        key = f[:-len("-cache")] if f.endswith("-cache") else f
        keys.setdefault(key.rsplit("-", 1)[0], []).append(key)
    return keys


def dump_modules(d, prog):
    """module_NNNN.<prog> labels in the dump, in module-id order."""
    import re
    labels = set()
    for f in os.listdir(d):
        m = re.match(r"(module_\d+\.%s)\." % re.escape(prog), f)
        if m:
            labels.add(m.group(1))
    return sorted(labels)


def one_run(name, run_id, cfg, python, out, extra_env=None):
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    shutil.rmtree(CACHE_DIR, ignore_errors=True)
    env = dict(os.environ)
    env.update(OBS_ENV)
    env.update(extra_env or {})
    env = {k: v for k, v in env.items() if v != ""}
    env["XLA_FLAGS"] = "--xla_dump_to=%s" % out
    os.makedirs(LOG_DIR, exist_ok=True)
    log_path = os.path.join(LOG_DIR, "%s_%s.log" % (name, run_id))
    with open(log_path, "w") as log:
        subprocess.run([python, os.path.abspath(__file__), "--run", CASES[name]["runner"],
                        json.dumps(cfg)], env=env, stdout=log, stderr=subprocess.STDOUT,
                       check=True)
    compiles, vers, notes = parse_log(open(log_path).read())
    on_disk = {k for keys in cache_keys().values() for k in keys}
    for c in compiles:
        c["in_cache_dir"] = c["jax_cache_key"] in on_disk
    return dict(log=log_path, compiles=compiles, versions=vers, notes=notes,
                env={k: env[k] for k in OBS_ENV if k in env},
                extra_env=dict(extra_env or {}))


def config(name, run_id):
    spec = CASES[name]
    cfg = dict(DEFAULTS[spec["runner"]])
    cfg.update(spec.get("common", {}))
    cfg.update(spec[run_id])
    return cfg


def observed_block(name, runs, dumps):
    import datetime
    programs = {}
    for run_id, r in runs.items():
        by_prog = {}
        for c in r["compiles"]:
            by_prog.setdefault(c["program"], []).append(c)
        for prog, cs in by_prog.items():
            mods = dump_modules(dumps[run_id], prog)
            entries = []
            for k, c in enumerate(cs):
                e = {"module": mods[k] if k < len(mods) else None,
                     "xla_executable_fingerprint": c["xla_executable_fingerprint"],
                     "jax_cache_key": c["jax_cache_key"]}
                if prog == MAIN:
                    e["jax_cache_key_components"] = c["jax_cache_key_components"]
                entries.append(e)
            programs.setdefault(prog, {})["run_" + run_id] = (
                entries[0] if len(entries) == 1 else entries)
    vers = {"run_" + k: r["versions"] for k, r in runs.items()}
    how = ("each run its own process with XLA_FLAGS=--xla_dump_to=DIR and %s; the cache "
           "directory emptied before each run. Per compilation, in log order: the cache key "
           "from jax's log line 'Writing NAME to persistent compilation cache with key KEY' "
           "(every key also present as a cache file NAME-HASH[-cache]), the component hashes "
           "from jax._src.cache_key's 'get_cache_key hash of serialized X: H' lines, the "
           "executable fingerprint from XLA's 'Fingerprint for executable NAME: N' "
           "(py_executable.cc; the k-th of a name paired with the k-th key; \"\" = printed "
           "empty, null = not printed); 'module' is the k-th dump module of that name; "
           "versions %s; date %s"
           % (" ".join("%s=%s" % kv for kv in sorted(runs["a"]["env"].items())),
              json.dumps(vers), datetime.date.today().isoformat()))
    main = programs.get(MAIN, {})
    changed = {}
    for what in ("xla_executable_fingerprint", "jax_cache_key"):
        va, vb = main.get("run_a"), main.get("run_b")
        if not isinstance(va, dict) or not isinstance(vb, dict):
            changed[what] = None
            continue
        va, vb = va.get(what), vb.get(what)
        changed[what] = None if va is None or vb is None else va != vb
    notes = sorted({n for r in runs.values() for n in r["notes"]})
    missing = [c["jax_cache_key"] for r in runs.values() for c in r["compiles"]
               if not c["in_cache_dir"]]
    if missing:
        notes.append("keys logged but absent from the cache dir: %s" % missing)
    extra = {"run_" + k: r["extra_env"] for k, r in runs.items() if r["extra_env"]}
    if extra:
        how += "; environment set for one run only: %s" % json.dumps(extra)
    out = {"how": how, "programs": programs, "main_program_changed": changed}
    if notes:
        out["log_notes"] = notes
    return out


def make_pair(name):
    spec = CASES[name]
    case_dir = os.path.join(CORPUS, name)
    runs, dumps = {}, {}
    for run_id in ("a", "b"):
        out = dumps[run_id] = os.path.join(case_dir, "run_" + run_id)
        python = spec.get("python", {}).get(run_id, JAX)
        runs[run_id] = one_run(name, run_id, config(name, run_id), python, out,
                               spec.get("env", {}).get(run_id))
        prune(out, spec.get("keep_sidecars", False), spec.get("after_only", False),
              spec.get("keep_stablehlo", True))
        compact(out)
    subprocess.run([sys.executable, os.path.join(HERE, "sanitize.py"), case_dir], check=True)
    obs = observed_block(name, runs, dumps)
    save_observed(case_dir, obs)


def save_observed(case_dir, obs):
    """Write the observations to LOG_DIR and into truth.json's "observed"
    (only that key is replaced; the rest of truth.json is written by hand)."""
    import sanitize
    name = os.path.basename(case_dir)
    text = json.dumps(obs, indent=2)
    text = sanitize.sanitize_bytes(text.encode(), case_dir).decode()
    with open(os.path.join(LOG_DIR, name + ".observed.json"), "w") as f:
        f.write(text)
    truth_path = os.path.join(case_dir, "truth.json")
    if os.path.exists(truth_path):
        truth = json.load(open(truth_path))
        truth["observed"] = json.loads(text)
        with open(truth_path, "w") as f:
            json.dump(truth, f, indent=2)
            f.write("\n")
    print(text)


def make_single(name):
    import sanitize
    spec = CASES[name]
    case_dir = os.path.join(CORPUS, name)
    cfg = dict(DEFAULTS[spec["runner"]])
    cfg.update(spec["run"])
    out = os.path.join(case_dir, "run")
    # the log is kept (run.log): JAX_LOG_COMPILES already logs each cache key
    # ("Writing NAME to persistent compilation cache with key 'KEY'"), so the
    # debug loggers (duplicated lines, "LEVEL:time:module:line:" prefixes) are off
    r = one_run(name, "run", cfg, JAX, out,
                {"JAX_LOG_COMPILES": "1", "JAX_EXPLAIN_CACHE_MISSES": "1",
                 "JAX_DEBUG_LOG_MODULES": "", "JAX_LOGGING_LEVEL": ""})
    prune(out)
    compact(out)
    subprocess.run([sys.executable, os.path.join(HERE, "sanitize.py"), case_dir], check=True)
    data = open(r["log"], "rb").read()
    with open(os.path.join(case_dir, "run.log"), "wb") as f:
        f.write(sanitize.sanitize_bytes(data, out))
    comp = [dict(c, module=None) for c in r["compiles"]]
    seen = {}
    for c in comp:
        k = seen[c["program"]] = seen.get(c["program"], -1) + 1
        mods = dump_modules(out, c["program"])
        c["module"] = mods[k] if k < len(mods) else None
    with open(os.path.join(LOG_DIR, name + ".observed.json"), "w") as f:
        json.dump(comp, f, indent=2)
    print(json.dumps(comp, indent=2))


def main(argv):
    if argv[:1] == ["--run"]:
        versions()
        RUNNERS[argv[1]](json.loads(argv[2]))
        return
    for name in (argv or list(CASES)):
        print("==", name, flush=True)
        (make_single if CASES[name].get("single") else make_pair)(name)


if __name__ == "__main__":
    main(sys.argv[1:])
