"""A dropout step under a PRNG implementation:
``python jax_prng_impl.py threefry2x32|rbg|unpartitioned``.

The key the step takes is u32[2] under threefry2x32 and u32[4] under rbg,
and the random bits come from a threefry2x32 loop or a rng-bit-generator;
``unpartitioned`` is threefry2x32 with jax_threefry_partitionable off,
which lays its counters out otherwise.
"""

import sys

import jax
import jax.numpy as jnp

jax.config.update("jax_default_prng_impl", "threefry2x32" if sys.argv[1] == "unpartitioned"
                  else sys.argv[1])
jax.config.update("jax_threefry_partitionable", sys.argv[1] != "unpartitioned")


@jax.jit
def train_step(w, x, y, key):
    def loss(w):
        h = jnp.tanh(x @ w)
        keep = jax.random.bernoulli(key, 0.9, h.shape)
        return jnp.mean((jnp.where(keep, h / 0.9, 0.0) - y) ** 2)
    return w - 0.01 * jax.grad(loss)(w)


w, x, y = jnp.zeros((8, 4)), jnp.ones((16, 8)), jnp.ones((16, 4))
print(float(train_step(w, x, y, jax.random.PRNGKey(0)).sum()))
