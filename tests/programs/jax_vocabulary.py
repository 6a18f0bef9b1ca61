"""An embedding trained for a vocabulary size: ``python jax_vocabulary.py VOCAB``.

The embedding table's first dimension is the vocabulary, the step returns
it updated; the batch of token ids keeps its shape.
"""

import sys

import jax
import jax.numpy as jnp

VOCAB = int(sys.argv[1])


@jax.jit
def train_step(params, ids, y):
    def loss(params):
        h = params["embedding"][ids].mean(axis=1)
        return jnp.mean((h @ params["out"] - y) ** 2)
    grads = jax.grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)


params = {"embedding": jnp.full((VOCAB, 8), 0.1), "out": jnp.full((8, 2), 0.1)}
params = train_step(params, jnp.zeros((4, 6), jnp.int32), jnp.ones((4, 2)))
print(float(params["out"][0, 0]))
