"""Weights drawn eagerly, then one step: ``python jax_x64.py X64`` (0 or 1).

``jax.random.normal(...) * 0.1`` runs eagerly for three shapes, so JAX
compiles ``jit_multiply`` for each; with jax_enable_x64 the Python scalar
0.1 is an f64 argument of each, while the jitted step, which takes f32
arrays only, compiles to the same program.
"""

import sys

import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", sys.argv[1] == "1")


def train_step(p, x, y):
    def loss(p):
        h = jnp.tanh(x @ p["w1"])
        h = jnp.tanh(h @ p["w2"])
        return jnp.mean((h @ p["w3"] - y) ** 2)
    value, grad = jax.value_and_grad(loss)(p)
    return jax.tree.map(lambda a, b: a - 0.01 * b, p, grad), value


k1, k2, k3 = jax.random.split(jax.random.PRNGKey(0), 3)
p = {"w1": jax.random.normal(k1, (16, 32), jnp.float32) * 0.1,
     "w2": jax.random.normal(k2, (32, 32), jnp.float32) * 0.1,
     "w3": jax.random.normal(k3, (32, 4), jnp.float32) * 0.1}
p, value = jax.jit(train_step)(p, jnp.ones((8, 16), jnp.float32), jnp.ones((8, 4), jnp.float32))
print(float(value))
