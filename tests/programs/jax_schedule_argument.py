"""A step given its learning rate and counting its steps: ``python
jax_schedule_argument.py (constant|decay)``.

``constant`` multiplies the gradient by the learning rate it is given;
``decay`` computes the rate from the step count instead (as a learning-rate
schedule does), so the rate it is given is read no more, and jax.jit leaves
it out of the program: one argument fewer, with no keep_unused changed.
"""

import sys

import jax
import jax.numpy as jnp

DECAY = sys.argv[1] == "decay"


@jax.jit
def train_step(w, x, lr, step):
    grad = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    rate = 0.1 * 0.5 ** (step / 100) if DECAY else lr
    return w - rate * grad, step + 1


print(float(train_step(jnp.full((16, 4), 0.1), jnp.ones((8, 16)), 0.1, 3)[0][0, 0]))
