"""Compile one training step of a small JAX model so XLA dumps its HLO.

Run with XLA_FLAGS=--xla_dump_to=hlo-dump; hlodiff then checks the dump
against the recorded baseline. LEARNING_RATE lets the example show a
change: a Python float closed over by a jitted step is baked into the
compiled program, so changing it changes the executable.
"""
import os

import jax
import jax.numpy as jnp

LEARNING_RATE = float(os.environ.get("LEARNING_RATE", "0.01"))


@jax.jit
def train_step(w, x, y):
    def loss(w):
        return jnp.mean((jnp.tanh(x @ w) - y) ** 2)
    return w - LEARNING_RATE * jax.grad(loss)(w)


w = jnp.zeros((8, 4))
train_step(w, jnp.ones((16, 8)), jnp.ones((16, 4))).block_until_ready()
