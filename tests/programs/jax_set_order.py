"""A training step that sums one loss per weight, over a set of names:
``PYTHONHASHSEED=N python jax_set_order.py LABEL``.

A set of strings iterates in an order that changes with the hash seed, so
each process traces the same operations in another order (the summands are
added in another order): JAX keys each order apart and compiles again.
"""

import jax
import jax.numpy as jnp

NAMES = {"encoder", "decoder", "head", "embed", "norm"}


@jax.jit
def train_step(weights, x):
    def loss(weights):
        total = 0.0
        for name in NAMES:
            total = total + jnp.mean(jnp.tanh(x @ weights[name]) ** 2)
        return total
    value, grads = jax.value_and_grad(loss)(weights)
    return {n: w - 0.01 * grads[n] for n, w in weights.items()}, value


weights = {n: jnp.full((4, 4), 0.1 * (i + 1)) for i, n in enumerate(sorted(NAMES))}
print(float(train_step(weights, jnp.ones((2, 4)))[1]))
