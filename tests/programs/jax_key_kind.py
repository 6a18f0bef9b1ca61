"""A step drawing dropout from a key it is passed: ``python jax_key_kind.py KIND``.

KIND ``raw`` passes a raw uint32 key (jax.random.PRNGKey), ``typed`` a typed
key (jax.random.key), and ``out`` a raw key to a step jitted with
out_shardings. JAX annotates the data of a typed key, and a result given
out_shardings, with a sharding custom-call of its own: the model code is the
same in all three.
"""

import sys
from functools import partial

import numpy as np

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec

KIND = sys.argv[1]
mesh = Mesh(np.array(jax.devices()[:1]), ("data",))
out = NamedSharding(mesh, PartitionSpec()) if KIND == "out" else None


@partial(jax.jit, out_shardings=out)
def train_step(w, key, x):
    keep = jax.random.bernoulli(key, 0.9, (x.shape[0], w.shape[1]))
    grad = jax.grad(lambda w: jnp.mean(jnp.where(keep, jnp.tanh(x @ w), 0.0) ** 2))(w)
    return w - 0.1 * grad


key = jax.random.key(0) if KIND == "typed" else jax.random.PRNGKey(0)
w = train_step(jnp.full((16, 4), 0.1), key, jnp.ones((8, 16)))
print(float(w[0, 0]))
