"""JAX tracing-cache misses of every kind JAX_EXPLAIN_CACHE_MISSES explains.

Inputs are NumPy arrays, so no eager jnp op compiles on the side.
Counts go to the side file argv[1] (see jax_count.py), not to the log.
"""
import sys
from functools import partial

import jax_count

jax_count.install(sys.argv[1], {"jit_affine", "jit_power", "jit_total", "jit_scale",
                                "jit__lambda", "jit_step"})

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


@jax.jit
def affine(x):
    return jnp.tanh(2.0 * x + 1.0)


@partial(jax.jit, static_argnums=1)
def power(x, n):
    return x ** n


@jax.jit
def total(tree):
    return sum(jnp.sum(v) for v in jax.tree_util.tree_leaves(tree))


@jax.jit
def scale(x, s):
    return x * s


def make_step(lr):
    @jax.jit
    def step(w):
        return w - lr * jnp.tanh(w)
    return step


x = np.ones((3,), np.float32)
affine(x)                                  # never seen function
affine(x.astype(np.int32))                 # different input types
affine(np.ones((5,), np.float32))          # different shapes
affine(x)                                  # hit
with jax.default_matmul_precision("highest"):
    affine(x)                              # different tracing context
power(x, 2)                                # never seen
power(x, 3)                                # different static argument value
total({"a": x})                            # never seen
total({"a": x, "b": x})                    # different input pytree
scale(x, np.float32(2.0))                  # never seen
scale(x, 2.0)                              # weak type differs
for c in (1.0, 2.0, 3.0):
    jax.jit(lambda v: v * c)(x)            # lambda re-defined in a loop
for lr in (0.1, 0.1):
    make_step(lr)(x)                       # closure re-created per call
for name, fn in (("jit_affine", affine), ("jit_power", power), ("jit_total", total),
                 ("jit_scale", scale)):
    jax_count.note_cache_size(name, fn)
