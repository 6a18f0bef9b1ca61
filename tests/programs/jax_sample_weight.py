"""Per-sample loss weights given in one run only: ``python jax_sample_weight.py none|given``.

Keras' ``model.fit(x, y, sample_weight=w)`` (or ``class_weight``) hands the
step a weight per sample that the loss multiplies by; without it the step
takes no such argument. Run ``given`` has one more argument, f32[32], and a
multiply reading it.
"""

import sys

import jax
import jax.numpy as jnp


@jax.jit
def step(w, x, y, weights=None):
    def loss(w):
        err = (x @ w - y) ** 2
        return (err * weights).mean() if weights is not None else err.mean()
    return w - 0.1 * jax.grad(loss)(w)


x, y = jnp.ones((32, 4)), jnp.zeros((32,))
weights = jnp.linspace(0.5, 1.5, 32) if sys.argv[1] == "given" else None
print(float(step(jnp.ones((4,)), x, y, weights).sum()))
