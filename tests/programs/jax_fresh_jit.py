"""A step jitted anew at every iteration: ``python jax_fresh_jit.py``.

Each ``jax.jit(lambda ...)`` is a new function, so JAX traces and lowers it
again every step; with its persistent cache on, only the first is compiled
and the others are loaded from the cache.
"""

import jax
import jax.numpy as jnp


def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)


w, x, y = jnp.zeros((8, 4)), jnp.ones((16, 8)), jnp.ones((16, 4))
for _ in range(3):
    train_step = jax.jit(lambda w, x, y: w - 0.01 * jax.grad(loss)(w, x, y))
    w = train_step(w, x, y)
print(float(w.sum()))
