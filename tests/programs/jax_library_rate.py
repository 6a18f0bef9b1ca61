"""Settings made inside installed library code: ``python jax_library_rate.py 0.1|0.2|every=4``.

A Hugging Face config's hidden_dropout_prob, or a Keras layer's rate, is a
Python float the library's own code (in site-packages) multiplies by; Keras'
``gradient_accumulation_steps`` is an integer its optimizer takes the step
count modulo. The innermost frames of such a constant's stack are the
library's, the user's line only calls it. A float variant sets the dropout
rate (every 2 steps); ``every=N`` sets the integer (rate 0.1). This program writes a small such library into a
``site-packages`` directory under the temporary directory and loads it.
"""

import importlib.util
import sys
import tempfile
from pathlib import Path

import jax
import jax.numpy as jnp

LIBRARY = '''
import jax, jax.numpy as jnp

class Dropout:
    def __init__(self, rate):
        self.rate = rate

    def __call__(self, x, key):
        keep = 1.0 - self.rate
        return jnp.where(jax.random.bernoulli(key, keep, x.shape), x / keep, 0.0)


class Accumulate:
    def __init__(self, every):
        self.every = every

    def __call__(self, total, step):
        return jnp.where((step + 1) % self.every == 0, total, 0.0)
'''

site = Path(tempfile.gettempdir()) / "hlodiff_jax_library_rate" / "site-packages"
site.mkdir(parents=True, exist_ok=True)
path = site / "minilayers.py"
path.write_text(LIBRARY)
# loaded from the file it is written to (its frames lie under site-packages),
# not imported by name: no installed package is named so
spec = importlib.util.spec_from_file_location("minilayers", path)
minilayers = importlib.util.module_from_spec(spec)
spec.loader.exec_module(minilayers)

variant = sys.argv[1]
every = int(variant.removeprefix("every=")) if variant.startswith("every=") else 2
layer = minilayers.Dropout(0.1 if variant.startswith("every=") else float(variant))
accumulate = minilayers.Accumulate(every)


@jax.jit
def step(x, key, count):
    return accumulate(layer(x, key).sum(), count)


print(float(step(jnp.ones((4, 8)), jax.random.PRNGKey(0), jnp.int32(1))))
