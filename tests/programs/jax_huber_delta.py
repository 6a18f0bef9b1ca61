"""A step with a Huber loss: ``python jax_huber_delta.py DELTA``.

Past delta the loss is ``delta * |e| - 0.5 * delta**2``: at delta 1 the
lowering folds the multiply by 1 away, so another delta adds a multiply,
and 0.5 * delta**2 moves with it (Keras' Huber loss does the same).
"""

import sys

import jax
import jax.numpy as jnp

DELTA = float(sys.argv[1])


def huber(error, delta):
    magnitude = jnp.abs(error)
    return jnp.where(magnitude <= delta, 0.5 * error ** 2, delta * magnitude - 0.5 * delta ** 2)


@jax.jit
def train_step(w, x, y):
    grad = jax.grad(lambda w: jnp.mean(huber(x @ w - y, DELTA)))(w)
    return w - 0.1 * grad


print(float(train_step(jnp.full((16, 4), 0.1), jnp.ones((8, 16)), jnp.zeros((8, 4)))[0, 0]))
