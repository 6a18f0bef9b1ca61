"""A scan over layers, the step under jax.checkpoint or not, the layer one
of two: ``python jax_remat_beside.py [ckpt-](plain|sin)[-half]``.

``sin`` takes the sine of the layer's matmul before its tanh: run against
``ckpt-plain`` the model changed beside the checkpoint added, and both are
causes. ``-half`` halves the loss, which only the backward pass shows (the
step returns no loss).
"""

import sys

import jax
import jax.numpy as jnp

VARIANT = sys.argv[1]
CHECKPOINT = VARIANT.startswith("ckpt-")
SINE = VARIANT.removesuffix("-half").endswith("sin")
HALF = VARIANT.endswith("-half")


def layer(h, w):
    return jnp.tanh(h @ w), None


def layer_with_sine(h, w):
    return jnp.tanh(jnp.sin(h @ w)), None


def loss(ws, x):
    step = layer_with_sine if SINE else layer
    h, _ = jax.lax.scan(jax.checkpoint(step) if CHECKPOINT else step, x, ws)
    return jnp.sum(h ** 2) * (0.5 if HALF else 1.0)


@jax.jit
def train_step(ws, x):
    return ws - 0.01 * jax.grad(loss)(ws, x)


ws = jnp.full((4, 16, 16), 0.1)
print(float(train_step(ws, jnp.ones((8, 16)))[0, 0, 0]))
