"""A train step with hand-written Adam and an EMA of the weights, the EMA's
decay from the command line: ``python jax_ema_decay.py 0.99|0.999``.

At 0.999 the decay is Adam's b2 and 1 - decay is 1 - b2: the lowering keeps
one constant per value, so the EMA's multiplies read Adam's constants and
its own disappear, though only the decay changed.
"""

import sys

import jax
import jax.numpy as jnp

DECAY = float(sys.argv[1])
params = {"w1": jnp.full((8, 16), 0.1, jnp.float32), "w2": jnp.full((16, 4), 0.1, jnp.float32)}
state = {"mu": jax.tree.map(jnp.zeros_like, params), "nu": jax.tree.map(jnp.zeros_like, params),
         "ema": params}


@jax.jit
def train_step(params, state, x, y):
    def loss(p):
        return jnp.mean((jnp.tanh(x @ p["w1"]) @ p["w2"] - y) ** 2)
    grads = jax.grad(loss)(params)
    mu = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, state["mu"], grads)
    nu = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, state["nu"], grads)
    params = jax.tree.map(lambda p, m, v: p - 0.01 * m / (jnp.sqrt(v) + 1e-8), params, mu, nu)
    ema = jax.tree.map(lambda e, p: DECAY * e + (1 - DECAY) * p, state["ema"], params)
    return params, {"mu": mu, "nu": nu, "ema": ema}


params, state = train_step(params, state, jnp.ones((4, 8), jnp.float32),
                           jnp.zeros((4, 4), jnp.float32))
jax.block_until_ready(params)
