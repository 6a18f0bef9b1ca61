"""Which change follows from which: an explicit cause graph for one stage.

A batch size reshapes hundreds of instructions; a dtype switch adds converts
and retypes everything downstream; a constant that became a parameter
renumbers the parameters after it. A person wants the change they made, and
the rest counted under it. ``CauseGraph`` gives every change that follows
from another a parent link; the changes without a parent are the causes.

The rules, each a method below:

* dataflow: a shape-like change (shape, dtype, layout, an attribute that
  sizes it, what it reads or calls) on an instruction that reads a changed
  value follows from that change. Values carry their cause through
  unchanged instructions and into called computations (a fusion's
  parameters carry its operands' causes). Both runs are walked: an
  instruction removed in run a passes its cause on in a.
* dimensions: when a dimension moves (an entry parameter 32 -> 48, or an
  integer constant that sizes a loop's output 3 -> 4), the shapes whose
  moved dimensions all scale with it, and constants that are k*B or 1/(k*B)
  for the same whole k before and after, follow from it: an integer one
  (a size, a count) wherever it is, a float one (a mean's 1/B) where it is
  read beside a value whose shape moved with the dimension.
* the parameter list: a parameter only renumbered, and the count of
  parameters, follow from a parameter added or removed, or from a constant
  that became a parameter (or the reverse); the header's
  entry_computation_layout restates the entry's parameters and result.
* constants moved into parameters: the copies of the constant that went,
  and the reshapes and broadcasts that carry the new parameter, follow from
  the constant that became a parameter.
* computations: a computation of one run only follows from the change of
  the instruction that calls it.

Every rule decides from both runs alike, so the graph of ``b`` against
``a`` mirrors that of ``a`` against ``b``.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterator

from ..model import Computation, Module, element_value
from .diff import MOVED_INTO, MOVED_OUT_OF, Change

# How directly a kind of change explains a recompile; lower first.
PRIORITY = {
    "environment": -1, "parameter": 0, "constant_to_parameter": 1, "parameter_to_constant": 1,
    "constant": 2, "dtype": 3, "opcode": 4, "op_added": 5, "op_removed": 5,
    "called_computation": 5, "operands": 6, "attribute": 6, "shape": 7, "layout": 8,
    "computation_added": 9, "computation_removed": 9, "elided_constant": 9,
    "module_added": 10, "module_removed": 10, "metadata": 11,
    "replaced": 5, "op_moved": 5, "parameter_order": 0, "program_name": 9, "module_number": 10,
    "stablehlo": 8,
}
# Kinds that follow from a change upstream when what they read carries one.
_FOLLOWING = frozenset({"shape", "dtype", "layout", "attribute", "operands", "called_computation"})
# Added or removed instructions follow from a change of what they read when
# that change retypes or reshapes values (converts, reshapes XLA adds).
_RESHAPING = frozenset({"dtype", "shape", "layout", "parameter"})
_PARAMETER_KINDS = frozenset({"constant_to_parameter", "parameter_to_constant"})
_PLUMBING = ("reshape", "broadcast", "bitcast", "copy", "convert")
# Header attributes that restate the entry's parameters and results (one
# entry per parameter or output): they change when those do.
_RESTATED_HEADERS = frozenset(f"module header: {name}" for name in (
    "entry_computation_layout", "allow_spmd_sharding_propagation_to_parameters",
    "allow_spmd_sharding_propagation_to_output", "input_output_alias", "buffer_donor"))


# The value an op of this opcode leaves its other operand alone at: the
# lowering folds x * 1 and x + 0 away (CauseGraph._folded_value).
_IDENTITY = {"multiply": 1.0, "divide": 1.0, "add": 0.0, "subtract": 0.0}


def scalar_value(text: str | None) -> float | None:
    """The value of a scalar constant's text (``0.1``), else None."""
    try:
        return float(element_value(text.strip())) if text else None
    except (ValueError, TypeError):
        return None


def _rank(change: Change) -> tuple:
    """A change's claim to be the cause, the same from either run."""
    return (PRIORITY.get(change.kind, 99), sorted([change.old or "", change.new or ""]),
            sorted([change.computation or "", change.computation_a or ""]))


class CauseGraph:
    """Parent links between the changes of one stage (indices into ``changes``)."""

    def __init__(self, changes: list[Change], a: Module, b: Module):
        self.changes = changes
        # each change's claim to be the cause, by index: ranked once, asked
        # for at every instruction a change flows through
        self._rank_of = [_rank(change) for change in changes].__getitem__
        self.a, self.b = a, b
        self.parent: dict[int, int] = {}
        self._moved: dict[str, dict] = {}  # see _shaped
        self._readings: dict[str, _Readings] = {}  # see _read_beside
        self._build()

    # -- queries -------------------------------------------------------------------------

    def cause_of(self, index: int) -> int:
        """The root the change at ``index`` follows from (itself when it is one)."""
        seen = set()
        while index in self.parent and index not in seen:
            seen.add(index)
            index = self.parent[index]
        return index

    def roots(self) -> list[int]:
        return [i for i in range(len(self.changes)) if i not in self.parent]

    def following(self) -> dict[int, list[int]]:
        """For each root, the changes that follow from it (directly or not)."""
        out: dict[int, list[int]] = defaultdict(list)
        for index in self.parent:
            out[self.cause_of(index)].append(index)
        return out

    def _link(self, child: int, parent: int) -> None:
        if child != parent and self.cause_of(parent) != child and child not in self.parent:
            self.parent[child] = parent

    # -- the rules -----------------------------------------------------------------------

    def _build(self) -> None:
        self._same_instruction()
        self._dataflow()
        self._computations()
        self._parameter_list()
        self._constants_into_parameters()
        self._dimensions()

    def _dataflow(self) -> None:
        """Both runs are walked alike: each carries the causes of the changes it
        holds (every change with a side in it) down its own dataflow, and a
        change takes the best cause either run brings it."""
        at_b: dict[tuple[str, str], list[int]] = defaultdict(list)
        at_a: dict[tuple[str, str], list[int]] = defaultdict(list)
        for index, change in enumerate(self.changes):
            if change.b is not None:
                at_b[(change.computation, change.b)].append(index)
            if change.a is not None:
                at_a[(change.computation_a or change.computation, change.a)].append(index)
        carried_b = self._carry(self.b, at_b)
        carried_a = self._carry(self.a, at_a)
        for index, change in enumerate(self.changes):
            candidates = [c for c in (carried_b.get(index), carried_a.get(index))
                          if c is not None and c != index
                          and self._follows(change, self.changes[c])]
            at = at_b if change.kind == "op_added" else at_a  # where the op's run holds it
            candidates += [c for c in (self._folded_value(change, carried_b.get(index), at),
                                       self._folded_value(change, carried_a.get(index), at))
                           if c is not None and c != index]
            if candidates:
                self._link(index, min(candidates, key=self._rank_of))

    def _same_instruction(self) -> None:
        """An instruction that reads a different number of values, or became
        another opcode, has a new shape because of it."""
        by_place: dict[tuple[str, str | None, str | None], list[int]] = defaultdict(list)
        for index, change in enumerate(self.changes):
            if change.a is not None or change.b is not None:
                by_place[(change.computation, change.a, change.b)].append(index)
        for indices in by_place.values():
            heads = [i for i in indices if self.changes[i].kind in ("operands", "opcode")]
            if not heads:
                continue
            for index in indices:
                if self.changes[index].kind in ("shape", "dtype", "layout"):
                    self._link(index, heads[0])

    def _follows(self, change: Change, cause: Change) -> bool:
        if change.kind == cause.kind == "attribute" and \
                (change.detail, change.old, change.new) == (cause.detail, cause.old, cause.new):
            # the same attribute set the same way on an op downstream is one
            # setting in two places, not a consequence: TensorFlow's
            # enable_tensor_float_32_execution(False) gives a matmul and its
            # gradient operand_precision={highest,highest}, which read "follows
            # from it: 1 attribute change" of the very same change
            return False
        if change.kind in _FOLLOWING:
            return True
        if change.kind in ("op_added", "op_removed"):
            # an op moved into a branch of one run only (diff.py) is there
            # because the code put it there, not because a value it reads
            # was retyped: the gradients an optimizer applies under
            # mixed_float16 are f16, and its update moved under a condition
            return cause.kind in _RESHAPING and not change.detail.startswith(
                (MOVED_INTO, MOVED_OUT_OF))
        return False

    def _folded_value(self, change: Change, carried: int | None,
                      at: dict[tuple[str, str], list[int]]) -> int | None:
        """The constant change an op added (removed) follows from, where the
        op reads that constant and its value was the op's identity in the run
        without the op: the lowering folded ``x * 1`` away there. Keras'
        Huber loss multiplies by delta: delta 1 -> 2 read "added: 2 ops
        (multiply)" with model-code advice, the constant under it (a helper
        session's Keras run). JAX keeps one constant per value, so several
        changes may share the constant the op reads (0.5 * delta**2 is 2 as
        delta is): the one whose other value is the identity is the cause.
        ``at`` holds the changes by instruction in the run that has the op."""
        identity = _IDENTITY.get(change.opcode or "")
        if identity is None or carried is None or change.kind not in ("op_added", "op_removed") \
                or self.changes[carried].kind != "constant":
            return None
        cause = self.changes[carried]
        added = change.kind == "op_added"
        place = (cause.computation, cause.b) if added else \
            (cause.computation_a or cause.computation, cause.a)
        for index in at.get(place, ()):
            other = self.changes[index]
            if other.kind == "constant" and \
                    scalar_value(other.old if added else other.new) == identity:
                return index
        return None

    def _carry(self, module: Module, at: dict[tuple[str, str], list[int]]) -> dict:
        """For each change index of ``at``, the cause its instruction's operands
        carry to it in ``module``.

        Computations are walked callers first. A line left unparsed (the same
        in both runs) is not read for its calls when ordering them, so a
        computation only such a line calls may be walked before its caller
        hands it a cause: it is walked again then."""
        reached: dict = {}
        if not at:
            return reached
        by_parameter: dict[tuple[str, int], int] = {}  # (callee, parameter number) -> cause
        inheriting: set[str] = set()  # the callees of by_parameter
        walked: set[str] = set()
        again: list[Computation] = []

        def walk(computation: Computation) -> None:
            walked.add(computation.name)
            carried: dict[str, int] = {}
            # what carries a cause without a change of its own: the same
            # value in both runs, of the same type (see _added_reads)
            unchanged: set[str] = set()
            for instruction in computation.instructions:
                if instruction.unchanged and not carried and not (
                        computation.name in inheriting and instruction.opcode == "parameter"):
                    continue  # the same line in both runs, and nothing changed upstream yet
                upstream = [carried[o] for o in instruction.operands if o in carried]
                if instruction.opcode == "parameter":
                    inherited = by_parameter.get((computation.name, instruction.parameter_number))
                    if inherited is not None:
                        upstream.append(inherited)
                here = at.get((computation.name, instruction.name), ())
                if not upstream and not here:
                    continue  # nothing reaches it, nothing changed on it: nothing to carry
                cause = min(upstream, key=self._rank_of, default=None)
                read = min(self._added_reads(instruction, here, upstream, carried, unchanged),
                           key=self._rank_of, default=None) \
                    if any(self.changes[i].kind in _ADDED for i in here) else None
                for index in here:
                    reaching = read if self.changes[index].kind in _ADDED else cause
                    if reaching is not None:
                        reached[index] = reaching
                own = min((i for i in here if self.changes[i].kind != "metadata"
                           and not _renumbered_only(self.changes[i])),
                          key=self._rank_of, default=None)
                if own is not None and self.changes[own].kind in _ADDED:
                    cause = read
                passed = cause if cause is not None else own
                if own is not None and cause is not None and \
                        not self._follows(self.changes[own], self.changes[cause]):
                    passed = own
                if passed is not None:
                    carried[instruction.name] = passed
                    if own is None:
                        unchanged.add(instruction.name)
                    for callee in instruction.called_computations:
                        self._inherit(callee, instruction.operands, carried, by_parameter,
                                      inheriting, walked, again, module)

        for computation in _callers_first(module):
            if not computation.unchanged:
                walk(computation)
        while again:
            walk(again.pop())
        return reached

    def _added_reads(self, instruction, here, upstream: list[int], carried: dict[str, int],
                     unchanged: set[str]) -> list[int]:
        """The causes an op added (removed) at ``instruction`` reads: those of
        operands that changed themselves, and those an operand with no change
        of its own carries from a change at the op's own source line. Such an
        operand is the same value in both runs, of the same type: a loop's
        state that bundles more or fewer values (a checkpoint added, a relu's
        mask kept for the backward pass) retypes none of the values read out
        of it. What the loop adds to handle them (a scan's index arithmetic)
        is written at the loop's line; an op at a line of its own reading
        such a value (a relu on the scan's output, one in the scan's step) is
        the code's, not the loop's (corpus/jax_scan_remat_head_relu)."""
        if instruction.opcode == "parameter":
            return upstream
        lines = {self.changes[i].origin.location for i in here} - {None}
        return [carried[o] for o in instruction.operands if o in carried and (
            o not in unchanged or not lines
            or self.changes[carried[o]].origin.location in lines)]

    def _inherit(self, callee: str, operands, carried: dict[str, int],
                 by_parameter: dict[tuple[str, int], int], inheriting: set[str],
                 walked: set[str], again: list, module: Module) -> None:
        """Hand ``callee``'s parameters the causes its operands carry (of several
        callers, the most direct); a callee walked already is walked again."""
        changed = False
        for number, operand in enumerate(operands):
            source = carried.get(operand)
            if source is None:
                continue
            known = by_parameter.get((callee, number))
            best = source if known is None else \
                min(known, source, key=self._rank_of)
            if best != known:
                by_parameter[(callee, number)] = best
                changed = True
        if changed:
            inheriting.add(callee)
            computation = module.by_name.get(callee)
            if callee in walked and computation is not None and not computation.unchanged:
                again.append(computation)

    def _computations(self) -> None:
        """A computation of one run only follows from the instruction that calls it."""
        calls: dict[str, int] = {}
        for index, change in enumerate(self.changes):
            if change.kind == "called_computation" and ": " in change.detail:
                old, new = change.detail.split(": ", 1)[1].split(" -> ")
                calls.setdefault(old, index)
                calls.setdefault(new, index)
        callers_a = _callers(self.a)
        callers_b = _callers(self.b)
        # the change at each instruction, by its name in each run: an added
        # computation's caller is b's, a removed one's a's (an opcode that
        # changed at it, say broadcast -> fusion, has both)
        at_b = {(c.computation, c.b): i for i, c in enumerate(self.changes) if c.b is not None}
        at_a = {(c.computation_a or c.computation, c.a): i for i, c in enumerate(self.changes)
                if c.a is not None}
        # a computation of one run only called from another one (a while
        # loop's body inside a removed threefry2x32) follows from that one
        whole = {(c.kind, c.computation): i for i, c in enumerate(self.changes)
                 if c.kind in ("computation_added", "computation_removed")}
        for index, change in enumerate(self.changes):
            if change.kind not in ("computation_added", "computation_removed"):
                continue
            name = change.computation
            parent = calls.get(name)
            if parent is None:
                added = change.kind == "computation_added"
                caller = (callers_b if added else callers_a).get(name)
                parent = (at_b if added else at_a).get(caller) if caller else None
                if parent is None and caller:
                    parent = whole.get((change.kind, caller[0]))
            if parent is not None and parent != index:
                self._link(index, parent)

    def _parameter_list(self) -> None:
        """Renumbered parameters and the count follow from a parameter added or
        removed, or a constant that became one; the header restates them."""
        movers = [i for i, c in enumerate(self.changes)
                  if c.kind in _PARAMETER_KINDS
                  or c.kind in ("op_added", "op_removed") and c.opcode == "parameter"
                  and c.computation in (self.b.entry.name, self.a.entry.name)]
        shapers = [i for i, c in enumerate(self.changes)
                   if c.kind in ("parameter", "dtype", "shape") and _moved_dims(c)]
        for index, change in enumerate(self.changes):
            if change.kind == "parameter" and movers and (
                    change.a is None or _renumbered_only(change)):
                self._link(index, min(movers, key=self._rank_of))
            elif change.detail in _RESTATED_HEADERS:
                cause = movers + shapers + [i for i, c in enumerate(self.changes)
                                            if c.kind in ("parameter", "dtype")]
                if cause:
                    self._link(index, min(cause, key=self._rank_of))

    def _constants_into_parameters(self) -> None:
        """The other copies of a constant that became a parameter, and the
        plumbing that carries the parameter, follow from it."""
        moved = [i for i, c in enumerate(self.changes) if c.kind in _PARAMETER_KINDS]
        if not moved:
            return
        for index, change in enumerate(self.changes):
            if change.kind not in ("op_added", "op_removed") or index in self.parent:
                continue
            for cause in moved:
                c = self.changes[cause]
                into = c.kind == "constant_to_parameter"
                gone, came = ("op_removed", "op_added") if into else ("op_added", "op_removed")
                if change.kind == gone and change.opcode == "constant" \
                        and (change.old or change.new or "").startswith("constant"):
                    self._link(index, cause)
                elif change.kind == came and change.opcode == "parameter":
                    self._link(index, cause)
                elif change.opcode in _PLUMBING and (change.computation == c.computation or
                                                     change.computation_a == c.computation_a):
                    self._link(index, cause)
                else:
                    continue
                break

    def _dimensions(self) -> None:
        """Shapes and constants that scale with a dimension that moved."""
        dims = []
        for index in self.roots():
            change = self.changes[index]
            if change.kind == "parameter" and change.old and change.new:
                for d_old, d_new in _moved_dims(change):
                    if d_old and d_new:
                        dims.append((d_old, d_new, index))
        # A reshape that splits a dimension otherwise, reading what did not
        # change (the heads of an attention: [4,16,2,16] -> [4,16,4,8]), moves
        # dimensions too: after the parameters, for a constant scaled by one
        # of them (1 / sqrt of the head size).
        dims += [(d_old, d_new, index) for index in self.roots()
                 if self.changes[index].kind == "shape"
                 and self.changes[index].opcode == "reshape"
                 for d_old, d_new in _moved_dims(self.changes[index]) if d_old and d_new]
        # An integer constant that sizes something (a loop's trip count) moves a
        # dimension too, unless it scales with one that moved already (B*8).
        for index in self.roots():
            change = self.changes[index]
            if change.kind == "constant" and _is_positive_int(change.old) \
                    and _is_positive_int(change.new) and not any(
                        _scales_with(change.old, change.new, o, n) for o, n, _ in dims):
                dims.append((int(change.old), int(change.new), index))
        if not dims:
            return
        sources = {i for _, _, i in dims}
        moved_by: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for d_old, d_new, i in dims:
            moved_by[i].append((d_old, d_new))
        for index in self.roots():
            change = self.changes[index]
            if index in sources:
                continue
            parent = None
            if change.kind == "constant":
                parent = next((i for d_old, d_new, i in dims
                               if _scales_with(change.old, change.new, d_old, d_new)
                               and (_counts(change) or self._read_beside(change, moved_by[i]))),
                              None)
            elif change.kind in ("shape", "parameter", "attribute") and change.old and change.new:
                moved = set(_moved_dims(change))
                parent = next((i for d_old, d_new, i in dims
                               if moved and all(n * d_old == o * d_new for o, n in moved)), None)
            if parent is not None:
                self._link(index, parent)

    def _read_beside(self, change: Change, moved: list[tuple[int, int]]) -> bool:
        """Is the constant of ``change`` read, in either run, beside a value
        whose shape moved with ``moved`` (the dimensions one change moved)?

        A float that scales with a dimension is the framework's arithmetic
        on that dimension where it is read so: a mean's 1/B multiplies what
        has the batch dimension, or what was summed over it. Its value alone
        does not tell: a learning rate 0.01 -> 0.02 is 1/(25*4) -> 1/(25*2),
        and a lax.scan unrolled 1 -> 2 at the same time takes its loop from
        4 to 2 iterations; the learning rate, read beside the weights'
        gradients, vanished under the unroll (a helper session's run,
        corpus/jax_scan_unroll_and_lr)."""
        if not self._readings:
            self._readings = {"b": _Readings(self.b), "a": _Readings(self.a)}
        for side, computation, name in (
                ("b", change.computation, change.b),
                ("a", change.computation_a or change.computation, change.a)):
            if name is None:
                continue
            shaped = self._shaped(side)
            for place in self._readings[side].read_with(computation, name):
                if any(all(any(n * d_old == o * d_new for d_old, d_new in moved)
                           for o, n in dims) for dims in shaped.get(place, ())):
                    return True
        return False

    def _shaped(self, side: str) -> dict[tuple[str, str], list[tuple[tuple[int, int], ...]]]:
        """The dimensions each instruction of run ``side`` moved, by
        (computation, name): its shape, or its parameter's."""
        if side not in self._moved:
            out: dict[tuple[str, str], list] = defaultdict(list)
            for change in self.changes:
                name = change.b if side == "b" else change.a
                computation = change.computation if side == "b" else \
                    change.computation_a or change.computation
                if change.kind in ("shape", "parameter", "dtype") and name is not None:
                    moved = _moved_dims(change)
                    if moved:
                        out[(computation, name)].append(moved)
            self._moved[side] = out
        return self._moved[side]


_CALLS = ("fusion", "call")


class _Readings:
    """Where the values of one run's module are read, and what with."""

    def __init__(self, module: Module):
        self.module = module
        self._users: dict[str, dict[str, list]] = {}
        self._callers: dict[str, list] | None = None

    def read_with(self, computation: str, name: str,
                  limit: int = 256) -> Iterator[tuple[str, str]]:
        """(computation, instruction) of the arrays the constant ``name`` is
        read with. A scalar is handed on and combined with other scalars (a sum
        over the batch, N - ddof, 1/N, into and out of fusions) before it
        meets an array: the arrays its scalar arithmetic sums up, those it
        is broadcast to, the ops that read such a broadcast, their other
        operands and what those sum up. An array that is only handed on
        (the gradients reshaped out of an unrolled loop's stacking) is read
        where it arrives, in the shape it has there."""
        todo, seen = [(computation, name)], set()
        while todo and len(seen) < limit:
            where, value = todo.pop()
            found = self.module.by_name.get(where)
            instruction = found.by_name.get(value) if found is not None else None
            if (where, value) in seen or instruction is None:
                continue
            seen.add((where, value))
            yield where, value
            upstream = [(where, o) for o in instruction.operands]
            if instruction.opcode == "parameter":  # from the fusions and calls of it
                number = instruction.parameter_number
                upstream += [(caller.name, call.operands[number])
                             for caller, call in self.callers(where)
                             if number is not None and number < len(call.operands)]
            elif instruction.opcode in _CALLS:  # the result of what it calls
                upstream += [(callee, self.module.by_name[callee].root.name)
                             for callee in instruction.called_computations
                             if callee in self.module.by_name]
            downstream = [(where, u.name) for u in self.users(found).get(value, ())]
            if found.root.name == value:
                downstream += [(caller.name, call.name) for caller, call in self.callers(where)]
            for place in upstream:
                if self._scalar(*place):
                    todo.append(place)
                else:
                    yield place
            for place in downstream:
                if self._scalar(*place):
                    todo.append(place)
                else:
                    yield place
                    yield from self._met(*place)

    def _met(self, where: str, name: str) -> Iterator[tuple[str, str]]:
        """What the array ``name`` a scalar was broadcast (or handed) to
        meets: the ops that read it, their other operands, and what those
        sum up."""
        found = self.module.by_name[where]
        for user in self.users(found).get(name, ()):
            yield where, user.name
            for operand in user.operands:
                if operand == name:
                    continue
                yield where, operand
                read = found.by_name.get(operand)
                if read is not None and read.opcode == "reduce":
                    yield from ((where, o) for o in read.operands)

    def _scalar(self, where: str, name: str) -> bool:
        """Does ``name`` hold one element (f32[], f32[1,1,1])?"""
        found = self.module.by_name.get(where)
        instruction = found.by_name.get(name) if found is not None else None
        shape = instruction.shape if instruction is not None else None
        return shape is not None and not shape.is_tuple and shape.element_count == 1

    def users(self, computation: Computation) -> dict[str, list]:
        """The instructions of ``computation`` that read each value."""
        if computation.name not in self._users:
            readers: dict[str, list] = defaultdict(list)
            for instruction in computation.instructions:
                for operand in dict.fromkeys(instruction.operands):
                    readers[operand].append(instruction)
            self._users[computation.name] = readers
        return self._users[computation.name]

    def callers(self, callee: str) -> list:
        """(computation, instruction) of each fusion or call of ``callee``."""
        if self._callers is None:
            self._callers = defaultdict(list)
            for computation, instruction in self.module.instructions():
                if instruction.opcode in _CALLS:
                    for name in instruction.called_computations:
                        self._callers[name].append((computation, instruction))
        return self._callers.get(callee, [])


def _counts(change: Change) -> bool:
    """A constant of an integer type: a size, a count, an index, which the
    framework writes wherever the dimension is used."""
    return (change.element_type or "")[:1] in ("s", "u")


def _callers_first(module: Module) -> Iterator[Computation]:
    """The computations of ``module``, each after every computation that calls it
    (the entry first): causes flow from callers into callees."""
    callees: dict[str, list[str]] = {}
    for computation in module.computations:
        if computation.unchanged:
            callees[computation.name] = []
            continue
        callees[computation.name] = list(dict.fromkeys(  # lines left unparsed: see _carry
            c for i in computation.instructions if not i.unchanged for c in i.called_computations))
    callers: dict[str, int] = defaultdict(int)
    for names in callees.values():
        for name in names:
            callers[name] += 1
    ready = [c.name for c in module.computations if callers[c.name] == 0]
    done = set()
    while ready:
        name = ready.pop()
        if name in done or name not in module.by_name:
            continue
        done.add(name)
        yield module.by_name[name]
        for callee in callees.get(name, ()):
            callers[callee] -= 1
            if callers[callee] == 0:
                ready.append(callee)
    for computation in module.computations:  # cycles (none in valid HLO): still visited
        if computation.name not in done:
            yield computation


def _callers(module: Module) -> dict[str, tuple[str, str]]:
    """For each called computation, (computation, instruction) of a caller."""
    out: dict[str, tuple[str, str]] = {}
    for computation in module.computations:
        if computation.unchanged:
            continue
        for instruction in computation.instructions:
            if instruction.unchanged:  # it calls what its twin calls: nothing added
                continue
            for callee in instruction.called_computations:
                out.setdefault(callee, (computation.name, instruction.name))
    return out


_ADDED = frozenset({"op_added", "op_removed"})


def _renumbered_only(change: Change) -> bool:
    """``f32[8] parameter(4)`` -> ``f32[8] parameter(5)``: same shape, new number."""
    old, new = (change.old or "").rsplit(" ", 1), (change.new or "").rsplit(" ", 1)
    return len(old) == len(new) == 2 and old[0] == new[0] and old[1] != new[1]


def _is_positive_int(text: str | None) -> bool:
    return bool(text) and text.isdigit() and int(text) > 0


def dims(text: str) -> list[int]:
    """The dimension sizes of the first array shape in ``text``."""
    inside = text[text.find("[") + 1:text.find("]")] if "[" in text else ""
    return [int(d) for d in inside.replace("<=", "").split(",") if d.strip().isdigit()]


_ARRAY_DIMS = re.compile(r"[a-z][a-z0-9]*\[([^\]]*)\]")


def _all_dims(text: str) -> list[list[int]]:
    """The dimension sizes of every array shape in ``text`` (a tuple has several)."""
    return [[int(d) for d in inside.replace("<=", "").split(",") if d.strip().isdigit()]
            for inside in _ARRAY_DIMS.findall(text)]


def _moved_dims(change: Change) -> tuple[tuple[int, int], ...]:
    """The (old, new) sizes of the dimensions a shape-like change moved."""
    old, new = _all_dims(change.old or ""), _all_dims(change.new or "")
    if len(old) != len(new) or any(len(o) != len(n) for o, n in zip(old, new)):
        return ()
    return tuple(sorted({(a, b) for o, n in zip(old, new) for a, b in zip(o, n) if a != b}))


moved_dims = _moved_dims


def _scales_with(old: str | None, new: str | None, d_old: int, d_new: int) -> bool:
    """Every element that differs between the literals ``old`` and ``new`` scales
    with the dimension (see _scale), and at least one does."""
    elements_old = (old or "").replace("{", " ").replace("}", " ").split(",")
    elements_new = (new or "").replace("{", " ").replace("}", " ").split(",")
    if len(elements_old) != len(elements_new):
        return False
    moved = [(a, b) for a, b in zip(elements_old, elements_new) if a.strip() != b.strip()]
    return bool(moved) and all(_scale(a, b, d_old, d_new) for a, b in moved)


def _scale(old: str | None, new: str | None, d_old: int, d_new: int) -> bool:
    """old/new are k*B or 1/(k*B), or the square root of one (attention scales by
    1/sqrt of the head size), for the same whole k, before and after B moved.

    A whole multiple is what a mean over the batch or a reshape size looks
    like; a learning rate that doubled along with the batch (0.01 -> 0.02
    while 16 -> 32) is proportional too, but 0.01 is not 16 times a whole
    number, nor one over it. The sign does not matter, as long as it stays:
    the backward pass of a mean scales by -1/B.
    """
    try:
        a = float(element_value(old.strip(" {}")))
        b = float(element_value(new.strip(" {}")))
    except (ValueError, AttributeError, TypeError):
        return False
    if not (math.isfinite(a) and math.isfinite(b)) or a * b <= 0:
        return False
    a, b = abs(a), abs(b)
    for k_old, k_new in ((a / d_old, b / d_new), (1 / (a * d_old), 1 / (b * d_new)),
                         (a * a / d_old, b * b / d_new), (1 / (a * a * d_old), 1 / (b * b * d_new))):
        k = round(k_old)
        if k >= 1 and math.isclose(k_old, k, rel_tol=1e-5) and math.isclose(k_new, k, rel_tol=1e-5):
            return True
    return False


_ELEMENT_TYPE = re.compile(r"([a-z][a-z0-9]*)\[")


def element_types(shape_text: str | None) -> str:
    """``f32[16,8]{1,0}`` -> ``f32``; ``(f32[], s32[2])`` -> ``f32,s32``."""
    return ",".join(_ELEMENT_TYPE.findall(shape_text or ""))
