"""An RNN run over the first T steps of a sequence: ``python jax_scan_length.py T``.

``lax.scan(..., xs[:T], length=T)`` runs T steps: T is a Python int baked
into the program, the bound the scan's while loop compares its counter with,
and the first dimension of the ``xs`` the step takes (a batch of 5 is the second).
"""

import sys

import jax
import jax.numpy as jnp

T = int(sys.argv[1])


def loss(params, xs, y):
    def cell(h, x):
        h = jnp.tanh(h @ params["wh"] + x @ params["wx"])
        return h, h
    h, _ = jax.lax.scan(cell, jnp.zeros((xs.shape[1], 8)), xs, length=T)
    return jnp.mean((h @ params["wo"] - y) ** 2)


@jax.jit
def train_step(params, xs, y):
    grads = jax.grad(loss)(params, xs, y)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)


params = {"wh": jnp.eye(8) * 0.5, "wx": jnp.full((4, 8), 0.1), "wo": jnp.ones((8, 2))}
xs = jnp.ones((16, 5, 4))
params = train_step(params, xs[:T], jnp.zeros((5, 2)))
print(float(params["wo"][0, 0]))
