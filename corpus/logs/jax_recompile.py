"""A JAX program that recompiles on purpose, for hlodiff's log scanner tests.

A Python float closed over by a jitted step is baked into the program as a
constant, so each new value is a new compilation; a new batch shape is
another. Run with the flags in make_logs.sh.
"""
import sys

import jax
import jax.numpy as jnp

jax.config.update("jax_log_compiles", True)
jax.config.update("jax_explain_cache_misses", True)
jax.config.update("jax_compilation_cache_dir", sys.argv[1])
jax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)


def make_step(lr):
    @jax.jit
    def train_step(w, x):
        return w - lr * jnp.tanh(x.T @ (x @ w))
    return train_step


w = jnp.ones((4, 4))
x = jnp.ones((2, 4))
for lr in (0.01, 0.01, 0.02):  # the second 0.01 hits the persistent cache
    w = make_step(lr)(w, x)
step = make_step(0.03)
w = step(w, x)
w = step(w, jnp.ones((3, 4)))  # a new batch size: a tracing cache miss
