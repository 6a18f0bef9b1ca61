"""A training step jitted whole, or run op by op: ``python jax_step_unjitted.py jit|eager``.

``eager`` is Keras' ``jit_compile=False`` on the JAX backend: the step is not
jitted, and its operations run one by one through small jitted functions
of the backend's (here ``matmul`` and ``add``), each a program of its own.
"""

import sys

import jax
import jax.numpy as jnp


@jax.jit
def matmul(x, w):
    return x @ w


@jax.jit
def add(x, b):
    return x + b


def train_step(w, b, x, y):
    def loss(w, b):
        return jnp.mean((add(matmul(x, w), b) - y) ** 2)

    gw, gb = jax.grad(loss, argnums=(0, 1))(w, b)
    return w - 0.01 * gw, b - 0.01 * gb


if sys.argv[1] == "jit":
    train_step = jax.jit(train_step)
w, b = train_step(jnp.full((16, 4), 0.1), jnp.zeros(4), jnp.ones((32, 16)), jnp.ones((32, 4)))
print(float(w[0, 0]))
