"""A step whose arguments are placed with a sharding or not:
``python jax_argument_sharding.py PLACEMENT``.

PLACEMENT ``placed`` puts the weights and the batch on a one-device mesh with
jax.device_put and a NamedSharding; ``plain`` leaves them where jnp put them.
The step's code is the same; JAX keys a program by its arguments' shardings.
"""

import sys

import numpy as np

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding, PartitionSpec

mesh = Mesh(np.array(jax.devices()[:1]), ("data",))


@jax.jit
def train_step(w, x):
    grad = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - 0.1 * grad


w, x = jnp.full((16, 4), 0.1), jnp.ones((8, 16))
if sys.argv[1] == "placed":
    w = jax.device_put(w, NamedSharding(mesh, PartitionSpec()))
    x = jax.device_put(x, NamedSharding(mesh, PartitionSpec("data")))
print(float(train_step(w, x)[0, 0]))
