"""A bf16 step scaled by a scalar: ``python jax_scalar_kind.py KIND``.

KIND ``python`` scales by the Python float 2.0, which JAX types weakly: it
takes the bf16 of the array it meets. KIND ``numpy`` scales by
``np.float32(2.0)``, typed strongly: the product is promoted to f32.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

SCALE = {"python": 2.0, "numpy": np.float32(2.0)}[sys.argv[1]]


@jax.jit
def train_step(w, x):
    return jnp.sum(jnp.tanh(x @ w) * SCALE)


print(float(train_step(jnp.full((16, 4), 0.1, jnp.bfloat16), jnp.ones((8, 16), jnp.bfloat16))))
