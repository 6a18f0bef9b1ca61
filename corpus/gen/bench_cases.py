"""The corpus case made by bench/make_big.py: a small model-change pair.

    /root/venvs/jax/bin/python corpus/gen/bench_cases.py

``bench_model_change``: bench/make_big.py's transformer at its smallest
setting that keeps the case under 2 MB (2 layers), run_b with one op more in
the middle layer (``--pair model``: the MLP output of layer 1 times 0.5). The
big pairs bench/diff.py times are made the same way with more layers; their
findings must be this pair's. The dumps record bench/make_big.py's own source
lines: regenerate this case whenever that file changes above its model.
"""

import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CASE = os.path.join(REPO, "corpus", "bench_model_change")
LAYERS = 1
# What XLA:CPU writes besides the HLO that hlodiff does not read (as corpus/gen/jax_cases.py).
BULKY = ("-buffer-assignment-values.txt", "-buffer-assignment.txt", ".ll", ".o", ".html",
         "-live-range.txt", "-memory-usage-report.txt")


def main() -> None:
    shutil.rmtree(CASE, ignore_errors=True)
    subprocess.run([sys.executable, os.path.join(REPO, "bench", "make_big.py"), "--layers",
                    str(LAYERS), "--pair", "model", "--out", CASE], check=True)
    for run in ("run_a", "run_b"):
        for entry in os.listdir(os.path.join(CASE, run)):
            path = os.path.join(CASE, run, entry)
            if os.path.isdir(path):  # module.mlir and more: no constant is elided, and 2 MB is the budget
                shutil.rmtree(path)
            elif entry.endswith(BULKY):
                os.remove(path)
    subprocess.run([sys.executable, os.path.join(HERE, "sanitize.py"), CASE], check=True)


if __name__ == "__main__":
    main()
