"""One run: library functions called eagerly on two shapes (JAX compiles each
once per shape for itself), and a function of the user's jitted on two shapes.

``python jax_eager_ops.py``
"""

import jax
import jax.numpy as jnp

a, b = jnp.ones((4, 3)), jnp.ones((2, 5))
for x in (a, b):
    jax.nn.relu(x)
    jnp.multiply(x, 2.0)
    jax.nn.softmax(x)


@jax.jit
def scale(x):
    return jnp.tanh(x) * 3.0


for x in (a, b):
    scale(x).block_until_ready()
