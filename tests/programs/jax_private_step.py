"""A step jitted as a private method, its batch built by an eager concatenate.

``python jax_private_step.py LR``: ``jax.jit(self._train_step)`` is the
module ``jit__train_step``, named like JAX's own helpers (``jit__normal``);
``jnp.concatenate`` of four shards, run eagerly, compiles
``jit_concatenate``, which takes more arguments than the step.
"""

import sys

import jax
import jax.numpy as jnp

LR = float(sys.argv[1])


class Trainer:
    def __init__(self):
        self.step = jax.jit(self._train_step)

    def _loss(self, w, x, y):
        return jnp.mean((jnp.tanh(x @ w) - y) ** 2)

    def _train_step(self, w, x, y):
        loss, grad = jax.value_and_grad(self._loss)(w, x, y)
        return w - LR * grad, loss


shards = [jnp.ones((2, 16)) * i for i in range(4)]
x, y = jnp.concatenate(shards), jnp.ones((8, 4))
w, loss = Trainer().step(jnp.full((16, 4), 0.1), x, y)
print(float(loss))
