"""A training step and an EMA of the weights: the EMA takes more arguments
(the weights twice) than the step (the weights and a batch).

``python jax_ema_step.py``
"""

import jax
import jax.numpy as jnp

params = {f"w{i}": jnp.full((8, 8), 0.1 * (i + 1)) for i in range(6)}
ema = jax.tree.map(jnp.copy, params)


@jax.jit
def train_step(params, x, y):
    def loss(p):
        h = x
        for k in sorted(p):
            h = jnp.tanh(h @ p[k])
        return jnp.mean((h - y) ** 2)
    grads = jax.grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.01 * g, params, grads)


@jax.jit
def ema_update(ema, params):
    return jax.tree.map(lambda e, p: 0.99 * e + 0.01 * p, ema, params)


params = train_step(params, jnp.ones((4, 8)), jnp.zeros((4, 8)))
ema = ema_update(ema, params)
jax.block_until_ready(ema)
