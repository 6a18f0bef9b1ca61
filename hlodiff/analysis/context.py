"""What a person needs to see a finding in the program: its lines and its neighbourhood.

A finding says what changed; a reviewer also wants to see it. For each
finding, from the aligned modules of its stage:

* the HLO lines of its first few places, run a beside run b, cut into
  pieces that changed and pieces that did not. Tokens are compared through
  the instruction pairing: ``multiply.5`` reading ``constant.3`` in run a
  and ``multiply.7`` reading ``constant.4`` in run b are the same line when
  constant.3 is paired with constant.4, so renumbering is never a change;
* a big literal as its changed elements, never whole; for a constant XLA
  printed as ``{...}``, the elements JAX's module.mlir shows;
* a small graph: the changed instructions, their operands and users one or
  two steps out, on each side, every node with its status (added, removed,
  changed, same), its line and its origin. Only neighbourhoods are drawn,
  never the whole program: this stays fast on dumps of tens of megabytes.

The results are plain frozen dataclasses (the cache keeps them as JSON).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

from ..dumps.mlir import decode, mlir_type
from ..model import Computation, Instruction, Module, Origin, element_value
from .constants import abbreviate, constant_origin
from .findings import Finding, Where

if TYPE_CHECKING:
    from .align import Alignment, ComputationMatch

# ``ProgramDiff`` and ``StageDiff`` below are hlodiff/analysis/explain.py's; it is not
# imported here, not even for type checking: explain imports this module for Report.context.

PLACES = 3  # places of a finding shown as lines
DERIVED_PLACES = 1  # places of each derived group
DERIVED_GROUPS = 12  # derived groups given places; a version upgrade folds hundreds
GRAPH_PLACES = 2  # places a graph starts from (more make a tangle, not a picture)
SIDE_NODES = 14  # nodes of one side of a graph
SIDE_MINIMUM = 4  # a side with fewer goes on from what it has
NEIGHBOURS = 6  # operands or users of one node followed
ELEMENTS = 64  # changed elements of a literal listed
LINE_LIMIT = 1200  # characters of a line shown; a longer one is cut in the middle
LITERAL_LIMIT = 60  # a literal printed longer than this is abbreviated
NODE_VALUE = 18  # characters of a constant's value a graph node shows


def _shown(where: tuple, limit: int = PLACES) -> list:
    """The places of a finding shown as lines: its first ones, and where it
    holds both, a line run a had alone and one run b has alone (a
    replacement shows what went and what came)."""
    chosen = list(where[:limit])
    gone = next((w for w in where if w.b is None), None)
    came = next((w for w in where if w.a is None), None)
    if gone is None or came is None or (any(w.b is None for w in chosen)
                                        and any(w.a is None for w in chosen)):
        return chosen
    return [gone, came] + [w for w in chosen if w is not gone and w is not came][:limit - 2]


# constants of one tensor type in a run's module.mlir, in file order (dumps/mlir.py)
MlirConstants = dict[str, list[str]]
Sidecars = Callable[[str], tuple[MlirConstants | None, MlirConstants | None]]


@dataclass(frozen=True)
class Piece:
    """A stretch of a line, changed against the other run's line or not."""

    text: str
    changed: bool = False


@dataclass(frozen=True)
class Line:
    """One instruction's line in a run's file (metadata left out unless it is the change)."""

    number: int
    pieces: tuple[Piece, ...]

    @property
    def text(self) -> str:
        return "".join(p.text for p in self.pieces)


@dataclass(frozen=True)
class ElementChange:
    index: int
    old: str
    new: str


@dataclass(frozen=True)
class LiteralChange:
    """The elements of a big literal that differ (the first ``ELEMENTS``), and how many do."""

    elements: tuple[ElementChange, ...]
    differing: int
    total: int
    source: str  # "HLO", or "module.mlir" for a constant XLA printed as {...}


@dataclass(frozen=True)
class Place:
    """One place of a finding: the line in each run (None where it has no instruction)."""

    computation: str
    a: Line | None
    b: Line | None
    literal: LiteralChange | None = None


@dataclass(frozen=True)
class Node:
    """An instruction of the neighbourhood graph on one side."""

    name: str
    opcode: str
    shape: str
    status: str  # added, removed, changed or same
    focus: bool  # one of the finding's own places
    line: str
    number: int
    op_name: str | None = None
    location: str | None = None
    stack: tuple[str, ...] = ()
    partner: str | None = None  # its pair's name in the other run
    value: str = ""  # a constant's value, abbreviated


@dataclass(frozen=True)
class Side:
    """One run's half of a graph: nodes, edges (operand, user) by name, and how
    many neighbours were left out to keep it small."""

    computation: str | None
    nodes: tuple[Node, ...] = ()
    edges: tuple[tuple[str, str], ...] = ()
    left_out: int = 0


@dataclass(frozen=True)
class Graph:
    a: Side
    b: Side


@dataclass(frozen=True)
class FindingContext:
    """Lines and neighbourhood of one finding (``Report.context`` is aligned with
    ``Report.findings``); ``derived`` holds the first places of the first derived groups."""

    places: tuple[Place, ...] = ()
    graph: Graph | None = None
    derived: tuple[tuple[Place, ...], ...] = ()
    path_a: str | None = None
    path_b: str | None = None


def finding_contexts(findings: Iterable[Finding], programs: list[ProgramDiff],
                     sidecars: Sidecars) -> tuple[FindingContext, ...]:
    """One ``FindingContext`` per finding, in order (an empty one where the
    finding has no instruction to show: the environment, a program name).
    ``sidecars`` gives a program's module.mlir constants in run a and b."""
    by_program = {p.program: p for p in programs}
    views: dict[int, _StageView] = {}
    out = []
    for finding in findings:
        program = by_program.get(finding.program)
        stage = _stage_of(program, finding.stage) if program is not None else None
        if stage is None or stage.alignment is None:
            out.append(FindingContext())
            continue
        view = views.get(id(stage))
        if view is None:
            view = views[id(stage)] = _StageView(stage, lambda p=program.program: sidecars(p))
        out.append(view.context(finding))
    return tuple(out)


def _stage_of(program: ProgramDiff, stage: str) -> StageDiff | None:
    """The stage a finding's places are in: a finding seen in ``both`` keeps the
    places of the compile input."""
    wanted = "before_optimizations" if stage == "both" else stage
    return next((s for s in program.stages if s.stage == wanted),
                program.stages[0] if len(program.stages) == 1 else None)


class _StageView:
    """The modules of one stage, with what the context of its findings asks of them."""

    def __init__(self, stage: StageDiff, sidecars: Callable[[], tuple]):
        self.stage = stage
        self.alignment: Alignment = stage.alignment
        self.by_a = {m.a.name: m for m in self.alignment.computations}
        self.by_b = {m.b.name: m for m in self.alignment.computations}
        self.changed_a: set[tuple[str, str]] = set()
        self.changed_b: set[tuple[str, str]] = set()
        for change in stage.changes:
            if change.kind == "metadata":
                continue
            if change.a is not None:
                self.changed_a.add((change.computation_a or change.computation, change.a))
            if change.b is not None:
                self.changed_b.add((change.computation, change.b))
        self._users: dict[tuple[str, str], _Users] = {}
        self._reverse: dict[str, dict[str, str]] = {}
        self._sidecars = sidecars
        self._mlir: tuple | None = None

    # -- one finding ----------------------------------------------------------------------

    def context(self, finding: Finding) -> FindingContext:
        places = tuple(p for p in (self.place(w, finding.kind) for w in _shown(finding.where))
                       if p is not None)
        derived = tuple(tuple(p for p in (self.place(w, d.kind)
                                          for w in d.where[:DERIVED_PLACES]) if p is not None)
                        for d in finding.derived[:DERIVED_GROUPS])
        return FindingContext(places, self.graph(finding.where), derived,
                              self.stage.path_a, self.stage.path_b)

    def match_of(self, where: Where) -> tuple[ComputationMatch | None, Computation | None,
                                              Computation | None]:
        """The computation pair a place is in, and the computation on each side."""
        if where.b is not None:
            match = self.by_b.get(where.computation)
            if match is not None:
                return match, match.a, match.b
            return None, None, self.alignment.b.by_name.get(where.computation)
        match = self.by_a.get(where.computation)
        if match is not None:
            return match, match.a, match.b
        return None, self.alignment.a.by_name.get(where.computation), None

    def place(self, where: Where, kind: str) -> Place | None:
        match, comp_a, comp_b = self.match_of(where)
        x = comp_a.by_name.get(where.a) if comp_a is not None and where.a else None
        y = comp_b.by_name.get(where.b) if comp_b is not None and where.b else None
        if x is None and y is None:
            return None
        keep_metadata = kind == "metadata"
        tokens_a = _tokens(x, keep_metadata) if x is not None else None
        tokens_b = _tokens(y, keep_metadata) if y is not None else None
        force = kind == "elided_constant"
        if tokens_a is not None and tokens_b is not None:
            paired = self.renamer(match)

            def rename(name: str) -> str:  # the two lines shown side by side are one place
                return where.b if name == where.a else paired(name)
            pieces_a, pieces_b = _compare(tokens_a, tokens_b, rename, force)
        else:
            pieces_a = (Piece(_join(tokens_a), True),) if tokens_a is not None else None
            pieces_b = (Piece(_join(tokens_b), True),) if tokens_b is not None else None
        literal = None
        if x is not None and y is not None and x.opcode == y.opcode == "constant":
            literal = self.literal_change(x, y, kind)
        return Place(where.computation,
                     Line(x.line, pieces_a) if x is not None else None,
                     Line(y.line, pieces_b) if y is not None else None, literal)

    def renamer(self, match: ComputationMatch | None) -> Callable[[str], str]:
        """Run a's names as run b calls their partners: instructions through the
        pairing, computations through the computation pairs."""
        pairs = match.pairs if match is not None else {}
        computations = self.alignment.computation_pairs

        def rename(name: str) -> str:
            return pairs.get(name) or computations.get(name) or name
        return rename

    def literal_change(self, x: Instruction, y: Instruction, kind: str) -> LiteralChange | None:
        lx, ly = x.literal, y.literal
        if lx is None or ly is None or lx.parts or ly.parts:
            return None
        if lx.elided and ly.elided:
            return self.mlir_change(y) if kind == "elided_constant" else None
        if len(lx.elements) <= 1 or len(lx.elements) != len(ly.elements):
            return None
        return _element_changes(lx.elements, ly.elements, "HLO")

    def mlir_change(self, y: Instruction) -> LiteralChange | None:
        """The elements module.mlir shows for a constant XLA printed as {...}: the
        first pair of constants of its type that differ, as the finding says."""
        if self._mlir is None:
            self._mlir = self._sidecars()
        old, new = self._mlir
        if old is None or new is None or y.shape is None:
            return None
        tensor = mlir_type(y.shape)
        for a, b in zip(old.get(tensor, ()), new.get(tensor, ())):
            va, vb = decode(tensor, a), decode(tensor, b)
            if va is None or vb is None or len(va) != len(vb):
                continue
            change = _element_changes(tuple(f"{v:.9g}" for v in va),
                                      tuple(f"{v:.9g}" for v in vb), "module.mlir")
            if change.differing:
                return change
        return None

    # -- the neighbourhood ---------------------------------------------------------------------

    def graph(self, places: tuple[Where, ...]) -> Graph | None:
        """The changed instructions of the first places (in the first place's
        computation), and what is around them on both sides."""
        located = [(w, self.match_of(w)) for w in places if w.a is not None or w.b is not None]
        if not located:
            return None
        first = located[0][1]
        seeds = [(w, m) for w, m in located if m[1:] == first[1:]][:GRAPH_PLACES]
        match, comp_a, comp_b = first
        start: list[tuple[str, str]] = []
        for where, _ in seeds:
            if where.a is not None and comp_a is not None and where.a in comp_a.by_name:
                start.append(("a", where.a))
            if where.b is not None and comp_b is not None and where.b in comp_b.by_name:
                start.append(("b", where.b))
        if not start:
            return None
        return _Neighbourhood(self, match, comp_a, comp_b, start).graph()

    def users(self, side: str, computation: Computation) -> _Users:
        key = (side, computation.name)
        found = self._users.get(key)
        if found is None:
            twin = self.module("b" if side == "a" else "a").by_name.get(computation.name)
            found = self._users[key] = _Users(computation, twin)
        return found

    def reverse(self, match: ComputationMatch) -> dict[str, str]:
        found = self._reverse.get(match.b.name)
        if found is None:
            found = self._reverse[match.b.name] = {y: x for x, y in match.pairs.items()}
        return found

    def module(self, side: str) -> Module:
        return self.alignment.a if side == "a" else self.alignment.b


class _Neighbourhood:
    """Breadth-first from a finding's instructions over operands, users and
    partners (a node's pair in the other run is as near as the node), two
    steps out, at most ``SIDE_NODES`` nodes a side. A side left with almost
    nothing (run a of an added layer: the layer's nodes have no partners)
    goes on from what it has, so it shows where the change sits."""

    def __init__(self, view: _StageView, match: ComputationMatch | None,
                 comp_a: Computation | None, comp_b: Computation | None,
                 start: list[tuple[str, str]]):
        self.view, self.match = view, match
        self.computations = {"a": comp_a, "b": comp_b}
        self.pairs = match.pairs if match is not None else {}
        self.reverse = view.reverse(match) if match is not None else {}
        self.focus = set(start)
        self.order: list[tuple[str, str]] = []
        self.seen: set[tuple[str, str]] = set()
        self.count = {"a": 0, "b": 0}
        self.skipped: set[tuple[str, str]] = set()  # neighbours not drawn
        frontier: list[tuple[str, str]] = []
        for node in start:
            frontier.extend(self.add(node))
        for _ in range(2):  # operands and users one, then two steps out
            frontier = self.step(frontier)
        for _ in range(2):
            starved = [s for s in ("a", "b") if self.computations[s] is not None
                       and 0 < self.count[s] < SIDE_MINIMUM]
            if not starved:
                break
            frontier = self.step([n for n in self.order if n[0] in starved])

    def step(self, frontier: list[tuple[str, str]]) -> list[tuple[str, str]]:
        """Add the neighbours of ``frontier``; return what was added."""
        for side in ("a", "b"):  # the users of the whole frontier in one pass a side
            if self.computations[side] is not None:
                self.view.users(side, self.computations[side]).find(
                    name for s, name in frontier if s == side)
        found = [n for side, name in frontier for n in self.neighbours(side, name)]
        # What both runs have first: it shows where an added group sits in run a.
        found.sort(key=lambda n: self.partner(*n) is None)
        added: list[tuple[str, str]] = []
        for neighbour in dict.fromkeys(found):
            if neighbour not in self.seen:
                added.extend(self.add(neighbour))
        return added

    def add(self, node: tuple[str, str]) -> list[tuple[str, str]]:
        """Take ``node`` and its partner, where their side has room; both are expanded next."""
        added = []
        for one in (node, self.partner(*node)):
            if one is None or one in self.seen:
                continue
            if self.count[one[0]] >= SIDE_NODES:
                self.skipped.add(one)
                continue
            self.seen.add(one)
            self.order.append(one)
            self.count[one[0]] += 1
            added.append(one)
        return added

    def partner(self, side: str, name: str) -> tuple[str, str] | None:
        other = self.pairs.get(name) if side == "a" else self.reverse.get(name)
        return None if other is None else ("b" if side == "a" else "a", other)

    def neighbours(self, side: str, name: str) -> list[tuple[str, str]]:
        computation = self.computations[side]
        instruction = computation.by_name[name]
        operands = [o for o in dict.fromkeys(instruction.operands) if o in computation.by_name]
        users = list(dict.fromkeys(u.name for u in self.view.users(side, computation).get(name)))
        self.skipped.update((side, n) for n in operands[NEIGHBOURS:] + users[NEIGHBOURS:])
        return [(side, n) for n in operands[:NEIGHBOURS] + users[:NEIGHBOURS]]

    def graph(self) -> Graph:
        return Graph(self.side("a"), self.side("b"))

    def side(self, side: str) -> Side:
        computation = self.computations[side]
        if computation is None:
            return Side(None)
        names = [n for s, n in self.order if s == side]
        chosen = set(names)
        module = self.view.module(side)
        nodes = tuple(self.node(side, module, computation, computation.by_name[n]) for n in names)
        edges = tuple((o, n) for n in names for o in dict.fromkeys(computation.by_name[n].operands)
                      if o in chosen)
        left_out = sum(1 for s, _ in self.skipped - self.seen if s == side)
        return Side(computation.name, nodes, edges, left_out)

    def node(self, side: str, module: Module, computation: Computation,
             instruction: Instruction) -> Node:
        partner = self.partner(side, instruction.name)
        changed = self.view.changed_a if side == "a" else self.view.changed_b
        if partner is None:
            status = "removed" if side == "a" else "added"
        elif (computation.name, instruction.name) in changed or (side, instruction.name) in self.focus:
            status = "changed"
        else:
            status = "same"
        if instruction.opcode == "constant":
            origin = constant_origin(module, instruction, self.view.users(side, computation))[0]
        else:
            origin = module.origin(instruction)
        shape = instruction.shape
        value = ""
        if instruction.opcode == "constant":
            value = abbreviate(instruction, limit=2).replace(" (elided)", "")
            value = value if len(value) <= NODE_VALUE else value[:NODE_VALUE - 1] + "…"
        return Node(instruction.name, instruction.opcode,
                    str(shape.without_layout()) if shape is not None else "",
                    status, (side, instruction.name) in self.focus,
                    _join(_tokens(instruction, keep_metadata=False)), instruction.line,
                    origin.op_name, origin.location, _stack(origin),
                    partner[1] if partner is not None else None, value)


class _Users:
    """Who reads the instructions of one computation, found when asked.

    Each question is one pass over the computation's operand lists that
    keeps only the names asked for: a map of every instruction's users, on
    a computation of 100,000 instructions, allocates enough to set off a
    garbage collection of the whole dump, which costs more than the passes.
    A line the unchanged pass left unparsed is, byte for byte, the line of
    the same name in the computation of the same name of the other run
    (hlodiff/syntax/unchanged.py), so it reads the same names: they are
    taken from whichever run read them already (the aligner read one's).
    """

    def __init__(self, computation: Computation, twin: Computation | None):
        self.computation = computation
        self.twins = twin.by_name if twin is not None else {}
        self.known: dict[str, list[Instruction]] = {}

    def find(self, names: Iterable[str]) -> None:
        wanted = {n: [] for n in names if n not in self.known}
        if not wanted:
            return
        twins = self.twins
        for instruction in self.computation.instructions:
            source = twins.get(instruction.name, instruction) if instruction.unchanged \
                else instruction
            for operand in source.operands:
                if operand in wanted:
                    wanted[operand].append(instruction)
        self.known.update(wanted)

    def get(self, name: str, default: Iterable[Instruction] = ()) -> list[Instruction]:
        """As ``dict.get`` (constants.origin_from_users asks so); every name has an answer."""
        if name not in self.known:
            self.find((name,))
        return self.known[name]


def _stack(origin: Origin) -> tuple[str, ...]:
    return tuple(f"{f.function} ({f.file}:{f.line})" for f in origin.stack)


# --- lines and tokens ----------------------------------------------------------------------

# A token of an HLO line: a quoted string, a name (with its % sigil), a number, a
# run of spaces, or one character.
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|%?[A-Za-z_][\w.\-]*|-?\d[\w.+\-]*|\s+|.', re.S)
_METADATA = re.compile(r",\s*metadata=\{")

Token = tuple[str, str, bool]  # (what it is compared as, its text, is a name)


def _tokens(instruction: Instruction, keep_metadata: bool) -> list[Token]:
    """An instruction's line as tokens; a long literal is one token, shown
    abbreviated and compared whole."""
    text, start = _source_line(instruction)
    if text is None:
        return [(instruction.name, instruction.name, True)]
    literal_at = instruction.operand_offset - start
    literal = instruction.operand_text if instruction.opcode == "constant" else ""
    if literal and 0 <= literal_at:
        head, tail = text[:literal_at], text[literal_at + len(literal):]
        shown = abbreviate(instruction) if len(literal) > LITERAL_LIMIT else literal
        return _split(head) + [(literal, shown, False)] + _split(_without_metadata(
            tail, keep_metadata))
    return _split(_cut(_without_metadata(text, keep_metadata)))


def _source_line(instruction: Instruction) -> tuple[str | None, int]:
    """The instruction's line as the file has it, and where it starts. The
    parser's reader keeps the file's text; an unparsed line is read whole."""
    text = getattr(instruction.reader, "text", None)
    offset = instruction.operand_offset
    if text is None or offset < 0:
        return None, 0
    begin = text.rfind("\n", 0, offset) + 1
    end = text.find("\n", offset)
    line = text[begin:len(text) if end < 0 else end]
    stripped = line.lstrip()
    return stripped.rstrip(), begin + len(line) - len(stripped)


def _without_metadata(text: str, keep: bool) -> str:
    """The line without ``metadata={...}``: op_name and source lines are shown as
    the origin, and stack frame ids are renumbered between runs."""
    found = None if keep else _METADATA.search(text)
    if found is None:
        return text
    depth, i, quoted = 1, found.end(), False
    while i < len(text) and depth:
        char = text[i]
        if quoted:
            if char == "\\":
                i += 1
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        i += 1
    return text[:found.start()] + text[i:]


def _cut(text: str) -> str:
    if len(text) <= LINE_LIMIT:
        return text
    half = LINE_LIMIT // 2
    return f"{text[:half]} … ({len(text) - 2 * half} characters) … {text[-half:]}"


def _split(text: str) -> list[Token]:
    out = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        is_name = token[0] == "%" or token[0].isalpha() or token[0] == "_"
        out.append((" " if token.isspace() else token.lstrip("%") if is_name else token,
                    token, is_name))
    return out


def _join(tokens: list[Token] | None) -> str:
    return "".join(t[1] for t in tokens or ())


def _compare(tokens_a: list[Token], tokens_b: list[Token], rename: Callable[[str], str],
             force: bool) -> tuple[tuple[Piece, ...], tuple[Piece, ...]]:
    """Both lines cut into pieces, the tokens that differ marked; run a's names
    are compared as their partners in run b. ``force`` marks a literal that
    compares equal as text but not in value (``{...}`` whose values differ)."""
    keys_a = [rename(k) if is_name else k for k, _, is_name in tokens_a]
    keys_b = [k for k, _, _ in tokens_b]
    changed_a = [False] * len(tokens_a)
    changed_b = [False] * len(tokens_b)
    matcher = SequenceMatcher(None, keys_a, keys_b, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op != "equal":
            changed_a[i1:i2] = [True] * (i2 - i1)
            changed_b[j1:j2] = [True] * (j2 - j1)
    if force:
        for tokens, changed in ((tokens_a, changed_a), (tokens_b, changed_b)):
            for i, (key, _, _) in enumerate(tokens):
                if key == "{...}":
                    changed[i] = True
    return _pieces(tokens_a, changed_a), _pieces(tokens_b, changed_b)


def _pieces(tokens: list[Token], changed: list[bool]) -> tuple[Piece, ...]:
    """Runs of tokens with the same mark; spaces between two changed tokens are changed."""
    out: list[Piece] = []
    for i, (key, text, _) in enumerate(tokens):
        mark = changed[i]
        if key == " " and 0 < i < len(tokens) - 1:
            mark = changed[i - 1] and changed[i + 1]
        if out and out[-1].changed == mark:
            out[-1] = Piece(out[-1].text + text, mark)
        else:
            out.append(Piece(text, mark))
    return tuple(out)


# --- literals ----------------------------------------------------------------------------------

def _element_changes(old: tuple[str, ...], new: tuple[str, ...], source: str) -> LiteralChange:
    differing = [i for i, (o, n) in enumerate(zip(old, new)) if not _same_element(o, n)]
    return LiteralChange(tuple(ElementChange(i, old[i], new[i]) for i in differing[:ELEMENTS]),
                         len(differing), len(old), source)


def _same_element(old: str, new: str) -> bool:
    """Equal values, however printed (``0.5`` is ``5e-1``; -0 is not 0)."""
    if old == new:
        return True
    try:
        x, y = element_value(old), element_value(new)
    except ValueError:
        return False
    if isinstance(x, float) and isinstance(y, float):
        if math.isnan(x) or math.isnan(y):
            return math.isnan(x) and math.isnan(y)
        return x == y and math.copysign(1.0, x) == math.copysign(1.0, y)
    return x == y
