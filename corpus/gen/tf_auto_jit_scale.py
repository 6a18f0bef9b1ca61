"""corpus/tf_auto_jit_scale: TF auto-clustering, the cluster's output scaled by 2 in run_b.

    python corpus/gen/tf_auto_jit_scale.py plain    (run_a)
    python corpus/gen/tf_auto_jit_scale.py scaled   (run_b)

No jit_compile: tf.config.optimizer.set_jit(True), and on CPU
TF_XLA_FLAGS=--tf_xla_cpu_global_jit, so TF clusters the plain tf.function's
ops into cluster_0 and compiles that. Every op of such a cluster carries
metadata source_file="dummy_file_name" source_line=10, TF's placeholder
(line 10 whatever the script's lines: it is no location of the user's).
Made in a fresh process per run with TF_CPP_MIN_LOG_LEVEL=0
TF_CPP_VMODULE=device_compiler=3,device_executable_persistor=3,
TF_XLA_FLAGS='--tf_xla_persistent_cache_directory=DIR --tf_xla_cpu_global_jit'
and XLA_FLAGS='--xla_dump_to=DUMP --xla_dump_hlo_as_text', then
corpus/gen/sanitize.py; only the main module's before/after text and
debug_options kept.
"""

import sys

import numpy as np
import tensorflow as tf

tf.config.optimizer.set_jit(True)
scale = 2.0 if sys.argv[1] == "scaled" else None
x = tf.constant(np.random.RandomState(0).standard_normal((8, 16)).astype(np.float32))
w = tf.Variable(np.random.RandomState(2).standard_normal((16, 4)).astype(np.float32))


@tf.function
def score(x):
    h = tf.tanh(x @ w)
    if scale is not None:
        h = h * scale
    return tf.reduce_sum(h * h + 1.0)


print(score(x).numpy(), score(x).numpy())
