"""Plain SGD against SGD with momentum, as optax's ``sgd(lr, momentum=0.9)``
builds it: ``python jax_momentum.py plain|momentum``.

Momentum adds a trace per weight (the optimizer's state, new arguments of
the step) and ops that scale it by 0.9: a change to the code, with inputs of
its own, not a value of 0 whose multiply the lowering folded away.
"""

import sys

import jax
import jax.numpy as jnp

MOMENTUM = sys.argv[1] == "momentum"
params = {"w1": jnp.full((8, 16), 0.1), "b1": jnp.zeros(16), "w2": jnp.full((16, 1), 0.1)}
trace = jax.tree.map(jnp.zeros_like, params) if MOMENTUM else None


@jax.jit
def train_step(params, trace, x, y):
    def loss(p):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] - y) ** 2)
    grads = jax.grad(loss)(params)
    if trace is not None:
        grads = trace = jax.tree.map(lambda g, t: g + 0.9 * t, grads, trace)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), trace


params, trace = train_step(params, trace, jnp.ones((4, 8)), jnp.ones((4, 1)))
jax.block_until_ready(params)
