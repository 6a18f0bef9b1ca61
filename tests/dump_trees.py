"""Dump directories for tests, with file names as each frontend's XLA writes them.

File contents are small valid HLO modules (or a line of text for sidecars),
so tests can parse what they list without depending on the real corpus.
"""

from __future__ import annotations

from pathlib import Path

TF_ATTRS = ("__XlaMustCompile_true_config_proto_6001324581131673121"
            "_executor_type_11160318154034397263_")


def hlo_text(name: str, ops: tuple[str, ...] = ("add",)) -> str:
    """A module ``name`` whose entry applies the binary ``ops`` in a chain."""
    lines = [f"HloModule {name}, entry_computation_layout={{(f32[4]{{0}})->f32[4]{{0}}}}", "",
             "ENTRY main {", "  p0 = f32[4]{0} parameter(0)"]
    previous = "p0"
    for i, op in enumerate(ops):
        root = "ROOT " if i == len(ops) - 1 else ""
        lines.append(f"  {root}v{i} = f32[4]{{0}} {op}({previous}, p0)")
        previous = f"v{i}"
    lines.append("}")
    return "\n".join(lines) + "\n"


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (path inside the dump -> text) under ``root``."""
    for relative, text in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def jax_module(module_id: int, program: str, ops: tuple[str, ...], *,
               kernels: tuple[str, ...] = ()) -> dict[str, str]:
    """Every file JAX 0.10 on CPU writes for one module."""
    head = f"module_{module_id:04d}.{program}"
    after = f"{head}.cpu_after_optimizations"
    files = {
        f"{head}.before_optimizations.txt": hlo_text(program, ops),
        f"{after}.txt": hlo_text(program, ops),
        f"{after}-buffer-assignment.txt": "BufferAssignment:\n",
        f"{after}-buffer-assignment-values.txt": "BufferAssignment values:\n",
        f"{after}-live-range.txt": "BufferLiveRange:\n",
        f"{after}-memory-usage-report.txt": "Total bytes used: 16\n",
        f"{head}.debug_options": "xla_cpu_enable_fast_math: false\n",
        f"{head}/module.mlir": "module @jit_f {}\n",
        f"{head}/compile_options.textproto": "executable_build_options {}\n",
        f"{head}/topology.textproto": "platform_version: \"cpu\"\n",
    }
    for kernel in kernels:
        files[f"{head}.{kernel}.ir-no-opt.ll"] = "; ModuleID\n"
        files[f"{head}.{kernel}.ir-with-opt.ll"] = "; ModuleID\n"
        files[f"{head}.obj-file.{kernel}.o"] = "\x7fELF"
    return files


def jax_dump(root: Path, *, first_id: int = 0, train_ops: tuple[str, ...] = ("add",) * 40,
             helpers: tuple[tuple[str, int], ...] = (("jit_convert_element_type", 1),
                                                      ("jit_init_params", 8))) -> Path:
    """A JAX run: small helper modules (name, op count), then a large ``jit_train_step``.

    Module ids step by 2 from ``first_id``, as JAX's do.
    """
    files: dict[str, str] = {}
    module_id = first_id
    for helper, size in helpers:
        files |= jax_module(module_id, helper, ("multiply",) * size)
        module_id += 2
    files |= jax_module(module_id, "jit_train_step", train_ops,
                        kernels=("broadcast_add_fusion.12_kernel_module", "wrapped_add"))
    return write_tree(root, files)


def tf_dump(root: Path, counter: int, uniquifier: int) -> Path:
    """A TensorFlow run: an init function and a larger jit-compiled train step."""
    def name(function: str, n: int) -> str:
        return f"a_inference_{function}_{n}{TF_ATTRS}.{uniquifier}"
    init, step = name("init_values", counter - 70), name("train_step", counter)
    return write_tree(root, {
        f"module_0000.{init}.before_optimizations.txt": hlo_text(init, ("add",) * 3),
        f"module_0000.{init}.cpu_after_optimizations.txt": hlo_text(init, ("add",) * 3),
        f"module_0003.{step}.before_optimizations.txt": hlo_text(step, ("multiply",) * 30),
        f"module_0003.{step}.cpu_after_optimizations.txt": hlo_text(step, ("multiply",) * 30),
        f"module_0003.{step}.ir-no-opt.ll": "; ModuleID\n",
        f"module_0003.{step}.debug_options": "xla_cpu_enable_fast_math: false\n",
    })


def torch_dump(root: Path, small: int, large: int,
               large_ops: tuple[str, ...] = ("add",) * 30) -> Path:
    """A PyTorch/XLA run: two SyncTensorsGraph modules, the second the training step."""
    return write_tree(root, {
        f"module_0000.SyncTensorsGraph.{small}.before_optimizations.txt":
            hlo_text(f"SyncTensorsGraph.{small}", ("subtract",) * 3),
        f"module_0001.SyncTensorsGraph.{large}.before_optimizations.txt":
            hlo_text(f"SyncTensorsGraph.{large}", large_ops),
        f"module_0001.SyncTensorsGraph.{large}.cpu_after_optimizations.txt":
            hlo_text(f"SyncTensorsGraph.{large}", large_ops),
    })


def corpus_cases(corpus: Path, *, with_truth: bool) -> list[Path]:
    """Cases of the real corpus with both runs (and a truth.json when asked)."""
    return sorted(case for case in corpus.iterdir()
                  if (case / "run_a").is_dir() and (case / "run_b").is_dir()
                  and (not with_truth or (case / "truth.json").is_file()))


def snapshot(root: Path) -> dict[str, int]:
    """Every path under ``root`` (symlinks not followed) with its mtime in ns."""
    return {str(p.relative_to(root)): p.lstat().st_mtime_ns for p in sorted(root.rglob("*"))}
