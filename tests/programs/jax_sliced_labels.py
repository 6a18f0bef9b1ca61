"""Next-token labels sliced from token ids closed over, and an attention mask
given or built: ``python jax_sliced_labels.py given|built``.

Hugging Face's Flax GPT-2 given ``attention_mask=jnp.ones_like(ids)`` builds
none itself; called without one, it makes ``jnp.ones(shape)`` (float) and
casts it. JAX stages the two differently, so its persistent-cache key moves;
XLA folds both to the same HLO. The loss's labels ``ids[:, 1:]`` are a
``slice`` then a ``broadcast_in_dim`` of the ids' constant in module.mlir,
which XLA folds into one ``s32[4,15,1]`` constant it prints as ``{...}``: a
type module.mlir holds no constant of.
"""

import sys

import jax
import jax.numpy as jnp

ids = jnp.arange(64, dtype=jnp.int32).reshape(4, 16) % 10


@jax.jit
def step(table):
    mask = jnp.ones_like(ids) if sys.argv[1] == "given" else jnp.ones(ids.shape).astype(jnp.int32)
    logits = jnp.take(table, ids, axis=0) * mask[..., None]
    labels = ids[:, 1:]
    picked = jnp.take_along_axis(logits[:, :-1], labels[..., None], axis=-1)
    return picked.sum()


print(float(step(jnp.ones((10, 10)))))
