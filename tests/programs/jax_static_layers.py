"""A step whose layer count is a static argument: ``python jax_static_layers.py N``.

jax.jit traces the Python loop over ``n_layers`` N times: another N is
another program, with a layer's operations more or fewer.
"""

import sys
from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(2,))
def train_step(w, x, n_layers):
    for _ in range(n_layers):
        x = jnp.tanh(x @ w)
    return jnp.sum(x)


print(float(train_step(jnp.full((16, 16), 0.1), jnp.ones((4, 16)), int(sys.argv[1]))))
