"""A small TensorFlow training loop whose last, smaller batch retraces and recompiles.

train_step is a tf.function(jit_compile=True): each new input shape is a new
trace (a new concrete function __inference_train_step_N) and a new XLA
compilation. Counts go to the side file argv[1] (see tf_count.py); argv[2],
if given, is the directory of TF's persistent XLA cache (passed to TF as
TF_XLA_FLAGS=--tf_xla_persistent_cache_directory=DIR), to count loads.
Used for tf_device_compiler_v1/_v3.log and tf_persistent_cold/_warm.log.
"""
import sys

import tf_count
import numpy as np
import tensorflow as tf

w = tf.Variable(tf.zeros((4, 2)))


@tf.function(jit_compile=True)
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean((tf.tanh(x @ w) - y) ** 2)
    w.assign_sub(0.1 * tape.gradient(loss, w))
    return loss


tf_count.install(sys.argv[1], lambda: [("train_step", train_step)],
                 cache_dir=sys.argv[2] if len(sys.argv) > 2 else None)
data = np.linspace(-1, 1, 40, dtype=np.float32).reshape(10, 4)
labels = np.ones((10, 2), np.float32)
for epoch in range(2):
    for start in range(0, 10, 4):          # batches of 4, 4, then 2
        loss = train_step(tf.constant(data[start:start + 4]), tf.constant(labels[start:start + 4]))
print(float(loss))
