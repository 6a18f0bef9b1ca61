"""A step compiled on every core or on one: ``python jax_cores.py all|one``.

XLA's CPU backend splits a big elementwise op across the threads the
process may use (backend_config outer_dimension_partitions); on one core
it does not.
"""

import os
import sys

if sys.argv[1] == "one":
    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})

import jax  # noqa: E402  (after the affinity: XLA counts the cores when it starts)
import jax.numpy as jnp  # noqa: E402


def train_step(w, x, y):
    return w - 0.01 * jax.grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w)


w, x, y = jnp.zeros((256, 256)), jnp.ones((512, 256)), jnp.ones((512, 256))
print(float(jax.jit(train_step)(w, x, y).sum()))
