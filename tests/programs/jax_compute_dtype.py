"""A step computing in another dtype: ``python jax_compute_dtype.py DTYPE``.

As a Flax model given ``dtype=jnp.bfloat16``: the weights stay f32, the
layer computes in DTYPE (float32 or bfloat16), and its exact GELU's erf is
lowered with an abs more in bfloat16. Everything comes from one line, as a
library's model called from one line of the user's code does.
"""

import sys

import jax
import jax.numpy as jnp

DTYPE = jnp.dtype(sys.argv[1])


@jax.jit
def train_step(w, x):
    grad = jax.grad(lambda w: jnp.mean(jax.nn.gelu(x.astype(DTYPE) @ w.astype(DTYPE), approximate=False).astype(jnp.float32) ** 2))(w)  # noqa: E501
    return w - 0.1 * grad


print(float(train_step(jnp.full((16, 4), 0.1), jnp.ones((8, 16)))[0, 0]))
