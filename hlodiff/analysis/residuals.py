"""What a loop keeps for the backward pass, because a model change in its step needs it.

An op added to the step of ``jax.lax.scan`` (flax's ``nn.scan``) whose
gradient needs a value of the forward pass (a relu's mask, a multiply's
other factor) makes JAX keep that value at every step: the forward loop
fills a stack of them (zeros of the stack's shape, then one slice a step:
``broadcast_in_dim`` and ``jit(dynamic_update_index_in_dim)`` at the scan's
line), both loops carry one value more (their tuples, parameters and
get-tuple-elements), and the backward loop reads a slice a step
(``jit(dynamic_index_in_dim)``). Found change by change, the relu read as
its own finding with three more beside it: "added: 8 ops (call,
constant(false), broadcast, get-tuple-element)" at the scan's line, with
advice about Python branches, and two get-tuple-elements of a pred stack
(corpus/jax_scan_body_relu). Removing such an op drops the same.

So where the changes of a stage are one model change inside a loop (ops
added or removed in what a loop's step computes) and changes that only
stack, slice and carry values, those follow from the model change. With
two model changes inside loops there is no telling which needs what:
nothing is folded. A change whose ops compute, or hold a value the code
wrote, is never plumbing.
"""

from __future__ import annotations

from ..model import Module, Origin
from . import recompute, unroll
from .findings import Finding, Where, taken_under

# The kinds of finding a model change inside a loop is told by.
_MODEL = frozenset({"op_added", "op_removed", "replaced"})
# The kinds of finding the loops' plumbing is told by.
_PLUMBING = frozenset({"op_added", "op_removed", "replaced", "operands", "dtype", "attribute"})


def fold(findings: list[Finding], a: Module | None, b: Module | None) -> list[Finding]:
    """``findings`` with the loops' plumbing under the one model change made
    inside a loop, when there is exactly one; unchanged otherwise."""
    carrying = [f for f in findings if f.kind in _PLUMBING and recompute.carries_values(f)]
    if a is None or b is None or not carrying:
        return findings
    loops = _Loops(a), _Loops(b)
    plumbing = [f for f in carrying if all(any(loop.wrote(o) for loop in loops) for o in f.origins)
                and all(any(loop.runs(w) for loop in loops) for w in f.where)]
    if not plumbing:
        return findings
    model = [f for f in findings if f.kind in _MODEL and not any(f is p for p in plumbing)
             and not recompute.is_checkpointing(f) and not unroll.is_unrolling(f)
             and any(w.computation in loop.inside for loop in loops for w in f.where)]
    if len(model) != 1:
        return findings
    # the plumbing's own consequences too: what follows shows one level
    return taken_under(findings, model[0], [g for f in plumbing for g in (f, *f.derived)])


class _Loops:
    """The while loops of one run's program: what they run, and where."""

    def __init__(self, module: Module):
        whiles = [(c, i) for c, i in module.instructions() if i.opcode == "while"]
        # where the loops are written: a scan's stack is filled at its line
        self.lines = {module.origin(i).location for _, i in whiles} - {None}
        # the computations that hold a loop: a loop's values are taken out there
        self.holders = {c.name for c, _ in whiles}
        # the computations a loop runs (its body and condition), and what they call
        self.inside: set[str] = set()
        todo = [name for _, i in whiles for name in i.called_computations]
        while todo:
            name = todo.pop()
            computation = module.by_name.get(name)
            if name in self.inside or computation is None:
                continue
            self.inside.add(name)
            todo += [callee for i in computation.instructions for callee in i.called_computations]

    def wrote(self, origin: Origin) -> bool:
        """Was the op at ``origin`` written by a loop: named in one, at a
        loop's line, or named by nothing (a tuple, a get-tuple-element)?"""
        return not origin.op_name or origin.location in self.lines \
            or "while" in origin.op_name.split("/")

    def runs(self, where: Where) -> bool:
        """Is ``where`` in what a loop runs, or where a loop is run?"""
        return where.computation in self.inside or where.computation in self.holders
