"""Adam-like moments, with the gradient clipped in front or not: ``python jax_clip_chain.py 0|1``.

As optax.chain(clip_by_global_norm(...), ...) does, clipping puts a state of
its own (here empty) before the moments, so the first moment's arguments are
named ``opt_state[1]...`` instead of ``opt_state[0]...``, each where it was,
and ``opt_state[1]...`` named the second moment's before.
"""

import sys

import jax
import jax.numpy as jnp

CLIP = sys.argv[1] == "1"


@jax.jit
def train_step(params, opt_state, x, y):
    def loss(params):
        h = jnp.tanh(x @ params["w1"] + params["b1"])
        return jnp.mean((h @ params["w2"] - y) ** 2)

    grads = jax.grad(loss)(params)
    if CLIP:
        norm = jnp.sqrt(sum(jnp.sum(g ** 2) for g in jax.tree.leaves(grads)))
        grads = jax.tree.map(lambda g: g * jnp.minimum(1.0, 0.5 / norm), grads)
    mu = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, opt_state[-2], grads)
    nu = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, opt_state[-1], grads)
    params = jax.tree.map(lambda p, m, v: p - 0.01 * m / (jnp.sqrt(v) + 1e-8), params, mu, nu)
    return params, (*opt_state[:-2], mu, nu)


params = {"w1": jnp.full((16, 32), 0.1), "b1": jnp.zeros(32), "w2": jnp.full((32, 4), 0.1)}
moments = (jax.tree.map(jnp.zeros_like, params), jax.tree.map(jnp.zeros_like, params))
opt_state = ((), *moments) if CLIP else moments
params, opt_state = train_step(params, opt_state, jnp.ones((8, 16)), jnp.ones((8, 4)))
print(float(params["w1"][0, 0]))
