"""TensorFlow captures, for real: a tf.function(jit_compile=True) and its arguments.

Marked ``tf``: not in the default run (the test extra does not install
TensorFlow); run with ``python -m pytest -m tf`` where it is installed
(.ci/run does when it can install ``.[tf]``).
"""

from __future__ import annotations

import pytest

import hlodiff
from hlodiff.integrations import snapshot

pytestmark = pytest.mark.tf


@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")


def _step(tf, lr: float):
    @tf.function(jit_compile=True)
    def step(w, x):
        with tf.name_scope("model"):
            y = tf.tanh(tf.matmul(x, w))
        with tf.name_scope("sgd"):
            return w - lr * tf.reduce_mean(y) * tf.ones_like(w)
    return step


def _arguments(tf, batch: int = 16):
    return tf.zeros((8, 4)), tf.ones((batch, 8))


def test_a_tf_function_and_its_arguments_give_both_stages(tf):
    captured = hlodiff.capture(_step(tf, 0.01), *_arguments(tf), optimized=True)
    assert captured.program.startswith("a_inference_step_")
    assert "constant(0.01)" in captured.before
    assert captured.after is not None and "HloModule" in captured.after
    assert captured.framework == f"tensorflow {tf.__version__}"


def test_a_learning_rate_in_a_tf_function_is_the_cause(tf):
    report = hlodiff.compare(hlodiff.capture(_step(tf, 0.01), *_arguments(tf)),
                             hlodiff.capture(_step(tf, 0.02), *_arguments(tf)))
    assert report.recompiles is True
    top = report.top
    assert (top.kind, top.old, top.new, top.origin.op_name) == ("constant", "0.01", "0.02", "sgd/mul")


def test_a_tf_snapshot_ignores_the_trace_counter_and_catches_a_batch_change(tf, tmp_path):
    path = tmp_path / "step.hlo"
    first = hlodiff.capture(_step(tf, 0.01), *_arguments(tf))
    snapshot.write(snapshot.taken(first, "t", tmp_path), path)
    again = hlodiff.capture(_step(tf, 0.01), *_arguments(tf))  # traced anew: another counter
    assert again.program != first.program
    assert snapshot.check(path, snapshot.taken(again, "t", tmp_path)).outcome == "same"
    bigger = hlodiff.capture(_step(tf, 0.01), *_arguments(tf, batch=32))
    checked = snapshot.check(path, snapshot.taken(bigger, "t", tmp_path))
    assert checked.outcome == "changed"
    assert checked.report.top.summary.startswith("batch 16 -> 32")
