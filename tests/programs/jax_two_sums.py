"""Two eager reductions of different shapes: JAX compiles jit__reduce_sum twice
in one run, for f32[32,16] and for s32[32], alike but for their shapes."""

import jax.numpy as jnp

a = jnp.ones((32, 16))
b = jnp.zeros((32,), jnp.int32)
print(a.sum() + b.sum())
