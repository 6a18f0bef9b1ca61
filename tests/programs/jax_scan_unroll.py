"""Stacked layers run with a loop: ``python jax_scan_unroll.py [fori-]UNROLL[-residual]``.

``jax.lax.scan(layer, x, ws, unroll=UNROLL)`` over 4 layers (``fori-``:
``jax.lax.fori_loop(0, 4, ..., unroll=UNROLL)``), trained with jax.grad;
``-residual`` adds the step's input to its output (the model changes inside
the loop body).
"""

import sys

import jax
import jax.numpy as jnp

VARIANT = sys.argv[1]
FORI = VARIANT.startswith("fori-")
RESIDUAL = VARIANT.endswith("-residual")
UNROLL = int(VARIANT.removeprefix("fori-").removesuffix("-residual"))


def layer(h, w):
    out = jnp.tanh(h @ w)
    return (out + h if RESIDUAL else out), None


def loss(ws, x, y):
    if FORI:
        h = jax.lax.fori_loop(0, 4, lambda i, h: layer(h, ws[i])[0], x, unroll=UNROLL)
    else:
        h, _ = jax.lax.scan(layer, x, ws, unroll=UNROLL)
    return jnp.mean((h - y) ** 2)


@jax.jit
def train_step(ws, x, y):
    return ws - 0.01 * jax.grad(loss)(ws, x, y)


ws = jnp.full((4, 16, 16), 0.05)
print(float(train_step(ws, jnp.ones((8, 16)), jnp.zeros((8, 16)))[0, 0, 0]))
