"""An attention mask of ones closed over or built in the step: ``python jax_splat_mask.py outside|inside``.

Hugging Face's Flax BERT called without ``attention_mask`` builds one with
``jnp.ones_like(input_ids)`` inside the traced call; a caller who passes
``jnp.ones_like(ids)`` made outside ``jax.jit`` closes over an array. JAX
stages the first as a broadcast of a scalar 1 and the second as a
``stablehlo.constant dense<1> : tensor<4x16xi32>``, so its persistent-cache key
moves; XLA turns a splat constant into a broadcast of a scalar when it
reads the StableHLO, so both HLO programs are the same. The token ids are
a constant XLA prints as ``{...}``, of the mask's type.
"""

import sys

import jax
import jax.numpy as jnp

ids = jnp.arange(64, dtype=jnp.int32).reshape(4, 16) % 10
outside = jnp.ones_like(ids)


@jax.jit
def step(table):
    mask = outside if sys.argv[1] == "outside" else jnp.ones_like(ids)
    return (jnp.take(table, ids, axis=0) * mask[..., None]).sum()


print(float(step(jnp.ones((10, 8)))))
