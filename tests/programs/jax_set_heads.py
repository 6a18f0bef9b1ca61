"""Heads of several widths kept in a list built from a set, with an
optimizer's moments for each: ``PYTHONHASHSEED=N python jax_set_heads.py LABEL``.

The list's order, and so the order of the step's arguments, changes with
the hash seed: the same arguments in another order.
"""

import jax
import jax.numpy as jnp

WIDTHS = {"sentiment": 3, "topic": 7, "language": 5, "toxicity": 2, "length": 4}
names = list(set(WIDTHS))
heads = [jnp.full((16, WIDTHS[n]), 0.1) for n in names]
moments = {"mu": [jnp.zeros_like(w) for w in heads], "nu": [jnp.zeros_like(w) for w in heads]}


@jax.jit
def train_step(trunk, heads, moments, x):
    def loss(heads):
        h = jnp.tanh(x @ trunk)
        return sum(jnp.mean(jax.nn.log_softmax(h @ w)[:, 0]) for w in heads)
    grads = jax.grad(loss)(heads)
    mu = [0.9 * m + 0.1 * g for m, g in zip(moments["mu"], grads)]
    nu = [0.999 * v + 0.001 * g * g for v, g in zip(moments["nu"], grads)]
    heads = [w - 0.01 * m / (jnp.sqrt(v) + 1e-8) for w, m, v in zip(heads, mu, nu)]
    return heads, {"mu": mu, "nu": nu}


print(names, float(train_step(jnp.full((12, 16), 0.1), heads, moments, jnp.ones((8, 12)))[0][0].sum()))
