"""A scan over layers whose step may gain a relu, and whose stacked outputs
the loss may read: ``python jax_scan_residual.py (plain|relu)[-ys]``.

A relu in the step makes JAX keep its mask at every step for the backward
pass (a stack the forward loop fills and the backward loop reads); ``-ys``
makes the scan stack every step's output, which the loss then averages:
the user's own stack, beside the one JAX keeps.
"""

import sys

import jax
import jax.numpy as jnp

VARIANT = sys.argv[1]
RELU = VARIANT.startswith("relu")
YS = VARIANT.endswith("-ys")


def layer(h, w):
    h = jnp.tanh(h @ w)
    if RELU:
        h = jax.nn.relu(h)
    return h, (h if YS else None)


def loss(ws, x):
    h, ys = jax.lax.scan(layer, x, ws)
    total = jnp.sum(h ** 2)
    if YS:
        total = total + jnp.mean(ys)
    return total


@jax.jit
def train_step(ws, x):
    return ws - 0.01 * jax.grad(loss)(ws, x)


ws = jnp.full((4, 16, 16), 0.1)
print(float(train_step(ws, jnp.ones((8, 16)))[0, 0, 0]))
