"""Matching computations and instructions of two versions of a module.

Names are useless for this: XLA renumbers them whenever anything earlier in
the trace changes. Matching is by structure, cheapest evidence first:

1. exact fingerprints: a hash of opcode, shape, attributes (not metadata),
   constant value and the fingerprints of the operands and called
   computations. Everything unchanged pairs here, in one pass;
2. anchors: the roots and the parameters (by number) of paired computations;
3. propagation, repeated until nothing moves: top-down (operands in the
   same position of a matched pair, same opcode) and bottom-up (an
   instruction whose operands are matched, to the one reading exactly their
   matches), in the spirit of GumTree and XLA's hlo_diff;
4. metadata hints: same opcode, op_name and source line;
5. fuzzy: rapidfuzz similarity of instruction signatures within an opcode
   bucket, for whatever is left (a few hundred at most).

What stays unmatched was added or removed.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from .model import Computation, Instruction, Module

_FUZZY_CUTOFF = 70.0
_FUZZY_LIMIT = 2000  # per opcode bucket and side; beyond it fuzzy matching is skipped
_IGNORED_ATTRIBUTES = frozenset({"metadata", "statistics"})
_CALL_ATTRIBUTES = frozenset({"calls", "to_apply", "condition", "body", "select", "scatter",
                              "true_computation", "false_computation", "branch_computations",
                              "called_computations"})


@dataclass
class ComputationMatch:
    """Instruction pairs inside one pair of computations (by name, a -> b)."""

    a: Computation
    b: Computation
    pairs: dict[str, str] = field(default_factory=dict)
    how: dict[str, str] = field(default_factory=dict)  # a name -> which phase matched it

    @property
    def unmatched_a(self) -> list[Instruction]:
        return [i for i in self.a.instructions if i.name not in self.pairs]

    @property
    def unmatched_b(self) -> list[Instruction]:
        matched = set(self.pairs.values())
        return [i for i in self.b.instructions if i.name not in matched]


@dataclass
class Alignment:
    """The result of aligning module a with module b."""

    a: Module
    b: Module
    computations: list[ComputationMatch]
    only_a: list[Computation]
    only_b: list[Computation]


def align(a: Module, b: Module) -> Alignment:
    """Match the computations and instructions of ``a`` and ``b``."""
    return _Aligner(a, b).run()


# --- fingerprints ------------------------------------------------------------------------

def _attribute_key(instruction: Instruction) -> tuple:
    return tuple((attr.name, " ".join(attr.text.split())) for attr in instruction.attributes
                 if attr.name not in _IGNORED_ATTRIBUTES and attr.name not in _CALL_ATTRIBUTES)


class _Fingerprints:
    """Name-free structural hashes of every instruction and computation of a module."""

    def __init__(self, module: Module):
        self.module = module
        self.of_instruction: dict[tuple[str, str], int] = {}
        self.of_computation: dict[str, int] = {}
        for computation in module.computations:
            self.computation(computation.name)

    def computation(self, name: str) -> int:
        known = self.of_computation.get(name)
        if known is not None:
            return known
        computation = self.module.by_name.get(name)
        if computation is None:
            return hash(("missing", name))
        self.of_computation[name] = hash(("cycle", name))  # guards against recursion
        local: dict[str, int] = {}
        for instruction in computation.instructions:
            called = tuple(self.computation(c) for c in instruction.called_computations)
            operands = tuple(local.get(o, hash(o)) for o in instruction.operands)
            # A constant's value is part of what it is; a parameter's number is
            # not (inserting one renumbers the rest): equal-shaped parameters
            # pair in order, and the differ reports any renumbering.
            value = instruction.operand_text if instruction.opcode == "constant" else ""
            fp = hash((instruction.opcode, str(instruction.shape), _attribute_key(instruction),
                       value, operands, called))
            local[instruction.name] = fp
            self.of_instruction[(name, instruction.name)] = fp
        params = tuple(str(p.shape) for p in computation.parameters)
        fp = hash((local[computation.root.name], params))
        self.of_computation[name] = fp
        return fp


# --- the aligner ---------------------------------------------------------------------------

class _Aligner:
    def __init__(self, a: Module, b: Module):
        self.a, self.b = a, b
        self.fa, self.fb = _Fingerprints(a), _Fingerprints(b)
        self.comp_pairs: dict[str, str] = {}
        self.matches: list[ComputationMatch] = []
        self.queue: deque[tuple[str, str]] = deque()

    def run(self) -> Alignment:
        self._pair_computations(self.a.entry.name, self.b.entry.name)
        self._drain()
        # Computations not reached through calls: exact fingerprints, then names.
        self._pair_leftover_computations()
        self._drain()
        paired_b = set(self.comp_pairs.values())
        only_a = [c for c in self.a.computations if c.name not in self.comp_pairs]
        only_b = [c for c in self.b.computations if c.name not in paired_b]
        return Alignment(self.a, self.b, self.matches, only_a, only_b)

    def _pair_computations(self, a_name: str, b_name: str) -> None:
        if a_name in self.comp_pairs or b_name in self.comp_pairs.values():
            return
        if a_name not in self.a.by_name or b_name not in self.b.by_name:
            return
        self.comp_pairs[a_name] = b_name
        self.queue.append((a_name, b_name))

    def _drain(self) -> None:
        while self.queue:
            a_name, b_name = self.queue.popleft()
            match = ComputationMatch(self.a.by_name[a_name], self.b.by_name[b_name])
            self._match_instructions(match)
            self.matches.append(match)
            for x_name, y_name in match.pairs.items():
                x, y = match.a.by_name[x_name], match.b.by_name[y_name]
                for ca, cb in zip(x.called_computations, y.called_computations):
                    self._pair_computations(ca, cb)

    def _pair_leftover_computations(self) -> None:
        paired_b = set(self.comp_pairs.values())
        left_a = [c for c in self.a.computations if c.name not in self.comp_pairs]
        left_b = [c for c in self.b.computations if c.name not in paired_b]
        by_fp: dict[int, list[Computation]] = defaultdict(list)
        for c in left_b:
            by_fp[self.fb.of_computation[c.name]].append(c)
        rest_a = []
        for c in left_a:
            bucket = by_fp.get(self.fa.of_computation[c.name])
            if bucket:
                self._pair_computations(c.name, bucket.pop(0).name)
            else:
                rest_a.append(c)
        rest_b = [c for c in left_b if c.name not in set(self.comp_pairs.values())]
        if not rest_a or not rest_b:
            return
        names_b = [_computation_signature(c) for c in rest_b]
        for c in rest_a:
            if not names_b:
                break
            best = process.extractOne(_computation_signature(c), names_b, scorer=fuzz.ratio,
                                      score_cutoff=_FUZZY_CUTOFF)
            if best is not None:
                _, _, index = best
                self._pair_computations(c.name, rest_b[index].name)
                del rest_b[index], names_b[index]

    # -- instructions ----------------------------------------------------------------------

    def _match_instructions(self, m: ComputationMatch) -> None:
        a_of = self.fa.of_instruction
        b_of = self.fb.of_instruction
        reverse: dict[str, str] = {}

        def pair(x: str, y: str, how: str) -> None:
            m.pairs[x] = y
            m.how[x] = how
            reverse[y] = x

        # 1. exact fingerprints, in order of appearance
        by_fp: dict[int, deque[str]] = defaultdict(deque)
        for y in m.b.instructions:
            by_fp[b_of[(m.b.name, y.name)]].append(y.name)
        for x in m.a.instructions:
            bucket = by_fp.get(a_of[(m.a.name, x.name)])
            if bucket:
                pair(x.name, bucket.popleft(), "exact")
        # 2. anchors: roots, and parameters by number
        if m.a.root.name not in m.pairs and m.b.root.name not in reverse:
            pair(m.a.root.name, m.b.root.name, "root")
        left_b = [q for q in m.b.parameters if q.name not in reverse]
        left_a = [p for p in m.a.parameters if p.name not in m.pairs]
        for key in (_parameter_role, lambda p: p.parameter_number):
            by_key: dict[object, deque[str]] = defaultdict(deque)
            for q in left_b:
                if q.name not in reverse:
                    by_key[key(q)].append(q.name)
            for p in left_a:
                bucket = by_key.get(key(p))
                if p.name not in m.pairs and bucket:
                    pair(p.name, bucket.popleft(), "parameter")
        # 3. propagation until nothing changes; then hints and fuzzy, then again
        self._propagate(m, pair, reverse)
        self._by_metadata(m, pair, reverse)
        self._propagate(m, pair, reverse)
        self._fuzzy(m, pair, reverse)
        self._propagate(m, pair, reverse)

    def _propagate(self, m: ComputationMatch, pair, reverse: dict[str, str]) -> None:
        a_by, b_by = m.a.by_name, m.b.by_name
        changed = True
        while changed:
            changed = False
            # top-down: operands in the same position of matched pairs
            for x_name, y_name in list(m.pairs.items()):
                x, y = a_by[x_name], b_by[y_name]
                if len(x.operands) != len(y.operands):
                    continue
                for ox, oy in zip(x.operands, y.operands):
                    if ox in m.pairs or oy in reverse or ox not in a_by or oy not in b_by:
                        continue
                    if _compatible(a_by[ox], b_by[oy]):
                        pair(ox, oy, "top-down")
                        changed = True
            # bottom-up: an instruction whose operands are all matched
            index: dict[tuple, list[str]] = defaultdict(list)
            for x in m.a.instructions:
                if x.name not in m.pairs and x.operands:
                    index[(x.opcode, x.operands)].append(x.name)
                    index[("*", x.operands)].append(x.name)
            if not index:
                break
            for y in m.b.instructions:
                if y.name in reverse or not y.operands:
                    continue
                mapped = tuple(reverse.get(o) for o in y.operands)
                if None in mapped:
                    continue
                candidates = index.get((y.opcode, mapped)) or index.get(("*", mapped))
                while candidates and candidates[0] in m.pairs:
                    candidates.pop(0)
                if candidates:
                    pair(candidates.pop(0), y.name, "bottom-up")
                    changed = True

    def _by_metadata(self, m: ComputationMatch, pair, reverse: dict[str, str]) -> None:
        hints: dict[tuple, deque[str]] = defaultdict(deque)
        for y in m.unmatched_b:
            md = y.metadata
            if md.get("op_name") or md.get("source_line"):
                hints[(y.opcode, md.get("op_name"), md.get("source_line"))].append(y.name)
        for x in m.unmatched_a:
            md = x.metadata
            bucket = hints.get((x.opcode, md.get("op_name"), md.get("source_line")))
            if bucket:
                pair(x.name, bucket.popleft(), "metadata")

    def _fuzzy(self, m: ComputationMatch, pair, reverse: dict[str, str]) -> None:
        left_b: dict[str, list[Instruction]] = defaultdict(list)
        for y in m.unmatched_b:
            left_b[y.opcode].append(y)
        for opcode, xs in _group(m.unmatched_a).items():
            ys = left_b.get(opcode)
            if not ys or len(xs) > _FUZZY_LIMIT or len(ys) > _FUZZY_LIMIT:
                continue
            choices = [_signature(y) for y in ys]
            for x in xs:
                if not choices:
                    break
                best = process.extractOne(_signature(x), choices, scorer=fuzz.ratio,
                                          score_cutoff=_FUZZY_CUTOFF)
                if best is None:
                    continue
                index = best[2]
                pair(x.name, ys[index].name, "fuzzy")
                del ys[index], choices[index]


def _parameter_role(parameter: Instruction) -> tuple:
    """What a parameter stands for, when its metadata names it (JAX prints the
    argument's name: ``x``, ``params['w']``); a generic name says nothing."""
    name = parameter.metadata.get("op_name")
    return ("named", name) if name and name not in _GENERIC_PARAMETER_NAMES else ("unnamed", id(parameter))


_GENERIC_PARAMETER_NAMES = frozenset({"XLA_Args", "xla__device_data"})


def _group(instructions: list[Instruction]) -> dict[str, list[Instruction]]:
    groups: dict[str, list[Instruction]] = defaultdict(list)
    for i in instructions:
        groups[i.opcode].append(i)
    return groups


def _compatible(x: Instruction, y: Instruction) -> bool:
    """Can x and y be the same instruction, changed? Same opcode, or a constant
    that became a parameter (or the reverse)."""
    if x.opcode == y.opcode:
        return True
    return {x.opcode, y.opcode} == {"constant", "parameter"}


def _signature(instruction: Instruction) -> str:
    md = instruction.metadata
    return " ".join(filter(None, (instruction.opcode, str(instruction.shape),
                                  str(md.get("op_name") or ""), str(md.get("source_line") or ""),
                                  " ".join(f"{k}={v}" for k, v in _attribute_key(instruction)))))


def _computation_signature(computation: Computation) -> str:
    base = computation.name.rstrip("0123456789").rstrip("._")
    opcodes = " ".join(sorted({i.opcode for i in computation.instructions}))
    return f"{base} {len(computation.instructions)} {opcodes}"
