"""A step jitted with or without an XLA option: ``python jax_fast_math.py off|on``.

jax.jit's compiler_options set an XLA debug option for this program alone:
the dump's .debug_options show it as they show XLA_FLAGS.
"""

import sys

import jax
import jax.numpy as jnp

options = {"xla_cpu_enable_fast_math": True} if sys.argv[1] == "on" else {}


def train_step(w, x, y):
    return w - 0.01 * jax.grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w)


w, x, y = jnp.zeros((8, 4)), jnp.ones((16, 8)), jnp.ones((16, 4))
print(float(jax.jit(train_step, compiler_options=options)(w, x, y).sum()))
