"""Two JAX cases where the traced program is the same but the executable is not.

* ``jax_donation``: run_b donates the parameters buffer (``donate_argnums``);
  the HLO header gains ``input_output_alias``.
* ``jax_xla_flag``: run_b sets an XLA flag (``--xla_cpu_enable_fast_math=true``);
  the HLO is identical, the ``.debug_options`` sidecar is not.
* ``jax_device_count``: the same data-parallel step on one CPU device, then on
  two (``--xla_force_host_platform_device_count``); shardings, the partition
  count and the device mesh in the HLO follow from it.
* ``jax_mesh_shape``: the same step on eight CPU devices arranged as a mesh of
  data=8, model=1, then data=4, model=2, with the same PartitionSpecs; every
  argument's tiling over the devices follows from the mesh.
* ``jax_result_sharding``: on the data=4, model=2 mesh, run_b returns the new
  weights replicated (jit's out_shardings) instead of split over ``model``.
* ``jax_partition_spec``: on that mesh, run_b places the weights replicated
  (PartitionSpec()) where run_a splits them over ``model`` (in_shardings and
  out_shardings alike).

``python corpus/gen/jax_compile_options_cases.py [CASE ...]`` makes the cases
named (all without one).

The programs are jax_compile_options_child.py, jax_device_count_child.py and
jax_mesh_child.py (their line numbers are recorded in the dumps). Run by hand with the JAX virtualenv (see README.md), from the
repository root: ``/root/venvs/jax/bin/python corpus/gen/jax_compile_options_cases.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"
CHILD = Path(__file__).with_name("jax_compile_options_child.py")
DEVICES_CHILD = Path(__file__).with_name("jax_device_count_child.py")
MESH_CHILD = Path(__file__).with_name("jax_mesh_child.py")
EIGHT = "--xla_force_host_platform_device_count=8"
BULKY = (".ll", ".o")
BULKY_NAMES = ("buffer-assignment", "live-range", "memory-usage")


def run(case: str, run_name: str, mode: str, extra_flags: str = "", child: Path = CHILD) -> None:
    out = CORPUS / case / run_name
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    env = dict(os.environ, XLA_FLAGS=f"--xla_dump_to={out} {extra_flags}".strip())
    subprocess.run([sys.executable, str(child.relative_to(ROOT)), mode], check=True, env=env,
                   cwd=ROOT)
    for path in out.rglob("*"):
        if path.is_file() and (path.suffix in BULKY or any(b in path.name for b in BULKY_NAMES)):
            path.unlink()
    subprocess.run([sys.executable, str(Path(__file__).with_name("sanitize.py")), str(out)],
                   check=True, cwd=ROOT)


# case -> [(run, child mode, extra XLA flags, child)], as observe_hashes.py repeats them
CASES = {
    "jax_donation": [("run_a", "keep", "", CHILD), ("run_b", "donate", "", CHILD)],
    "jax_xla_flag": [("run_a", "keep", "", CHILD),
                     ("run_b", "keep", "--xla_cpu_enable_fast_math=true", CHILD)],
    "jax_device_count": [
        ("run_a", "1", "--xla_force_host_platform_device_count=1", DEVICES_CHILD),
        ("run_b", "2", "--xla_force_host_platform_device_count=2", DEVICES_CHILD)],
    "jax_mesh_shape": [("run_a", "8x1", EIGHT, MESH_CHILD), ("run_b", "4x2", EIGHT, MESH_CHILD)],
    "jax_result_sharding": [("run_a", "4x2", EIGHT, MESH_CHILD),
                            ("run_b", "4x2_result_replicated", EIGHT, MESH_CHILD)],
    "jax_partition_spec": [("run_a", "4x2", EIGHT, MESH_CHILD),
                           ("run_b", "4x2_weights_replicated", EIGHT, MESH_CHILD)],
}


def main(argv: list[str]) -> None:
    for case in argv or list(CASES):
        for run_name, mode, flags, child in CASES[case]:
            run(case, run_name, mode, flags, child)


if __name__ == "__main__":
    main(sys.argv[1:])
