"""A training step whose dropout is switched off: ``python jax_dropout_inference.py 0|1``.

As with equinox's ``eqx.nn.Dropout(p, inference=True)``: the step splits
its key into one per example, and the dropout, when on, draws its mask from
them. Switched off (``1``), the dropout returns its input; the split keys
are then read by nothing, so JAX leaves out the split and the key parameter
too.
"""

import sys

import jax
import jax.numpy as jnp

INFERENCE = sys.argv[1] == "1"


def dropout(h, keys):
    if INFERENCE:
        return h
    keep = jax.vmap(lambda k: jax.random.bernoulli(k, 0.9, h.shape[1:]))(keys)
    return jnp.where(keep, h / 0.9, 0.0)


@jax.jit
def train_step(w1, w2, x, y, key):
    keys = jax.random.split(key, x.shape[0])

    def loss(w1, w2):
        h = jax.nn.relu(x @ w1)
        h = dropout(h, keys)
        return jnp.mean((h @ w2 - y) ** 2)

    g1, g2 = jax.grad(loss, argnums=(0, 1))(w1, w2)
    return w1 - 0.01 * g1, w2 - 0.01 * g2


w1, w2 = jnp.full((16, 32), 0.1), jnp.full((32, 4), 0.1)
w1, w2 = train_step(w1, w2, jnp.ones((8, 16)), jnp.ones((8, 4)), jax.random.PRNGKey(0))
print(float(w1[0, 0]))
