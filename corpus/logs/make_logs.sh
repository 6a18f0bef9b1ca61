#!/bin/sh
# Regenerate the real compile logs hlodiff's log scanner is tested on (CPU only).
# Run from the repository root: sh corpus/logs/make_logs.sh
# (The newer logs with truth files come from make_all_logs.sh.)
set -e
out=corpus/logs
tmp=$(mktemp -d)
rm -rf "$out/jax_dump"
TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=py_executable=1 XLA_FLAGS=--xla_dump_to=$tmp/dump \
  /root/venvs/jax/bin/python $out/jax_recompile.py $tmp/cache > $out/jax.log 2>&1
mkdir -p $out/jax_dump && cp $tmp/dump/*.before_optimizations.txt $out/jax_dump/
python3 corpus/gen/sanitize.py $out/jax_dump > /dev/null  # FileNames paths in the HLO
TF_CPP_MIN_LOG_LEVEL=0 TF_CPP_VMODULE=device_compiler=3 \
  /root/venvs/tf/bin/python $out/tf_recompile.py > $out/tf.log 2>&1
PJRT_DEVICE=CPU PT_XLA_DEBUG_LEVEL=2 \
  /root/venvs/torch/bin/python $out/torch_recompile.py > $out/torch.log 2>&1
# No absolute paths: the repository root, virtualenvs and the temporary cache go.
sed -i -e "s#$PWD/##g" -e "s#/root/venvs/[a-z]*/lib/python3.11/site-packages#<site-packages>#g" \
  -e "s#$tmp#<tmp>#g" $out/jax.log $out/tf.log $out/torch.log
rm -rf "$tmp"
