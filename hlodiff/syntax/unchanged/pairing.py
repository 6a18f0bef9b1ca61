"""How the unchanged pass pairs computations and lines: by what they hold.

One op added to a model renumbers every instruction, computation and stack
frame XLA creates after it, so names do not say what pairs. With the names
put aside (hlodiff/syntax/unchanged/skeleton.py) and stack frames taken for
what they say (hlodiff/syntax/unchanged/frames.py), nearly every computation
is still equal to one in the other run:

* each computation gets a key, what it holds: whether it is the entry, its
  skeleton, the place each name stands for, and the keys of the
  computations it calls. Computations with equal keys are the same but for
  their names; they are paired in text order and skipped whole. Those of
  the same name and text need no key (a learning rate changed: most of
  them);
* computations that differ are paired line by line: by name when no
  computation was added or removed (hlodiff/syntax/unchanged/namesakes.py),
  else from the entry computations down the calls of paired lines (see
  _LinePairing): what changed in the model is there.

What is left is parsed whole, and the aligner pairs it as it pairs
everything else.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from itertools import accumulate, compress, count, repeat
from operator import eq

from . import namesakes
from .checks import Lines, opcode_of
from .frames import frame_tables, renumbered
from .outline import Body, Outline, outline_of
from .plan import Checked, LinePairs, Plan, Skip, runs, skipped_computation
from .skeleton import CALLED, Skeleton

_ELIDED = "{...}"
_ROOT_LINE = "  ROOT "
_PARAMETER = "parameter"
_PARAMETER_NUMBER = re.compile(r"(?<= parameter\()(\d+)(?=\))")
_OPERAND_LIST = re.compile(r"\((?:%|, |/\*index=\d+\*/)+\)")
# Calls whose computation's parameters are the operands, in order.
_TAKE_OPERANDS = frozenset({"fusion", "call"})
# Unrolled and possessive: one step per run of plain characters, not per character.
_METADATA = re.compile(r', metadata=\{[^{}"]*+(?:"[^"\\]*+(?:\\.[^"\\]*+)*+"[^{}"]*+)*+\}')
# Attributes name instructions (not computations) only in braces:
# ``control-predecessors={%a, %b}``; a computation is named ``calls=%f``.
_NAMED_LIST = "={%"
_CALLS = re.compile(r"=%([A-Za-z0-9_.\-]+)")


def plan(text_a: str, outline_a: Outline, text_b: str, outline_b: Outline, skipping: bool,
         failing_a: Checked = None, on_faith: bool = False) -> Plan | None:
    """What is unchanged, found by content; None when the frame tables cannot
    be read. Lines are skipped only when ``skipping`` (see Plan.skip for
    ``failing_a`` and ``on_faith``)."""
    compared_b, outline_compared = text_b, outline_b  # b as compared: its frames as a numbers them
    if frame_tables(outline_a.preamble) != frame_tables(outline_b.preamble):
        compared_b = renumbered(text_b, outline_a.preamble, outline_b.preamble)
        outline_compared = outline_of(compared_b) if compared_b is not None else None
        if outline_compared is None or len(outline_compared.bodies) != len(outline_b.bodies):
            return None
    side_a = _Side(text_a, outline_a, text_a, outline_a)
    side_b = _Side(compared_b, outline_compared, text_b, outline_b)
    _same_by_name(side_a, side_b)
    keys: dict[tuple, int] = {}
    side_a.learn(keys)
    side_b.look_up(keys)
    del keys  # the skeletons of a whole text: let them go before parsing
    found = Plan()
    found.seed.texts = LineTexts(text_a, outline_a, compared_b, outline_compared)
    skips: list[Skip] = []
    _pair_equal(found, skips, side_a, side_b)
    _pair_lines(found, skips, side_a, side_b)
    if skipping:
        found.skip(skips, outline_a.names, outline_b.names, failing_a, on_faith)
    return found


def _same_by_name(a: _Side, b: _Side) -> None:
    """Give the same kin to computations of the same name and the same text,
    header to '}', calling the same: most of a pair whose names did not move
    (a learning rate changed) is found so, comparing text and never cutting
    it."""
    text_a, text_b = a.text, b.text
    for body in a.outline.bodies:  # callees first, as XLA prints them
        twin = b.outline.by_name.get(body.name)
        if twin is None or text_a[body.header:body.closed] != text_b[twin.header:twin.closed] \
                or not (body.ends_alone(text_a) and twin.ends_alone(text_b)) \
                or a.holds(_ELIDED, body) or a.holds(_NAMED_LIST, body):
            continue
        callees = _CALLS.findall(text_a, body.start, body.end)
        if all(a.kin.get(callee) == ("by name", callee) for callee in callees):
            a.kin[body.name] = b.kin[twin.name] = ("by name", body.name)


class _Side:
    """One run's text as the pass compares it, with what it found of each computation."""

    def __init__(self, text: str, outline: Outline, original_text: str, original: Outline):
        self.text = text  # run b's with its stack frames numbered as run a numbers them
        self.outline = outline
        self.original_text, self.original = original_text, original  # the file as it is
        self.kin: dict[str, Hashable | None] = {}
        self.skeletons: dict[str, tuple[Skeleton, list[int]]] = {}  # kept for the checks
        self._pieces: dict[str, bool] = {}  # does the text hold it at all?

    def learn(self, keys: dict[tuple, int]) -> None:
        """Give each computation its kin, numbering the keys in ``keys``."""
        self._kin(lambda key, body: keys.setdefault(key, len(keys)))

    def look_up(self, keys: dict[tuple, int]) -> None:
        """Give each computation the kin of the same key in ``keys``, if any."""
        self._kin(lambda key, body: keys.get(key, ("only b", body.name)))

    def _kin(self, kin_of) -> None:
        """For each computation, what it is: the same value for computations
        that are the same but for names, in either run; None for what may not
        be skipped. Callees are printed first, mostly; what calls a callee
        printed later waits for it."""
        waiting = [body for body in self.outline.bodies if body.name not in self.kin]
        while waiting:
            later = []
            for body in waiting:
                key = self._key(body)
                if key is _WAITING:
                    later.append(body)
                else:
                    self.kin[body.name] = None if key is None else kin_of(key, body)
            if len(later) == len(waiting):  # calls that go round: nothing more to learn
                self.kin.update(dict.fromkeys((body.name for body in later), None))
                break
            waiting = later

    def _key(self, body: Body) -> tuple | None:
        """What ``body`` holds, names aside; None when it may not be skipped:
        laid out otherwise than XLA prints, with an elided constant, names
        that stand for no one place, or calling what may not be skipped;
        _WAITING when a computation it calls has no kin yet."""
        text = self.text
        if not body.ends_alone(text):
            return None
        if self.holds(_ELIDED, body):
            return None
        skeleton = Skeleton.of(body.text(text))
        places = skeleton.places(self.outline.names)
        if places is None:
            return None
        called = list(compress(skeleton.names, map(eq, places, repeat(CALLED))))
        if not self.kin.keys() >= set(called):
            return _WAITING
        callees = tuple(map(self.kin.__getitem__, called))
        if None in callees:
            return None
        self.skeletons[body.name] = skeleton, places
        # The header says nothing the lines do not (its parameters are theirs),
        # but whether this is the entry.
        return (body.is_entry, skeleton.text(), tuple(places), callees,
                skeleton.named_by_attributes(places)
                if self.holds(_NAMED_LIST, body) else ())

    def holds(self, piece: str, body: Body) -> bool:
        """Does ``body`` hold ``piece`` (looked for in the whole text first:
        most texts hold none)?"""
        if piece not in self._pieces:
            self._pieces[piece] = piece in self.text
        return self._pieces[piece] and self.text.find(piece, body.start, body.end) >= 0

    def lines(self, name: str) -> Lines:
        """The lines of computation ``name``, to check."""
        skeleton, places = self.skeletons.get(name, (None, None))
        return Lines(self.text, self.outline.by_name[name], skeleton, places)


_WAITING = ()  # what _Side._key says when a computation it calls has no kin yet


def _pair_equal(found: Plan, skips: list[Skip], a: _Side, b: _Side) -> None:
    """Pair computations of equal keys, in text order, to be skipped whole."""
    waiting: dict[Hashable, deque[Body]] = defaultdict(deque)
    for body in a.original.bodies:
        if a.kin[body.name] is not None:
            waiting[a.kin[body.name]].append(body)
    for twin in b.original.bodies:
        bodies = waiting.get(b.kin[twin.name])
        if not bodies:
            continue
        body = bodies.popleft()
        found.seed.identical[body.name] = twin.name
        found.seed.kin[body.name] = a.kin[body.name]
        # b's lines are a's but for names: checking a's checks both
        skips.append(Skip({body.header: skipped_computation(body)},
                          {twin.header: skipped_computation(twin)},
                          body.line_count(a.text), [a.lines(body.name)]))


# --- computations paired line by line --------------------------------------------------------

def _pair_lines(found: Plan, skips: list[Skip], a: _Side, b: _Side) -> None:
    """Pair the lines of computations that differ into ``found``: by name
    when the computations did not move, else by content, from the entry
    computations down the calls of paired lines."""
    seen_a, seen_b = set(found.seed.identical), set(found.seed.identical.values())
    if list(a.outline.by_name) == list(b.outline.by_name):  # no computation added or removed
        for body in a.outline.bodies:
            twin = b.outline.by_name[body.name]
            if body.name not in seen_a and twin.name not in seen_b and namesakes.pair_lines(
                    found, skips, a.text, body, b.text, twin, b.original_text,
                    b.original.by_name[twin.name]):
                seen_a.add(body.name)
                seen_b.add(twin.name)
    queue = deque([(a.outline.entry.name, b.outline.entry.name, None)])
    while queue:
        name_a, name_b, parameters = queue.popleft()
        if name_a in seen_a or name_b in seen_b:
            continue
        seen_a.add(name_a)
        seen_b.add(name_b)
        lines_a, lines_b = _Lines.of(a, name_a), _Lines.of(b, name_b)
        if lines_a is None or lines_b is None:
            continue
        found.seed.texts.cut_already(lines_a, lines_b)
        pairing = _LinePairing(lines_a, lines_b, parameters)
        for i, j in pairing.twins.items():
            calls_a, calls_b = lines_a.calls(i), lines_b.calls(j)
            if len(calls_a) == len(calls_b):
                # A fusion's parameters are its operands: they pair as those do.
                through = pairing.operand_places(i, j) \
                    if len(calls_a) == 1 and lines_a.opcode(i) in _TAKE_OPERANDS else None
                queue.extend((x, y, through) for x, y in zip(calls_a, calls_b))
        if pairing.unchanged:
            _seed_lines(found, skips, a, b, lines_a, lines_b, pairing.unchanged)


def _seed_lines(found: Plan, skips: list[Skip], a: _Side, b: _Side, lines_a: _Lines,
                lines_b: _Lines, unchanged: dict[int, int]) -> None:
    """Seed the ``unchanged`` lines; what may be skipped of them into ``skips``."""
    # Lines that read a changed instruction are parsed: the aligner pairs
    # the changed ones through them.
    changed_a = set(lines_a.defined).difference(map(lines_a.defined.__getitem__, unchanged))
    changed_b = set(lines_b.defined).difference(map(lines_b.defined.__getitem__, unchanged.values()))
    skipped = {i for i, j in unchanged.items()
               if changed_a.isdisjoint(lines_a.names[i]) and changed_b.isdisjoint(lines_b.names[j])}
    found.seed.lines[lines_a.name] = LinePairs(
        lines_b.name, {lines_a.defined[i]: lines_b.defined[j] for i, j in unchanged.items()},
        frozenset(lines_a.defined[i] for i in unchanged if i not in skipped))
    texts_a, starts_a = a.original.by_name[lines_a.name].lines(a.original_text)
    texts_b, starts_b = b.original.by_name[lines_b.name].lines(b.original_text)
    skips.append(Skip(runs(texts_a, starts_a, skipped),
                      runs(texts_b, starts_b, set(map(unchanged.__getitem__, skipped))),
                      len(skipped), [a.lines(lines_a.name)], [b.lines(lines_b.name)]))


@dataclass
class _Lines:
    """The lines of one computation, each cut at its names."""

    name: str
    skeletons: list[str]  # each line with the names taken out
    structures: list[str]  # the same without metadata
    names: list[list[str]]  # each line's names, its own first
    in_attributes: list[set[int]]  # where each line's attributes name something
    parameters: list[int]  # the lines that define parameters
    kin: dict  # of the computations of its run

    @classmethod
    def of(cls, side: _Side, name: str) -> _Lines | None:
        """The lines of computation ``name``; None when they are not one
        instruction each, as XLA prints them."""
        body = side.outline.by_name[name]
        skeleton = side.skeletons[name][0] if name in side.skeletons else \
            Skeleton.of(body.text(side.text))
        starts = list(compress(count(), skeleton.defines))  # where each line's own name is
        if len(starts) != body.line_count(side.text) or not skeleton.lines_start_with_definitions():
            return None
        text = skeleton.text()
        ends = starts[1:] + [len(skeleton.names)]
        names = [skeleton.names[start:end] for start, end in zip(starts, ends)]
        line_of = list(accumulate(skeleton.defines))  # of each name, counted from 1
        in_attributes: list[set[int]] = [set() for _ in starts]
        for k in skeleton.in_attributes:  # a few per line at most
            line = line_of[k] - 1
            in_attributes[line].add(k - starts[line])
        parameters = [line for line, start in enumerate(starts)
                      if opcode_of(skeleton.between[start + 1]) == _PARAMETER]
        return cls(name, text.split("\n"), _METADATA.sub("", text).split("\n"), names,
                   in_attributes, parameters, side.kin)

    @cached_property
    def defined(self) -> list[str]:
        """The name each line defines."""
        return [names[0] for names in self.names]

    @cached_property
    def outlines(self) -> list[str]:
        """The skeletons without the operand lists: a line that reads one
        operand more (a fusion that took in the added op) is still itself."""
        return [_OPERAND_LIST.sub("(...)", skeleton, count=1) for skeleton in self.skeletons]

    def opcode(self, i: int) -> str | None:
        return self.opcodes[i]

    @cached_property
    def opcodes(self) -> list[str | None]:
        """The opcode of each line (what pairing top-down compares, line by line)."""
        return [opcode_of(skeleton.partition("%")[2]) for skeleton in self.skeletons]

    def operands(self, i: int) -> list[str]:
        """The instructions line ``i`` reads as operands, in order."""
        return self.operand_lists[i]

    @cached_property
    def operand_lists(self) -> list[list[str]]:
        """The operands of each line (pairing top-down reads them twice)."""
        local = self.local
        return [[x for k, x in enumerate(names) if k and k not in attributes and x in local]
                for names, attributes in zip(self.names, self.in_attributes)]

    @cached_property
    def operand_lines(self) -> list[list[int]]:
        """The operands of each line, as the numbers of the lines defining them."""
        line_of = self.line_of
        return [list(map(line_of.__getitem__, operands)) for operands in self.operand_lists]

    @cached_property
    def line_of(self) -> dict[str, int]:
        """The line defining each instruction."""
        return dict(zip(self.defined, count()))

    @cached_property
    def local(self) -> set[str]:
        """The instructions defined here."""
        return set(self.defined)

    def parameter_number(self, i: int) -> int | None:
        m = _PARAMETER_NUMBER.search(self.skeletons[i])
        return int(m.group(1)) if m is not None else None

    def calls(self, i: int) -> list[str]:
        """The computations line ``i`` calls."""
        return [x for x in self.names[i] if x in self.kin]

    @cached_property
    def leaves(self) -> dict[str, str]:
        """The lines that read nothing but are not parameters (constants, iotas),
        by name, with their skeletons: what they are is all they are."""
        parameters = set(self.parameters)
        return {names[0]: self.skeletons[i] for i, names in enumerate(self.names)
                if len(names) == 1 and i not in parameters}

    @cached_property
    def own(self) -> list[tuple | None]:
        """Each line as it reads in its own computation: ``reading`` with
        every operand by its own name."""
        # ``_read`` holds each operand by its own name where a twin is asked for
        return [None if read is None else (structure, read)
                for structure, (read, _) in zip(self.structures, self._read)]

    def reading(self, i: int, twin_of) -> tuple | None:
        """Line ``i`` as (structure, what it reads): each operand of this
        computation as ``twin_of`` names it (a leaf by its skeleton), each
        computation it calls by its kin, and what its attributes name as
        printed; None when an operand or a called computation has no twin."""
        read, asked = self._read[i]
        if read is None:
            return None
        if asked:
            read = list(read)
            for k, x in asked:
                twin = twin_of(x)
                if twin is None:
                    return None
                read[k] = twin
        return self.structures[i], tuple(read)

    @cached_property
    def _read(self) -> list[tuple[tuple | None, tuple[tuple[int, str], ...]]]:
        """For each line, what ``reading`` says of what it reads that no twin
        changes (None when a called computation has no kin), and where the
        operands whose twins are asked for are (pairing asks up to three
        times a line)."""
        out = []
        local, leaves, kin = self.local, self.leaves, self.kin
        for names, attributes in zip(self.names, self.in_attributes):
            read: list = []
            asked = []
            for k in range(1, len(names)):  # the first name is the line's own
                x = names[k]
                if x not in local:
                    twin = ("calls", kin[x]) if kin.get(x) is not None else None
                    if twin is None:
                        read = None
                        break
                elif k in attributes:
                    twin = ("named", x)  # compared as text, by the differ too
                elif x in leaves:
                    twin = ("leaf", leaves[x])
                else:
                    asked.append((k - 1, x))
                    twin = x  # as ``own`` reads it
                read.append(twin)
            out.append((None if read is None else tuple(read), tuple(asked)))
        return out


class _LinePairing:
    """Pairs the lines of two computations, in line order (what a line reads
    is paired before it):

    * a line reading only lines that have twins is the twin of the only line
      of b with its structure (skeleton without metadata) reading their
      twins, when no other line of a has that structure reading the same
      (the aligner's exact pairs);
    * a line reading a line without a twin (one changed, or added, before
      it) is the twin of the only line of b with its very skeleton, metadata
      and all, when no other line of a has it, or else of the only one with
      that skeleton but for its operands (a fusion that took in the added
      op reads one more); unless the parameters moved (one added, removed
      or retyped): then what reads them may read another, and the aligner
      is left to say which.

    Twins with the same skeleton, reading twins, are unchanged. Parameters
    are twins, and unchanged, when the two lists are the same.
    """

    def __init__(self, a: _Lines, b: _Lines, parameters: dict[int, int] | None = None):
        self.a, self.b = a, b
        self.twins: dict[int, int] = {}  # line a -> line b
        self.unchanged: dict[int, int] = {}
        self.twin: dict[str, str] = {}  # the same, by name
        self.certain: dict[str, str] = {}  # the unchanged twins, by name
        moved = self._pair_parameters(parameters)
        self._pair_in_order(moved)
        self._pair_leaves()
        self._confirm_from_the_root()
        self._pair_top_down()

    def _pair_parameters(self, operands: dict[int, int] | None) -> bool:
        """Pair the parameters: as the operands of the call they stand for
        pair (``operands``: each parameter number of a's, b's), or by number
        when the two lists are the same. Whether they moved (they pair no
        other way)."""
        a, b = self.a, self.b
        if operands is not None:
            numbers_b = {b.parameter_number(j): j for j in b.parameters}
            for i in a.parameters:
                j = numbers_b.get(operands.get(a.parameter_number(i)))
                if j is not None:
                    self.twins[i] = j
                    if _PARAMETER_NUMBER.sub("", a.skeletons[i]) == \
                            _PARAMETER_NUMBER.sub("", b.skeletons[j]):
                        self.unchanged[i] = j
            moved = False
        else:
            moved = _parameters_moved(a, b)
            if not moved:
                self.twins.update(zip(a.parameters, b.parameters))
                self.unchanged.update(zip(a.parameters, b.parameters))
        self.twin.update((a.defined[i], b.defined[j]) for i, j in self.twins.items())
        self.certain.update((a.defined[i], b.defined[j]) for i, j in self.unchanged.items())
        return moved

    def _pair_in_order(self, parameters_moved: bool) -> None:
        a, b = self.a, self.b
        own_a, own_b = a.own, b.own
        # The ways to find a line's twin, most telling first: its structure
        # and what it reads; the same with its metadata (lines alike but
        # for their op_name, as the aligner tells them apart), alone or
        # among copies of it; and, when it reads what has no twin, its
        # skeleton, or its skeleton but for its operands.
        by_reading, by_full = _Index(own_a, own_b), _Index(_with_metadata(a, own_a),
                                                            _with_metadata(b, own_b))
        by_skeleton = _Index(a.skeletons, b.skeletons)
        by_outline = None  # made when first asked: most lines are found before
        taken = set(self.twins.values())
        parameters = set(a.parameters)
        for i in range(len(a.names)):
            if i in parameters:
                continue
            reading = a.reading(i, self.twin.get)
            if reading is not None:
                j = by_reading.only(reading, own_a[i])
                full = ((a.skeletons[i], reading[1]), (a.skeletons[i], own_a[i][1]))
                if j is None:
                    j = by_full.only(*full)
                if j is None:
                    j = by_full.next(*full)
            elif not parameters_moved:
                j = by_skeleton.only(a.skeletons[i], a.skeletons[i])
                if j is None:
                    if by_outline is None:
                        by_outline = _Index(a.outlines, b.outlines)
                    j = by_outline.only(a.outlines[i], a.outlines[i])
            else:
                continue
            if j is None or j in taken:
                continue
            taken.add(j)
            self.twins[i] = j
            self.twin[a.defined[i]] = b.defined[j]  # the same but for metadata, maybe
            # Unchanged only when what it reads is unchanged too: a twin found
            # by its skeleton alone (metadata and all) is a guess, and torch-xla's
            # op_names carry instance numbers that shift when the program changes
            if a.skeletons[i] == b.skeletons[j] and _ELIDED not in a.skeletons[i] and \
                    reading is not None and a.reading(i, self.certain.get) == own_b[j]:
                self.unchanged[i] = j
                self.certain[a.defined[i]] = b.defined[j]

    def _confirm_from_the_root(self) -> None:
        """Downstream of a change, twins read twins that were guessed (the
        line reading an added op has no twin to read through, and is paired
        by its skeleton), so they are not unchanged. A guessed twin counts
        when pairing from the root down, operand by operand and opcode by
        opcode, as the aligner pairs top-down, gives the same twin: then the
        lines of equal skeletons that both ways pair, reading only such
        twins, are unchanged too."""
        a, b = self.a, self.b
        down = self._from_the_root()
        if not down:
            return
        sure = dict(self.certain)
        sure.update((x, y) for x, y in self.twin.items() if down.get(x) == y)
        own_b = b.own
        for i in sorted(set(self.twins).difference(self.unchanged)):
            j = self.twins[i]
            x, y = a.defined[i], b.defined[j]
            if down.get(x) == y and a.skeletons[i] == b.skeletons[j] and \
                    _ELIDED not in a.skeletons[i] and \
                    a.reading(i, sure.get) == own_b[j]:
                self.unchanged[i] = j
                self.certain[x] = y

    def _from_the_root(self) -> dict[str, str]:
        """Lines paired from the roots down, first come first."""
        a, b = self.a, self.b
        root_a, root_b = _root(a), _root(b)
        if a.opcode(root_a) != b.opcode(root_b):
            return {}
        down = {root_a: root_b}
        for k, h in _top_down(a, b, [(root_a, root_b)], down.__contains__, {root_b}):
            down[k] = h
        return {a.defined[i]: b.defined[j] for i, j in down.items()}

    def _pair_top_down(self) -> None:
        """What twins read at the same place, with the same opcode, is twins
        too (the changed lines, which nothing else pairs), as the aligner
        pairs them top-down: so the computations they call pair too."""
        a, b = self.a, self.b
        for k, h in _top_down(a, b, list(self.twins.items()), self.twins.__contains__,
                              set(self.twins.values())):
            self.twins[k] = h
            self.twin[a.defined[k]] = b.defined[h]

    def operand_places(self, i: int, j: int) -> dict[int, int]:
        """Where each operand of line i of a is among line j's of b, by its twin."""
        places_b = {y: place for place, y in enumerate(self.b.operands(j))}
        out = {}
        for place, x in enumerate(self.a.operands(i)):
            twin = self.twin.get(x)
            if twin in places_b:
                out[place] = places_b[twin]
        return out

    def _pair_leaves(self) -> None:
        """Leaves alike (a constant 1 used here and there) pair through what
        reads them, at the same place, as the aligner pairs them top-down."""
        a, b = self.a, self.b
        taken = set(self.twins.values())
        line_a, line_b = a.line_of, b.line_of
        for i, j in list(self.unchanged.items()):
            for x, y in zip(a.names[i], b.names[j]):
                if x in a.leaves and y in b.leaves:
                    leaf_a, leaf_b = line_a[x], line_b[y]
                    if leaf_a not in self.twins and leaf_b not in taken and \
                            a.skeletons[leaf_a] == b.skeletons[leaf_b] and \
                            _ELIDED not in a.skeletons[leaf_a]:
                        self.twins[leaf_a] = self.unchanged[leaf_a] = leaf_b
                        taken.add(leaf_b)


def _top_down(a: _Lines, b: _Lines, start: list[tuple[int, int]], paired: Callable[[int], bool],
              taken: set[int]) -> Iterator[tuple[int, int]]:
    """Lines paired top-down from the pairs ``start``: what two paired lines
    read at the same place, with the same opcode, pairs, first come first.
    ``paired(i)``: is line i of a paired already; ``taken``: b's lines that
    are (each pair yielded is added, and the caller records it before the
    next). Walks every line of a big computation: by line numbers, not names."""
    operands_a, operands_b = a.operand_lines, b.operand_lines
    opcodes_a, opcodes_b = a.opcodes, b.opcodes
    waiting = deque(start)
    while waiting:
        i, j = waiting.popleft()
        read_a, read_b = operands_a[i], operands_b[j]
        if len(read_a) != len(read_b):
            continue
        for k, h in zip(read_a, read_b):
            if not paired(k) and h not in taken and opcodes_a[k] == opcodes_b[h]:
                taken.add(h)
                yield k, h
                waiting.append((k, h))


def _root(lines: _Lines) -> int:
    """The ROOT line, or the last when none is marked (XLA's rule)."""
    return next((i for i, skeleton in enumerate(lines.skeletons)
                 if skeleton.startswith(_ROOT_LINE)), len(lines.skeletons) - 1)


def _with_metadata(lines: _Lines, readings: list) -> list:
    return [None if reading is None else (skeleton, reading[1])
            for skeleton, reading in zip(lines.skeletons, readings)]


class _Index:
    """One way to pair lines: what each line of a and of b is in that way."""

    def __init__(self, keys_a: list, keys_b: list):
        self.counts_a = Counter(keys_a)
        self.where_b: dict = defaultdict(list)
        for j, key in enumerate(keys_b):
            self.where_b[key].append(j)

    def only(self, in_b, in_a) -> int | None:
        """The line of b that alone is ``in_b``, when one line of a alone is ``in_a``."""
        found = self.where_b.get(in_b)
        if found is None or len(found) != 1 or self.counts_a[in_a] != 1:
            return None
        return found[0]

    def next(self, in_b, in_a) -> int | None:
        """The first line of b that is ``in_b`` not yet taken, when as many
        lines of a are ``in_a``: copies of one line (no CSE before
        optimization), which pair in order, as the aligner pairs them."""
        found = self.where_b.get(in_b)
        if not found or len(found) != self.counts_a[in_a]:
            return None
        self.counts_a[in_a] -= 1
        return found.pop(0)


def _parameters_moved(lines_a: _Lines, lines_b: _Lines) -> bool:
    """Do the parameters differ in number, order, shape or metadata?"""
    return list(map(lines_a.skeletons.__getitem__, lines_a.parameters)) != \
        list(map(lines_b.skeletons.__getitem__, lines_b.parameters))


@dataclass
class LineTexts:
    """The lines of both runs as the pass compares them (run b's stack frames
    numbered as run a's), to tell which pairs of lines the aligner made are
    the same text but for names: the differ has nothing to say of those."""

    text_a: str
    outline_a: Outline
    text_b: str
    outline_b: Outline
    # Computations cut into lines already, to pair their lines: (names, lines) by name
    cut_a: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)
    cut_b: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)

    def cut_already(self, a: _Lines, b: _Lines) -> None:
        """Keep two computations' lines as pairing cut them: the aligner asks
        of these above all, and cutting them again is a good part of its time."""
        self.cut_a[a.name] = a.defined, a.skeletons
        self.cut_b[b.name] = b.defined, b.skeletons

    def same(self, a: str, b: str) -> Callable[[str, str], bool] | None:
        texts_a = _line_texts(self.text_a, self.outline_a.by_name.get(a), self.cut_a.get(a))
        texts_b = _line_texts(self.text_b, self.outline_b.by_name.get(b), self.cut_b.get(b))
        if texts_a is None or texts_b is None:
            return None
        return lambda x, y: texts_a.get(x, texts_a) == texts_b.get(y)


def _line_texts(text: str, body: Body | None,
                cut: tuple[list[str], list[str]] | None = None) -> dict[str, str] | None:
    """Each line of ``body`` by its name, with the names taken out; None when
    its attributes name instructions (compared as text, names and all) or it
    is not one instruction a line. Lines holding ``{...}`` are left out.
    ``cut``: its lines' names and texts, when they are known (see _Lines)."""
    if body is None or text.find(_NAMED_LIST, body.start, body.end) >= 0:
        return None
    if cut is not None:
        definitions, lines = cut
    else:
        skeleton = Skeleton.of(body.text(text))
        lines = skeleton.text().split("\n")
        definitions = skeleton.definitions()
        if len(definitions) != len(lines) or not skeleton.lines_start_with_definitions():
            return None
    return {name: line for name, line in zip(definitions, lines) if _ELIDED not in line}
