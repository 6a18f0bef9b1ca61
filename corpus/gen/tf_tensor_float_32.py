"""corpus/tf_tensor_float_32: TensorFloat-32 turned off for the process.

    python corpus/gen/tf_tensor_float_32.py plain     (run_a)
    python corpus/gen/tf_tensor_float_32.py tf32off   (run_b)

run_b calls tf.config.experimental.enable_tensor_float_32_execution(False)
before the same jit-compiled train step. tf2xla then gives every matmul
(here the forward one and its gradient) operand_precision={highest,highest}:
the HLO, the persistent key's HLO fingerprint and the executable change,
the compile signature (and config_proto) does not. Made in a fresh process
per run with TF_CPP_MIN_LOG_LEVEL=0
TF_CPP_VMODULE=device_compiler=3,device_executable_persistor=3,
TF_XLA_FLAGS=--tf_xla_persistent_cache_directory=DIR and
XLA_FLAGS='--xla_dump_to=DUMP --xla_dump_hlo_as_text', then
corpus/gen/sanitize.py; only the main module's before/after text and
debug_options kept.
"""

import sys

import numpy as np
import tensorflow as tf

if sys.argv[1] == "tf32off":
    tf.config.experimental.enable_tensor_float_32_execution(False)
x = tf.constant(np.random.RandomState(0).standard_normal((8, 16)).astype(np.float32))
y = tf.constant(np.random.RandomState(1).standard_normal((8, 4)).astype(np.float32))
w = tf.Variable(np.random.RandomState(2).standard_normal((16, 4)).astype(np.float32))


@tf.function(jit_compile=True)
def train_step(x, y):
    with tf.GradientTape() as t:
        loss = tf.reduce_mean((tf.tanh(x @ w) - y) ** 2)
    w.assign_sub(0.01 * t.gradient(loss, w))
    return loss


print(train_step(x, y).numpy())
