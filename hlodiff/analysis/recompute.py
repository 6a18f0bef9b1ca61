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
from dataclasses import dataclass, replace

from ..model import Module, in_backward_pass
from .findings import Finding, moved_by

# What a finding of a change of checkpointing starts with (advice.py reads it).
RECOMPUTATION = "jax.checkpoint (remat)"

_RECOMPUTED = "rematted_computation/"
_OP_NAME = re.compile(r'op_name="([^"]*)"')
# What jax.checkpoint adds to names: its scope, and flax's prefix on the
# checkpointed module's class name (nn.remat(Block) is CheckpointBlock).
_CHECKPOINT_SCOPE = re.compile(r"(?:^|/)checkpoint(?=/)")
_FLAX_PREFIX = re.compile(r"\bCheckpoint(?=[A-Z])")
_TRANSFORMED = re.compile(r"(?:jvp|transpose|vmap)\((.+)\)")
# An op's parameters, which JAX before 0.5 wrote into op_names
# (``dot_general[dimension_numbers=(((1,), (0,)), ((), ())) ...]``).
_PARAMETERS = re.compile(r"\[[^\[\]]*\]")
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
                        "convert_element_type"})
# What only JAX's checkpoint makes, beside the recomputation: its barrier
# (JAX 0.10 names it after its remat primitive, JAX 0.4 writes the barrier's
# name under the checkpoint's scope). A scope the user named "checkpoint"
# (a TensorFlow name_scope) is none.
_BARRIER = re.compile(r"^remat2$|(?:^|/)checkpoint/optimization_barrier(?:\[|$)")
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
    recomputes (counted) and those its forward pass computes, each by its
    model path (``_model_path``)."""

    checkpointed: bool
    recomputed: Counter
    forward: frozenset[str]

    @property
    def model(self) -> frozenset[str]:
        """Every model op the program computes, in either pass, without what
        checkpointing itself adds or moves (``_MACHINERY``)."""
        return frozenset(path for path in self.forward | self.recomputed.keys()
                         if path.rsplit("/", 1)[-1] not in _MACHINERY)


def checkpointing(names: list[str]) -> Checkpointing:
    """The checkpointing of a program whose ops are named ``names``."""
    barrier = False
    counted: Counter = Counter()
    forward: set[str] = set()
    for name in names:
        if _RECOMPUTED in name:
            counted[_model_path(name)] += 1
            continue
        barrier = barrier or _BARRIER.search(name) is not None
        if not in_backward_pass(name):
            forward.add(_model_path(name))
    return Checkpointing(barrier or bool(counted), counted, frozenset(forward))


def change_of(a: Module | None, path_a: str | None, b: Module | None,
              path_b: str | None) -> tuple[str, frozenset[str]] | None:
    """What differs in the checkpointing of two runs' program (``summary``),
    with the model ops both compute and one of them recomputes; read from
    the files at ``path_a`` and ``path_b`` where there are such."""
    names_a, names_b = _op_names(a, path_a), _op_names(b, path_b)
    if not names_a and not names_b:
        return None
    names_a = names_a or _op_names(a, path_a, always=True)
    names_b = names_b or _op_names(b, path_b, always=True)
    a_, b_ = checkpointing(names_a), checkpointing(names_b)
    said = summary(a_, b_)
    recomputed = a_.recomputed.keys() | b_.recomputed.keys()
    return (said, frozenset(recomputed & a_.model & b_.model)) if said else None


def _op_names(module: Module | None, path: str | None, always: bool = False) -> list[str]:
    """Every op_name of the program, read from its file at ``path`` when
    there is one (its unchanged lines are never parsed); [] when the
    program checkpoints nothing (most do not: the text tells at once),
    unless ``always``."""
    try:
        with open(path, encoding="utf-8", errors="replace") as stream:
            text = stream.read()
    except (OSError, TypeError):  # no file: a capture, a text given directly
        if module is None:
            return []
        return [module.origin(i).op_name or "" for _, i in module.instructions()]
    marked = always or "checkpoint" in text or "remat2" in text
    return _OP_NAME.findall(text) if marked else []


def _model_path(name: str) -> str:
    """The op of the model an op_name stands for, however it is computed:
    what follows JAX's transformation scopes (``jit(step)/jvp(Net)/``,
    ``transpose(...)``), without the checkpoint's marks and the op's
    parameters. ``jit(step)/transpose(jvp(Net))/checkpoint/rematted_computation/
    CheckpointBlock_0/Dense_0/dot_general`` and ``jit(step)/jvp(Net)/Block_0/
    Dense_0/dot_general`` are both ``Block_0/Dense_0/dot_general``."""
    name = _PARAMETERS.sub("", name).replace(_RECOMPUTED, "")
    name = _FLAX_PREFIX.sub("", _CHECKPOINT_SCOPE.sub("", name))
    parts = name.split("/")
    scoped = [i for i, part in enumerate(parts) if "(" in part]
    path = "/".join(p for p in parts[scoped[-1] + 1 if scoped else 0:] if p)
    if path:
        return path
    # a call (jit(_bernoulli)) stands for itself, out of the transformations
    # applied to it (jvp(jit(_bernoulli)))
    call = parts[-1]
    while (unwrapped := _TRANSFORMED.fullmatch(call)) is not None:
        call = unwrapped.group(1)
    return call


def summary(a: Checkpointing, b: Checkpointing) -> str | None:
    """What differs in the two runs' checkpointing, in a user's words; None
    when nothing does, or when the model ops differ too: then a run computes
    an op the other does not compute at all (a layer added inside a
    checkpointed block), and that is the change to tell, with what it
    recomputes following from it."""
    more, fewer = b.recomputed - a.recomputed, a.recomputed - b.recomputed
    if a.checkpointed == b.checkpointed and not more and not fewer or a.model != b.model:
        return None
    if a.checkpointed != b.checkpointed:
        run, only = ("b", b) if b.checkpointed else ("a", a)
        said = f"{RECOMPUTATION} in run {run} only"
        return f"{said}: the backward pass recomputes {_ops(only.recomputed)}" \
            if only.recomputed else said
    said = [f"{_ops(more)} more" if more else "", f"{_ops(fewer)} fewer" if fewer else ""]
    return (f"{RECOMPUTATION} recomputes other ops (its policy?): run b recomputes "
            + " and ".join(s for s in said if s))


def _ops(counted: Counter) -> str:
    """``3 ops (dot_general)``: how many, and the commonest kinds."""
    total = sum(counted.values())
    kinds = Counter()
    for path, count in counted.items():
        kinds[path.rsplit("/", 1)[-1]] += count
    names = [kind for kind, _ in kinds.most_common(3)]
    more = ", …" if len(kinds) > 3 else ""
    return f"{total} op{'s' if total != 1 else ''} ({', '.join(names)}{more})"


def fold(findings: list[Finding], said: str, shared: frozenset[str]) -> list[Finding]:
    """One finding of the change of checkpointing ``said``, with the findings
    that follow from it under it: renamed scopes that gained or lost the
    checkpoint's marks, and changes whose every place is checkpointed or an
    op carrying values between the passes; ops added or removed also where
    they are model ops both runs compute and one recomputes (``shared``):
    computed in the other pass, or another number of times. A value the code
    wrote (a constant), and a change in the backward pass alone (a loss
    scaled by 0.5 shows only there), stay their own. Unchanged when nothing
    follows."""
    folded = [f for f in findings if _follows(f, shared)]
    if not folded:
        return findings
    # the place shown: a recomputed op's, else a checkpointed one's, with its
    # source line where one has it
    lead = max(folded, key=lambda f: (max(map(_rank, f.origins), default=0),
                                      f.kind != "metadata", f.count))
    origins = sorted(dict.fromkeys(o for f in [lead, *folded] for o in f.origins
                                   if _MARK.search(o.op_name or "")), key=_rank, reverse=True)
    stages = {f.stage for f in folded}
    home = Finding(
        kind="replaced", stage=stages.pop() if len(stages) == 1 else "both",
        old=None, new=None, count=sum(f.count for f in folded), affects=moved_by(folded),
        origins=tuple(origins[:50]) or lead.origins,
        where=lead.where, summary=said, program=lead.program,
        derived=tuple(replace(f, detail=f.summary or f.detail) for f in folded),
        optimized=sum(f.optimized for f in folded))
    return [home] + [f for f in findings if not any(f is g for g in folded)]


def _rank(origin) -> int:
    """How well ``origin`` shows the checkpoint: a recomputed op with a source
    line best, then a checkpointed op with one, then either without."""
    name = origin.op_name or ""
    marked = 2 if _RECOMPUTED in name else 1 if _MARK.search(name) else 0
    return 2 * marked + bool(origin.location) if marked else 0


def _follows(finding: Finding, shared: frozenset[str]) -> bool:
    if finding.kind not in _KINDS:
        return False
    names = [o.op_name or "" for o in finding.origins]
    if finding.kind == "metadata":  # also a loop's parameters: how many values it carries
        old, new = finding.old or "", finding.new or ""
        return bool(_MARK.search(old)) != bool(_MARK.search(new)) or _marked(finding) \
            or bool(names) and all(map(_carries, names))
    moved = finding.kind in _MOVED
    return bool(names) and all(
        _MARK.search(name) or _carries(name)
        or moved and _computed(_model_path(name), shared) for name in names)


def _carries(name: str) -> bool:
    """Is the op named ``name`` one that carries values between the passes?"""
    return _PARAMETERS.sub("", name).rsplit("/", 1)[-1] in _CARRIERS


def _computed(path: str, shared: frozenset[str]) -> bool:
    """Is ``path`` a model op of ``shared``? Also where XLA inlined the call
    computing it and prefixed the caller's op_name (an optimized program's
    ``while/body/closed_call/tanh`` is the model's ``tanh``)."""
    return bool(path) and (path in shared or any(path.endswith("/" + p) for p in shared))


def _marked(finding: Finding) -> bool:
    return any(_MARK.search(o.op_name or "") for o in finding.origins)
