"""Matching computations and instructions of two versions of a module.

Names are useless for this: XLA renumbers them whenever anything earlier in
the trace changes. Matching is by structure, cheapest evidence first:

1. exact fingerprints: a hash of opcode, shape, what the attributes mean
   (not metadata; XLA's defaults and spelling aside),
   constant value and the fingerprints of the operands and called
   computations. Everything unchanged pairs here, in one pass;
2. anchors: the parameters, by number, where the two parameter lists agree
   position by position (a program's parameters are its interface: two
   operands swapped must read as two operands swapped, not as two
   renumbered parameters); else the longest run they share in order; and
   the roots of paired computations;
3. propagation, in rounds until nothing moves: top-down (operands in the
   same position of a matched pair, same opcode, or a constant that became
   a parameter) and bottom-up (an instruction whose operands are matched,
   to the one reading exactly their matches), in the spirit of GumTree and
   XLA's hlo_diff; then parameters nothing brought along, by name or number;
4. metadata hints: same opcode, op_name and source line;
5. fuzzy: rapidfuzz similarity of instruction signatures within an opcode
   bucket, for whatever is left (a few hundred at most).

Every phase decides from what both sides offer at once, never in the order
one side lists its instructions: where evidence conflicts, all candidates
are ranked by a key that treats both runs alike and taken best first. So
``align(a, b)`` and ``align(b, a)`` pair the same instructions.

Computations are paired the entry with the entry, then by the calls of
paired instructions (most calls agreeing first), then, for what no call
reached, by exact fingerprint and by similarity. A paired instruction whose called computation is paired with
another computation is a change the differ reports.

Before all of these, what the unchanged pass (hlodiff/syntax/unchanged/) paired
as the same text but for names is taken as given (a ``Seed``, a name -> b
name): that is nearly everything, and those instructions are never looked
at again.

What stays unmatched was added or removed.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import count
from typing import ClassVar

from rapidfuzz import fuzz
from rapidfuzz.process import cdist

from ..model import CALL_ATTRIBUTES, GENERIC_PARAMETER_NAMES, Computation, Instruction, Module, cached
from ..syntax.unchanged import LinePairs, Seed, SeedSide

_FUZZY_CUTOFF = 70.0
_FUZZY_LIMIT = 2000  # per opcode bucket and side; beyond it fuzzy matching is skipped
_PAIRWISE_LIMIT = 20_000  # equal instructions weighed pair by pair; beyond, paired in order
_NONE: frozenset = frozenset()  # the attribute keys of an instruction with none
# Not part of what an instruction computes (metadata), or naming other
# instructions (control-predecessors: compared through the pairing instead).
_IGNORED_ATTRIBUTES = frozenset({"metadata", "statistics", "control-predecessors",
                                 "control_predecessors"})


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
    """The result of aligning module a with module b.

    ``computation_pairs`` maps every paired computation of a to its partner
    in b; ``only_a`` / ``only_b`` are the computations left unpaired.
    """

    a: Module
    b: Module
    computations: list[ComputationMatch]
    only_a: list[Computation]
    only_b: list[Computation]
    computation_pairs: dict[str, str] = field(default_factory=dict)
    fingerprints: tuple[Callable[[str], int], Callable[[str], int]] | None = \
        field(default=None, repr=False)

    @cached_property
    def frames_differ(self) -> bool:
        """Do the stack frame tables differ, so that one stack_frame_id may
        name another place in each run?"""
        return self.a.frames != self.b.frames

    def same_code(self, a_name: str, b_name: str) -> bool:
        """Do computation ``a_name`` of a and ``b_name`` of b compute the same,
        whatever they are called? (Two reducers that both add are alike.)"""
        if self.fingerprints is None:
            return False
        of_a, of_b = self.fingerprints
        if of_a(a_name) == of_b(b_name) or _small_and_alike(self.a.by_name.get(a_name),
                                                            self.b.by_name.get(b_name)):
            return True
        # The fingerprints above hash what the unchanged pass paired by a key
        # only its twin shares: a copy of a paired computation (JAX traces a
        # function again inside jax.checkpoint and prints _bernoulli_8 next
        # to _bernoulli) hashes apart from its original. Hashed from what they
        # hold alone, a copy and its original are alike.
        plain_a, plain_b = self._plain_fingerprints
        return plain_a.computation(a_name) == plain_b.computation(b_name)

    @cached_property
    def _plain_fingerprints(self) -> tuple[_Fingerprints, _Fingerprints]:
        return _Fingerprints(self.a, SeedSide({}, {})), _Fingerprints(self.b, SeedSide({}, {}))


_SMALL = 8  # instructions: a reducer or a comparator, which a program holds by the dozen


def _small_and_alike(x: Computation | None, y: Computation | None) -> bool:
    """Two small computations that call nothing and compute alike, names aside.
    Their fingerprints can differ where the unchanged pass keyed a pair by its
    shared name (``add_float_.3`` in both runs), not by what it holds, while
    another run-a ``add`` paired elsewhere: a Keras step's reduce then read
    "called_computation add -> add" (a helper session's run)."""
    if x is None or y is None or len(x.instructions) != len(y.instructions) \
            or len(x.instructions) > _SMALL:
        return False

    def body(computation: Computation) -> tuple | None:
        place = {i.name: k for k, i in enumerate(computation.instructions)}
        if any(i.called_computations for i in computation.instructions):
            return None
        return tuple((i.opcode, str(i.shape), i.operand_text if i.opcode in ("constant", "parameter")
                      else "", attribute_key(i), tuple(place.get(o, -1) for o in i.operands),
                      i.name == computation.root.name) for i in computation.instructions)

    shape = body(x)
    return shape is not None and shape == body(y)


def align(a: Module, b: Module, seed: Seed | None = None) -> Alignment:
    """Match the computations and instructions of ``a`` and ``b``, starting
    from what the unchanged pass paired (``seed``), if it ran."""
    _forget_meanings()
    return _Aligner(a, b, seed or Seed()).run()


# --- fingerprints ------------------------------------------------------------------------

# One number per distinct meaning of an instruction's attributes, told
# apart by equality, for fingerprints to hash: the meaning hashed as it is
# can collide (CPython's hash(-1) is hash(-2), so padding=-2_-1 and
# padding=-2_-2 fingerprinted alike and the differ, trusting equal
# fingerprints, compared no attribute: a campaign on XLA's parser test
# PadHasNegativePadding). Shared by both runs, so that equal numbers are
# equal meanings; a few hundred per diff, compared within one stage's
# alignment and diff only.
_MEANING_NUMBERS: dict[frozenset, int] = {}
_NEXT_NUMBER = count()
# Kept across diffs up to this many: a long pytest or notebook session
# diffs again and again (see _forget_meanings).
MEANINGS_KEPT = 100_000


def meaning_number(keys: frozenset) -> int:
    """The number that stands for attribute keys ``keys`` in fingerprints."""
    number = _MEANING_NUMBERS.get(keys)
    return number if number is not None else \
        _MEANING_NUMBERS.setdefault(keys, next(_NEXT_NUMBER))


_NO_MEANING = meaning_number(_NONE)


def _forget_meanings() -> None:
    """Let earlier diffs' numbers go, once there are many, before a stage
    is aligned. A number is never given again, so no two meanings share one;
    no attributes at all keeps its number (fingerprints hash it as such)."""
    if len(_MEANING_NUMBERS) > MEANINGS_KEPT:
        _MEANING_NUMBERS.clear()
        _MEANING_NUMBERS[_NONE] = _NO_MEANING


def attribute_key(instruction: Instruction) -> tuple:
    """The attributes that take part in what an instruction computes, spacing aside."""
    return tuple([(name, " ".join(text.split())) for name, text in instruction.attribute_items
                  if name not in _IGNORED_ATTRIBUTES and name not in CALL_ATTRIBUTES])


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
        # what attributes mean, by their text (and the opcode and shape that
        # give their defaults): a few hundred texts among 100,000 lines
        self._meanings: dict[tuple, int] = {}

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
            # not (inserting one renumbers the rest): parameters are anchored
            # by number separately, and the differ reports any renumbering.
            value = instruction.operand_text if instruction.opcode == "constant" else ""
            # What the attributes mean, as the differ compares them: an
            # attribute at XLA's default (``frontend_attributes={}``) or
            # spelled otherwise is the same instruction, wherever it is.
            attributes = self._meaning(instruction) if instruction.attribute_items \
                else _NO_MEANING
            fp = hash((instruction.opcode, str(instruction.shape), attributes, value, operands,
                       called))
            local[instruction.name] = fp
        root = computation.root.name
        self._roots[name] = local[root] if root in local else _seeded(paired[root])
        return self._roots[name]

    def _meaning(self, instruction: Instruction) -> int:
        text = (instruction.opcode, str(instruction.shape), attribute_key(instruction))
        meaning = self._meanings.get(text)
        if meaning is None:
            meaning = self._meanings[text] = meaning_number(_compiled_keys(instruction))
        return meaning


def _seeded(key: str) -> int:
    """The fingerprint of what the unchanged pass paired: a key both sides
    share (see _Fingerprints)."""
    return hash(("unchanged", key))


# --- choosing among candidates ---------------------------------------------------------------

def _take_best(candidates: Iterable[tuple[tuple, str, str]], free_a: Callable[[str], bool],
               free_b: Callable[[str], bool]) -> list[tuple[str, str]]:
    """Pairs from ``(key, x, y)`` candidates, lowest key first, each side used once.

    Keys must treat both runs alike (a sum or difference of positions, a
    symmetric score), so that the choice does not depend on which run is
    called a: swapping the runs swaps the pairs and nothing else.
    """
    chosen = []
    used_a: set[str] = set()
    used_b: set[str] = set()
    for _, x, y in sorted(candidates, key=lambda c: c[0]):
        if x in used_a or y in used_b or not free_a(x) or not free_b(y):
            continue
        used_a.add(x)
        used_b.add(y)
        chosen.append((x, y))
    return chosen


def _closeness(i: int, j: int) -> tuple[int, int, int]:
    """How close two positions are, the same whichever side each comes from."""
    return abs(i - j), i + j, min(i, j)


# --- the aligner ---------------------------------------------------------------------------

class _Aligner:
    def __init__(self, a: Module, b: Module, seed: Seed):
        self.a, self.b = a, b
        self.seed = seed
        self.fa, self.fb = _Fingerprints(a, seed.side("a")), _Fingerprints(b, seed.side("b"))
        self.comp_pairs: dict[str, str] = {}
        self.comp_paired_b: set[str] = set()
        self.matches: list[ComputationMatch] = []
        self.pending: list[tuple[str, str]] = []  # paired, instructions not matched yet
        self.position_a = {c.name: n for n, c in enumerate(a.computations)}
        self.position_b = {c.name: n for n, c in enumerate(b.computations)}

    def run(self) -> Alignment:
        self._pair_computations(self.a.entry.name, self.b.entry.name)
        for a_name, b_name in self.seed.computation_pairs():
            self._pair_computations(a_name, b_name)
        self._drain()  # the calls of paired instructions pair what they call
        self._pair_exact_computations()  # computations no call reached: the same code first
        self._drain()
        self._pair_leftover_computations()
        self._drain()
        only_a = [c for c in self.a.computations if c.name not in self.comp_pairs]
        only_b = [c for c in self.b.computations if c.name not in self.comp_paired_b]
        return Alignment(self.a, self.b, self.matches, only_a, only_b, dict(self.comp_pairs),
                         (self.fa.computation, self.fb.computation))

    def _pair_computations(self, a_name: str, b_name: str) -> None:
        if a_name in self.comp_pairs or b_name in self.comp_paired_b:
            return
        if a_name not in self.a.by_name or b_name not in self.b.by_name:
            return
        self.comp_pairs[a_name] = b_name
        self.comp_paired_b.add(b_name)
        self.pending.append((a_name, b_name))

    def _free_a(self, name: str) -> bool:
        return name not in self.comp_pairs

    def _free_b(self, name: str) -> bool:
        return name not in self.comp_paired_b

    def _pair_exact_computations(self) -> None:
        """Computations with the same fingerprint: the same code, whatever their names."""
        by_fp: dict[int, list[Computation]] = defaultdict(list)
        for c in self.b.computations:
            if self._free_b(c.name):
                by_fp[self.fb.computation(c.name)].append(c)
        candidates = []
        for c in self.a.computations:
            if not self._free_a(c.name):
                continue
            for d in by_fp.get(self.fa.computation(c.name), ()):
                candidates.append(((_name_distance(c.name, d.name),
                                    *_closeness(self.position_a[c.name], self.position_b[d.name])),
                                   c.name, d.name))
        for x, y in _take_best(candidates, self._free_a, self._free_b):
            self._pair_computations(x, y)

    def _drain(self) -> None:
        """Match the instructions of every pending computation pair; the calls of
        paired instructions then pair the computations they call, in waves, the
        computations called by more agreeing pairs first."""
        while self.pending:
            wave, self.pending = self.pending, []
            votes: dict[tuple[str, str], int] = defaultdict(int)
            for a_name, b_name in wave:
                seeded = self.seed.instruction_pairs(a_name, b_name)
                match = self._match(a_name, b_name, seeded)
                self.matches.append(match)
                if match.unchanged:
                    continue  # what it calls is paired with the seed
                for x_name, y_name in match.pairs.items():
                    if x_name in seeded.pairs and x_name not in seeded.readers:
                        continue  # unchanged: what it calls is paired with the seed
                    x, y = match.a.by_name[x_name], match.b.by_name[y_name]
                    for ca, cb in called_pairs(x, y):
                        votes[(ca, cb)] += 1
            votes = {(ca, cb): n for (ca, cb), n in votes.items()
                     if ca in self.a.by_name and cb in self.b.by_name}
            # the same code first (a reducer that takes the maximum pairs with one
            # that does, whatever an instruction pairing that is off says), then
            # the most calls agreeing
            candidates = [((self.fa.computation(ca) != self.fb.computation(cb), -n,
                            _name_distance(ca, cb),
                            *_closeness(self.position_a.get(ca, 0), self.position_b.get(cb, 0))),
                           ca, cb) for (ca, cb), n in {**votes, **self._crossed(votes)}.items()]
            for x, y in _take_best(candidates, self._free_a, self._free_b):
                self._pair_computations(x, y)

    def _crossed(self, votes: dict[tuple[str, str], int]) -> dict[tuple[str, str], int]:
        """Calls that now go to another computation, both computations unchanged:
        reduce(to_apply=max) became reduce(to_apply=add), max and add in both
        runs. The call votes max with add, which would make two changed bodies;
        pairing each with its own code leaves one changed call, the fewer
        changes. Offered only when both computations of the voted pair have
        their code free on the other side (a body that changed keeps its vote)."""
        code_a: dict[int, list[str]] = defaultdict(list)
        code_b: dict[int, list[str]] = defaultdict(list)
        for c in self.a.computations:
            if self._free_a(c.name):
                code_a[self.fa.computation(c.name)].append(c.name)
        for c in self.b.computations:
            if self._free_b(c.name):
                code_b[self.fb.computation(c.name)].append(c.name)
        out: dict[tuple[str, str], int] = {}
        for (ca, cb), n in votes.items():
            own_b, own_a = code_b.get(self.fa.computation(ca)), code_a.get(self.fb.computation(cb))
            if own_b and own_a and self.fa.computation(ca) != self.fb.computation(cb):
                out.update({(ca, y): n for y in own_b})
                out.update({(x, cb): n for x in own_a})
        return out

    def _match(self, a_name: str, b_name: str, seeded: LinePairs | None) -> ComputationMatch:
        a, b = self.a.by_name[a_name], self.b.by_name[b_name]
        if seeded is None:  # unchanged line for line, names aside
            return UnchangedMatch(a, b)
        match = ComputationMatch(a, b)
        _InstructionMatcher(match, self.fa, self.fb, seeded).run()
        self._mark_same_text(match)
        return match

    def _mark_same_text(self, match: ComputationMatch) -> None:
        """Pairs the unchanged pass knows to be the same text but for names
        (see Seed.same_text) are unchanged, the differ need not read them,
        when the names stand for the same things: each operand is paired with
        the other's, each called computation is the twin of the other's.
        subtract(a, b) and subtract(b, a) are the same text but for names."""
        same = self.seed.same_text(match.a.name, match.b.name)
        if same is None:
            return
        how, pairs = match.how, match.pairs
        for x, y in pairs.items():
            if how[x] == "unchanged" or not same(x, y):
                continue
            xi, yi = match.a.by_name[x], match.b.by_name[y]
            if all(pairs.get(o) == p for o, p in zip(xi.operands, yi.operands)) and all(
                    self.seed.identical.get(ca) == cb or self.comp_pairs.get(ca) == cb
                    for ca, cb in zip(xi.called_computations, yi.called_computations)):
                how[x] = "unchanged"

    def _pair_leftover_computations(self) -> None:
        """Computations no call reached: by similarity of name and content."""
        rest_a = [c for c in self.a.computations if self._free_a(c.name)]
        rest_b = [c for c in self.b.computations if self._free_b(c.name)]
        if not rest_a or not rest_b:
            return
        for x, y in _most_similar(rest_a, rest_b, _computation_signature,
                                  lambda c: self.position_a[c.name],
                                  lambda c: self.position_b[c.name]):
            self._pair_computations(x.name, y.name)


def called_pairs(x: Instruction, y: Instruction) -> list[tuple[str, str]]:
    """The computations ``x`` and ``y`` call, paired by role: ``condition`` with
    ``condition`` and ``body`` with ``body`` whatever order they are printed
    in; within one attribute (``branch_computations``), by position."""
    if not x.attribute_items or not y.attribute_items:
        return []
    calls_x, calls_y = calls(x), calls(y)
    return [(cx, cy) for attribute, names_x in calls_x.items()
            for cx, cy in zip(names_x, calls_y.get(attribute, ()))]


def calls(instruction: Instruction) -> dict[str, list[str]]:
    """The computations ``instruction`` calls, by attribute, in printed order."""
    out: dict[str, list[str]] = {}
    if not instruction.attribute_items or CALL_ATTRIBUTES.isdisjoint(
            name for name, _ in instruction.attribute_items):
        return out
    for attribute in instruction.attributes:
        if attribute.name in CALL_ATTRIBUTES:
            out[attribute.name] = list(attribute.reader.computation_names(attribute))
    return out


def _name_distance(a: str, b: str) -> float:
    """0 for the same name, up to 100 for nothing in common (symmetric)."""
    return 100.0 - fuzz.ratio(a, b)


class _InstructionMatcher:
    """Pairs the instructions of one computation pair (see the module docstring)."""

    def __init__(self, m: ComputationMatch, fa: _Fingerprints, fb: _Fingerprints,
                 seeded: LinePairs):
        self.m = m
        self.fa, self.fb = fa, fb
        self.a_by, self.b_by = m.a.by_name, m.b.by_name
        fa.instructions(m.a.name), fb.instructions(m.b.name)
        self.fp_a = fa.of_instructions[m.a.name]  # of what the seed left unpaired
        self.fp_b = fb.of_instructions[m.b.name]
        self.position_a = {i.name: n for n, i in enumerate(m.a.instructions)}
        self.position_b = {i.name: n for n, i in enumerate(m.b.instructions)}
        self.reverse: dict[str, str] = {}
        self.fresh: list[tuple[str, str]] = []  # pairs whose neighbours are not yet looked at
        self._users_a: dict[str, list[Instruction]] | None = None
        self._users_b: dict[str, list[Instruction]] | None = None
        self._by_operands_a: dict[tuple, list[Instruction]] | None = None
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

    def free_a(self, x: str) -> bool:
        return x not in self.m.pairs

    def free_b(self, y: str) -> bool:
        return y not in self.reverse

    def take(self, candidates: Iterable[tuple[tuple, str, str]], how: str) -> None:
        for x, y in _take_best(candidates, self.free_a, self.free_b):
            self.pair(x, y, how)

    def calls_differ(self, x: str, y: str) -> bool:
        """Do x and y call computations of different code (a reduce that takes
        the maximum, one that adds)?"""
        called_x = self.a_by[x].called_computations if self.a_by[x].attribute_items else ()
        called_y = self.b_by[y].called_computations if self.b_by[y].attribute_items else ()
        if not called_x and not called_y:
            return False
        return tuple(map(self.fa.computation, called_x)) != \
            tuple(map(self.fb.computation, called_y))

    def attributes_differ(self, x: str, y: str) -> bool:
        """Do x and y differ in what they compute beyond opcode and shape (two
        get-tuple-elements of one tuple, index 0 and index 1)? Among users of
        one paired value, the one with the same attributes is the partner,
        wherever the text placed it."""
        x, y = self.a_by[x], self.b_by[y]
        if not x.attribute_items and not y.attribute_items:
            return False
        if attribute_key(x) == attribute_key(y):
            return False
        # spelled otherwise, maybe the same: XLA's defaults and spelling aside
        return _compiled_keys(x) != _compiled_keys(y)

    def closeness(self, x: str, y: str) -> tuple[int, int, int]:
        return _closeness(self.position_a[x], self.position_b[y])

    def done(self) -> bool:
        """Is every instruction of one side paired? Then nothing is left to pair."""
        return len(self.m.pairs) in (len(self.m.a.instructions), len(self.m.b.instructions))

    def run(self) -> None:
        m = self.m
        # 1. the parameters, by number where the interface agrees: before
        # anything else, so that no operand swap can pair them crosswise.
        self._anchor_parameters()
        # 2. exact fingerprints. Unique ones first: they are certain, and
        # propagating from them places the duplicates (a broadcast of the
        # constant 1 occurs dozens of times) by their context. Then whatever
        # duplicates are left, preferring the same op_name and line, then
        # the closest place.
        self._exact(unique_only=True)
        self._propagate()
        if self.done():
            return
        self._exact(unique_only=False)
        if self.free_a(m.a.root.name) and self.free_b(m.b.root.name):
            self.pair(m.a.root.name, m.b.root.name, "root")
        # 3. propagation, then constants that became parameters, parameters
        # nothing brought along, metadata hints and fuzzy similarity, each
        # followed by propagation again
        self._propagate()
        for phase in (self._constants_become_parameters, self._parameters, self._by_metadata,
                      self._fuzzy):
            if self.done():
                break
            phase()
            self._propagate()
        self._release_stranded_constants()

    # -- 1. exact ---------------------------------------------------------------------------

    def _exact(self, unique_only: bool) -> None:
        buckets_a: dict[int, list[str]] = defaultdict(list)
        buckets_b: dict[int, list[str]] = defaultdict(list)
        # Repeated constants wait too: one 0 is like another, and the users,
        # paired by their context, say which is which.
        waiting = {"parameter"} if unique_only else {"parameter", "constant"}
        for x in self.m.a.instructions:
            if self.free_a(x.name) and x.opcode not in waiting:
                buckets_a[self.fp_a.get(x.name, _seeded(x.name))].append(x.name)
        for y in self.m.b.instructions:
            if self.free_b(y.name) and y.opcode not in waiting:
                buckets_b[self.fp_b.get(y.name, _seeded(y.name))].append(y.name)
        candidates = []
        for fp, xs in buckets_a.items():
            ys = buckets_b.get(fp)
            if not ys:
                continue
            if len(xs) == len(ys) == 1:
                self.pair(xs[0], ys[0], "exact")
            elif not unique_only:
                candidates += self._equal_subtrees(xs, ys)
        self.take(candidates, "exact")

    def _equal_subtrees(self, xs: list[str], ys: list[str]) -> list[tuple[tuple, str, str]]:
        """Candidates among instructions with one fingerprint: the same op_name
        and line first, then the closest place; in a big bucket, the same hint
        and then order of appearance (both symmetric)."""
        by_hint: dict[tuple, tuple[list[str], list[str]]] = defaultdict(lambda: ([], []))
        for x in xs:
            by_hint[_hint(self.a_by[x])][0].append(x)
        for y in ys:
            by_hint[_hint(self.b_by[y])][1].append(y)
        out = []
        for hinted, (hx, hy) in by_hint.items():
            if len(hx) * len(hy) <= _PAIRWISE_LIMIT:
                out += [((0, *self.closeness(x, y)), x, y) for x in hx for y in hy]
            else:
                out += [((0, k, k, k), x, y) for k, (x, y) in enumerate(zip(hx, hy))]
        if len(xs) * len(ys) <= _PAIRWISE_LIMIT:  # across hints, after every same-hint pair
            out += [((1, *self.closeness(x, y)), x, y) for x in xs for y in ys
                    if _hint(self.a_by[x]) != _hint(self.b_by[y])]
        else:
            out += [((1, k, k, k), x, y) for k, (x, y) in enumerate(zip(xs, ys))]
        return out

    # -- 2. anchors ---------------------------------------------------------------------------

    def _anchor_parameters(self) -> None:
        """Parameters are a computation's interface. Where both lists agree
        position by position (shape, and name where both have one), they pair
        by number; else along the longest run they share in order.

        Where one list is longer (a layer added with its weights, an
        optimizer with fewer slots), names that number a flattened pytree
        (``params[4]``) shift past the insertion, so between two pairs of
        that run the rest pair along the longest run of shapes alone: the
        weights after an inserted layer pair with themselves, and the
        inserted ones stay unpaired, as parameters added. Whatever is left
        goes to what uses it."""
        left_a = [p for p in self.m.a.parameters if self.free_a(p.name)]
        left_b = [q for q in self.m.b.parameters if self.free_b(q.name)]
        if not left_a or not left_b:
            return
        if len(left_a) == len(left_b) and (
                all(_same_interface(p, q) for p, q in zip(left_a, left_b))
                or _renamed_in_place(left_a, left_b)):
            for p, q in zip(left_a, left_b):
                self.pair(p.name, q.name, "parameter")
            return
        run = _common_run([_interface_key(p) for p in left_a],
                          [_interface_key(q) for q in left_b])
        for i, j in run:
            self.pair(left_a[i].name, left_b[j].name, "parameter")
        if len(left_a) == len(left_b):
            return
        bounds = [(-1, -1), *run, (len(left_a), len(left_b))]
        for (i0, j0), (i1, j1) in zip(bounds, bounds[1:]):
            gap_a, gap_b = left_a[i0 + 1:i1], left_b[j0 + 1:j1]
            if gap_a and gap_b:
                for i, j in _common_run([str(p.shape) for p in gap_a],
                                        [str(q.shape) for q in gap_b]):
                    self.pair(gap_a[i].name, gap_b[j].name, "parameter")

    # -- 3. propagation -------------------------------------------------------------------------

    def _users(self) -> tuple[dict[str, list[Instruction]], dict[str, list[Instruction]]]:
        if self._users_a is None:
            self._users_a, self._users_b = _users_of(self.m.a), _users_of(self.m.b)
        return self._users_a, self._users_b

    def _reading_a(self) -> dict[tuple, list[Instruction]]:
        """The instructions of a by the operands they read, in order."""
        if self._by_operands_a is None:
            self._by_operands_a = defaultdict(list)
            for instruction in self.m.a.instructions:
                self._by_operands_a[tuple(instruction.operands)].append(instruction)
        return self._by_operands_a

    def _propagate(self) -> None:
        """Rounds of proposals from the pairs made since the last round: top-down
        (their operands, position by position) and bottom-up (their users whose
        operands are all paired alike). Each round's proposals are taken at
        once, by how many pairs propose them, then by closeness; a worklist of
        new pairs, so nothing is looked at twice."""
        a_by, b_by, pairs, reverse = self.a_by, self.b_by, self.m.pairs, self.reverse
        while self.fresh:
            fresh, self.fresh = self.fresh, []
            votes: dict[tuple[str, str], int] = defaultdict(int)
            users_a = users_b = None
            mapped_of: dict[str, tuple | None] = {}  # a user of b's operands as run a names them
            for x_name, y_name in fresh:
                x, y = a_by[x_name], b_by[y_name]
                if len(x.operands) == len(y.operands):
                    for ox, oy in zip(x.operands, y.operands):
                        if ox in pairs or oy in reverse or ox not in a_by or oy not in b_by:
                            continue
                        if a_by[ox].opcode == b_by[oy].opcode == "constant":
                            continue  # placed once every reader has spoken: _pair_constants
                        if _compatible(a_by[ox], b_by[oy]):
                            votes[(ox, oy)] += 1
                if users_a is None:
                    users_a, users_b = self._users()
                    reading_a = self._reading_a()
                for uy in users_b.get(y_name, ()):
                    if uy.name in reverse:
                        continue
                    if uy.name not in mapped_of:
                        mapped = tuple(reverse.get(o) for o in uy.operands)
                        mapped_of[uy.name] = None if None in mapped else mapped
                    mapped = mapped_of[uy.name]
                    if mapped is None:
                        continue
                    for ux in reading_a.get(mapped, ()):  # users of x reading all that
                        if ux.name not in pairs and (
                                _compatible(ux, uy) or str(ux.shape) == str(uy.shape)):
                            votes[(ux.name, uy.name)] += 1
            self.take((((-n, a_by[x].opcode != b_by[y].opcode, self.calls_differ(x, y),
                         str(a_by[x].shape) != str(b_by[y].shape), self.attributes_differ(x, y),
                         *self.closeness(x, y)), x, y)
                       for (x, y), n in votes.items()), "propagated")
            if not self.fresh:
                self._pair_constants()

    def _pair_constants(self) -> None:
        """Constants read at the same place by paired instructions, all readers
        at once: a 0 is like any other 0, so the one whose value changed must
        not be paired by whichever reader came first. Most readers agreeing
        first, then the same shape, then the closest place."""
        a_by, b_by, pairs, reverse = self.a_by, self.b_by, self.m.pairs, self.reverse
        votes: dict[tuple[str, str], int] = defaultdict(int)
        for x_name, y_name in pairs.items():
            x, y = a_by[x_name], b_by[y_name]
            if x.unchanged or len(x.operands) != len(y.operands):
                continue
            for ox, oy in zip(x.operands, y.operands):
                if ox in pairs or oy in reverse or ox not in a_by or oy not in b_by:
                    continue
                cx, cy = a_by[ox], b_by[oy]
                if cx.opcode == cy.opcode == "constant":
                    votes[(ox, oy)] += 1
        self.take((((-n, str(a_by[x].shape) != str(b_by[y].shape), *self.closeness(x, y)), x, y)
                   for (x, y), n in votes.items()), "propagated")

    def _release_stranded_constants(self) -> None:
        """A constant paired with one whose users all went, or all came, is not
        the same value changed: it belongs to the code removed or added (a
        learning rate replaced by a schedule's computation). Unpair it, and
        the broadcasts that carry it to those users (tanh's ``1 - t*t`` and
        relu's ``x > 0`` both broadcast a scalar: the 1 is no 0 changed)."""
        m = self.m
        users_a, users_b = self._users()
        for x, y in list(m.pairs.items()):
            if m.pairs.get(x) != y or m.how[x] in ("exact", "unchanged"):
                continue  # released above, or certain
            xi, yi = self.a_by[x], self.b_by[y]
            if xi.opcode != "constant" or yi.opcode != "constant":
                continue
            carriers_a, readers_a = _carried(x, users_a)
            carriers_b, readers_b = _carried(y, users_b)
            gone = readers_a and all(u.name not in m.pairs for u in readers_a)
            came = readers_b and all(u.name not in self.reverse for u in readers_b)
            if gone or came:  # both sides' carriers: the same whichever run is a
                for name in (x, *carriers_a, *(self.reverse.get(c) for c in carriers_b)):
                    twin = m.pairs.pop(name, None) if name is not None else None
                    if twin is not None:
                        del m.how[name], self.reverse[twin]

    # -- 4. what propagation leaves ---------------------------------------------------------------

    def _constants_become_parameters(self) -> None:
        """A constant in one run, an argument in the other (``lr`` passed to jit).

        The users match; at the constant's operand position the other side
        reads a parameter, possibly through a reshape or broadcast the
        framework added. Both directions are looked for.
        """
        m = self.m
        candidates = []
        for side, other, twin_of, flip in ((m.a, m.b, m.pairs, False),
                                           (m.b, m.a, self.reverse, True)):
            free_here = self.free_b if flip else self.free_a
            free_there = self.free_a if flip else self.free_b
            constants = [x for x in side.instructions
                         if x.opcode == "constant" and free_here(x.name)]
            if not constants:
                continue  # the usual case: every constant already has its twin
            users = _users_of(side)
            for x in constants:
                for user in users.get(x.name, ()):
                    twin = other.by_name.get(twin_of.get(user.name, ""))
                    position = user.operands.index(x.name)
                    if twin is None or position >= len(twin.operands):
                        continue
                    target = _through_plumbing(other, twin.operands[position])
                    if target is not None and target.opcode == "parameter" \
                            and free_there(target.name):
                        pair = (target.name, x.name) if flip else (x.name, target.name)
                        candidates.append((self.closeness(*pair), *pair))
        self.take(candidates, "constant-parameter")

    def _parameters(self) -> None:
        """Parameters left over: by what they stand for (their name), then by number."""
        m = self.m
        for key in (_parameter_role, lambda p: p.parameter_number):
            left_b = [q for q in m.b.parameters if self.free_b(q.name)]
            left_a = [p for p in m.a.parameters if self.free_a(p.name)]
            by_key: dict[object, list[Instruction]] = defaultdict(list)
            for q in left_b:
                by_key[key(q)].append(q)
            self.take(((self.closeness(p.name, q.name), p.name, q.name)
                       for p in left_a for q in by_key.get(key(p), ())), "parameter")

    def _by_metadata(self) -> None:
        hints: dict[tuple, list[str]] = defaultdict(list)
        for y in self.m.unmatched_b:
            if y.metadata.get("op_name") or y.metadata.get("source_line"):
                hints[(y.opcode,) + _hint(y)].append(y.name)
        self.take((((_shape_distance(x, self.b_by[y]), self.calls_differ(x.name, y))
                    + self.closeness(x.name, y), x.name, y)
                   for x in self.m.unmatched_a for y in hints.get((x.opcode,) + _hint(x), ())
                   if _compatible(x, self.b_by[y])), "metadata")

    def _fuzzy(self) -> None:
        left_b: dict[str, list[Instruction]] = defaultdict(list)
        for y in self.m.unmatched_b:
            left_b[y.opcode].append(y)
        for opcode, xs in _group(self.m.unmatched_a).items():
            ys = left_b.get(opcode)
            if not ys or len(xs) > _FUZZY_LIMIT or len(ys) > _FUZZY_LIMIT:
                continue
            for x, y in _most_similar(xs, ys, _signature, lambda i: self.position_a[i.name],
                                      lambda i: self.position_b[i.name]):
                self.pair(x.name, y.name, "fuzzy")


def _most_similar(xs: list, ys: list, signature, position_x, position_y) -> list[tuple]:
    """Pairs of the most similar items (rapidfuzz ratio of their signatures, at
    least _FUZZY_CUTOFF), best first, each item used once; ties go to the
    closest places. The same pairs whichever side is called x."""
    scores = cdist([signature(x) for x in xs], [signature(y) for y in ys], scorer=fuzz.ratio,
                   score_cutoff=_FUZZY_CUTOFF)
    candidates = [((-float(scores[i][j]), *_closeness(position_x(x), position_y(y))), i, j)
                  for i, x in enumerate(xs) for j, y in enumerate(ys) if scores[i][j] > 0]
    taken = _take_best(((key, str(i), str(j)) for key, i, j in candidates),
                       lambda _: True, lambda _: True)
    return [(xs[int(i)], ys[int(j)]) for i, j in taken]


def _common_run(keys_a: list, keys_b: list) -> list[tuple[int, int]]:
    """Index pairs of a longest common subsequence of two short lists; among
    the longest, the one whose pairs sit closest in position (so that it is
    the same, mirrored, when the lists swap places)."""
    n, m = len(keys_a), len(keys_b)
    # best[i][j]: (pairs, -distance, -positions) of the best run in a[i:], b[j:]
    best = [[(0, 0, 0)] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            options = [best[i + 1][j], best[i][j + 1]]
            if keys_a[i] == keys_b[j]:
                after = best[i + 1][j + 1]
                options.append((after[0] + 1, after[1] - abs(i - j), after[2] - i - j))
            best[i][j] = max(options)
    out, i, j = [], 0, 0
    while i < n and j < m:
        here = best[i][j]
        after = best[i + 1][j + 1]
        if keys_a[i] == keys_b[j] and here == (after[0] + 1, after[1] - abs(i - j),
                                               after[2] - i - j):
            out.append((i, j))
            i, j = i + 1, j + 1
        elif here == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return out


def _compiled_keys(instruction: Instruction) -> frozenset:
    """What XLA keeps of an instruction's attributes, metadata and the like aside."""
    return frozenset((name, key) for name, key in instruction.attribute_keys
                     if name not in _IGNORED_ATTRIBUTES)


def _users_of(computation: Computation) -> dict[str, list[Instruction]]:
    users: dict[str, list[Instruction]] = defaultdict(list)
    for instruction in computation.instructions:
        for operand in instruction.operands:
            users[operand].append(instruction)
    return users


_COUNTER = re.compile(r"\.\d+(?=/|$)")


def _hint(instruction: Instruction) -> tuple:
    """Where an instruction came from, as a hint for pairing: its op_name with
    the counters frameworks number ops with (torch-xla's ``aten__add.12``,
    which shift when an op is added earlier) taken out, and its source line."""
    md = instruction.metadata
    op_name = md.get("op_name")
    if isinstance(op_name, str):
        op_name = _COUNTER.sub("", op_name)
    return (op_name, md.get("source_line"), md.get("stack_frame_id"))


_PLUMBING = frozenset({"reshape", "bitcast", "broadcast", "convert", "copy"})


def _through_plumbing(computation: Computation, name: str) -> Instruction | None:
    """The instruction ``name`` reads through single-operand reshapes and casts."""
    instruction = computation.by_name.get(name)
    for _ in range(8):
        if instruction is None or instruction.opcode not in _PLUMBING or len(instruction.operands) != 1:
            return instruction
        instruction = computation.by_name.get(instruction.operands[0])
    return instruction


# What carries a value to its readers unchanged in what it means.
_CARRIERS = frozenset({"broadcast", "reshape", "bitcast", "copy"})


def _carried(name: str, users: dict[str, list[Instruction]]
             ) -> tuple[list[str], list[Instruction]]:
    """The instructions that carry ``name`` on (_CARRIERS), and those that
    then read it."""
    carriers, readers, frontier = [], [], list(users.get(name, ()))
    while frontier:
        user = frontier.pop()
        if user.opcode in _CARRIERS and users.get(user.name):
            carriers.append(user.name)
            frontier.extend(users[user.name])
        else:
            readers.append(user)
    return carriers, readers


def _parameter_role(parameter: Instruction) -> tuple:
    """What a parameter stands for, when its metadata names it (JAX prints the
    argument's name: ``x``, ``params['w']``); a generic name says nothing."""
    name = parameter.metadata.get("op_name")
    return ("named", name) if name and name not in GENERIC_PARAMETER_NAMES else ("unnamed", id(parameter))


def _interface_key(parameter: Instruction) -> tuple:
    name = parameter.metadata.get("op_name")
    return (str(parameter.shape), name if name not in GENERIC_PARAMETER_NAMES else None)


def _renamed_in_place(left_a: list[Instruction], left_b: list[Instruction]) -> bool:
    """The same shapes place by place under other names, and not the same
    names in another order: optax.chain around the optimizer makes every
    ``opt_state[0]...`` an ``opt_state[1]...``, each argument where it was."""
    if any(str(p.shape) != str(q.shape) for p, q in zip(left_a, left_b)):
        return False
    names_a = Counter(_interface_key(p)[1] for p in left_a)
    names_b = Counter(_interface_key(q)[1] for q in left_b)
    return names_a != names_b


def _same_interface(p: Instruction, q: Instruction) -> bool:
    """Can ``p`` and ``q``, at the same position, be the same parameter?"""
    if str(p.shape) != str(q.shape):
        return False
    name_p, name_q = _interface_key(p)[1], _interface_key(q)[1]
    return name_p is None or name_q is None or name_p == name_q




def _group(instructions: list[Instruction]) -> dict[str, list[Instruction]]:
    groups: dict[str, list[Instruction]] = defaultdict(list)
    for i in instructions:
        groups[i.opcode].append(i)
    return groups


def _compatible(x: Instruction, y: Instruction) -> bool:
    """Can x and y be the same instruction, changed? Same opcode and rank (a
    batch size changes sizes, not ranks), or a constant that became a
    parameter (or the reverse)."""
    if x.opcode == y.opcode:
        return x.shape is None or y.shape is None or x.shape.rank == y.shape.rank
    return {x.opcode, y.opcode} == {"constant", "parameter"}


def _shape_distance(x: Instruction, y: Instruction) -> int:
    """0 for the same shape, 1 for the same rank, 2 otherwise."""
    if str(x.shape) == str(y.shape):
        return 0
    if x.shape is not None and y.shape is not None and x.shape.rank == y.shape.rank:
        return 1
    return 2


def _signature(instruction: Instruction) -> str:
    md = instruction.metadata
    return " ".join(filter(None, (instruction.opcode, str(instruction.shape),
                                  str(md.get("op_name") or ""), str(md.get("source_line") or ""),
                                  " ".join(f"{k}={v}" for k, v in attribute_key(instruction)))))


def _computation_signature(computation: Computation) -> str:
    base = computation.name.rstrip("0123456789").rstrip("._")
    opcodes = " ".join(sorted({i.opcode for i in computation.instructions}))
    return f"{base} {len(computation.instructions)} {opcodes}"
