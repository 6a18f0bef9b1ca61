"""A train step and eager set-up helpers: ``python jax_helper_split.py 0|1``.

Run ``1`` changes the step's learning rate and computes its set-up in two
jitted helpers where run ``0`` uses one, both named ``prepare``: as a Hugging
Face Flax model's set-up does with ``gradient_checkpointing=True`` (its eager
``jit_reduce_sum`` compiled twice where the other run compiled
``jit__reduce_sum`` once).
"""

import sys

import jax
import jax.numpy as jnp

SPLIT = sys.argv[1] == "1"
LR = 0.02 if SPLIT else 0.01


def prepare(x):
    return jnp.sum(jnp.tanh(x) * 2.0)


def prepare_scaled(x):
    return jnp.tanh(x) * 2.0


def prepare_sum(x):
    return jnp.sum(x)


prepare_scaled.__name__ = prepare_sum.__name__ = "prepare"


@jax.jit
def train_step(w, x, y):
    g = jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
    return w - LR * g


x = jnp.ones((8, 16))
scale = jax.jit(prepare_sum)(jax.jit(prepare_scaled)(x)) if SPLIT else jax.jit(prepare)(x)
w = train_step(jnp.full((16, 4), 0.1) * scale, x, jnp.ones((8, 4)))
print(float(w[0, 0]))
