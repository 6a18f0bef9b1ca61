#!/bin/sh
# Regenerate the compile-log corpus with truth files (CPU only, one framework
# process at a time). Run from the repository root:
#   sh corpus/logs/make_all_logs.sh
# Each program writes its counts (taken from the framework's own bookkeeping,
# never from the log) to a side file; write_truth.py turns that into
# corpus/logs/<name>.truth.json. The older jax.log / tf.log / torch.log come
# from make_logs.sh; graphcore_*.log are hand-written (no IPU here).
set -e
out=corpus/logs
tmp=$(mktemp -d)
mkdir -p "$tmp/logs"
export PYTHONDONTWRITEBYTECODE=1
JAX=/root/venvs/jax/bin/python
TF=/root/venvs/tf/bin/python
TORCH=/root/venvs/torch/bin/python

# run NAME SETTINGS PYTHON SCRIPT [ARGS...]: the log, then its truth file.
run() {
  name=$1 settings=$2 python=$3 script=$4
  shift 4
  echo "== $name" >&2
  env $settings "$python" "$out/$script" "$tmp/$name.side.json" "$@" > "$tmp/logs/$name.log" 2>&1
  python3 "$out/write_truth.py" "$tmp/$name.side.json" "$name" \
    "$(echo "$settings $(basename "$python") $out/$script SIDE_FILE $*" | sed "s#$tmp#<tmp>#g")"
}

# keep_dump NAME: the before_optimizations HLO of every module XLA compiled.
keep_dump() {
  rm -rf "$out/$1_dump"
  mkdir -p "$out/$1_dump"
  cp "$tmp/$1_dump"/*.before_optimizations.txt "$out/$1_dump/"
  python3 corpus/gen/sanitize.py "$out/$1_dump" > /dev/null
}

# JAX 0.10.2
run jax_log_compiles "JAX_LOG_COMPILES=1 XLA_FLAGS=--xla_dump_to=$tmp/jax_log_compiles_dump" \
  $JAX jax_log_compiles.py
keep_dump jax_log_compiles
run jax_explain_cache_misses \
  "JAX_EXPLAIN_CACHE_MISSES=1 XLA_FLAGS=--xla_dump_to=$tmp/jax_explain_cache_misses_dump" \
  $JAX jax_explain_cache_misses.py
keep_dump jax_explain_cache_misses
run jax_xla_vlog "TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=py_executable=1 JAX_LOG_COMPILES=1" \
  $JAX jax_log_compiles.py
persistent="JAX_LOG_COMPILES=1 JAX_EXPLAIN_CACHE_MISSES=1 JAX_COMPILATION_CACHE_DIR=$tmp/jax_cache"
persistent="$persistent JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0"
persistent="$persistent JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=-1"
run jax_persistent_cold "$persistent" $JAX jax_persistent.py "$tmp/jax_cache" 0.1
run jax_persistent_warm "$persistent" $JAX jax_persistent.py "$tmp/jax_cache" 0.1
run jax_persistent_changed "$persistent" $JAX jax_persistent.py "$tmp/jax_cache" 0.2

# TensorFlow 2.21 (the dump is how compilations are counted; see tf_count.py)
run tf_device_compiler_v1 "XLA_FLAGS=--xla_dump_to=$tmp/tf_device_compiler_v1_dump \
TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=device_compiler=1" $TF tf_device_compiler.py
run tf_device_compiler_v3 "XLA_FLAGS=--xla_dump_to=$tmp/tf_device_compiler_v3_dump \
TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=device_compiler=3" $TF tf_device_compiler.py
keep_dump tf_device_compiler_v3
run tf_default_logging "XLA_FLAGS=--xla_dump_to=$tmp/tf_default_logging_dump" \
  $TF tf_default_logging.py
keep_dump tf_default_logging  # hlodiff log --dump counts what the log does not show
run tf_retrace_python_scalar "XLA_FLAGS=--xla_dump_to=$tmp/tf_retrace_python_scalar_dump \
TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=device_compiler=3" $TF tf_retrace_python_scalar.py
tfcache="TF_XLA_FLAGS=--tf_xla_persistent_cache_directory=$tmp/tf_cache TF_CPP_MIN_LOG_LEVEL=0"
tfcache="$tfcache TF_CPP_VMODULE=device_compiler=3,device_executable_persistor=3"
run tf_persistent_cold "XLA_FLAGS=--xla_dump_to=$tmp/tf_persistent_cold_dump $tfcache" \
  $TF tf_device_compiler.py "$tmp/tf_cache"
run tf_persistent_warm "XLA_FLAGS=--xla_dump_to=$tmp/tf_persistent_warm_dump $tfcache" \
  $TF tf_device_compiler.py "$tmp/tf_cache"
run tf_keras_fit "XLA_FLAGS=--xla_dump_to=$tmp/tf_keras_fit_dump \
TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=device_compiler=1" $TF tf_keras_fit.py
# The same fit with its dump kept: at device_compiler=1 (hlodiff log --dump names the
# compilations from it) and at device_compiler=3 (concrete functions named in the log).
for level in 1 3; do
  run tf_keras_fit_v$level "XLA_FLAGS=--xla_dump_to=$tmp/tf_keras_fit_v${level}_dump \
TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=device_compiler=$level" $TF tf_keras_fit.py
  keep_dump tf_keras_fit_v$level
done

# PyTorch/XLA 2.9
run torch_debug_level1 "PJRT_DEVICE=CPU PT_XLA_DEBUG_LEVEL=1" $TORCH torch_debug.py
run torch_debug_level2 "PJRT_DEVICE=CPU PT_XLA_DEBUG_LEVEL=2" $TORCH torch_debug.py

# No absolute paths: the temporary directory first, then what sanitize.py knows.
sed -i "s#$tmp#<tmp>#g" "$tmp"/logs/*.log
python3 corpus/gen/sanitize.py "$tmp/logs" > /dev/null
cp "$tmp"/logs/*.log "$out/"
rm -rf "$tmp"
