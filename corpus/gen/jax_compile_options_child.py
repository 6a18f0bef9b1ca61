"""The program jax_compile_options_cases.py dumps twice: a small SGD step.

``python jax_compile_options_child.py donate`` donates the parameters buffer.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

donate = sys.argv[1] == "donate"


def update(params, x):
    with jax.named_scope("sgd"):
        grad = jax.grad(lambda p: jnp.sum(jnp.tanh(x @ p["w"]) ** 2))(params)
        return {"w": params["w"] - 0.1 * grad["w"]}


step = jax.jit(update, donate_argnums=(0,) if donate else ())
params = {"w": jnp.asarray(np.linspace(-1, 1, 16 * 8, dtype=np.float32).reshape(16, 8))}
params = step(params, jnp.ones((4, 16), jnp.float32))
print(float(params["w"].sum()))
