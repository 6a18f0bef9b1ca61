"""Matching computations and instructions of two versions of a module.

Names are useless for this: XLA renumbers them whenever anything earlier in
the trace changes. Matching is by structure, cheapest evidence first:

1. exact fingerprints: a hash of opcode, shape, attributes (not metadata),
   constant value and the fingerprints of the operands and called
   computations. Everything unchanged pairs here, in one pass;
2. anchors: the roots of paired computations;
3. propagation, repeated until nothing moves: top-down (operands in the
   same position of a matched pair, same opcode, or a constant that became
   a parameter) and bottom-up (an instruction whose operands are matched,
   to the one reading exactly their matches), in the spirit of GumTree and
   XLA's hlo_diff; then parameters nothing brought along, by name or number;
4. metadata hints: same opcode, op_name and source line;
5. fuzzy: rapidfuzz similarity of instruction signatures within an opcode
   bucket, for whatever is left (a few hundred at most).

Before all of these, what the unchanged pass (hlodiff/syntax/unchanged/) paired
as the same text but for names is taken as given (a ``Seed``, a name -> b
name): that is nearly everything, and those instructions are never looked
at again.

What stays unmatched was added or removed.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from rapidfuzz import fuzz, process

from ..model import Computation, Instruction, Module, cached
from ..syntax.unchanged import LinePairs, Seed, SeedSide

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

    unchanged: ClassVar[bool] = False  # see UnchangedMatch

    @property
    def unmatched_a(self) -> list[Instruction]:
        return [i for i in self.a.instructions if i.name not in self.pairs]

    @property
    def unmatched_b(self) -> list[Instruction]:
        matched = set(self.pairs.values())
        return [i for i in self.b.instructions if i.name not in matched]


class UnchangedMatch(ComputationMatch):
    """Computations the unchanged pass found equal line for line, names aside:
    every instruction pairs with the one at its place in the other, and
    nothing differs, so the pairs are listed only if something asks (the
    differ does not)."""

    unchanged = True

    def __init__(self, a: Computation, b: Computation):
        self.a, self.b = a, b

    @cached
    def pairs(self) -> dict[str, str]:
        return {x.name: y.name for x, y in zip(self.a.instructions, self.b.instructions)}

    @cached
    def how(self) -> dict[str, str]:
        return dict.fromkeys(self.pairs, "unchanged")


@dataclass
class Alignment:
    """The result of aligning module a with module b."""

    a: Module
    b: Module
    computations: list[ComputationMatch]
    only_a: list[Computation]
    only_b: list[Computation]


def align(a: Module, b: Module, seed: Seed | None = None) -> Alignment:
    """Match the computations and instructions of ``a`` and ``b``, starting
    from what the unchanged pass paired (``seed``), if it ran."""
    return _Aligner(a, b, seed or Seed()).run()


# --- fingerprints ------------------------------------------------------------------------

def _attribute_key(instruction: Instruction) -> tuple:
    return tuple([(name, " ".join(text.split())) for name, text in instruction.attribute_items
                  if name not in _IGNORED_ATTRIBUTES and name not in _CALL_ATTRIBUTES])


class _Fingerprints:
    """Name-free structural hashes of the instructions and computations of a
    module, computed as asked for. What the unchanged pass paired hashes by
    a key its twin in the other module shares: it is paired already."""

    def __init__(self, module: Module, seed: SeedSide):
        self.module = module
        self.seed = seed
        self.of_computation: dict[str, int] = {}
        # computation -> {instruction name: fingerprint}, for those the seed left unpaired
        self.of_instructions: dict[str, dict[str, int]] = {}
        self._roots: dict[str, int] = {}  # computation -> fingerprint of its root

    def computation(self, name: str) -> int:
        known = self.of_computation.get(name)
        if known is not None:
            return known
        computation = self.module.by_name.get(name)
        if computation is None:
            return hash(("missing", name))
        if name in self.seed.identical:
            fp = hash(self.seed.identical[name])
        else:
            self.of_computation[name] = hash(("cycle", name))  # guards against recursion
            params = tuple(str(p.shape) for p in computation.parameters)
            fp = hash((self.instructions(name), params))
        self.of_computation[name] = fp
        return fp

    def instructions(self, name: str) -> int:
        """Fingerprint the instructions of computation ``name`` the seed left
        unpaired; returns its root's."""
        known = self._roots.get(name)
        if known is not None:
            return known
        computation = self.module.by_name[name]
        paired = self.seed.paired.get(name, {})
        self._roots[name] = hash(("cycle", name))  # guards against recursion
        local: dict[str, int] = {}
        self.of_instructions[name] = local
        of_computation = self.computation
        for instruction in computation.instructions:
            if instruction.name in paired:
                continue
            called = tuple(map(of_computation, instruction.called_computations))
            operands = tuple([local[o] if o in local else (_seeded(paired[o]) if o in paired
                                                           else hash(o))
                              for o in instruction.operands])
            # A constant's value is part of what it is; a parameter's number is
            # not (inserting one renumbers the rest): equal-shaped parameters
            # pair in order, and the differ reports any renumbering.
            value = instruction.operand_text if instruction.opcode == "constant" else ""
            fp = hash((instruction.opcode, str(instruction.shape), _attribute_key(instruction),
                       value, operands, called))
            local[instruction.name] = fp
        root = computation.root.name
        self._roots[name] = local[root] if root in local else _seeded(paired[root])
        return self._roots[name]


def _seeded(key: str) -> int:
    """The fingerprint of what the unchanged pass paired: a key both sides
    share (see _Fingerprints)."""
    return hash(("unchanged", key))


# --- the aligner ---------------------------------------------------------------------------

class _Aligner:
    def __init__(self, a: Module, b: Module, seed: Seed):
        self.a, self.b = a, b
        self.seed = seed
        self.fa, self.fb = _Fingerprints(a, seed.side("a")), _Fingerprints(b, seed.side("b"))
        self.comp_pairs: dict[str, str] = {}
        self.comp_paired_b: set[str] = set()
        self.matches: list[ComputationMatch] = []
        self.queue: deque[tuple[str, str]] = deque()

    def run(self) -> Alignment:
        self._pair_computations(self.a.entry.name, self.b.entry.name)
        for a_name, b_name in self.seed.computation_pairs():
            self._pair_computations(a_name, b_name)
        self._drain()
        # Computations not reached through calls: exact fingerprints, then names.
        self._pair_leftover_computations()
        self._drain()
        only_a = [c for c in self.a.computations if c.name not in self.comp_pairs]
        only_b = [c for c in self.b.computations if c.name not in self.comp_paired_b]
        return Alignment(self.a, self.b, self.matches, only_a, only_b)

    def _pair_computations(self, a_name: str, b_name: str) -> None:
        if a_name in self.comp_pairs or b_name in self.comp_paired_b:
            return
        if a_name not in self.a.by_name or b_name not in self.b.by_name:
            return
        self.comp_pairs[a_name] = b_name
        self.comp_paired_b.add(b_name)
        self.queue.append((a_name, b_name))

    def _drain(self) -> None:
        while self.queue:
            a_name, b_name = self.queue.popleft()
            a, b = self.a.by_name[a_name], self.b.by_name[b_name]
            seeded = self.seed.instruction_pairs(a_name, b_name)
            if seeded is None:  # unchanged line for line; what it calls is paired with the seed
                self.matches.append(UnchangedMatch(a, b))
                continue
            match = ComputationMatch(a, b)
            _InstructionMatcher(match, self.fa, self.fb, seeded).run()
            self._mark_same_text(match)
            self.matches.append(match)
            for x_name, y_name in match.pairs.items():
                x, y = match.a.by_name[x_name], match.b.by_name[y_name]
                if x_name in seeded.pairs and x_name not in seeded.readers:
                    continue  # unchanged: what it calls is paired with the seed
                for ca, cb in zip(x.called_computations, y.called_computations):
                    self._pair_computations(ca, cb)

    def _mark_same_text(self, match: ComputationMatch) -> None:
        """Pairs the unchanged pass knows to be the same text but for names
        (see Seed.same_text) are unchanged: the differ need not read them."""
        same = self.seed.same_text(match.a.name, match.b.name)
        if same is None:
            return
        how = match.how
        for x, y in match.pairs.items():
            if how[x] != "unchanged" and same(x, y):
                how[x] = "unchanged"

    def _pair_leftover_computations(self) -> None:
        left_a = [c for c in self.a.computations if c.name not in self.comp_pairs]
        left_b = [c for c in self.b.computations if c.name not in self.comp_paired_b]
        by_fp: dict[int, list[Computation]] = defaultdict(list)
        for c in left_b:
            by_fp[self.fb.computation(c.name)].append(c)
        rest_a = []
        for c in left_a:
            bucket = by_fp.get(self.fa.computation(c.name))
            if bucket:
                self._pair_computations(c.name, bucket.pop(0).name)
            else:
                rest_a.append(c)
        rest_b = [c for c in left_b if c.name not in self.comp_paired_b]
        if not rest_a or not rest_b:
            return
        for c, d in _most_similar(rest_a, rest_b, _computation_signature):
            self._pair_computations(c.name, d.name)


class _InstructionMatcher:
    """Pairs the instructions of one computation pair (see the module docstring)."""

    def __init__(self, m: ComputationMatch, fa: _Fingerprints, fb: _Fingerprints,
                 seeded: LinePairs):
        self.m = m
        self.a_by, self.b_by = m.a.by_name, m.b.by_name
        fa.instructions(m.a.name), fb.instructions(m.b.name)
        self.fp_a = fa.of_instructions[m.a.name]  # of what the seed left unpaired
        self.fp_b = fb.of_instructions[m.b.name]
        self.reverse: dict[str, str] = {}
        self.fresh: deque[tuple[str, str]] = deque()  # pairs whose operands are not yet looked at
        # Paired by the pass: in bulk, as it is most of a big computation.
        # Only those that read a changed instruction are looked at again, to
        # pair what they read.
        pairs = {x: y for x, y in seeded.pairs.items() if x in self.a_by and y in self.b_by}
        m.pairs.update(pairs)
        m.how.update(dict.fromkeys(pairs, "unchanged"))
        self.reverse.update(zip(pairs.values(), pairs))
        self.fresh.extend((x, y) for x, y in pairs.items() if x in seeded.readers)

    def pair(self, x: str, y: str, how: str) -> None:
        self.m.pairs[x] = y
        self.m.how[x] = how
        self.reverse[y] = x
        self.fresh.append((x, y))

    def done(self) -> bool:
        """Is every instruction of one side paired? Then nothing is left to pair."""
        return len(self.m.pairs) in (len(self.m.a.instructions), len(self.m.b.instructions))

    def run(self) -> None:
        m = self.m
        # 1. exact fingerprints. Unique ones first: they are certain, and
        # propagating from them places the duplicates (a broadcast of the
        # constant 1 occurs dozens of times) by their context. Then whatever
        # duplicates are left, in order, preferring the same op_name and line.
        # Parameters wait: an inserted one would shift every equal-shaped
        # parameter after it, while their users bring them along.
        self._exact(unique_only=True)
        self._propagate()
        if self.done():
            return
        self._exact(unique_only=False)
        # 2. anchors: the roots
        if m.a.root.name not in m.pairs and m.b.root.name not in self.reverse:
            self.pair(m.a.root.name, m.b.root.name, "root")
        # 3. propagation, then constants that became parameters, parameters
        # nothing brought along, metadata hints and fuzzy similarity, each
        # followed by propagation again
        self._propagate()
        for phase in (self._constants_become_parameters, self._parameters, self._by_metadata,
                      self._fuzzy, self._constants_become_parameters):
            if self.done():
                return
            phase()
            self._propagate()

    def _exact(self, unique_only: bool) -> None:
        buckets_a: dict[int, list[str]] = defaultdict(list)
        buckets_b: dict[int, list[str]] = defaultdict(list)
        for x in self.m.a.instructions:
            if x.name not in self.m.pairs and x.opcode != "parameter":
                buckets_a[self.fp_a.get(x.name, _seeded(x.name))].append(x.name)
        for y in self.m.b.instructions:
            if y.name not in self.reverse and y.opcode != "parameter":
                buckets_b[self.fp_b.get(y.name, _seeded(y.name))].append(y.name)
        for fp, xs in buckets_a.items():
            ys = buckets_b.get(fp)
            if not ys:
                continue
            if len(xs) == len(ys) == 1:
                self.pair(xs[0], ys[0], "exact")
            elif not unique_only:
                self._pair_in_order(xs, ys)

    def _pair_in_order(self, xs: list[str], ys: list[str]) -> None:
        """Equal subtrees: same op_name and line first, then order of appearance."""
        by_hint: dict[tuple, deque[str]] = defaultdict(deque)
        for y in ys:
            by_hint[_hint(self.b_by[y])].append(y)
        taken: set[str] = set()
        rest = []
        for x in xs:
            bucket = by_hint.get(_hint(self.a_by[x]))
            if bucket:
                y = bucket.popleft()
                taken.add(y)
                self.pair(x, y, "exact")
            else:
                rest.append(x)
        for x, y in zip(rest, (y for y in ys if y not in taken)):
            self.pair(x, y, "exact")

    def _propagate(self) -> None:
        """Top-down from new pairs, then bottom-up, until nothing changes."""
        a_by, b_by, pairs, reverse = self.a_by, self.b_by, self.m.pairs, self.reverse
        while True:
            # top-down: operands in the same position of a matched pair
            while self.fresh:
                x_name, y_name = self.fresh.popleft()
                x, y = a_by[x_name], b_by[y_name]
                if len(x.operands) != len(y.operands):
                    continue
                for ox, oy in zip(x.operands, y.operands):
                    if ox in pairs or oy in reverse or ox not in a_by or oy not in b_by:
                        continue
                    if _compatible(a_by[ox], b_by[oy]):
                        self.pair(ox, oy, "top-down")
            # bottom-up: an instruction whose operands are all matched
            index: dict[tuple, list[str]] = defaultdict(list)
            for x in self.m.a.instructions:
                if x.name not in pairs and x.operands:
                    index[(x.opcode, x.operands)].append(x.name)
                    # an opcode change (divide -> multiply) keeps operands and shape
                    index[("*", str(x.shape), x.operands)].append(x.name)
            for y in self.m.b.instructions:
                if y.name in reverse or not y.operands:
                    continue
                mapped = tuple(reverse.get(o) for o in y.operands)
                if None in mapped:
                    continue
                candidates = index.get((y.opcode, mapped)) or index.get(("*", str(y.shape), mapped))
                while candidates and candidates[0] in pairs:
                    candidates.pop(0)
                if candidates:
                    self.pair(candidates.pop(0), y.name, "bottom-up")
            if not self.fresh:
                return

    def _constants_become_parameters(self) -> None:
        """A constant in one run, an argument in the other (``lr`` passed to jit).

        The users match; at the constant's operand position the other side
        reads a parameter, possibly through a reshape or broadcast the
        framework added. Both directions are looked for.
        """
        m = self.m
        for side_a, side_b, matched, paired, flip in (
                (m.a, m.b, m.pairs, self.reverse, False), (m.b, m.a, self.reverse, m.pairs, True)):
            if not any(x.name not in matched and x.opcode == "constant" for x in side_a.instructions):
                continue  # the usual case: every constant already has its twin
            users = defaultdict(list)
            for instruction in side_a.instructions:
                for position, operand in enumerate(instruction.operands):
                    users[operand].append((instruction, position))
            for x in side_a.instructions:
                if x.opcode != "constant" or x.name in matched:
                    continue
                for user, position in users.get(x.name, ()):
                    twin = side_b.by_name.get(matched.get(user.name, ""))
                    if twin is None or position >= len(twin.operands):
                        continue
                    target = _through_plumbing(side_b, twin.operands[position])
                    if target is not None and target.opcode == "parameter" \
                            and target.name not in paired:
                        self.pair(*((target.name, x.name) if flip else (x.name, target.name)),
                                  "constant-parameter")
                        break

    def _parameters(self) -> None:
        """Parameters left over: by what they stand for (their name), then by number."""
        m = self.m
        left_b = [q for q in m.b.parameters if q.name not in self.reverse]
        left_a = [p for p in m.a.parameters if p.name not in m.pairs]
        for key in (_parameter_role, lambda p: p.parameter_number):
            by_key: dict[object, deque[str]] = defaultdict(deque)
            for q in left_b:
                if q.name not in self.reverse:
                    by_key[key(q)].append(q.name)
            for p in left_a:
                bucket = by_key.get(key(p))
                if p.name not in m.pairs and bucket:
                    self.pair(p.name, bucket.popleft(), "parameter")

    def _by_metadata(self) -> None:
        hints: dict[tuple, deque[str]] = defaultdict(deque)
        for y in self.m.unmatched_b:
            if y.metadata.get("op_name") or y.metadata.get("source_line"):
                hints[(y.opcode,) + _hint(y)].append(y.name)
        for x in self.m.unmatched_a:
            bucket = hints.get((x.opcode,) + _hint(x))
            if bucket:
                self.pair(x.name, bucket.popleft(), "metadata")

    def _fuzzy(self) -> None:
        left_b: dict[str, list[Instruction]] = defaultdict(list)
        for y in self.m.unmatched_b:
            left_b[y.opcode].append(y)
        for opcode, xs in _group(self.m.unmatched_a).items():
            ys = left_b.get(opcode)
            if not ys or len(xs) > _FUZZY_LIMIT or len(ys) > _FUZZY_LIMIT:
                continue
            for x, y in _most_similar(xs, ys, _signature):
                self.pair(x.name, y.name, "fuzzy")


def _most_similar(xs: list, ys: list, signature) -> Iterator[tuple]:
    """Greedy pairs: each x, in order, with the most similar y still free
    (rapidfuzz ratio of their signatures, at least _FUZZY_CUTOFF)."""
    ys = list(ys)
    choices = [signature(y) for y in ys]
    for x in xs:
        if not choices:
            return
        best = process.extractOne(signature(x), choices, scorer=fuzz.ratio,
                                  score_cutoff=_FUZZY_CUTOFF)
        if best is not None:
            index = best[2]
            yield x, ys[index]
            del ys[index], choices[index]


def _hint(instruction: Instruction) -> tuple:
    md = instruction.metadata
    return (md.get("op_name"), md.get("source_line"), md.get("stack_frame_id"))


_PLUMBING = frozenset({"reshape", "bitcast", "broadcast", "convert", "copy"})


def _through_plumbing(computation: Computation, name: str) -> Instruction | None:
    """The instruction ``name`` reads through single-operand reshapes and casts."""
    instruction = computation.by_name.get(name)
    for _ in range(8):
        if instruction is None or instruction.opcode not in _PLUMBING or len(instruction.operands) != 1:
            return instruction
        instruction = computation.by_name.get(instruction.operands[0])
    return instruction


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
