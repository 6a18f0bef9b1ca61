"""The unchanged pass where names moved: computations and lines paired by what they hold.

One op added to a model renumbers every instruction, computation and stack
frame XLA creates after it, so names no longer say what pairs. With the names
put aside (hlodiff/syntax/unchanged/skeleton.py) and stack frames taken for
what they say (hlodiff/syntax/unchanged/frames.py), nearly every computation
is still equal to one in the other run:

* each computation gets a key, what it holds: its signature, its skeleton,
  the place each name stands for, and the keys of the computations it
  calls. Computations with equal keys are the same but for their names;
  they are paired in text order and skipped whole;
* in the entry computation, when it differs, lines are paired by their
  skeletons, those found once on each side (as the aligner first pairs what
  is unique), and a pair is unchanged when its names stand for twins too:
  the instructions of paired lines, the computations of equal keys.

Computations neither equal nor the entry are parsed whole, and the aligner
pairs them as it pairs everything else: only the entry is sure to be paired
with the entry.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict, deque
from collections.abc import Hashable
from itertools import compress, repeat
from operator import eq

from .checks import opcode_of, sound
from .frames import frame_tables, renumbered
from .outline import Body, Outline, outline_of
from .plan import Plan, runs, skipped_computation
from .skeleton import CALLED, Skeleton

_ELIDED = "{...}"
_NAME_SIGIL = "%"
_PARAMETER = "parameter"
_METADATA = re.compile(r', metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')
# A parameter's name in a computation's header: "(p: f32[2], q: s32[])".
_PARAMETER_NAME = re.compile(r"(?:(?<=\()|(?<=, ))[A-Za-z_][\w.\-]*: ")


def plan(text_a: str, outline_a: Outline, text_b: str, outline_b: Outline) -> Plan | None:
    """What is unchanged, found by content; None when the frame tables cannot be read."""
    compared_b, outline_compared = text_b, outline_b  # b as compared: its frames as a numbers them
    if frame_tables(outline_a.preamble) != frame_tables(outline_b.preamble):
        compared_b = renumbered(text_b, outline_a.preamble, outline_b.preamble)
        outline_compared = outline_of(compared_b) if compared_b is not None else None
        if outline_compared is None or len(outline_compared.bodies) != len(outline_b.bodies):
            return None
    keys: dict[tuple, int] = {}
    kin_a = _kin(text_a, outline_a, keys, learn=True)
    kin_b = _kin(compared_b, outline_compared, keys, learn=False)
    del keys  # the skeletons of a whole text: let them go before parsing
    found = Plan()
    _pair_equal(found, text_a, outline_a, kin_a, outline_b, kin_b)
    if outline_a.entry.name not in found.seed.identical:
        _pair_entry_lines(found, text_a, outline_a, kin_a, compared_b, outline_compared, kin_b,
                          text_b, outline_b)
    return found


# --- computations ----------------------------------------------------------------

def _kin(text: str, outline: Outline, keys: dict[tuple, int], learn: bool
         ) -> dict[str, Hashable | None]:
    """For each computation, what it is: the same value for computations that
    are the same but for names, in either run (``keys`` numbers what run a
    holds; run b only looks its own up). None for what may not be skipped."""
    kin: dict[str, Hashable | None] = {}
    waiting = list(outline.bodies)  # callees come first, as XLA prints them, mostly
    while waiting:
        later = []
        for body in waiting:
            key = _key(text, body, outline, kin)
            if key is _WAITING:
                later.append(body)
            elif key is None:
                kin[body.name] = None
            elif learn:
                kin[body.name] = keys.setdefault(key, len(keys))
            else:
                kin[body.name] = keys.get(key, ("only b", body.name))
        if len(later) == len(waiting):  # calls that go round: nothing more to learn
            kin.update(dict.fromkeys((body.name for body in later), None))
            break
        waiting = later
    return kin


_WAITING = ()  # what _key says when a computation it calls has no kin yet


def _key(text: str, body: Body, outline: Outline, kin: dict) -> tuple | None:
    """What ``body`` holds, names aside; None when it may not be skipped: laid
    out otherwise than XLA prints, with an elided constant, failing the
    parser's checks, or calling what may not be skipped; _WAITING when a
    computation it calls is not known yet."""
    if not (body.ends_alone(text) and body.one_instruction_per_line(text)):
        return None
    lines = body.text(text)
    if _ELIDED in lines:
        return None
    skeleton = Skeleton.of(lines)
    places = sound(lines, skeleton, body.line_count(text), outline.names)
    if places is None:
        return None
    called = list(compress(skeleton.names, map(eq, places, repeat(CALLED))))
    if not kin.keys() >= set(called):
        return _WAITING
    callees = tuple(map(kin.__getitem__, called))
    if None in callees:
        return None
    return (_signature(text, body), tuple(skeleton.between), tuple(places), callees,
            _named_by_attributes(skeleton, places))


def _named_by_attributes(skeleton: Skeleton, places: list[int]) -> tuple[str, ...]:
    """Instructions named by attributes (``control-predecessors={%a}``), as
    printed: the differ compares attribute values as text, names and all."""
    return tuple(skeleton.names[k] for k in skeleton.in_attributes if places[k] != CALLED)


def _signature(text: str, body: Body) -> tuple[bool, str]:
    """The header without its names: ENTRY or not, parameter shapes, result shape."""
    after_name = body.name_at + len(_NAME_SIGIL) + len(body.name)
    return body.is_entry, _PARAMETER_NAME.sub("", text[after_name:body.start])


def _pair_equal(found: Plan, text_a: str, outline_a: Outline, kin_a: dict, outline_b: Outline,
                kin_b: dict) -> None:
    """Pair computations of equal keys, in text order, and skip them whole."""
    waiting: dict[Hashable, deque[Body]] = defaultdict(deque)
    for a in outline_a.bodies:
        if kin_a[a.name] is not None:
            waiting[kin_a[a.name]].append(a)
    for b in outline_b.bodies:
        twins = waiting.get(kin_b[b.name])
        if not twins:
            continue
        a = twins.popleft()
        found.seed.identical[a.name] = b.name
        found.seed.kin[a.name] = kin_a[a.name]
        found.runs_a[a.header] = skipped_computation(a)
        found.runs_b[b.header] = skipped_computation(b)
        found.unchanged_lines += a.line_count(text_a)


# --- the entry computation's lines --------------------------------------------------------

class _Lines:
    """The lines of one computation, each cut at its names."""

    def __init__(self, texts: list[str], kin: dict):
        self.texts = texts
        self.skeletons: list[str] = []
        self.structures: list[str] = []  # the skeletons without metadata
        self.names: list[list[str]] = []  # the first is the line's own
        self.in_attributes: list[list[int]] = []  # where each line's attributes name something
        self.parameters: list[int] = []  # the lines that define parameters
        for line in self.texts:  # an entry computation: a few thousand lines
            skeleton = Skeleton.of(line)
            self.skeletons.append(_NAME_SIGIL.join(skeleton.between))
            self.structures.append(_METADATA.sub("", self.skeletons[-1]))
            self.names.append(skeleton.names)
            self.in_attributes.append(skeleton.in_attributes)
            if opcode_of(skeleton.between[1]) == _PARAMETER:
                self.parameters.append(len(self.names) - 1)
        self.defined = [names[0] for names in self.names]  # sound: each line starts with its own
        self.local = set(self.defined)
        self.kin = kin

    def reading(self, i: int, twin_of) -> tuple | None:
        """Line ``i`` as (structure, what it reads): each operand of this
        computation as ``twin_of`` names it, each computation it calls by its
        kin, and what its attributes name as printed; None when an operand or
        a called computation has no twin."""
        names, attributes = self.names[i], self.in_attributes[i]
        read = []
        for k in range(1, len(names)):  # the first name is the line's own
            x = names[k]
            if x not in self.local:
                twin = ("calls", self.kin[x]) if self.kin.get(x) is not None else None
            elif k in attributes:
                twin = ("named", x)  # compared as text, by the differ too
            else:
                twin = twin_of(x)
            if twin is None:
                return None
            read.append(twin)
        return self.structures[i], tuple(read)

    def where(self, keys) -> dict:
        """Each key with the lines that have it."""
        found = defaultdict(list)
        for i, key in enumerate(keys):
            found[key].append(i)
        return found


class _EntryPairing:
    """Pairs the unchanged lines of two entry computations.

    A line of a is the twin of a line of b when they are the only two with
    the same structure (skeleton without metadata) reading twins: the
    aligner's first, exact pairs, found in line order so that what a line
    reads is paired first. Twins with the same metadata too are unchanged.
    A line reading something without a twin (an instruction added before
    it) is left to the aligner, and so is all that reads it: pairing it
    here would change the order in which the aligner pairs the rest, and so
    what it pairs.

    Parameters are twins when the two lists are the same, but never
    unchanged: the aligner pairs them through what reads them, as without
    the pass.
    """

    def __init__(self, a: _Lines, b: _Lines):
        self.a, self.b = a, b
        self.twin: dict[str, str] = {}
        self.unchanged: dict[int, int] = {}
        if not _parameters_moved(a, b):
            self.twin.update((a.defined[i], b.defined[j]) for i, j in zip(a.parameters, b.parameters))
        by_reading = b.where(b.reading(j, _itself) for j in range(len(b.texts)))
        readings_a = Counter(a.reading(i, _itself) for i in range(len(a.texts)))
        parameters = set(a.parameters)
        for i in range(len(a.texts)):
            if i in parameters or readings_a[a.reading(i, _itself)] > 1:
                continue
            reading = a.reading(i, self.twin.get)
            found = by_reading.get(reading) if reading is not None else None
            if found is None or len(found) != 1:
                continue
            j = found[0]
            self.twin[a.defined[i]] = b.defined[j]  # the same but for metadata, maybe
            if a.skeletons[i] == b.skeletons[j] and _ELIDED not in a.texts[i]:
                self.unchanged[i] = j


def _pair_entry_lines(found: Plan, text_a: str, outline_a: Outline, kin_a: dict,
                      compared_b: str, outline_compared: Outline, kin_b: dict,
                      text_b: str, outline_b: Outline) -> None:
    """Pair the unchanged lines of the two entry computations into ``found``."""
    a, compared, b = outline_a.entry, outline_compared.entry, outline_b.entry
    if not (a.one_instruction_per_line(text_a) and b.one_instruction_per_line(text_b)):
        return
    for text, body, names in ((text_a, a, outline_a.names), (compared_b, compared, outline_b.names)):
        lines = body.text(text)
        if sound(lines, Skeleton.of(lines), body.line_count(text), names) is None:
            return  # the parser has to say what is wrong
    texts_a, starts_a = a.lines(text_a)
    lines_a = _Lines(texts_a, kin_a)
    lines_b = _Lines(compared.text(compared_b).split("\n"), kin_b)
    unchanged = _EntryPairing(lines_a, lines_b).unchanged
    if not unchanged:
        return
    found.seed.lines[a.name] = (b.name, {lines_a.defined[i]: lines_b.defined[j]
                                         for i, j in unchanged.items()})
    # Lines that read a changed instruction are parsed: the aligner pairs
    # the changed ones through them.
    changed_a = set(lines_a.defined).difference(map(lines_a.defined.__getitem__, unchanged))
    changed_b = set(lines_b.defined).difference(map(lines_b.defined.__getitem__,
                                                    unchanged.values()))
    skipped = {i for i, j in unchanged.items()
               if changed_a.isdisjoint(lines_a.names[i]) and changed_b.isdisjoint(lines_b.names[j])}
    found.unchanged_lines += len(skipped)
    found.runs_a.update(runs(texts_a, starts_a, skipped))
    texts_b, starts_b = b.lines(text_b)  # where b's lines are, as they are in its file
    found.runs_b.update(runs(texts_b, starts_b, set(map(unchanged.__getitem__, skipped))))


def _itself(name: str) -> str:
    return name


def _parameters_moved(lines_a: _Lines, lines_b: _Lines) -> bool:
    """Do the entry parameters differ in number, order, shape or metadata?"""
    return list(map(lines_a.skeletons.__getitem__, lines_a.parameters)) != \
        list(map(lines_b.skeletons.__getitem__, lines_b.parameters))
