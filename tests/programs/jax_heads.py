"""Self-attention trained with HEADS heads: ``python jax_heads.py HEADS``.

The weights keep their shapes; the heads are a reshape of the projections,
[4, 16, 32] into [4, 16, HEADS, 32 // HEADS], and the scores are scaled by
1 / sqrt(32 // HEADS), a constant that changes with them.
"""

import sys

import jax
import jax.numpy as jnp

HEADS = int(sys.argv[1])


@jax.jit
def train_step(w, x):
    def loss(w):
        q, k = (jnp.reshape(x @ w[i], (4, 16, HEADS, 32 // HEADS)) for i in (0, 1))
        scores = jnp.einsum("bthd,bshd->bhts", q, k) / jnp.sqrt(32 // HEADS)
        return jnp.mean(jax.nn.softmax(scores) ** 2)
    return w - 0.01 * jax.grad(loss)(w)


w = train_step(jnp.full((2, 32, 32), 0.01), jnp.ones((4, 16, 32)))
print(float(w[0, 0, 0]))
