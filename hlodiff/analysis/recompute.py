"""JAX's rematerialisation: what a program recomputes in its backward pass.

``jax.checkpoint`` (``jax.remat``, flax's ``nn.remat``, equinox's
``filter_checkpoint``) makes the backward pass recompute values of the
forward pass instead of keeping them; its ``policy=`` says which are kept.
Wrapping a block in it, or changing the policy, changes the program all over:
ops move between the forward and the backward pass, the loops and calls that
carry the kept values read more or fewer of them, and every op of the block
is renamed (JAX's name stack gains ``checkpoint``, flax's module
``Block_0`` becomes ``CheckpointBlock_0``). Found change by change, that read
as "replaced: 8 ops by 170 ops" above a dozen rows of renamed scopes, none of
which named the checkpoint.

JAX names what it recomputes: every op of the recomputation has
``rematted_computation`` in its op_name, after the ``checkpoint`` scope (and
the op keeping a saved value from being fused, ``remat2``, is named so too).
Two runs whose programs compute the same model ops, but recompute different
ones, differ by their checkpointing; that is one finding, and the changes
it brings follow from it. Where a run recomputes an op the other run does
not compute at all (a layer added inside a checkpointed block), the model
changed, and nothing is folded.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ..model import Module, Origin, in_backward_pass, is_library_file, without_parameters
from .findings import Finding, under_one_cause

# What a finding of a change of checkpointing starts with (advice.py reads it).
RECOMPUTATION = "jax.checkpoint (remat)"

_RECOMPUTED = "rematted_computation/"
_OP_NAME = re.compile(r'op_name="([^"]*)"')
# What jax.checkpoint adds to names: its scope, and flax's prefix on the
# checkpointed module's class name (nn.remat(Block) is CheckpointBlock).
_CHECKPOINT_SCOPE = re.compile(r"(?:^|/)checkpoint(?=/)")
_FLAX_PREFIX = re.compile(r"\bCheckpoint(?=[A-Z])")
_TRANSFORMED = re.compile(r"(?:jvp|transpose|vmap)\((.*)\)")
_CALL = re.compile(r"(?:jit|pjit)\((.*)\)")
# What a finding of ops added or removed lists (findings.py's _ops_text),
# and a scalar constant as it lists one (``constant(0.5)``).
_OPS_LISTED = re.compile(r"\d+ ops \((.*)\)")
_SCALAR = re.compile(r"\bconstant\(([^()]*)\)")
# Ops checkpointing adds or moves: the barrier keeping a saved value from being fused
# into its recomputation (named after JAX's remat primitive; JAX 0.4 named it
# optimization_barrier), and the identity rounding that marks a value a
# policy saves.
_MACHINERY = frozenset({"remat2", "optimization_barrier", "reduce_precision",
                        # and what stacks and slices the saved values of a
                        # loop's iterations (a scan's residuals: zeros of
                        # the stack's shape, filled one slice a step)
                        "broadcast_in_dim", "reshape", "squeeze", "expand_dims",
                        "concatenate", "dynamic_slice", "dynamic_update_slice", "copy",
                        "convert_element_type", "dynamic_index_in_dim",
                        "dynamic_update_index_in_dim"})
# Ops carrying a loop's or a call's values, named by no op_name: what a loop
# reading more or fewer saved values gains or loses with them.
_UNNAMED_PLUMBING = frozenset({"get-tuple-element", "tuple"})
# The op keeping a recomputation from being merged with the forward pass's
# (jax.checkpoint's prevent_cse=True): remat2, under JAX 0.4 an
# optimization_barrier in the checkpoint's scope. With the recomputation, what
# only JAX's checkpoint makes: a scope the user named "checkpoint" (a
# TensorFlow name_scope) is no checkpoint.
_BARRIER = re.compile(r"(?:^|/)(?:remat2|checkpoint/optimization_barrier)$")
# Marks of checkpointing in a finding's op_names or renamed scopes.
_MARK = re.compile(r"checkpoint|rematted_computation|remat2", re.IGNORECASE)
# Ops that carry values between the forward and the backward pass: what
# reads more or fewer of them when other values are kept.
_CARRIERS = frozenset({"while", "closed_call", "call", "cond", "remat2", "scan"})
# Kinds of change that move an op between the passes, or recompute it.
_MOVED = frozenset({"replaced", "op_added", "op_removed", "opcode", "op_moved"})
_KINDS = frozenset({"replaced", "op_added", "op_removed", "operands", "attribute", "shape",
                    "dtype", "opcode", "called_computation", "computation_added",
                    "computation_removed", "op_moved", "metadata"})


@dataclass(frozen=True)
class Checkpointing:
    """A program's checkpointing: whether it checkpoints (it recomputes, or
    keeps values behind the checkpoint's barrier), the model ops it
    recomputes and those its forward pass computes (counted), and those of
    its checkpointed blocks (``inside``), each by its model path
    (``_model_path``)."""

    recomputed: Counter
    forward: Counter
    inside: frozenset[str] = frozenset()
    barriers: int = 0  # optimization barriers keeping the recomputation apart

    @property
    def checkpointed(self) -> bool:
        return bool(self.recomputed) or self.barriers > 0

    @property
    def model(self) -> frozenset[str]:
        """Every model op the program computes, in either pass, without what
        checkpointing itself adds or moves (``_MACHINERY``)."""
        return frozenset(path for path in self.forward.keys() | self.recomputed.keys()
                         if not _machinery(path))


def checkpointing(names: list[str]) -> Checkpointing:
    """The checkpointing of a program whose ops are named ``names``."""
    counted: Counter = Counter()
    forward: Counter = Counter()
    inside: set[str] = set()
    barriers = 0
    for name in names:
        barriers += bool(_BARRIER.search(without_parameters(name)))
        if _RECOMPUTED in name:
            counted[_model_path(name)] += 1
            continue
        if _MARK.search(name):
            inside.add(_model_path(name))
        if not in_backward_pass(name):
            forward[_model_path(name)] += 1
    return Checkpointing(counted, forward, frozenset(inside), barriers)


def change_of(a: Module | None, text_a: str | None, b: Module | None,
              text_b: str | None) -> tuple[str, frozenset[str], frozenset[str]] | None:
    """What differs in the checkpointing of two runs' program (``summary``),
    with the model ops both compute in a checkpointed block, and those only
    one of them computes; read from the texts of the programs' files where
    there are such (None: read from the module)."""
    names_a, names_b = _op_names(a, text_a), _op_names(b, text_b)
    if not names_a and not names_b:
        return None
    names_a = names_a or _op_names(a, text_a, always=True)
    names_b = names_b or _op_names(b, text_b, always=True)
    a_, b_ = checkpointing(names_a), checkpointing(names_b)
    said = summary(a_, b_)
    return (said, _blocks(a_, b_) & a_.model & b_.model, a_.model ^ b_.model) if said \
        else None


def _blocks(a: Checkpointing, b: Checkpointing) -> frozenset[str]:
    """The model ops of either run's checkpointed blocks."""
    return frozenset(a.inside | b.inside | a.recomputed.keys() | b.recomputed.keys())


def _op_names(module: Module | None, text: str | None, always: bool = False) -> list[str]:
    """Every op_name of the program, read from its file's ``text`` where
    there is one (its unchanged lines are never parsed); [] when the
    program checkpoints nothing (most do not: the text tells at once),
    unless ``always``."""
    if text is None:  # no file: a capture, a text given directly
        if module is None:
            return []
        return [module.origin(i).op_name or "" for _, i in module.instructions()]
    marked = always or "checkpoint" in text or "remat2" in text
    return _OP_NAME.findall(text) if marked else []


def _model_path(name: str) -> str:
    """The op of the model an op_name stands for, however it is computed:
    the scope JAX's transformations were applied to (``Net`` of
    ``jit(step)/jvp(Net)/``) and what follows them, without the
    checkpoint's marks and the op's parameters.
    ``jit(step)/transpose(jvp(Net))/checkpoint/rematted_computation/
    CheckpointBlock_0/Dense_0/dot_general`` and ``jit(step)/jvp(Net)/Block_0/
    Dense_0/dot_general`` are both ``Net/Block_0/Dense_0/dot_general``."""
    name = without_parameters(name).replace(_RECOMPUTED, "")
    name = _FLAX_PREFIX.sub("", _CHECKPOINT_SCOPE.sub("", name))
    parts = name.split("/")
    scoped = [i for i, part in enumerate(parts) if "(" in part]
    first = scoped[-1] + 1 if scoped else 0
    # The scope a transformation was applied to is in its parentheses
    # (equinox's jvp(vmap(eqx.nn.Linear))/dot_general), and after them where
    # the same code runs inside jax.checkpoint (transpose(jvp(vmap(jvp(vmap()))))/
    # checkpoint/rematted_computation/eqx.nn.Linear/dot_general): it is kept
    # either way. A call (jit(_bernoulli)) is not a scope: left out.
    scope = _unwrapped(parts[scoped[-1]]) if scoped else ""
    path = "/".join(p for p in ([scope] if "(" not in scope else []) + parts[first:] if p)
    if any(parts[first:]):
        return path
    # a call (jit(_bernoulli)) stands for itself, out of the transformations
    # applied to it (jvp(jit(_bernoulli)))
    return _unwrapped(parts[-1])


def _unwrapped(part: str, transformed: re.Pattern = _TRANSFORMED) -> str:
    """What JAX's transformations (``jvp(vmap(eqx.nn.Linear))``) were applied
    to: a scope's name, a call (``jit(_bernoulli)``), or nothing."""
    while (inner := transformed.fullmatch(part)) is not None:
        part = inner.group(1)
    return part


def summary(a: Checkpointing, b: Checkpointing) -> str | None:
    """What differs in the two runs' checkpointing, in a user's words; None
    when nothing does. A run that checkpoints where the other checkpoints
    nothing is told whatever else changed (what else changed stays its own
    finding: ``fold`` takes only what both runs compute). Runs that both
    checkpoint but recompute other ops differ by their policy only when
    they compute the same model ops, as many times in their forward
    pass: else a run computes an op the other does not (a layer added
    inside a checkpointed block, or one more multiply in a scope that had
    one), and that is the change to tell, with what it recomputes following
    from it."""
    more, fewer = b.recomputed - a.recomputed, a.recomputed - b.recomputed
    if a.checkpointed != b.checkpointed:
        run, only = ("b", b) if b.checkpointed else ("a", a)
        said = f"{RECOMPUTATION} in run {run} only"
        return f"{said}: the backward pass recomputes {_ops(only.recomputed)}" \
            if only.recomputed else said
    if not more and not fewer and a.checkpointed and bool(a.barriers) != bool(b.barriers):
        run = "b" if a.barriers else "a"
        return (f"{RECOMPUTATION} with another prevent_cse: run {run} recomputes without the "
                "optimization barrier (prevent_cse=False)")
    blocks = _blocks(a, b)
    if not more and not fewer or a.model != b.model \
            or _block_forward(a, blocks) != _block_forward(b, blocks):
        return None
    said = [f"{_ops(more)} more" if more else "", f"{_ops(fewer)} fewer" if fewer else ""]
    return (f"{RECOMPUTATION} recomputes other ops (its policy?): run b recomputes "
            + " and ".join(s for s in said if s))


def _block_forward(run: Checkpointing, blocks: frozenset[str]) -> Counter:
    """How many times the forward pass computes each model op of the
    checkpointed blocks (``blocks``): the same under any policy, which
    moves only what the backward pass recomputes."""
    return Counter({path: count for path, count in run.forward.items()
                    if path in blocks and not _machinery(path) and not _carries(path)})


def _ops(counted: Counter) -> str:
    """``3 ops (dot_general)``: how many, and the commonest kinds."""
    total = sum(counted.values())
    kinds = Counter()
    for path, count in counted.items():
        kinds[path.rsplit("/", 1)[-1]] += count
    names = [kind for kind, _ in kinds.most_common(3)]
    more = ", …" if len(kinds) > 3 else ""
    return f"{total} op{'s' if total != 1 else ''} ({', '.join(names)}{more})"


def fold(findings: list[Finding], said: str, shared: frozenset[str],
         own: frozenset[str] = frozenset()) -> list[Finding]:
    """One finding of the change of checkpointing ``said``, with the findings
    that follow from it under it: renamed scopes that gained or lost the
    checkpoint's marks, and changes whose every place is checkpointed or an
    op carrying values between the passes; ops added or removed also where
    they are model ops both runs compute in a checkpointed block
    (``shared``): computed in the other pass, or another number of times.
    A model op only one run computes (``own``: a layer added beside the
    checkpoint), a value the code wrote (a constant), and a change in the
    backward pass alone (a loss scaled by 0.5 shows only there), stay their
    own. Unchanged when nothing follows."""
    folded = [f for f in findings if _follows(f, shared, own)]
    if not folded:
        return findings
    # the place shown: a checkpointed op's, in the user's code before a
    # library's (flax's scan), a recomputed op's first
    lead = max(folded, key=lambda f: (max(map(_rank, f.origins), default=()),
                                      f.kind != "metadata", f.count))
    origins = sorted(dict.fromkeys(o for f in [lead, *folded] for o in f.origins
                                   if _MARK.search(o.op_name or "")), key=_rank, reverse=True)
    return under_one_cause(findings, folded, said, lead, tuple(origins[:50]) or lead.origins)


def _rank(origin: Origin) -> tuple[bool, bool, bool, bool]:
    """How well ``origin`` shows the checkpoint: a checkpointed op's, at a
    line of the user's code, recomputed, with a source line at all."""
    name = origin.op_name or ""
    return (bool(_MARK.search(name)),
            bool(origin.source_file) and not is_library_file(origin.source_file),
            _RECOMPUTED in name, bool(origin.location))


def _follows(finding: Finding, shared: frozenset[str], own: frozenset[str]) -> bool:
    if finding.kind not in _KINDS:
        return False
    names = [o.op_name or "" for o in finding.origins]
    if any(_only_one_computes(_model_path(name), shared, own) for name in names):
        return False
    if finding.kind in _MOVED and not any(names):
        # no op_name to go by: the get-tuple-elements of a loop carrying
        # more or fewer saved values
        return _opcodes(finding.old) | _opcodes(finding.new) <= _UNNAMED_PLUMBING
    if finding.kind == "metadata":  # also a loop's parameters: how many values it carries
        old, new = finding.old or "", finding.new or ""
        return bool(_MARK.search(old)) != bool(_MARK.search(new)) or _marked(finding) \
            or bool(names) and all(map(_carries, names))
    # ops moved between the passes are told by what both runs compute (a
    # finding holding a model op only one run computes stayed apart above,
    # and the rest still moved where the model changed beside the
    # checkpoint: a relu on a scan's output); a value the code wrote comes
    # with ops of its own (the loss halved: "constant(0.5), broadcast" in the
    # backward pass alone): those stay apart
    moved = finding.kind in _MOVED and not _writes_a_value(finding)
    return bool(names) and all(
        _MARK.search(name) or _carries(name)
        or moved and (_machinery(_model_path(name)) or _computed(_model_path(name), shared))
        for name in names)


def is_checkpointing(finding: Finding) -> bool:
    """Is ``finding`` one this module made?"""
    return finding.kind == "replaced" and finding.summary.startswith(RECOMPUTATION)


def carries_values(finding: Finding) -> bool:
    """Do the ops of ``finding`` only stack, slice and carry values (a
    scan's kept values: ``_MACHINERY``, the loops and calls that carry them,
    their unnamed tuples), without writing a value of their own?"""
    if _writes_a_value(finding):
        return False
    names = [o.op_name or "" for o in finding.origins]
    if not any(names):
        return finding.kind in _MOVED and \
            _opcodes(finding.old) | _opcodes(finding.new) <= _UNNAMED_PLUMBING
    return all(not name or _carries(name) or _machinery(_model_path(name)) for name in names)


def _writes_a_value(finding: Finding) -> bool:
    """Do the ops the finding adds or removes hold a scalar constant other
    than 0 and 1 (false and true), the values differentiation and plumbing
    bring (a stack of a relu's masks starts as false)?"""
    for side in (finding.old, finding.new):
        for value in _SCALAR.findall(side or ""):
            try:
                if value not in ("false", "true") and float(value) not in (0.0, 1.0):
                    return True
            except ValueError:
                return True
    return False


def _machinery(path: str) -> bool:
    """Is the op at model path ``path`` one that checkpointing adds or moves
    (``_MACHINERY``), or a call of one (scan's ``jit(dynamic_update_index_in_dim)``)?"""
    return _unwrapped(path.rsplit("/", 1)[-1], _CALL) in _MACHINERY


def _opcodes(ops: str | None) -> set[str]:
    """The opcodes a finding's side lists: ``get-tuple-element f32[8]`` or
    ``14 ops (get-tuple-element, tuple)``; {"…"} where the list is cut."""
    if not ops:
        return set()
    listed = _OPS_LISTED.fullmatch(ops)
    if listed is None:
        return {ops.split(" ", 1)[0]}
    return {op if op != "..." else "…" for op in listed.group(1).split(", ")}


def _carries(name: str) -> bool:
    """Is the op named ``name`` one that carries values between the passes?"""
    return without_parameters(name).rsplit("/", 1)[-1] in _CARRIERS


def _computed(path: str, shared: frozenset[str]) -> bool:
    """Is ``path`` a model op of ``shared``? Also where XLA inlined the call
    computing it and prefixed the caller's op_name (an optimized program's
    ``while/body/closed_call/tanh`` is the model's ``tanh``)."""
    return bool(path) and (path in shared or any(path.endswith("/" + p) for p in shared))


def _only_one_computes(path: str, shared: frozenset[str], own: frozenset[str]) -> bool:
    """Is ``path`` a model op only one run computes (``own``), and not one
    both compute (``shared``)? An op inside a call stands for itself
    (``_model_path``): the ``max`` of a relu added beside a checkpoint
    would otherwise claim a LayerNorm's ``layers/LayerNorm_0/max`` that both
    runs compute, and keep what the checkpoint moved of that LayerNorm out
    of its finding (corpus/jax_scan_remat_head_relu)."""
    return _computed(path, own) and not _computed(path, shared)


def _marked(finding: Finding) -> bool:
    return any(_MARK.search(o.op_name or "") for o in finding.origins)
