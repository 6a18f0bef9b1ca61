"""Functions that share a name, and one function compiled twice: ``python jax_same_names.py``.

Two lambdas are both ``jit__lambda``; a closure ``make_scaler.<locals>.step``
and a module-level ``step`` are both ``jit_step``: four functions, each
compiled once. The closure made twice with another factor, and the first
lambda called at another shape, are two programs compiled again.
"""

import jax
import jax.numpy as jnp


def make_scaler(k):
    def step(x):
        return jnp.tanh(x * k)
    return jax.jit(step)


def step(x):
    return jnp.cos(x) @ x


x = jnp.ones((8,))
double = jax.jit(lambda v: v * 2 + 1)
total = jax.jit(lambda v: jnp.sin(v).sum())
print(double(x).sum(), total(x), jax.jit(step)(x), make_scaler(3.0)(x).sum())
print(make_scaler(4.0)(x).sum(), double(jnp.ones((4,))).sum())
