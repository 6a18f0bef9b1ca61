"""The same step whose result is returned under another name: the HLO texts
are the same byte for byte, JAX's StableHLO names the result
(``jax.result_info = "result['loss']"``) and its cache key hashes that name.
flax's nn.remat does this to the optimizer's init (Block_0 -> CheckpointBlock_0).

``python jax_result_names.py loss|cost``
"""

import sys

import jax
import jax.numpy as jnp


@jax.jit
def step(x):
    return {sys.argv[1]: jnp.sum(jnp.cos(x) * x)}


step(jnp.ones((5,)))[sys.argv[1]].block_until_ready()
