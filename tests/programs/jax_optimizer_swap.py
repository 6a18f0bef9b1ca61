"""A step whose optimizer is Adam or RMSprop from a library: ``python jax_optimizer_swap.py adam|rmsprop``.

The optimizers live in a module under a ``site-packages`` folder, as
optax's and Keras' do, so every operation of the update has the step's
one line ``params, state = update(...)`` as its place in the user's code.
"""

import importlib.util
import os
import sys
import tempfile

import jax
import jax.numpy as jnp

LIBRARY = '''
import jax.numpy as jnp


def adam(p, g, state):
    m, v, t = state
    t = t + 1
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    step = 0.01 * jnp.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
    return p - step * m / (jnp.sqrt(v) + 1e-7), (m, v, t)


def rmsprop(p, g, state):
    m, v, t = state
    v = 0.95 * v + 0.05 * g * g
    return p - 0.01 * g / (jnp.sqrt(v) + 1e-7), (m, v, t + 1)
'''
folder = os.path.join(tempfile.mkdtemp(), "site-packages")
os.makedirs(folder)
path = os.path.join(folder, "optimizers.py")
with open(path, "w") as stream:
    stream.write(LIBRARY)
# the library is written here, at run time: loaded from its file, not imported by name
spec = importlib.util.spec_from_file_location("optimizers", path)
optimizers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(optimizers)

update = getattr(optimizers, sys.argv[1])


@jax.jit
def train_step(w, state, x, y):
    g = jax.grad(lambda w: jnp.mean((x @ w - y) ** 2))(w)
    w, state = update(w, g, state)
    return w, state


w = jnp.full((16, 4), 0.1)
state = (jnp.zeros_like(w), jnp.zeros_like(w), jnp.float32(0))
w, state = train_step(w, state, jnp.ones((8, 16)), jnp.ones((8, 4)))
print(float(w[0, 0]))
