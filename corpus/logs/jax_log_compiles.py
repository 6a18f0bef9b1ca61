"""A small JAX training loop whose last, smaller batch recompiles the step.

Set-up runs eager jnp ops (zeros, astype) that each compile a tiny
jit(broadcast_in_dim) / jit(convert_element_type) per shape and dtype.
Counts go to the side file argv[1] (see jax_count.py), not to the log.
Used for jax_log_compiles.log and jax_xla_vlog.log.
"""
import sys

import jax_count

jax_count.install(sys.argv[1], {"jit_train_step"})

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402


def loss(w, b, x, y):
    return jnp.mean((jnp.tanh(x @ w) + b - y) ** 2)


@jax.jit
def train_step(w, b, x, y):
    gw, gb = jax.grad(loss, argnums=(0, 1))(w, b, x, y)
    return w - 0.1 * gw, b - 0.1 * gb


w = jnp.zeros((4, 2))                      # eager broadcast_in_dim
b = jnp.zeros((2,)).astype(jnp.float32)    # another shape
mask = jnp.ones((4, 2)).astype(jnp.int32)  # convert_element_type
data = np.linspace(-1, 1, 40, dtype=np.float32).reshape(10, 4)
labels = np.ones((10, 2), np.float32)
for epoch in range(2):
    for start in range(0, 10, 4):          # batches of 4, 4, then 2
        w, b = train_step(w, b, data[start:start + 4], labels[start:start + 4])
jax_count.note_cache_size("jit_train_step", train_step)
