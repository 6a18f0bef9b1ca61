"""A forward pass run op by op, with or without a dropout: ``python jax_eager_dropout.py plain|dropout``.

Keras 3 with ``jit_compile=False`` on the JAX backend runs a step so: each
operation goes through a function of its backend named after the NumPy one
(here ``matmul``, ``add``, ``select``, ``clip``), and JAX compiles each on
its first call as a program of its own, with the stack of that first call as
its metadata. The dropout's ``select`` comes first, so in that run relu's
``select`` reuses a program whose metadata names the dropout; and the
dropout's own operations are programs only that run compiled.
"""

import sys

import jax
import jax.numpy as jnp


def matmul(x, w):
    return jnp.matmul(x, w)


def add(x, b):
    return jnp.add(x, b)


def select(condition, x, y):
    return jax.lax.select(condition, x, y)


def clip(x, low, high):
    return jnp.clip(x, low, high)


def dropout(x, key, rate):
    keep = jax.random.bernoulli(key, 1.0 - rate, x.shape)
    return select(keep, clip(x / (1.0 - rate), -1e6, 1e6), jnp.zeros_like(x))


def relu(x):
    return select(x > 0, x, jnp.zeros_like(x))


x, w, b = jnp.ones((32, 16)), jnp.full((16, 8), 0.1), jnp.zeros(8)
h = add(matmul(x, w), b)
if sys.argv[1] == "dropout":
    h = dropout(h, jax.random.key(0), 0.5)
print(float(relu(h).sum()))
