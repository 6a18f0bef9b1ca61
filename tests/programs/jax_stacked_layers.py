"""Three residual MLP layers trained with Adam-like moments:
``python jax_stacked_layers.py loop|scan``.

``loop`` keeps each layer's weights apart (a list of dicts) and runs the
layers in a Python loop; ``scan`` stacks the same weights, one array per
weight with the layers along a new first dimension, and runs them with
``lax.scan``, as flax's nn.scan does. The step's arguments (weights, first
and second moments) are then 3 times fewer, each 3 times bigger.
"""

import sys

import jax
import jax.numpy as jnp

SCAN = sys.argv[1] == "scan"


def layer(p, x):
    h = x * p["scale"] + p["shift"]
    return x + jnp.tanh(h @ p["w"] + p["b"])


@jax.jit
def train_step(params, mu, nu, x, y):
    def loss(params):
        h = x @ params["embed"]
        if SCAN:
            h, _ = jax.lax.scan(lambda h, p: (layer(p, h), None), h, params["layers"])
        else:
            for p in params["layers"]:
                h = layer(p, h)
        return jnp.mean((h - y) ** 2)

    grads = jax.grad(loss)(params)
    mu = jax.tree.map(lambda m, g: 0.9 * m + 0.1 * g, mu, grads)
    nu = jax.tree.map(lambda v, g: 0.999 * v + 0.001 * g * g, nu, grads)
    params = jax.tree.map(lambda p, m, v: p - 0.01 * m / (jnp.sqrt(v) + 1e-8), params, mu, nu)
    return params, mu, nu


def weights(i):
    return {"scale": jnp.ones(8), "shift": jnp.zeros(8), "w": jnp.full((8, 8), 0.1 * i),
            "b": jnp.zeros(8)}


layers = [weights(i) for i in range(3)]
params = {"embed": jnp.full((4, 8), 0.1),
          "layers": jax.tree.map(lambda *w: jnp.stack(w), *layers) if SCAN else layers}
zeros = jax.tree.map(jnp.zeros_like, params)
params, _, _ = train_step(params, zeros, zeros, jnp.ones((16, 4)), jnp.zeros((16, 8)))
print(float(params["embed"][0, 0]))
