"""Tiny Keras 3 (TF backend) models fitted once, configured by JSON in argv[1].

    python corpus/gen/keras_config_cases.py '{"batch": 20, "n": 40}'

Made the tf_keras_* cases of 2026-11-27 (a helper session's keras_case.py):
each run in a fresh process with TF's logging, persistent cache and XLA dump
flags set as each case's truth.json says, then corpus/gen/sanitize.py.
"""
import json
import os
import sys

os.environ["KERAS_BACKEND"] = "tensorflow"
import keras  # noqa: E402  (after the backend is chosen)
import numpy as np  # noqa: E402

cfg = dict(opt="sgd", lr=0.01, schedule=False, extra_layer=False, dropout=None,
           batch=16, n=16, spe=1, mixed=False, bn=None, frozen=False, reg=None,
           metrics=None, epochs=1, seed=0, hidden_name="hidden", x64=False, clipnorm=None, bn_frozen=False)
cfg.update(json.loads(sys.argv[1]) if len(sys.argv) > 1 else {})
if cfg["mixed"]:
    keras.mixed_precision.set_global_policy("mixed_float16")
keras.utils.set_random_seed(cfg["seed"])
layers = [keras.Input((8,))]
kw = {}
if cfg["reg"] is not None:
    kw["kernel_regularizer"] = keras.regularizers.l2(cfg["reg"])
layers.append(keras.layers.Dense(6, activation="relu", name=cfg["hidden_name"], **kw))
if cfg["bn"] is not None:
    layers.append(keras.layers.BatchNormalization(momentum=cfg["bn"], name="bn"))
if cfg["dropout"] is not None:
    layers.append(keras.layers.Dropout(cfg["dropout"], name="drop"))
if cfg["extra_layer"]:
    layers.append(keras.layers.Dense(6, activation="relu", name="extra"))
layers.append(keras.layers.Dense(3, name="logits"))
model = keras.Sequential(layers)
if cfg["frozen"]:
    model.get_layer(cfg["hidden_name"]).trainable = False
lr = cfg["lr"]
if cfg["schedule"]:
    lr = keras.optimizers.schedules.ExponentialDecay(cfg["lr"], decay_steps=10, decay_rate=0.9)
okw = {} if cfg["clipnorm"] is None else {"clipnorm": cfg["clipnorm"]}
opt = {"sgd": keras.optimizers.SGD, "adam": keras.optimizers.Adam}[cfg["opt"]](lr, **okw)
if cfg["bn_frozen"]:
    model.get_layer("bn").trainable = False
model.compile(optimizer=opt,
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              metrics=cfg["metrics"], steps_per_execution=cfg["spe"], jit_compile=True)
rng = np.random.RandomState(1234)
x = rng.standard_normal((cfg["n"], 8)).astype(np.float64 if cfg["x64"] else np.float32)
y = rng.randint(0, 3, (cfg["n"],)).astype(np.int32)
hist = model.fit(x, y, batch_size=cfg["batch"], epochs=cfg["epochs"], verbose=0, shuffle=False)
print("loss", hist.history["loss"])
