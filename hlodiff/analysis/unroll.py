"""A loop unrolled: the same steps, run k to an iteration.

``jax.lax.scan(..., unroll=k)`` (flax's ``nn.scan(..., unroll=k)``,
``jax.lax.fori_loop(..., unroll=k)``, which is a scan) runs k steps of the
loop in each iteration of its while loop, and the loop 1/k as many times;
where k does not divide the length, the steps left over run outside the
loop. The program computes the same, but much of it is rewritten: the
loop's body calls the step k times, slices k values of every stacked input
and concatenates k of every stacked output, the stacked values are reshaped
to [iterations, k, ...], the trip count changes. Found change by change,
that read as "added: 43 ops (slice, call, concatenate, reshape,
get-tuple-element)" with advice about Python branches, and a second row
"shape f32[4,8,16] -> f32[2,2,8,16]"; the one argument the user changed
was not named.

Two runs' programs differ by unrolling when both do the same work, counted
as it runs (each op times the trip counts of the loops around it, through
the computations it calls), and every loop that differs is the same loop
(by op_name) whose body holds k times the other's per-step work and whose
trip count is the other's divided by k; or a loop of one run that the other
runs without a loop (fully unrolled). That is one finding, and the changes
in the loops and the plumbing around them follow from it. A model changed
in the loop body too does other work: nothing is folded. A loop that only
runs longer (another length) does other work too.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace

from ..model import Instruction, Module, Origin, in_backward_pass, without_parameters
from .diff import attribute_data
from .findings import Finding, under_one_cause

# How the findings of this module start (advice.py asks is_unrolling).
_MARK = re.compile(r"(?:^|: )(?:lax\.scan|a while loop) (?:unroll|unrolled|fully unrolled)")

# Ops that move, slice, stack or hand on values, and the loops and calls
# themselves: what unrolling adds and removes. The work counted is the rest.
_PLUMBING = frozenset({
    "parameter", "constant", "get-tuple-element", "tuple", "call", "while", "slice",
    "dynamic-slice", "dynamic-update-slice", "reshape", "bitcast", "broadcast", "concatenate",
    "copy", "transpose", "fusion", "conditional", "opt-barrier", "after-all"})
_INDEX_TYPES = frozenset({"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "pred"})
# Kinds of change unrolling makes where it restructures the program.
_KINDS = frozenset({"replaced", "op_added", "op_removed", "op_moved", "operands", "attribute",
                    "shape", "metadata", "called_computation", "computation_added",
                    "computation_removed", "constant"})


@dataclass(frozen=True)
class Loop:
    """A while loop of a program: where it is, how often it runs, and the
    work of one iteration (``steps`` calls of one step, where it calls it)."""

    name: str
    key: str  # its op_name, without JAX 0.4's parameters
    body: str
    condition: str
    trips: int | None
    origin: Origin
    work: Counter = field(default_factory=Counter, compare=False)
    steps: int | None = None


@dataclass(frozen=True)
class Unrolling:
    """What unrolling changed: the sentence, the loops' computations in each
    run (where every change follows from it), and the trip counts."""

    summary: str
    computations_a: frozenset[str]
    computations_b: frozenset[str]
    trips: frozenset[tuple[str, str]]  # (old, new) trip counts, as printed
    origin: Origin


def change_of(a: Module | None, b: Module | None, word: str = "lax.scan") -> Unrolling | None:
    """How the loops of ``a`` and ``b`` were unrolled, when that is all that
    differs in the work the two programs do; None otherwise."""
    if a is None or b is None:
        return None
    program_a, program_b = _Program(a), _Program(b)
    loops_a, loops_b = program_a.loops(), program_b.loops()
    # unrolling changes the trip count, or leaves no loop: a loop that only
    # does other work (a layer added in its body) is not asked about
    changed = [(loops_a[k], loops_b[k]) for k in loops_a if k in loops_b
               and loops_a[k].trips != loops_b[k].trips]
    alone = [("a", loops_a[k]) for k in loops_a if k not in loops_b] + \
        [("b", loops_b[k]) for k in loops_b if k not in loops_a]
    if not changed and not alone or any(x.trips is None or y.trips is None for x, y in changed):
        return None
    changed = [(program_a.measured(x), program_b.measured(y)) for x, y in changed]
    alone = [(run, (program_a if run == "a" else program_b).measured(loop))
             for run, loop in alone]
    if any(_ratio(x, y) is None for x, y in changed) or any(not loop.work for _, loop in alone):
        return None
    total_a, total_b = program_a.work(), program_b.work()
    if total_a is None or total_a != total_b:
        return None
    territory = {"a": set(), "b": set()}
    for run, loop in [("a", x) for x, _ in changed] + [("b", y) for _, y in changed] + alone:
        territory[run] |= {loop.body, loop.condition}
    trips = frozenset((str(x.trips), str(y.trips)) for x, y in changed)
    said, origin = _summary(changed, alone, word)
    return Unrolling(said, frozenset(territory["a"]), frozenset(territory["b"]), trips, origin)


def _ratio(x: Loop, y: Loop) -> int | None:
    """k when one loop's iteration does k >= 2 times the other's work and
    runs the other's trip count divided by k (the steps left over outside
    the loop); None otherwise."""
    few, many = (x, y) if sum(x.work.values()) <= sum(y.work.values()) else (y, x)
    if not few.work:
        return None
    k = sum(many.work.values()) // sum(few.work.values())
    if k < 2 or many.work != Counter({key: n * k for key, n in few.work.items()}):
        return None
    return k if many.trips == few.trips // k else None


def _summary(changed: list[tuple[Loop, Loop]], alone: list[tuple[str, Loop]],
             word: str) -> tuple[str, Origin]:
    """The sentence for the first loop of the forward pass, and where it is."""
    pairs = sorted(changed, key=lambda p: in_backward_pass(p[0].origin.op_name))
    places = {(p[0].origin.location or p[0].key) for p in pairs} | \
        {(loop.origin.location or loop.key) for _, loop in alone}
    more = f" (and {len(places) - 1} more loop{'s' if len(places) > 2 else ''})" \
        if len(places) > 1 else ""
    if not pairs:
        run, loop = min(alone, key=lambda p: in_backward_pass(p[1].origin.op_name))
        other = "b" if run == "a" else "a"
        each = f" ({_count(loop.steps, 'step')} each)" if loop.steps else ""
        ran = f": run {run}'s loop of {_count(loop.trips, 'iteration')}{each} runs without a loop" \
            if loop.trips else ""
        return f"{word} fully unrolled in run {other}{ran}{more}", loop.origin
    x, y = pairs[0]
    k = _ratio(x, y)
    few = x if sum(x.work.values()) <= sum(y.work.values()) else y
    left = few.trips % k * (few.steps or 1)
    if x.steps and y.steps:
        said = (f"{word} unroll {x.steps} -> {y.steps}: the loop runs "
                f"{_count(y.steps, 'step')} per iteration, {x.trips} -> {y.trips} iterations")
    else:
        said = (f"{word} unrolled {k}x {'more' if few is x else 'less'}: "
                f"{x.trips} -> {y.trips} iterations")
    if left:
        said += f", and {_count(left, 'step')} outside it" if few is x else \
            f" (run a ran {_count(left, 'step')} outside it)"
    return said + more, x.origin


def _count(n: int | None, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


class _Program:
    """The loops of a program and the work it does, counted as it runs."""

    def __init__(self, module: Module):
        self.module = module
        self._work: dict[str, Counter | None] = {}

    def loops(self) -> dict[tuple[str, int], Loop]:
        """Every while loop, by its op_name and how many loops of that
        op_name come before it."""
        out: dict[tuple[str, int], Loop] = {}
        seen: Counter = Counter()
        for computation, instruction in self.module.instructions():
            if instruction.opcode != "while" or len(instruction.called_computations) != 2:
                continue
            body, condition = instruction.called_computations
            origin = self.module.origin(instruction)
            key = without_parameters(origin.op_name or "while")
            out[(key, seen[key])] = Loop(instruction.name, key, body, condition,
                                         self.trips(computation.name, instruction), origin)
            seen[key] += 1
        return out

    def measured(self, loop: Loop) -> Loop:
        """``loop`` with the work of one iteration, and the steps it runs."""
        return replace(loop, work=self.computation_work(loop.body) or Counter(),
                       steps=self._steps(loop.body))

    def work(self) -> Counter | None:
        return self.computation_work(self.module.entry.name)

    def computation_work(self, name: str) -> Counter | None:
        """The work of one run of computation ``name``: its ops, each by
        opcode, shape and what its attributes mean, with what the
        computations it calls do (a loop's body times its trip count)."""
        if name in self._work:
            return self._work[name]
        self._work[name] = None  # a computation that calls itself is not counted
        computation = self.module.by_name.get(name)
        if computation is None:
            return None
        total: Counter = Counter()
        for instruction in computation.instructions:
            opcode = instruction.opcode
            if opcode in ("call", "fusion", "conditional"):
                for callee in instruction.called_computations:
                    work = self.computation_work(callee)
                    if work is None:
                        return None
                    total.update(work)
                continue
            if opcode == "while" and len(instruction.called_computations) == 2:
                work = self.computation_work(instruction.called_computations[0])
                if work is None:
                    return None
                trips = self.trips(name, instruction)
                if trips is None:  # run an unknown number of times: counted as a loop of its own
                    total.update({("loop", key): n for key, n in work.items()})
                else:
                    total.update({key: n * trips for key, n in work.items()})
                continue
            if _is_work(instruction):
                total[(opcode, str(instruction.shape.without_layout()),
                       _meaning(instruction))] += 1
        self._work[name] = +total
        return self._work[name]

    def _steps(self, body: str) -> int | None:
        """How many steps the loop's body runs: the calls of one computation
        (or of copies of it) that do all of its work; None where the body
        does its work otherwise."""
        computation = self.module.by_name.get(body)
        work = self.computation_work(body)
        if computation is None or not work:
            return None
        calls: Counter = Counter()
        for instruction in computation.instructions:
            if instruction.opcode == "call":
                callee = self.computation_work(instruction.called_computations[0]) \
                    if instruction.called_computations else None
                if callee:
                    calls[tuple(sorted(callee.items(), key=repr))] += 1
        if not calls:
            return None
        step, n = calls.most_common(1)[0]
        return n if Counter({key: count * n for key, count in step}) == work else None

    def trips(self, caller: str, loop: Instruction) -> int | None:
        """How many times ``loop`` runs its body: XLA's known_trip_count
        where it wrote one (an optimized program), else a counter from a
        constant start, up by one, below a constant bound (JAX's scan)."""
        config = loop.attribute("backend_config")
        if config is not None and "known_trip_count" in config.text:
            try:
                return int(attribute_data(config)["known_trip_count"]["n"])
            except (ValueError, KeyError, TypeError):
                pass
        body, condition = loop.called_computations
        index, bound = self._bound(condition)
        if index is None:
            return None
        start = self._start(caller, loop, index)
        step = self._increment(body, index)
        if start is None or step != 1 or bound < start:
            return None
        return bound - start

    def _bound(self, condition: str) -> tuple[int | None, int]:
        """(tuple index of the counter, its bound) of ``counter < bound``."""
        computation = self.module.by_name.get(condition)
        if computation is None:
            return None, 0
        root = computation.root
        direction = root.attribute("direction") if root.opcode == "compare" else None
        if direction is None or direction.text.strip() not in ("LT", "GT"):
            return None, 0
        names = computation.by_name
        left, right = (names.get(n) for n in root.operands[:2])
        if direction.text.strip() == "GT":
            left, right = right, left
        index, bound = _element(left), _integer(right)
        return (index, bound) if index is not None and bound is not None else (None, 0)

    def _start(self, caller: str, loop: Instruction, index: int) -> int | None:
        names = self.module.by_name[caller].by_name
        init = names.get(loop.operands[0]) if loop.operands else None
        if init is None or init.opcode != "tuple" or index >= len(init.operands):
            return None
        return _integer(names.get(init.operands[index]))

    def _increment(self, body: str, index: int) -> int | None:
        computation = self.module.by_name.get(body)
        if computation is None or computation.root.opcode != "tuple" \
                or index >= len(computation.root.operands):
            return None
        names = computation.by_name
        add = names.get(computation.root.operands[index])
        if add is None or add.opcode != "add":
            return None
        left, right = (names.get(n) for n in add.operands[:2])
        if _element(left) == index:
            return _integer(right)
        return _integer(left) if _element(right) == index else None


def _is_work(instruction: Instruction) -> bool:
    shape = instruction.shape
    if instruction.opcode in _PLUMBING or shape is None or shape.is_tuple:
        return False
    return not (shape.element_type in _INDEX_TYPES and not shape.dimensions)


def _meaning(instruction: Instruction) -> frozenset:
    """What the op's attributes mean, its names and source lines aside (an
    op of the step run outside the loop keeps its own op_name)."""
    return frozenset(key for key in instruction.attribute_keys if key[0] != "metadata")


def _element(instruction: Instruction | None) -> int | None:
    """N of ``get-tuple-element(parameter), index=N``."""
    if instruction is None or instruction.opcode != "get-tuple-element":
        return None
    index = instruction.attribute("index")
    try:
        return int(index.text) if index is not None else None
    except ValueError:
        return None


def _integer(instruction: Instruction | None) -> int | None:
    """The value of an integer scalar constant."""
    if instruction is None or instruction.opcode != "constant":
        return None
    shape = instruction.shape
    if shape is None or shape.dimensions or shape.element_type not in _INDEX_TYPES:
        return None
    try:
        return int(instruction.literal.text.strip())
    except (ValueError, AttributeError):
        return None


# --- folding ---------------------------------------------------------------------------------

def fold(findings: list[Finding], unrolled: Unrolling, a: Module, b: Module) -> list[Finding]:
    """One finding of the unrolling, with the findings that follow from it
    under it: changes inside the loops that differ (their bodies and
    conditions), and those of ops that only move, slice, stack or hand on
    values, or count (the trip count, index arithmetic), wherever they are.
    A value the code wrote (a float constant), a parameter, a dtype stay
    their own. Unchanged when nothing follows."""
    places = _Places(a, b, unrolled)
    folded = [f for f in findings if places.follows(f)]
    if not folded:
        return findings
    lead = max(folded, key=lambda f: (f.origin.location is not None, f.kind != "metadata",
                                      f.count))
    origins = (unrolled.origin,) if unrolled.origin else ()
    return under_one_cause(findings, folded, unrolled.summary, lead, origins + tuple(
        o for o in lead.origins if o != unrolled.origin)[:49])


def is_unrolling(finding: Finding) -> bool:
    """Is ``finding`` one this module made?"""
    return finding.kind == "replaced" and _MARK.search(finding.summary) is not None


class _Places:
    """Where the findings are, in the two runs' compile inputs."""

    def __init__(self, a: Module, b: Module, unrolled: Unrolling):
        self.unrolled = unrolled
        self.sides = {"a": _index(a), "b": _index(b)}

    def follows(self, finding: Finding) -> bool:
        if finding.kind not in _KINDS or not finding.where:
            return False
        if finding.kind == "constant" and (finding.old, finding.new) in self.unrolled.trips:
            return True
        return all(self._restructured(w.computation, w.a, w.b, finding.kind)
                   for w in finding.where)

    def _restructured(self, computation: str, a: str | None, b: str | None, kind: str) -> bool:
        """Is the place inside a loop that differs, or an op that unrolling
        adds, removes or reshapes? (A constant only inside such a loop, and
        only an integer one: a count or an index.)"""
        if kind in ("computation_added", "computation_removed"):
            return True  # a copy of the step: the work done is the same (change_of)
        for side, name in (("b", b), ("a", a)):
            if name is None:
                continue
            found = self.sides[side].get(name)
            if found is None:
                return False
            home, instruction = found
            inside = home in (self.unrolled.computations_b if side == "b"
                              else self.unrolled.computations_a)
            if kind == "constant":
                if not inside or _integer(instruction) is None:
                    return False
            elif not inside and not _moves_values(instruction):
                return False
        return a is not None or b is not None


def _moves_values(instruction: Instruction) -> bool:
    """An op that moves, slices, stacks or hands on values, or counts."""
    shape = instruction.shape
    return instruction.opcode in _PLUMBING or shape is not None and not shape.is_tuple \
        and shape.element_type in _INDEX_TYPES and not shape.dimensions


def _index(module: Module) -> dict[str, tuple[str, Instruction]]:
    """Each instruction by its name, with its computation's."""
    return {i.name: (c.name, i) for c, i in module.instructions()}
