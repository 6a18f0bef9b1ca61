"""A TensorFlow program that recompiles on purpose, for hlodiff's log scanner tests.

A tf.function with jit_compile=True retraces and recompiles for each new
Python float and for each new input shape.
"""
import tensorflow as tf


@tf.function(jit_compile=True)
def train_step(w, x, lr):
    return w - lr * tf.tanh(tf.matmul(x, tf.matmul(x, w), transpose_a=True))


w = tf.ones((4, 4))
for lr, batch in ((0.01, 2), (0.01, 2), (0.02, 2), (0.02, 3)):
    w = train_step(w, tf.ones((batch, 4)), lr)
print(float(tf.reduce_sum(w)))
