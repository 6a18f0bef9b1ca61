"""A step whose learning rate comes in as a Python float (weak-typed) or as an
f32 array: the StableHLO differs by a convert, the HLO XLA gets does not.

``python jax_weak_scalar.py python|array``
"""

import sys

import jax
import jax.numpy as jnp


@jax.jit
def step(x, lr):
    return x - lr * jnp.cos(x)


lr = 0.1 if sys.argv[1] == "python" else jnp.float32(0.1)
step(jnp.ones((5,)), lr).block_until_ready()
