"""A small JAX training step, run two ways to show that a capture is a dump.

    XLA_FLAGS=--xla_dump_to=DUMP python jax_train_step.py LR BATCH CAPTURE.json

lowers the step for one learning rate and batch size and compiles it, so
XLA dumps it into DUMP, and writes what ``hlodiff.capture`` makes of the
lowered and the compiled program to CAPTURE.json: one program, taken both
ways in one process (so even the call stacks above it are the same). tests/test_capture.py compares the captures of two such
runs with their dumps. Editing this file above ``train_step`` moves the
source lines the test expects nowhere: it reads them from the findings.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import sys

import jax
import jax.numpy as jnp
import numpy as np


def train_step(params, x, y, lr):
    def loss(params):
        with jax.named_scope("mlp"):
            h = jnp.tanh(x @ params["w1"])
            out = h @ params["w2"]
        return jnp.mean((out - y) ** 2)

    grads = jax.grad(loss)(params)
    with jax.named_scope("sgd"):
        return jax.tree.map(lambda p, g: p - lr * g, params, grads)


def lowered(lr: float, batch: int):
    """The step lowered for ``batch`` rows, ``lr`` a Python float baked into the program."""
    params = {"w1": np.full((8, 16), 0.1, np.float32), "w2": np.full((16, 4), 0.1, np.float32)}
    x, y = np.ones((batch, 8), np.float32), np.ones((batch, 4), np.float32)
    return jax.jit(functools.partial(train_step, lr=lr)).lower(params, x, y)


def main(lr: str, batch: str, out: str) -> None:
    import hlodiff

    program = lowered(float(lr), int(batch))
    compiled = program.compile()  # what XLA dumps
    captured = dataclasses.replace(hlodiff.capture(program), after=hlodiff.capture(compiled).after)
    with open(out, "w", encoding="utf-8") as f:
        json.dump(dataclasses.asdict(captured), f)


if __name__ == "__main__":
    main(*sys.argv[1:])
