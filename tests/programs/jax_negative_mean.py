"""A gradient step whose loss is a negated mean over the batch, as a cross
entropy is: its backward pass scales by -1/B.

``python jax_negative_mean.py BATCH``
"""

import sys

import jax
import jax.numpy as jnp

batch = int(sys.argv[1])


@jax.jit
def step(w, x):
    grad = jax.grad(lambda w: -jnp.mean(jnp.tanh(x @ w)))(w)
    return w - 0.1 * grad


step(jnp.ones((16, 4)), jnp.ones((batch, 16))).block_until_ready()
