"""A tf.function called with Python floats, then with tensors: TF retraces, warns, and recompiles.

f(x, scale) is a tf.function(jit_compile=True). Each new Python float is a new
trace (it is baked into the graph), so four calls with three distinct floats
trace three times; then two tensor scales share one more trace (a graph that
takes the scale as an argument), and TensorFlow prints its retracing
warning. With TF_CPP_VMODULE=device_compiler=3 the log holds every
compilation too, so the warning's trace count (all signatures) and the
logged compilations (per signature) are both there. Counts go to the side
file argv[1] (see tf_count.py).
"""
import sys

import tf_count
import tensorflow as tf

v = tf.Variable(tf.ones((4,)))


@tf.function(jit_compile=True)
def f(x, scale):
    return tf.reduce_sum(x * v) * scale


tf_count.install(sys.argv[1], lambda: [("f", f)])
x = tf.ones((4,))
for s in (0.5, 0.25, 0.5, 2.0):
    f(x, s)
f(x, tf.constant(0.7))
f(x, tf.constant(0.9))
f(x, 1.5)
