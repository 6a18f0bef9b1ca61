"""A step given a step count it does not read: ``python jax_keep_unused.py KEEP``.

jax.jit leaves an argument the function does not read out of the program
unless keep_unused=True (KEEP 1): then the program takes one argument more
and no operation reads it.
"""

import sys
from functools import partial

import jax
import jax.numpy as jnp

KEEP = sys.argv[1] == "1"


@partial(jax.jit, keep_unused=KEEP)
def train_step(w, x, step):
    grad = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - 0.1 * grad


print(float(train_step(jnp.full((16, 4), 0.1), jnp.ones((8, 16)), 3)[0, 0]))
