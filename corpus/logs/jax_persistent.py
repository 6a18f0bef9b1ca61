"""A small JAX training loop run three times against one persistent compilation cache.

argv[1]: side file for the counts (see jax_count.py); argv[2]: the cache
directory (also given to JAX as JAX_COMPILATION_CACHE_DIR); argv[3]: the
learning rate, a Python float baked into the step as a constant, so a new
value is a new program (one persistent cache miss). All batches have one
shape; the eager set-up ops compile (or load) a few tiny programs.
"""
import sys

import jax_count

jax_count.install(sys.argv[1], {"jit_train_step"}, cache_dir=sys.argv[2])

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

LR = float(sys.argv[3])


def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)


@jax.jit
def train_step(w, x, y):
    return w - LR * jax.grad(loss)(w, x, y)


w = jnp.zeros((4, 2))
data = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)
labels = np.ones((8, 2), np.float32)
for start in range(0, 8, 4):
    w = train_step(w, data[start:start + 4], labels[start:start + 4])
print(float(jnp.sum(w)))
