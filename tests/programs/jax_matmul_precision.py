"""A step whose matmuls take the process's precision: ``python jax_matmul_precision.py default|highest``.

``highest`` sets jax_default_matmul_precision for the whole process, as a
training script's setup might, far from the matmul: the dot's
operand_precision changes, at a line that asks for no precision.
"""

import sys

import jax
import jax.numpy as jnp

if sys.argv[1] != "default":
    jax.config.update("jax_default_matmul_precision", sys.argv[1])


@jax.jit
def step(w, x):
    g = jax.grad(lambda w: jnp.tanh(x @ w).sum())(w)
    return w - 0.1 * g


print(float(step(jnp.ones((16, 16)), jnp.ones((4, 16))).sum()))
