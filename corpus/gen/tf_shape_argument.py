"""corpus/tf_shape_argument: a tensor argument TensorFlow must know when compiling.

    python corpus/gen/tf_shape_argument.py N     (N = 3 for run_a, 4 for run_b)

``n`` is a tensor argument, but ``tf.zeros(tf.stack([n, 3]))`` needs it as a
shape, so TF compiles with its value: the HLO holds it as a constant, and
the compile signature prints it (``Tensor<type: int32 shape: [] values: 3>``).
Made in a fresh process per run with TF_CPP_MIN_LOG_LEVEL=0
TF_CPP_VMODULE=device_compiler=3, TF_XLA_FLAGS=--tf_xla_persistent_cache_directory=DIR
and XLA_FLAGS='--xla_dump_to=DUMP --xla_dump_hlo_as_text', then
corpus/gen/sanitize.py (a helper session's tf_case.py, mode "shape").
"""

import sys

import numpy as np
import tensorflow as tf

x = tf.constant(np.random.RandomState(0).standard_normal((4, 3)).astype(np.float32))
n = tf.constant(int(sys.argv[1]))


@tf.function(jit_compile=True)
def f(x, n):
    return tf.reduce_sum(tf.zeros(tf.stack([n, 3])) + 1.0) + tf.reduce_sum(x)


print(f(x, n).numpy())
