"""A dropout rate set inside installed library code: ``python jax_library_rate.py 0.1|0.2``.

A Hugging Face config's hidden_dropout_prob, or a Keras layer's rate, is a
Python float the library's own code (in site-packages) multiplies by: the
innermost frames of the constant's stack are the library's, the user's
line only calls it. This program writes a small such library into a
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

layer = minilayers.Dropout(float(sys.argv[1]))


@jax.jit
def step(x, key):
    return layer(x, key).sum()


print(float(step(jnp.ones((4, 8)), jax.random.PRNGKey(0))))
