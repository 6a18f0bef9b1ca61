"""Which cache keys a change moves.

Three executable caches key on a hash of the program; each ignores
different things. The rules below are read from their sources:

* ``xla_fingerprint``: XLA's module fingerprint (``HloModule::GetFingerprint128``)
  hashes the module printed with ``HloPrintOptions::Fingerprint()``: no
  metadata, no instruction names, no backend_config, and constants printed
  "essential only" (``HloConstantInstruction::PrintOperandsWithCanonicalNameMap``):
  a constant that is all 0 prints ``0``, all 1 prints ``1``, an integer
  constant of at most 500,000 elements prints its values, and every other
  constant (any float, even a scalar learning rate) prints ``{...}``.
  So a float constant changing from 0.01 to 0.02 does not move it. XLA
  flags (the ``.debug_options`` sidecar) are not part of the module.
* ``jax_cache_key``: JAX's persistent compilation cache key
  (``jax/_src/cache_key.py``) hashes the StableHLO module serialized without
  debug information, plus compile options (XLA flags among them) and
  versions. Every constant and shape counts; op_name and source locations
  do not.
* ``graphcore_hlo_hash``: Graphcore's ``HloHash`` (TensorFlow IPU backend)
  resets names, ids and metadata and hashes the rest of the module proto:
  literals, shapes, backend_config, sharding and instruction order count.

A rule answers True (moves it), False (does not) or None (the dump cannot
tell, e.g. both sides printed a constant as ``{...}``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .diff import Change

_INTEGER_TYPES = frozenset({"s1", "s2", "s4", "s8", "s16", "s32", "s64",
                            "u1", "u2", "u4", "u8", "u16", "u32", "u64"})
_ESSENTIAL_INTEGER_LIMIT = 500_000
_NEVER_COMPILED = frozenset({"metadata", "module_added", "module_removed"})


@dataclass(frozen=True)
class HashRule:
    name: str
    title: str
    source: str


HASHES = (
    HashRule("xla_fingerprint", "XLA module fingerprint",
             "xla/hlo/ir/hlo_module.cc GetFingerprint128 with HloPrintOptions::Fingerprint(); "
             "constants via HloConstantInstruction::PrintOperandsWithCanonicalNameMap"),
    HashRule("jax_cache_key", "JAX persistent cache key",
             "jax/_src/cache_key.py: StableHLO bytecode without debug info, compile options, versions"),
    HashRule("graphcore_hlo_hash", "Graphcore HloHash",
             "tensorflow/compiler/plugin/poplar/driver/tools/hlo_hash.cc: module proto with "
             "names, ids and metadata reset"),
)


def moves(rule: str, change: Change) -> bool | None:
    """Does ``change`` move the hash called ``rule``?"""
    kind = change.kind
    if kind in _NEVER_COMPILED:
        return False
    if kind == "elided_constant":
        if change.values_differ is None:
            return None
        if not change.values_differ:
            return False
        kind = "constant"  # values known from elsewhere: the constant rules apply
    if kind == "attribute" and change.detail.startswith("debug_options"):
        # XLA flags: part of JAX's key (compile options), not of the module
        return rule == "jax_cache_key"
    if rule == "xla_fingerprint":
        if kind == "attribute" and change.detail == "backend_config":
            return False
        if kind == "constant":
            return _fingerprint_sees_constant(change)
    return True


def _fingerprint_sees_constant(change: Change) -> bool:
    old_essential, new_essential = change.all_zero_or_one
    if old_essential or new_essential:
        return True  # "0" or "1" on one side, something else on the other
    if change.element_type in _INTEGER_TYPES:
        size = max(len((change.old or "").split(",")), len((change.new or "").split(",")))
        return size <= _ESSENTIAL_INTEGER_LIMIT
    return False


def affects(change: Change) -> tuple[str, ...]:
    """The hashes ``change`` certainly moves."""
    return tuple(rule.name for rule in HASHES if moves(rule.name, change))


def verdicts(changes: list[Change]) -> dict[str, bool | None]:
    """For each hash: changed (True), unchanged (False) or cannot tell (None)."""
    out: dict[str, bool | None] = {}
    for rule in HASHES:
        answers = [moves(rule.name, c) for c in changes]
        out[rule.name] = True if True in answers else (None if None in answers else False)
    return out
