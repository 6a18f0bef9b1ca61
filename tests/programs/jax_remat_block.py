"""Two dropout blocks, the second under jax.checkpoint or not: ``python jax_remat_block.py 0|1``.

As Hugging Face's Flax models do with ``gradient_checkpointing=True``: the
embedding's dropout runs outside the checkpoint and the layers' inside.
JAX traces the checkpointed block apart, so its dropout calls a copy of
the bernoulli the first block calls (``_bernoulli_1`` next to
``_bernoulli``, each calling its own ``_uniform``).
"""

import sys

import jax
import jax.numpy as jnp

REMAT = sys.argv[1] == "1"


def dropout(h, key):
    keep = jax.random.bernoulli(key, 0.9, h.shape)
    return jnp.where(keep, h / 0.9, 0.0)


def block(w, h, key):
    return dropout(jnp.tanh(h @ w), key)


@jax.jit
def train_step(w1, w2, x, y, key):
    k1, k2 = jax.random.split(key)

    def loss(w1, w2):
        h = block(w1, x, k1)
        h = (jax.checkpoint(block) if REMAT else block)(w2, h, k2)
        return jnp.mean((h - y) ** 2)

    g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
    return w1 - 0.01 * g1, w2 - 0.01 * g2


w1, w2 = jnp.full((16, 16), 0.1), jnp.full((16, 16), 0.1)
w1, w2 = train_step(w1, w2, jnp.ones((8, 16)), jnp.ones((8, 16)), jax.random.PRNGKey(0))
print(float(w1[0, 0]))
