"""The program jax_compile_options_cases.py dumps on eight CPU devices
(``--xla_force_host_platform_device_count=8``): a small SGD step whose batch
is split over the mesh's ``data`` axis and whose weights over its ``model``
axis, ``python jax_mesh_child.py MODE``:

* ``8x1``: the devices as a mesh of data=8, model=1;
* ``4x2``: the same devices as data=4, model=2 (the same PartitionSpecs);
* ``4x2_result_replicated``: data=4, model=2, with the new weights returned
  replicated (jit's out_shardings) instead of split like the weights;
* ``4x2_weights_replicated``: data=4, model=2, the weights replicated
  (PartitionSpec()) where they were split over ``model``, taken and returned.
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec

mode = sys.argv[1]
mesh = Mesh(np.array(jax.devices()).reshape((8, 1) if mode == "8x1" else (4, 2)),
            ("data", "model"))
weights = NamedSharding(mesh, PartitionSpec() if mode == "4x2_weights_replicated"
                        else PartitionSpec(None, "model"))
batch = NamedSharding(mesh, PartitionSpec("data", None))
result = NamedSharding(mesh, PartitionSpec()) if mode == "4x2_result_replicated" else weights


def train_step(w, x):
    grad = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
    return w - 0.1 * grad


step = jax.jit(train_step, in_shardings=(weights, batch), out_shardings=result)
w = jax.device_put(np.linspace(-1, 1, 16 * 8, dtype=np.float32).reshape(16, 8), weights)
x = jax.device_put(np.ones((16, 16), np.float32), batch)
print(float(step(w, x).sum()))
