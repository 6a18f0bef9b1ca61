"""The program jax_compile_options_cases.py dumps on one and on two devices:
a small data-parallel SGD step, the batch split over every device JAX sees
(``--xla_force_host_platform_device_count`` sets how many), the weights
replicated.
"""

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

mesh = Mesh(np.array(jax.devices()), ("data",))
batch = NamedSharding(mesh, PartitionSpec("data", None))
replicated = NamedSharding(mesh, PartitionSpec())


def update(params, x):
    with jax.named_scope("sgd"):
        grad = jax.grad(lambda p: jnp.mean(jnp.tanh(x @ p["w"]) ** 2))(params)
        return {"w": params["w"] - 0.1 * grad["w"]}


step = jax.jit(update, in_shardings=(replicated, batch), out_shardings=replicated)
params = {"w": jax.device_put(np.linspace(-1, 1, 16 * 8, dtype=np.float32).reshape(16, 8),
                              replicated)}
params = step(params, jax.device_put(jnp.ones((4, 16), jnp.float32), batch))
print(len(jax.devices()), float(params["w"].sum()))
