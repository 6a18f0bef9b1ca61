"""One training step compiled under the compile options a run chose.

``python jax_compile_options.py EFFORT DEVICE``: the step with
``jax_exec_time_optimization_effort`` set to EFFORT, its arguments put on
device number DEVICE (give XLA_FLAGS=--xla_force_host_platform_device_count=2
for a second CPU device). JAX hashes the compile options (the effort, the
device assignment) and the devices' topology into its persistent cache
key; none of them shows in the HLO text.
"""

import sys

import jax
import jax.numpy as jnp

jax.config.update("jax_exec_time_optimization_effort", float(sys.argv[1]))


@jax.jit
def train_step(w, x, y):
    loss, grad = jax.value_and_grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w)
    return w - 0.01 * grad, loss


arguments = (jnp.full((16, 4), 0.1), jnp.ones((8, 16)), jnp.ones((8, 4)))
w, loss = train_step(*jax.device_put(arguments, jax.devices()[int(sys.argv[2])]))
print(float(loss))
