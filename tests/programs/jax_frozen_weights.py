"""Frozen weights closed over by a jitted function: an 8x8 constant in the HLO,
which XLA prints as {...} unless --xla_dump_large_constants is set.

``python jax_frozen_weights.py SCALE``: the weights are 0..63 times SCALE.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

weights = np.arange(64, dtype=np.float32).reshape(8, 8) * float(sys.argv[1])


@jax.jit
def layer(x):
    return jnp.tanh(x @ weights) * 0.5


layer(jnp.ones((4, 8), jnp.float32)).block_until_ready()
