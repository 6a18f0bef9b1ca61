"""Gradients accumulated over K steps, as optax.MultiSteps does:
``python jax_every_k.py K``.

K is a Python int baked into the step: the step applies the update when its
counter reaches K - 1 and counts modulo K, so the program holds K - 1 as well
as K (with K = 2, K - 1 is the same constant 1 the counter adds).
"""

import sys

import jax
import jax.numpy as jnp

K = int(sys.argv[1])


@jax.jit
def train_step(w, acc, mini_step, x, y):
    grad = jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
    acc = acc + grad
    emit = mini_step == K - 1
    w = jnp.where(emit, w - 0.01 * acc, w)
    acc = jnp.where(emit, jnp.zeros_like(acc), acc)
    return w, acc, (mini_step + 1) % K


w, acc, mini_step = train_step(jnp.full((4, 2), 0.1), jnp.zeros((4, 2)), jnp.int32(K - 1),
                               jnp.ones((8, 4)), jnp.zeros((8, 2)))
print(float(w[0, 0]))
