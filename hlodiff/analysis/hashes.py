"""Which cache keys and fingerprints a change moves: the ones a user can observe.

Each rule says what a framework hashes, over which stage of the program,
where a user sees it, and where the rule comes from. The rules were checked
against real runs: every corpus case carries, in its truth.json, what JAX
0.10.2, TensorFlow 2.21 and torch-xla 2.9 printed and keyed for both runs
(corpus/gen/HASHES.md and HASHES_tf_torch.md record the experiments), and
tests/test_hashes.py compares these rules with them.

* ``jax_cache_key``: JAX's persistent compilation cache key, the name of
  the file JAX writes in ``jax_compilation_cache_dir``. It hashes the
  compile input (the StableHLO JAX hands XLA, serialized without debug
  information), the module name, the compile options (XLA flags among them,
  also the dump flags JAX does not clear, and the cache directory) and the
  versions. Op_names and source lines do not count; constants count with
  all their values, also those the HLO text prints as ``{...}``. The
  StableHLO holds what the HLO text never prints: the results' names
  (``jax.result_info``, the pytree paths of the outputs) and converts XLA
  folds away (a weak-typed Python float argument); both move the key between
  two byte-identical HLO texts, in jax 0.10.2 and 0.4.30 alike (a helper
  session's pairs; flax's nn.remat renames the optimizer state's results,
  corpus/jax_remat_added's jit_init_fn). Only the dump's ``module.mlir``
  shows them: where a run has none for the program, the HLO cannot tell the
  key unchanged.
* ``xla_executable_fingerprint``: the line ``Fingerprint for executable
  jit_NAME: N`` that XLA prints with ``TF_CPP_VMODULE=py_executable=1``. On
  CPU it is a hash of the optimized module's text exactly as the
  ``*cpu_after_optimizations.txt`` dump holds it (PjRtCpuExecutable hashes
  ``HloModule::ToString()``; recomputed from the dumps for every corpus
  case): metadata is in it (a renamed named_scope, even a moved source line,
  moves it), and so are names and backend_config; large constants are
  printed ``{...}``, so a change of their values does not move it although
  the executable differs. A program without parameters prints it empty.
* ``tf_persistent_cache_key``: the file TensorFlow's persistent XLA cache
  writes (``xla_compile_cache__<signature hash>__<HLO hash>__...pb``). The
  HLO part hashes the module proto with its metadata: a renamed name_scope
  moves it. The signature part holds the function's trace counter, which
  moves whenever another function was traced first.
* ``tf_compile_signature``: TF's in-process compilation cache key, printed
  with ``TF_CPP_VMODULE=device_compiler=3``: the function name with its trace
  counter and each argument's dtype and shape, and the value of an argument
  it must know when compiling (a tensor used as a shape): an integer
  constant that changed may be one, which the dump does not tell; other
  constants and name scopes do not count.
* ``torch_xla_graph_hash``: the ``Graph Hash`` torch-xla prints with
  ``PT_XLA_DEBUG_LEVEL=2`` (also the persistent cache's file name): the IR's
  ops, shapes, the special scalars it keeps as constants and the order of
  the graph's inputs; source lines and the values of device data do not
  count.
* ``torch_xla_computation_hash``: the ``Computation hash`` torch-xla prints
  after compiling (``PT_XLA_DEBUG_LEVEL=2``): a hash of the module proto it
  built, everything in it, metadata included, and the ids XLA's builder gives
  every instruction from one counter for the whole process. The text does not
  print those ids, but the dump's module number shows when other programs were
  built before this one: then they moved. Nor does it print the Python call
  stack the proto holds: where nothing shows it moved, it cannot be told
  unchanged. No cache looks programs up by it.
* ``graphcore_hlo_hash``: Graphcore's ``HloHash`` (TensorFlow IPU backend),
  printed as ``(Hash: 0x...)`` in its compile log. Names, ids and metadata
  are reset before hashing; literals, shapes, backend_config, sharding and
  instruction order count. It cannot run here: the rule is read from the
  source, not observed.

A rule answers True (moves it), False (does not) or None (the dump cannot
tell, e.g. both sides printed a constant as ``{...}`` and nothing showed
the values).
"""

from __future__ import annotations

from dataclasses import dataclass

from .diff import Change

COMPILE_INPUT = "compile_input"  # the module before optimization, as the frontend built it
EXECUTABLE = "executable"  # the module after optimization: what runs

# What differs outside the HLO text: the environment (flags, versions), the
# program's name, the module's number in the dump (programs built before it).
OUTSIDE_KINDS = frozenset({"environment", "program_name", "module_number", "stablehlo"})
# Kinds of change that leave the compiled program as it is (names, metadata, numbering).
NEVER_COMPILED = frozenset({"metadata", "module_added", "module_removed", "module_number",
                            "program_name", "stablehlo"})
# What the entry's interface is made of: its parameters' number, order, shapes, dtypes.
_INTERFACE = frozenset({"parameter", "parameter_order", "constant_to_parameter",
                        "parameter_to_constant"})


@dataclass(frozen=True)
class HashRule:
    name: str
    title: str
    short: str  # the name in a narrow column
    stage: str  # COMPILE_INPUT or EXECUTABLE: the program it hashes
    frameworks: tuple[str | None, ...]  # whose dumps it applies to (None: framework unknown)
    observed: str  # where a user sees it
    source: str  # where the rule comes from
    observable_here: bool = True  # checked against real runs on this project's corpus
    cache_key: bool = True  # a cache looks compiled programs up by it: it moving recompiles
    metadata: bool = False  # op_names and source lines are in what it hashes
    # hashes the serialized module proto: its metadata, and the ids the builder
    # numbers across the whole process, which the text does not print
    hashes_proto: bool = False
    # hashes what no dump prints (torch-xla's proto holds the Python call
    # stack): where nothing shows it moved, it is "cannot tell", not unchanged
    unseen_input: bool = False
    # the dump's file that holds what it hashes beyond the HLO text: where a
    # run lacks it, nothing showing it moved is "cannot tell", not unchanged
    sidecar: str = ""

    @property
    def label(self) -> str:
        """The title people read, saying when the rule was never checked on a run."""
        return self.title if self.observable_here else f"{self.title} (from its source, unverified)"


HASHES = (
    HashRule("jax_cache_key", "JAX persistent cache key", "JAX", COMPILE_INPUT, ("jax", None),
             "the file names in jax_compilation_cache_dir; 'PERSISTENT COMPILATION CACHE "
             "MISS ... with key' in the log (JAX_LOGGING_LEVEL=INFO)",
             "jax/_src/cache_key.py get(): StableHLO bytecode without debug info, module name, "
             "compile options, jax/jaxlib/backend versions; corpus/gen/HASHES.md",
             sidecar="module.mlir"),
    HashRule("xla_executable_fingerprint", "XLA executable fingerprint", "XLA", EXECUTABLE,
             ("jax", None),
             "'Fingerprint for executable jit_NAME: N' with TF_CPP_VMODULE=py_executable=1",
             "xla/pjrt/cpu/cpu_client.cc PjRtCpuExecutable: Fingerprint128 of "
             "HloModule::ToString() of the optimized module (metadata in, large constants "
             "as {...}); corpus/gen/HASHES.md", metadata=True),
    HashRule("tf_persistent_cache_key", "TF persistent XLA cache key", "TF", COMPILE_INPUT,
             ("tensorflow",),
             "the file names in TF_XLA_FLAGS=--tf_xla_persistent_cache_directory",
             "tensorflow/compiler/jit device_compilation_cache: the signature (function name "
             "with trace counter, argument types) and the HLO module proto, metadata and "
             "ids in; corpus/gen/HASHES_tf_torch.md", metadata=True, hashes_proto=True),
    HashRule("tf_compile_signature", "TF compile signature", "TF signature", COMPILE_INPUT,
             ("tensorflow",),
             "'Instantly compiling for signature: ...' with TF_CPP_VMODULE=device_compiler=3",
             "tensorflow/compiler/jit device_compilation_cache: function name with trace "
             "counter, each argument's dtype and shape; corpus/gen/HASHES_tf_torch.md"),
    HashRule("torch_xla_graph_hash", "torch-xla graph hash", "torch-xla", COMPILE_INPUT,
             ("pytorch",),
             "'Graph Hash: ...' with PT_XLA_DEBUG_LEVEL=2; the persistent cache's file names",
             "torch_xla graph hashing of the IR: ops, shapes, special scalars, input order "
             "(not source lines, not device data); corpus/gen/HASHES_tf_torch.md"),
    HashRule("torch_xla_computation_hash", "torch-xla computation hash", "torch-xla computation",
             COMPILE_INPUT, ("pytorch",), "'Computation hash: ...' with PT_XLA_DEBUG_LEVEL=2",
             "torch_xla debug_util post-compilation analysis: the serialized module proto, "
             "metadata and ids in; corpus/gen/HASHES_tf_torch.md",
             cache_key=False, metadata=True, hashes_proto=True, unseen_input=True),
    HashRule("graphcore_hlo_hash", "Graphcore HloHash", "Graphcore", COMPILE_INPUT,
             ("tensorflow", None),
             "'Begin XLA compilation: NAME  (Hash: 0x...)' in a Graphcore TensorFlow log",
             "tensorflow/compiler/plugin/poplar/driver/tools/hlo_hash.cc: module proto with "
             "names, ids and metadata reset (not observable here: needs IPU hardware)",
             observable_here=False),
)
_BY_NAME = {rule.name: rule for rule in HASHES}


def applicable(framework: str | None) -> tuple[HashRule, ...]:
    """The rules for dumps of ``framework`` (``jax``, ``tensorflow``, ``pytorch``, None)."""
    return tuple(rule for rule in HASHES if framework in rule.frameworks)


def compiled(change: Change) -> bool:
    """Does the change touch what is compiled (not only names and metadata)?"""
    if change.kind in NEVER_COMPILED:
        return False
    if change.kind == "elided_constant" and change.values_differ is False:
        return False
    return True


def moves(rule: str, change: Change) -> bool | None:
    """Does ``change``, seen in the stage the rule hashes, move the hash ``rule``?"""
    kind, proto = change.kind, _BY_NAME[rule].hashes_proto
    if kind in ("module_added", "module_removed"):
        return False
    if kind == "stablehlo":  # what JAX serializes, and XLA never sees
        return rule == "jax_cache_key"
    if kind == "module_number":
        return proto  # the proto's ids count on from every program built before it
    if rule == "tf_compile_signature":
        if kind == "constant" and (change.element_type or "")[:1] in ("s", "u"):
            # an integer may be a tensor argument TF must know when compiling
            # (one used as a shape): the signature holds its value, and the
            # dump does not say which it was (a helper session's tf.zeros([n, 3])
            # printed "int32 shape: [] values: 3" and "values: 4")
            return None
        return kind in _INTERFACE or kind == "program_name" or \
            kind == "dtype" and change.opcode == "parameter"
    if rule == "xla_executable_fingerprint":
        if kind == "elided_constant":
            # {...} on both sides, whatever the values; printed in one run only
            # (--xla_dump_large_constants), the texts differ, the values alike
            return change.old != change.new
        if kind == "environment":
            return False  # it hashes the optimized text; what flags change shows there
        return True  # metadata, names and every printed value are in the text it hashes
    if kind == "metadata":
        return _BY_NAME[rule].metadata
    if kind == "elided_constant":
        return change.values_differ
    if kind == "program_name":
        return rule == "jax_cache_key" or proto
    if kind == "environment":
        # JAX's key holds the compile options and versions, torch-xla's graph hash
        # the versions, devices and XLA flags but those that only dump; the module
        # protos hold none of it (TF: XLA_FLAGS are in neither number)
        if rule == "torch_xla_graph_hash":
            return not change.detail.startswith("XLA flag xla_dump_")
        return rule == "jax_cache_key"
    return True


def affects(change: Change) -> tuple[str, ...]:
    """The hashes ``change`` certainly moves (in the stage it was seen at)."""
    return tuple(rule.name for rule in HASHES if moves(rule.name, change))


def verdicts(before: list[Change] | None, after: list[Change] | None,
             outside: list[Change] = (), framework: str | None = None,
             same_sidecars: frozenset[str] = frozenset()) -> dict[str, bool | None]:
    """For each hash of ``framework``: changed (True), unchanged (False) or
    cannot tell (None).

    A rule over the compile input reads the before-optimization changes and
    the changes outside the HLO (flags, versions and the program's name are
    in what it hashes); one over the executable reads the after-optimization
    changes and the program's name. Where the stage a rule needs was not
    dumped, the other stage decides what it can: an optimized program that
    differs came from a compile input that differs; a compile input without
    any difference gives the same executable. A rule whose ``sidecar`` both
    runs hold alike (``same_sidecars``) reads that file in place of its stage:
    only what lies outside the HLO can then move it.
    """
    out: dict[str, bool | None] = {}
    for rule in applicable(framework):
        own = before if rule.stage == COMPILE_INPUT else after
        if own is None and rule.sidecar and rule.sidecar in same_sidecars:
            own = []
        other = after if rule.stage == COMPILE_INPUT else before
        extra = list(outside) if rule.stage == COMPILE_INPUT else \
            [c for c in outside if c.kind in ("program_name", "module_number")]
        if own is not None:
            answers = [moves(rule.name, c) for c in list(own) + extra]
            out[rule.name] = True if True in answers else (None if None in answers else False)
            if out[rule.name] is False and rule.unseen_input:
                # a call wrapped in a lambda on the same line, or a scheduler's
                # step, moved torch-xla's between two identical dumps
                out[rule.name] = None
        elif other is None:
            out[rule.name] = None
        elif rule.stage == COMPILE_INPUT:  # only the optimized program was dumped
            out[rule.name] = True if any(_certain(c) and (compiled(c) or moves(rule.name, c))
                                         for c in other + extra) else None
        else:  # only the compile input: no difference at all means the same program
            out[rule.name] = False if not other and not outside else None
    return out


def unseen_without(hashes: dict[str, bool | None], missing: frozenset[str]) -> tuple[str, ...]:
    """The hashes of ``hashes`` told unchanged that hash a file of the dump
    (a rule's ``sidecar``, ``module.mlir``) which a run lacks (``missing``):
    without it they cannot be told unchanged (renamed results moved JAX's
    key between two identical HLO texts)."""
    return tuple(name for name, value in hashes.items()
                 if value is False and rule(name).sidecar and rule(name).sidecar in missing)


def _certain(change: Change) -> bool:
    """Is the change known to be one (not a constant nobody printed)?"""
    return not (change.kind == "elided_constant" and change.values_differ is None)


def hashes_proto(framework: str | None) -> bool:
    """Does a hash of ``framework``'s dumps cover the ids the module's builder
    numbered across the process (so that programs built before this one move it)?"""
    return any(rule.hashes_proto for rule in applicable(framework))


def rule(name: str) -> HashRule:
    return _BY_NAME[name]
