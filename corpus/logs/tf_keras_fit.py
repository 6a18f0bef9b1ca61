"""Keras 3 model.fit(jit_compile=True) with a short last batch, validation and predict.

Keras builds three step functions, each a tf.function(jit_compile=True,
reduce_retracing=True) named one_step_on_data (train, test, predict),
called from a plain tf.function per kind. The last batch of every dataset
is smaller, so each step function traces / compiles more than once.
Counts go to the side file argv[1] (see tf_count.py).
"""
import sys

import tf_count
import keras
import numpy as np
import tensorflow as tf

keras.utils.set_random_seed(0)
model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(3, activation="tanh"),
                          keras.layers.Dense(1)])
model.compile(optimizer="sgd", loss="mse", jit_compile=True)


def step_functions():
    out = []
    for kind in ("train", "test", "predict"):
        for fn in tf_count.tf_functions(getattr(model, f"{kind}_function")):
            out.append((f"{kind}_function/{fn.__name__}", fn))
    return out


tf_count.install(sys.argv[1], step_functions,
                 user=lambda label, fn: label.endswith("one_step_on_data"), keras=True)
x = np.linspace(-1, 1, 40, dtype=np.float32).reshape(10, 4)
y = x.sum(axis=1, keepdims=True)
train = tf.data.Dataset.from_tensor_slices((x, y)).batch(4)           # 4, 4, 2
val = tf.data.Dataset.from_tensor_slices((x[:6], y[:6])).batch(4)     # 4, 2
model.fit(train, validation_data=val, epochs=2, verbose=2)
print(model.predict(x[:5], batch_size=4, verbose=0).shape)            # 4, 1
