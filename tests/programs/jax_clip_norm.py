"""A step that clips its gradient's norm: ``python jax_clip_norm.py CLIP``.

The bias correction ``1 - 0.9 ** step`` holds the constant 1 too. JAX's
lowering keeps one constant per value, so with CLIP 1 the clip's compare
reads the correction's 1, while with CLIP 0.5 it reads a 0.5 of its own.
"""

import sys

import jax
import jax.numpy as jnp

CLIP = float(sys.argv[1])


@jax.jit
def train_step(w, m, step, x, y):
    grad = jax.grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w)
    norm = jnp.sqrt(jnp.sum(grad ** 2))
    grad = jnp.where(norm < CLIP, grad, grad * (CLIP / norm))
    m = 0.9 * m + 0.1 * grad
    return w - 0.01 * m / (1 - 0.9 ** step), m


w, m = train_step(jnp.full((16, 4), 0.1), jnp.zeros((16, 4)), 1.0, jnp.ones((8, 16)),
                  jnp.ones((8, 4)))
print(float(w[0, 0]))
