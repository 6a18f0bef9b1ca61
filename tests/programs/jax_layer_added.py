"""An MLP whose weights are a list, trained with momentum: ``python jax_layer_added.py DEPTH``.

The step takes the weights and the momentum as lists of (w, b) pairs, so JAX
names its parameters by position (``params[1][0]``, ``momentum[2][1]``): a
hidden layer more inserts two weights in each list and shifts the names of
every later one. The momentum's bias correction casts the step count to a
float for each weight, as Adam does: the new weights bring such casts too.
"""

import sys

import jax
import jax.numpy as jnp

DEPTH = int(sys.argv[1])
SIZES = [16] + [32] * DEPTH + [4]


@jax.jit
def train_step(params, momentum, step, x, y):
    def loss(params):
        h = x
        for w, b in params[:-1]:
            h = jnp.tanh(h @ w + b)
        w, b = params[-1]
        return jnp.mean((h @ w + b - y) ** 2)

    grads = jax.grad(loss)(params)
    momentum = jax.tree.map(lambda m, g: 0.9 * m + g, momentum, grads)
    return jax.tree.map(lambda p, m: p - 0.01 * m / (1 - 0.9 ** step.astype(jnp.float32)),
                        params, momentum), momentum


params = [(jnp.full((n, k), 0.1), jnp.zeros(k)) for n, k in zip(SIZES, SIZES[1:])]
momentum = jax.tree.map(jnp.zeros_like, params)
params, momentum = train_step(params, momentum, jnp.int32(1), jnp.ones((8, 16)), jnp.ones((8, 4)))
print(float(params[0][0][0, 0]))
