"""What a dump says about the environment a program was compiled in.

Some differences lie outside the program text, and every cache key includes
them: the framework and XLA version, the XLA flags, the platform, the
device count. A dump does not print its versions, but each generation of
JAX and XLA prints its HLO differently, and those traits of the text tell
two generations apart:

* how source locations are recorded (stack-frame tables and
  ``stack_frame_id`` in newer XLA, inline ``source_file``/``source_line`` in
  older): the evidence, since neither a re-print nor an edit of metadata
  changes it;
* whether JAX's op_names have a ``jit(main)`` scope (0.4.x): told beside it,
  never evidence alone (one renamed scope would do it).

Whether names carry the ``%`` sigil is no evidence at all: XLA's own printer
writes it and its dumps of some versions do not, so a module and XLA's
re-print of it differ there.

(Which sidecars a dump holds would tell too, .debug_options and the module
folder with module.mlir come with JAX 0.5, but people and tools prune them.)

The flags come from ``.debug_options`` (protobuf text: ``name: value`` lines,
a repeated option once per value, only those not at their default); the
platform from the after-optimizations file name (``cpu_``, ``sm_8.0_gpu_``);
the device count from the module header (``replica_count``,
``num_partitions``), read to its end: a train step's header restates every
parameter's layout first, tens of kilobytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .catalogue import DumpModule
from .naming import AFTER

# Options that change neither the program nor JAX's cache key: JAX clears
# them before hashing the compile options (jax/_src/cache_key.py,
# _hash_serialized_compile_options, JAX 0.10.2). Other dump options are not
# cleared: --xla_dump_include_timestamp and --xla_dump_large_constants move
# JAX's key (seen in corpus/gen/HASHES.md), so they are differences too.
IGNORED_FLAGS = frozenset({
    "xla_force_host_platform_device_count", "xla_dump_to", "xla_dump_hlo_module_re",
    "xla_dump_hlo_pass_re", "xla_dump_hlo_as_text", "xla_dump_hlo_as_proto",
    "xla_dump_hlo_as_dot", "xla_dump_hlo_as_url", "xla_dump_hlo_as_html",
    "xla_dump_fusion_visualization", "xla_dump_hlo_snapshots", "xla_dump_max_hlo_modules",
    "xla_dump_module_metadata", "xla_dump_compress_protos", "xla_dump_hlo_as_long_text",
    "xla_dump_disable_metadata", "xla_dump_hlo_pipeline_re",
    "xla_gpu_experimental_autotune_cache_mode", "xla_gpu_cuda_data_dir",
})
# Options JAX sets per module from the program itself, not from anything the
# user set: xla_detailed_logging is on for a module of jax_compiler_detailed_
# logging_min_ops ops or more (jax/_src/compiler.py, use_detailed_logging). It
# follows from the program (a helper session's run had it as the top cause,
# "XLA flag xla_detailed_logging", between two unrelated eager helpers).
PROGRAM_DERIVED = frozenset({"xla_detailed_logging"})
# Options JAX derives from the persistent cache directory: a different cache
# path gives a different JAX cache key for the same program.
CACHE_DERIVED = frozenset({"xla_gpu_per_fusion_autotune_cache_dir"})
# How a version difference's detail begins, which tells it from the others.
VERSION = "framework or XLA version"
COMPILE_OPTION = "compile option"
_HEADER_DEVICES = re.compile(r"\b(replica_count|num_partitions)=(\d+)")
_JAX_OP_NAME = re.compile(r'op_name="jit\(')


@dataclass(frozen=True)
class Environment:
    """The traits of one module's dump that depend on where it was compiled."""

    generation: tuple[tuple[str, str], ...]  # (trait, value) that mark a JAX/XLA generation
    platform: str | None
    devices: tuple[tuple[str, int], ...]
    flags: dict[str, str] = field(default_factory=dict)
    has_flags: bool = False
    compile_options: dict[str, str] | None = None  # compile_options.textproto, flags left out
    topology: str | None = None  # topology.textproto: the devices JAX hashes
    host_devices: str = "1"  # --xla_force_host_platform_device_count, which JAX's key leaves out
    # torch-xla writes op metadata only with XLA_HLO_DEBUG=1, and keys that
    # variable: on, off, or None (not a torch-xla dump)
    hlo_debug: bool | None = None


def environment(module: DumpModule) -> Environment:
    """Read the environment traits of ``module`` from its files (text heads only)."""
    head = module.head()
    traits = []
    if head:
        if "\nFileNames\n" in head or head.startswith("FileNames") or "stack_frame_id=" in head:
            traits.append(("source locations", "stack-frame tables"))
        elif "source_file=" in head:
            traits.append(("source locations", "inline source_file"))
        if "/jit(main)/" in head:
            traits.append(("op_name scope", "jit(main)"))
        elif _JAX_OP_NAME.search(head):
            traits.append(("op_name scope", "no jit(main)"))
    after = module.stage_file(AFTER)
    platform = after.stage.platform if after is not None and after.stage is not None else None
    # 1 is XLA's default for both: printed or not, it is one device
    devices = tuple(sorted((k, int(v)) for k, v in _HEADER_DEVICES.findall(_header(head))
                           if int(v) != 1))
    flags_text = _sidecar_text(module, "debug_options")
    every_flag = None if flags_text is None else debug_options(flags_text)
    flags = None if every_flag is None else \
        {key: value for key, value in every_flag.items()
         if key not in IGNORED_FLAGS and key not in PROGRAM_DERIVED}
    options = _sidecar_text(module, "compile_options.textproto")
    hlo_debug = "metadata={" in head if head and module.name.frontend == "pytorch" else None
    return Environment(tuple(traits), platform, devices, flags or {}, flags is not None,
                       None if options is None else _compile_options(options),
                       _sidecar_text(module, "topology.textproto"),
                       (every_flag or {}).get(_HOST_DEVICES, "1"), hlo_debug)


def _header(head: str) -> str:
    """The ``HloModule`` line of a text's head."""
    at = head.find("HloModule")
    if at < 0:
        return ""
    end = head.find("\n", at)
    return head[at:] if end < 0 else head[at:end]


def _sidecar_text(module: DumpModule, kind: str) -> str | None:
    """The text of the module's file of ``kind`` (``debug_options``, or one of
    the folder's: ``compile_options.textproto``), or None."""
    found = next((f for f in module.files if f.kind == kind), None)
    if found is None:
        return None
    try:
        return (module.root / found.relative).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


# Parts of the compile options read elsewhere: the flags (from .debug_options),
# flags passed as overrides (jax.jit(compiler_options=...): .debug_options too),
# and a flag per argument and result that the HloModule header restates
# (allow_spmd_sharding_propagation_to_parameters={true,...}): the program's
# interface, which the diff of its text explains.
_OPTIONS_READ_ELSEWHERE = ("executable_build_options.debug_options", "env_option_overrides",
                           "executable_build_options.allow_spmd_sharding_propagation_to_")


def _compile_options(text: str) -> dict[str, str]:
    """The fields of compile_options.textproto (CompileOptionsProto as protobuf
    text), by their dotted path, a repeated field's values joined; the flags
    left out. JAX hashes all of it (jax/_src/cache_key.py,
    _hash_serialized_compile_options): the optimization efforts, the device
    assignment, the number of replicas and partitions."""
    return {path: value for path, value in protobuf_fields(text).items()
            if not path.startswith(_OPTIONS_READ_ELSEWHERE)}


def protobuf_fields(text: str) -> dict[str, str]:
    """Every scalar field of a protobuf text message by its dotted path
    (``device_assignment.computation_devices.replica_device_ids``), the values of
    a repeated one joined by ", " in order."""
    values: dict[str, list[str]] = {}
    path: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line == "}":
            path = path[:-1]
        elif line.endswith("{"):
            path.append(line[:-1].rstrip().rstrip(":").rstrip())
        elif ":" in line:
            name, _, value = line.partition(":")
            values.setdefault(".".join([*path, name.strip()]), []).append(value.strip())
    return {key: ", ".join(found) for key, found in values.items()}


def debug_options(text: str) -> dict[str, str]:
    """The options of a ``.debug_options`` file (DebugOptions in protobuf text
    format), each with all it says: a repeated field (``xla_disable_hlo_passes``
    once per pass) its values in order, a message (a map entry of
    ``xla_backend_extra_options``) its lines, on one line. Keeping only one
    line per name would make runs with different pass lists look alike."""
    values: dict[str, list[str]] = {}
    key = None
    for line in text.splitlines():
        if key is not None and (line[:1].isspace() or line.strip() == "}"):
            values[key][-1] += " " + line.strip()  # inside the message opened above
            continue
        name, sep, value = line.partition(":")
        if not sep and line.rstrip().endswith("{"):  # "name {": a message without its colon
            name, value = line.rstrip()[:-1], "{"
        elif not sep:
            key = None
            continue
        key = name.strip()
        values.setdefault(key, []).append(value.strip())
    return {key: ", ".join(found) for key, found in values.items()}


def is_version(detail: str) -> bool:
    """Does an environment difference's detail say that the versions differ?
    Only its first words tell: a flag's value may hold the word too (a cache
    path ".../version3/..."), and a flag is no version."""
    return detail.startswith(VERSION)


@dataclass(frozen=True)
class Difference:
    """One environment difference: what, old, new, and a sentence about it."""

    what: str
    old: str
    new: str
    detail: str


def differences(a: Environment, b: Environment) -> list[Difference]:
    """The environment differences between two modules' dumps, most telling first.

    A generation trait is evidence only where both dumps show it: a dump
    without metadata (``--xla_dump_disable_metadata``) or without JAX
    op_names says nothing about its JAX version."""
    out = []
    old, new = dict(a.generation), dict(b.generation)
    traits = [k for k in old if k in new and old[k] != new[k]]
    if "source locations" in traits:
        said = "; ".join(f"{k}: {old[k]} -> {new[k]}" for k in traits)
        out.append(Difference("version", _era(a), _era(b),
                              f"{VERSION}: the two dumps were written by "
                              f"different generations of JAX/XLA ({said})"))
    if a.platform and b.platform and a.platform != b.platform:
        out.append(Difference("platform", a.platform, b.platform,
                              f"platform: compiled for {a.platform} vs {b.platform}"))
    if a.devices != b.devices:
        old, new = _device_words(a.devices), _device_words(b.devices)
        out.append(Difference("devices", old, new, f"device count: {old} vs {new}"))
    if a.compile_options is not None and b.compile_options is not None:
        for key in sorted(set(a.compile_options) | set(b.compile_options)):
            old, new = (a.compile_options.get(key, "(default)"),
                        b.compile_options.get(key, "(default)"))
            shown = key.removeprefix("executable_build_options.")
            if old != new and not (shown.startswith(_DEVICE_OPTIONS) and
                                   any(d.what == "devices" for d in out)):
                out.append(Difference("compile option", f"{shown}: {old}", f"{shown}: {new}",
                                      f"{COMPILE_OPTION} {shown}: {old} -> {new}"))
    if a.topology is not None and b.topology is not None and a.topology != b.topology \
            and not any(d.what == "devices" for d in out):
        old, new = _topology_words(a, b)
        out.append(Difference("topology", old, new, f"{_TOPOLOGY}{old} -> {new}"))
    if None not in (a.hlo_debug, b.hlo_debug) and a.hlo_debug != b.hlo_debug:
        old, new = (f"XLA_HLO_DEBUG={int(on)}" for on in (a.hlo_debug, b.hlo_debug))
        out.append(Difference("torch-xla debug", old, new,
                              f"{HLO_DEBUG} {old} -> {new} (op metadata in one run only)"))
    if a.has_flags and b.has_flags:
        for key in sorted(set(a.flags) | set(b.flags)):
            if key in CACHE_DERIVED or a.flags.get(key) == b.flags.get(key):
                continue
            old, new = a.flags.get(key, "(default)"), b.flags.get(key, "(default)")
            out.append(Difference("flag", f"{key}: {old}" if key in a.flags else old,
                                  f"{key}: {new}" if key in b.flags else new,
                                  f"XLA flag {key}: {old} -> {new}"))
    return out


_HOST_DEVICES = "xla_force_host_platform_device_count"
# How a difference of torch-xla's XLA_HLO_DEBUG starts (its graph hash holds it).
HLO_DEBUG = "torch-xla debug metadata:"
_FEATURE = re.compile(r"[+-][a-z0-9][\w.\-]*")


def changes_code(detail: str) -> bool:
    """Can an environment difference (by its detail) make XLA generate other
    code from the same optimized HLO? Versions, platforms, flags and CPU
    features can; how XLA dumps, the compile options (the device an
    executable is assigned to, an optimization effort whose passes would
    show in the optimized HLO), torch-xla's XLA_HLO_DEBUG (metadata) and the
    number of host devices cannot. JAX's
    key may still see them all."""
    return not (detail.startswith(("XLA flag xla_dump_", COMPILE_OPTION, HLO_DEBUG))
                or detail.startswith(_TOPOLOGY) and "host device" in detail)


_TOPOLOGY = "device topology: "
# Compile options that restate a device count the module header shows.
_DEVICE_OPTIONS = ("device_assignment.", "num_replicas", "num_partitions")


def _topology_words(a: Environment, b: Environment) -> tuple[str, str]:
    """What differs in two topologies (JAX hashes the devices' topology,
    which holds how many host devices there are and the CPU's features):
    the host device count where the flag that sets it differs, else the CPU
    features one has and the other lacks."""
    count_a, count_b = a.host_devices, b.host_devices
    if count_a != count_b:
        return f"{count_a} host device{'s' * (count_a != '1')}", \
            f"{count_b} host device{'s' * (count_b != '1')}"
    features_a, features_b = (set(_FEATURE.findall(e.topology or "")) for e in (a, b))
    if features_a != features_b:
        return (", ".join(sorted(features_a - features_b)[:4]) or "(fewer CPU features)",
                ", ".join(sorted(features_b - features_a)[:4]) or "(fewer CPU features)")
    return "one topology", "another"


def _device_words(devices: tuple[tuple[str, int], ...]) -> str:
    """``2 devices (num_partitions=2)``: the count a user set, then what the
    header says (each of replica_count and num_partitions is 1 when unprinted)."""
    count = 1
    for _key, value in devices:
        count *= value
    words = f"{count} device" + ("" if count == 1 else "s")
    header = ", ".join(f"{k}={v}" for k, v in devices)
    return f"{words} ({header})" if header else words


def cache_paths_differ(a: Environment, b: Environment) -> str | None:
    """A note when the runs' flags show different persistent-cache paths: JAX's
    cache key then differs for the same program."""
    for key in CACHE_DERIVED:
        old, new = a.flags.get(key), b.flags.get(key)
        if old and new and old != new:
            return (f"the runs used different persistent-cache paths ({key}: {old} vs {new}): "
                    "JAX's cache key includes it, so the same program gets a different key; "
                    "use one jax_compilation_cache_dir for both runs")
    return None


def _era(environment: Environment) -> str:
    """A person's name for a dump generation."""
    traits = dict(environment.generation)
    if traits.get("source locations") == "inline source_file":
        return "older JAX/XLA (0.4-style dump: inline source lines)"
    if traits.get("source locations") == "stack-frame tables":
        return "newer JAX/XLA (stack-frame tables)"
    return ", ".join(f"{k}: {v}" for k, v in environment.generation)
