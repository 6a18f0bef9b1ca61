"""TensorFlow retracing that TF's default logging warns about.

normalise is a tf.function(jit_compile=True) called with six batch sizes:
six traces, six XLA compilations, and TF's "triggered tf.function
retracing" warning. make_scale() re-creates a tf.function on each call,
so every call traces and compiles again. Counts go to the side file
argv[1] (see tf_count.py).
"""
import sys

import tf_count
import numpy as np
import tensorflow as tf


@tf.function(jit_compile=True)
def normalise(x):
    return (x - tf.reduce_mean(x)) / (tf.math.reduce_std(x) + 1e-6)


def make_scale(factor):
    @tf.function(jit_compile=True)
    def scale(x):
        return x * factor
    return scale


scales = []
tf_count.install(sys.argv[1], lambda: [("normalise", normalise)]
                 + [("scale", fn) for fn in scales])
for batch in range(1, 7):
    normalise(tf.constant(np.ones((batch, 3), np.float32)))
for i in range(6):
    scales.append(make_scale(2.0))
    scales[-1](tf.constant(np.ones((2, 3), np.float32)))
