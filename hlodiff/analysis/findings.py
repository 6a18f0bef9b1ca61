"""From root changes to findings: one finding per thing the user did.

The cause graph (hlodiff/analysis/causes.py) leaves the changes nothing else
explains. Several of those are still one edit of the user's code:

* the same change in N places (a learning rate in every fused update) is
  one finding with a count;
* instructions added or removed together are one structural finding: they
  are grouped by dataflow (one reads another) and by name scope or source
  line; an op and the parameters it brings are one, the op named first; a
  group removed where another is added in the same scope is "replaced";
* entry parameters whose shapes moved by the same dimensions are one
  finding (``batch 32 -> 48 in x f32[32,32] and y f32[32,8]``);
* entry parameters that only changed places are one "parameter_order"
  finding, naming the one that moved and what uses it;
* op_names renamed the same way are one metadata finding.

Each finding carries the changes that follow from its own as ``derived``
findings, grouped by kind.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..model import GENERIC_PARAMETER_NAMES, Instruction, Module, Origin, runs_backward
from .causes import PRIORITY, element_types, moved_dims, scalar_value
from .constants import reader_locations, users_of
from .diff import (MOVED_INTO, MOVED_OUT_OF, READS_ANOTHER, RETURNS_ANOTHER, Change,
                   text_difference)
from .hashes import HASHES, affects


@dataclass(frozen=True)
class Where:
    """One place a finding was seen: the instruction on each side, and its own
    old and new (a collapsed finding shows the first place's), with the
    lines in each file."""

    computation: str
    a: str | None
    b: str | None
    old: str | None = None
    new: str | None = None
    line_a: int | None = None
    line_b: int | None = None


@dataclass(frozen=True)
class Finding:
    """One explained difference, possibly seen in several places and stages.

    ``summary`` says it in the user's words (``batch 32 -> 48 in x, y``);
    ``derived`` are the changes that follow from it, by kind; ``optimized``
    counts the instructions XLA then optimized differently because of it;
    ``advice`` is what a practitioner would do about it.
    """

    kind: str
    stage: str  # before_optimizations, after_optimizations or both
    old: str | None
    new: str | None
    count: int
    affects: tuple[str, ...]
    origins: tuple[Origin, ...]
    where: tuple[Where, ...]
    detail: str = ""
    derived: tuple[Finding, ...] = ()
    summary: str = ""
    advice: str = ""
    program: str = ""
    optimized: int = 0
    element_type: str | None = None  # of a constant's values: "2" may be an f32

    @property
    def origin(self) -> Origin:
        """The most informative origin: one with a source line, else one with an op_name."""
        for origin in self.origins:
            if origin.location:
                return origin
        for origin in self.origins:
            if origin.op_name:
                return origin
        return self.origins[0] if self.origins else Origin()

    @property
    def moves_a_hash(self) -> bool:
        return bool(self.affects)


def where(change: Change) -> Where:
    return Where(change.computation, change.a, change.b, change.old, change.new,
                 change.line_a, change.line_b)


def _hashes(changes: list[Change]) -> tuple[str, ...]:
    moved = {h for c in changes for h in affects(c)}
    return tuple(h.name for h in HASHES if h.name in moved)


def moved_by(findings: list[Finding]) -> tuple[str, ...]:
    """The hashes any of ``findings`` moves, in the order of ``HASHES``: what
    a finding that takes others under it moves."""
    moved = {h for f in findings for h in f.affects}
    return tuple(h.name for h in HASHES if h.name in moved)


def _origins(changes: list[Change], limit: int = 50, ranked: bool = False,
             lead: Change | None = None) -> tuple[Origin, ...]:
    """The distinct origins, those with a source line first, then those with an
    op_name; among equals the origin of ``lead`` (the change whose old -> new
    the finding shows, so that its values and its origin are one instruction's),
    then in the order of ``changes`` when they come ``ranked`` (the ops that
    do the work of a structural finding first), else by their text, so that
    the order does not depend on how the dumps were read."""
    distinct = list(dict.fromkeys(c.origin for c in changes if c.origin))
    shown = lead.origin if lead is not None else None
    distinct.sort(key=lambda o: (o.location is None, o.op_name is None, o != shown) if ranked
                  else (o.location is None, o.op_name is None, o != shown, o.op_name or "",
                        o.location or "", o.op_type or ""))
    return tuple(distinct[:limit])


def _symmetric_key(change: Change) -> tuple:
    """Orders changes the same way whichever run is called a."""
    return (sorted([change.old or "", change.new or ""]),
            sorted([change.computation or "", change.computation_a or ""]),
            sorted([change.line_a or 0, change.line_b or 0]))


def finding(kind: str, stage: str, changes: list[Change], *, old=None, new=None,
            detail: str = "", summary: str = "", derived: list[Change] = (),
            count: int | None = None, ranked: bool = False) -> Finding:
    """A finding made of ``changes`` (an example's values unless given)."""
    first = min(changes, key=_symmetric_key)
    return Finding(kind, stage, first.old if old is None else old,
                   first.new if new is None else new, len(changes) if count is None else count,
                   _hashes(changes + list(derived)),
                   _origins(changes, ranked=ranked, lead=None if old is not None else first),
                   tuple(where(c) for c in changes), detail or first.detail,
                   derived_findings(list(derived), stage), summary,
                   element_type=first.element_type)


def derived_findings(changes: list[Change], stage: str) -> tuple[Finding, ...]:
    """Changes that follow from a finding, one derived finding per kind."""
    groups: dict[str, list[Change]] = defaultdict(list)
    for change in changes:
        groups[change.kind].append(change)
    out = []
    for kind in sorted(groups, key=lambda k: (PRIORITY.get(k, 99), k)):
        group = groups[kind]
        example = min(group, key=_symmetric_key)  # the same example whichever run is a
        out.append(Finding(kind, stage, example.old, example.new, len(group), _hashes(group),
                           _origins(group, 20, lead=example), tuple(where(c) for c in group),
                           f"{len(group)} {kind} change{'s' if len(group) != 1 else ''} "
                           "follow from it"))
    return tuple(out)


def under_one_cause(findings: list[Finding], folded: list[Finding], summary: str, lead: Finding,
                    origins: tuple[Origin, ...]) -> list[Finding]:
    """``findings`` with those of ``folded``, the consequences of one change
    of the program's structure (a checkpoint, an unroll: recompute.py,
    unroll.py), taken under one finding of it, first: ``summary`` says it,
    ``origins`` are its places, ``lead`` the folded finding whose places and
    program it shows. It moves what they move, counts what they count."""
    stages = {f.stage for f in folded}
    home = Finding(
        kind="replaced", stage=stages.pop() if len(stages) == 1 else "both",
        old=None, new=None, count=sum(f.count for f in folded), affects=moved_by(folded),
        origins=origins, where=lead.where, summary=summary, program=lead.program,
        derived=following(folded), optimized=sum(f.optimized for f in folded))
    return [home] + [f for f in findings if not any(f is g for g in folded)]


def taken_under(findings: list[Finding], home: Finding, folded: list[Finding]) -> list[Finding]:
    """``findings`` with those of ``folded`` taken under ``home``, which keeps
    its place: it moves what they move, and counts what XLA optimized
    otherwise because of them."""
    merged = replace(home, derived=home.derived + following(folded),
                     optimized=home.optimized + sum(f.optimized for f in folded),
                     affects=moved_by([home, *folded]))
    return [merged if f is home else f for f in findings if not any(f is g for g in folded)]


def following(folded: list[Finding]) -> tuple[Finding, ...]:
    """``folded`` as what follows from another finding: each said by its summary."""
    return tuple(replace(f, detail=f.summary or f.detail) for f in folded)


# --- grouping ---------------------------------------------------------------------------------

def group(roots: list[Change], following: dict[int, list[Change]], stage: str,
          a: Module, b: Module) -> list[Finding]:
    """The findings of one stage: ``roots`` grouped, each with what follows from it
    (``following`` is keyed by ``id()`` of a root change)."""
    findings: list[Finding] = []
    widened, in_b = _widened_to_64_bits(roots, a, b)
    if widened:
        widened += _rebuilt_for_64_bits(roots, widened, a, b)
        findings.append(_sixty_four_bit_finding(widened, in_b, following, stage))
        roots = [c for c in roots if not any(c is w for w in widened)]
    structural = [c for c in roots if c.kind in _STRUCTURAL]
    parameters = [c for c in roots if c.kind == "parameter" and c.a is not None and c.b is not None]
    rest = [c for c in roots if c not in structural and not any(c is p for p in parameters)]
    findings += _structural(structural, following, stage, a, b)
    findings += _parameters(parameters, following, stage, a, b)
    groups: dict[tuple, list[Change]] = defaultdict(list)
    rewired = _rewired(roots)
    for change in rest:
        groups[("operands",) if rewired and change.kind == "operands" else _group_key(change)] \
            .append(change)
    metadata_noise: list[Change] = []
    # Where the program changed, metadata that differs in one place, or only in
    # source lines, comes with the change; a scope renamed everywhere does not.
    compiled = any(c.kind != "metadata" for c in roots)
    for key, changes in groups.items():
        derived = [d for c in changes for d in following.get(id(c), ())]
        first = changes[0]
        old, new = first.old, first.new
        if first.kind == "metadata":
            old, new = renamed_part(old or "", new or "")
            if _incidental(old, new) or compiled and (
                    len(changes) == 1 or "op_name" not in first.detail):
                metadata_noise += changes + derived
                continue
        summary = _summary(first, len(changes))
        if first.kind == "attribute" and first.detail == "operand_precision" and \
                _every_matmul(changes, a, b):
            summary = f"{EVERY_MATMUL} {old or '(none)'} -> {new or '(none)'}"
        placed = _placed_arguments(changes, b)
        if placed:
            summary = f"{ARGUMENT_SHARDING} {placed} {_sharding_said(old)} -> {_sharding_said(new)}"
        returned = _returned_sharding(changes, b)
        if returned:
            summary = f"{RESULT_SHARDING} {returned}"
        if rewired and first.kind == "operands":  # an example where it is short
            summary = f"{REWIRED} (e.g. {old} -> {new})" \
                if len(old or "") + len(new or "") <= 100 else REWIRED
        findings.append(finding(first.kind, stage, changes, old=old, new=new, derived=derived,
                                summary=summary))
    # related values first: of two on one line, the one the user wrote leads
    return _one_per_line(_related_constants(
        _with_incidental_metadata(findings, metadata_noise, stage), a, b))


# What a finding of a precision set on every matmul starts with (advice.py reads it).
EVERY_MATMUL = "precision of every matmul and convolution:"
_MATMULS = frozenset({"dot", "convolution"})


def _every_matmul(changes: list[Change], a: Module, b: Module) -> bool:
    """Do ``changes`` set the precision of every dot and convolution of both
    programs? Then no line of the model set it, a setting of the whole
    process did (JAX's jax_default_matmul_precision gave each of a flax
    step's five dots operand_precision={highest,highest}, and the advice
    read "look at the code at this line for a changed option"); a
    precision= given to one layer changes that layer's alone."""
    for module, side in ((a, "a"), (b, "b")):
        changed = {getattr(c, side) for c in changes}
        if any(i.opcode in _MATMULS and i.name not in changed for _, i in module.instructions()):
            return False
    return True


# What a finding of values computed in 64 bits in one run only starts with
# (advice.py reads it).
SIXTY_FOUR_BIT = "64-bit types in run"

# Each element type and its 64-bit kind: what JAX's jax_enable_x64 widens.
_WIDER = {"s32": "s64", "u32": "u64", "f32": "f64", "c64": "c128"}
_SIXTY_FOUR_BIT_TYPE = re.compile(r"\b(s64|u64|f64|c128)\[")


def _sixty_four_bit_types(module: Module) -> frozenset[str]:
    """The 64-bit element types the program's values have. Read from the
    program's file, whose unchanged lines are never parsed; from the
    instructions where there is no file (a capture, a text given directly)."""
    try:
        with open(module.path, encoding="utf-8", errors="replace") as stream:
            return frozenset(_SIXTY_FOUR_BIT_TYPE.findall(stream.read()))
    except (OSError, TypeError):
        return frozenset(t for _, i in module.instructions()
                         for t in _SIXTY_FOUR_BIT_TYPE.findall(f"{i.shape}"))


def _widened_to_64_bits(roots: list[Change], a: Module, b: Module) -> tuple[list[Change], bool]:
    """The changes that only widen 32-bit values to their 64-bit kind (s32 to
    s64, f32 to f64), when one run has 64-bit types the other has nowhere:
    one setting of the whole process, as JAX's jax_enable_x64 is, not a
    change at each place (a flax step run with JAX_ENABLE_X64=1 read "dtype
    s32[] -> s64[]" at a cross-entropy's line, with advice on Python
    scalars). JAX's PRNG counts in u64 whatever the setting, so a type both
    runs have says nothing. With them, whether run b is the one in 64 bits;
    [] otherwise."""
    retyped = [c for c in roots if c.kind in ("dtype", "parameter")]
    if not any(_widens(c, True) or _widens(c, False) for c in retyped):
        return [], False  # no file read where nothing was widened
    types_a, types_b = _sixty_four_bit_types(a), _sixty_four_bit_types(b)
    if bool(types_a - types_b) == bool(types_b - types_a):
        return [], False
    in_b = bool(types_b - types_a)
    return [c for c in retyped if _widens(c, in_b)], in_b


def _widens(change: Change, in_b: bool) -> bool:
    """Do the change's element types go from 32 to 64 bits (``in_b``) or
    back, and nothing else change (dimensions, layout)?"""
    narrow, wide = (change.old, change.new) if in_b else (change.new, change.old)
    if not narrow or not wide:
        return False
    types = element_types(narrow).split(",")
    if not any(t in _WIDER for t in types):
        return False
    widened = narrow
    for t in set(types) & set(_WIDER):
        widened = re.sub(rf"\b{t}\[", f"{_WIDER[t]}[", widened)
    return widened == wide


def _rebuilt_for_64_bits(roots: list[Change], widened: list[Change], a: Module,
                         b: Module) -> list[Change]:
    """Operations added or removed inside a function that also has values
    widened to 64 bits, other than the program's entry: the same Python code
    needs other operations for the wider type (JAX's uniform builds the bits
    of an f64 from two 32-bit words: a shift-left, an or and a convert more,
    an xor less), none of which the model's code asks for."""
    inside = {name for c in widened for name in (c.computation, c.computation_a)} - \
        {a.entry.name, b.entry.name, None}
    return [c for c in roots if c.kind in _STRUCTURAL and c.computation in inside
            and (c.computation_a or c.computation) in inside]


def _sixty_four_bit_finding(widened: list[Change], in_b: bool,
                            following: dict[int, list[Change]], stage: str) -> Finding:
    """One finding of every value widened to 64 bits (in run b when ``in_b``),
    naming the types."""
    narrow = sorted({t for c in widened if c.kind not in _STRUCTURAL
                     for t in element_types(c.old if in_b else c.new).split(",") if t in _WIDER})
    old = ", ".join(narrow if in_b else (_WIDER[t] for t in narrow))
    new = ", ".join((_WIDER[t] for t in narrow) if in_b else narrow)
    derived = [d for c in widened for d in following.get(id(c), ())]
    summary = f"{SIXTY_FOUR_BIT} {'b' if in_b else 'a'} only: {old} -> {new}"
    return finding("dtype", stage, widened, old=old, new=new, derived=derived, summary=summary)


# What a finding of arguments given another sharding starts with (advice.py
# and explain.py read it).
ARGUMENT_SHARDING = "argument sharding:"


def _placed_arguments(changes: list[Change], b: Module) -> str:
    """``w, x`` where every change is the sharding of an entry parameter,
    XLA's (``sharding``) or Shardy's (the ``xla.sdy.sharding`` frontend
    attribute) where both runs have one (an argument placed on a mesh in one
    run only is said by XLA's, one finding for all such arguments), by the
    argument's names, else ``argument N``: how each
    argument was placed (JAX: jax.device_put with a sharding, jit's
    in_shardings), not an op of the model; "" otherwise."""
    names = []
    for change in changes:
        name = change.detail.split(":")[0]
        shardy = name == "frontend_attributes" and all(  # another PartitionSpec
            _SHARDY_SHARDING.search(text or "") for text in (change.old, change.new))
        if change.kind != "attribute" or name != "sharding" and not shardy \
                or change.b is None or change.computation != b.entry.name:
            return ""
        parameter = b.entry.by_name.get(change.b)
        if parameter is None or parameter.opcode != "parameter":
            return ""
        names.append(change.origin.op_name or f"argument {parameter.parameter_number}")
    return ", ".join(dict.fromkeys(names))


# What a finding of the result returned with another sharding starts with
# (advice.py and explain.py read it).
RESULT_SHARDING = "result sharding (jit's out_shardings):"
_SHARDY_SHARDING = re.compile(r'xla\.sdy\.sharding="(.*)"')
_SHARDY_DIMENSIONS = re.compile(r"<@[\w.$-]+, (\[.*?\])")


def _returned_sharding(changes: list[Change], b: Module) -> str:
    """``[{}, {"model"}] -> [{}, {}]`` where every change is Shardy's sharding
    on JAX's ``xla.sdy.FuncResultSharding`` call in the entry (the sharding
    jit's out_shardings gives a result, each dimension's mesh axes); ""
    otherwise."""
    said = []
    for change in changes:
        if change.kind != "attribute" or change.detail.split(":")[0] != "frontend_attributes" \
                or change.b is None or change.computation != b.entry.name:
            return ""
        call = b.entry.by_name.get(change.b)
        if call is None or dict(call.attribute_items).get("custom_call_target") != \
                _RESULT_SHARDING:
            return ""
        said.append(f"{_sharding_said(change.old)} -> {_sharding_said(change.new)}")
    return "; ".join(dict.fromkeys(said))


def _sharding_said(text: str | None) -> str:
    """A sharding as a person compares two: Shardy's by each dimension's
    mesh axes (``[{}, {"model"}]``), XLA's as printed, ``(none)``."""
    found = _SHARDY_SHARDING.search((text or "").replace('\\"', '"'))
    if found is None:
        return text or "(none)"
    return ", ".join(_SHARDY_DIMENSIONS.findall(found.group(1))) or found.group(1)


# What a framework computes from a hyperparameter and bakes in beside it:
# dropout keeps 1/(1-p), batch norm 1-momentum, an average 1/n, a count of
# steps k the last step's index k - 1 (optax.MultiSteps' every_k_schedule).
# (name, function, of whole numbers only: counts)
_RELATIONS = (("1 - x", lambda x: 1 - x, False), ("1/x", lambda x: 1 / x, False),
              ("1/(1 - x)", lambda x: 1 / (1 - x), False), ("x - 1", lambda x: x - 1, True))


def _related_constants(findings: list[Finding], a: Module, b: Module) -> list[Finding]:
    """A scalar constant that is a function of another's value in both runs
    (dropout's 1/(1-p) beside p: 1.11111116 -> 1.42857146 beside 0.1 -> 0.3)
    follows from it: one finding, led by the value as the user wrote it (see
    _typed_key), the other under it."""
    scalars = [i for i, f in enumerate(findings) if f.kind == "constant"
               and scalar_value(f.old) is not None and scalar_value(f.new) is not None]
    keys: dict[int, tuple[int, bool]] = {}

    def typed(i: int) -> tuple[int, bool]:  # asked of related values only: it reads modules
        if i not in keys:
            keys[i] = _typed_key(findings[i], a, b)
        return keys[i]

    folded: dict[int, list[tuple[int, str]]] = defaultdict(list)  # host: (index, relation)
    gone: set[int] = set()
    for i in scalars:
        for j in scalars:
            if i == j or i in gone or j in gone or j in folded:
                continue
            relation = _relation(findings[i], findings[j])
            if relation and typed(i) <= typed(j):
                folded[i].append((j, relation))
                gone.add(j)
    out = list(findings)
    for host, rest in folded.items():
        f = findings[host]
        # what followed from a value follows from the one it is computed from
        extra = tuple(d for k, relation in rest for d in (
            replace(findings[k], detail=f"{relation} of it", derived=()), *findings[k].derived))
        out[host] = replace(f, derived=f.derived + extra,
                            affects=moved_by([f, *(findings[k] for k, _ in rest)]))
    return [f for i, f in enumerate(out) if i not in gone]


def _relation(source: Finding, derived: Finding) -> str:
    """How ``derived``'s values follow from ``source``'s in both runs, or ""."""
    x = scalar_value(source.old), scalar_value(source.new)
    y = scalar_value(derived.old), scalar_value(derived.new)
    if x[0] == x[1]:
        return ""
    whole = _whole(source) and _whole(derived)
    for name, function, counts_only in _RELATIONS:
        if counts_only and not whole:
            continue
        try:
            if all(math.isclose(function(a), b, rel_tol=1e-5) for a, b in zip(x, y)):
                return name
        except ZeroDivisionError:
            continue
    return ""


def _whole(finding: Finding) -> bool:
    """Are the finding's values whole numbers (a count, though a float may hold it)?"""
    values = [scalar_value(v) for v in (finding.old, finding.new)]
    return all(v is not None and math.isfinite(v) and v.is_integer() for v in values)


def _typed_key(finding: Finding, a: Module, b: Module) -> tuple[int, bool]:
    """Orders related values, the one as the user wrote it first (on a tie
    the first ranked): the shorter to print (1 - x computed in f32 is
    0.00099998713), then a value its line holds a constant of its own for, in
    either run, before one it reads only from constants other lines read too.
    JAX keeps one constant per value: an EMA's 1 - decay, 0.01 -> 0.001, is
    the learning rate's 0.01 in one run and Adam's 0.001 in the other, where
    the decay 0.99 is the EMA's own literal in the run that has it (1 - x
    relates them both ways, so the values alone cannot tell)."""
    return len((finding.old or "") + (finding.new or "")), not _own_literal(finding, a, b)


def _own_literal(finding: Finding, a: Module, b: Module) -> bool:
    """Is one of the finding's constants, in either run, read at the
    finding's source line and nowhere else?"""
    line = finding.origin.location
    if line is None:
        return False
    for module, names in ((a, {w.a for w in finding.where}), (b, {w.b for w in finding.where})):
        for computation in module.computations:
            users = None
            for instruction in computation.instructions:
                if instruction.name in names and instruction.opcode == "constant":
                    users = users or users_of(computation)
                    if reader_locations(module, instruction, users) == {line}:
                        return True
    return False


# The summary of a program that computes the same operations, wired otherwise.
REWIRED = "the same operations in another order"


def _rewired(roots: list[Change]) -> bool:
    """Does the program compute the same operations, only reading each other
    in another order? So it is when every change that is not metadata reads
    another operand (nothing added, removed, retyped or revalued: each
    instruction has its partner). Python iterating a set while tracing makes
    such programs, another order in each process (found with real JAX runs
    under different PYTHONHASHSEEDs: each wrote its own cache entry)."""
    compiled = [c for c in roots if c.kind != "metadata"]
    return bool(compiled) and all(
        c.kind == "operands" and c.detail.endswith((READS_ANOTHER, RETURNS_ANOTHER))
        for c in compiled)


def _one_per_line(findings: list[Finding]) -> list[Finding]:
    """Changes of the program that one line of the user's code made are one
    finding: a seed written once shows in two constants of the program; the
    others are counted under the first (the most direct kind of change).
    Operations added or removed lead: they do not follow from a value, and
    a line that drives a whole step (Keras' model.fit) holds every change.
    Adam swapped for RMSprop read "constant 0.001 -> 0.9", with 61 replaced
    operations following from it."""
    by_line: dict[str, list[int]] = defaultdict(list)
    for i, f in enumerate(findings):
        if f.kind not in ("metadata", "program_name", "module_number") and f.origin.location:
            by_line[f.origin.location].append(i)
    folded: set[int] = set()
    out = list(findings)
    for indices in by_line.values():
        if len(indices) < 2:
            continue
        indices.sort(key=lambda i: (findings[i].kind not in _LEADING_FINDINGS,
                                    PRIORITY.get(findings[i].kind, 99),
                                    not _changes_structure(findings[i]),
                                    _finding_key(findings[i])))
        host, *rest = indices
        extra = tuple(replace(findings[i], detail=findings[i].summary or findings[i].detail)
                      for i in rest)
        out[host] = replace(findings[host], derived=findings[host].derived + extra,
                            affects=moved_by([findings[i] for i in indices]))
        folded.update(rest)
    return [f for i, f in enumerate(out) if i not in folded]


_STRUCTURAL_FINDINGS = frozenset({"op_added", "op_removed", "replaced", "op_moved"})
# What leads the changes of one line: operations added or removed, and a
# dtype, which other operations follow from (a Flax model given dtype=bf16
# lowers erf with an abs more: it read "added: 3 ops (abs, constant(0))").
_LEADING_FINDINGS = _STRUCTURAL_FINDINGS | {"dtype"}


def _changes_structure(finding: Finding) -> bool:
    """Do operations added or removed follow from it? Of two values one line
    changed, the one whose old value let the lowering fold an op away
    (Keras' Huber delta 1 -> 2, where 0.5 * delta**2 moved 0.5 -> 2 beside
    it) is the one the user wrote."""
    return any(d.kind in _STRUCTURAL_FINDINGS for d in finding.derived)


def _finding_key(finding: Finding) -> tuple:
    return (sorted([finding.old or "", finding.new or ""]), -finding.count)


def _incidental(old: str, new: str) -> bool:
    """Metadata that differs the way a change elsewhere makes it differ: an
    op_name counter that shifted (``aten__add.12`` -> ``.14``), TensorFlow's
    suffix that keeps op names unique (``mul`` -> ``mul_1`` when an op added
    before it took ``mul``), or metadata present on one side only. A rename
    the user made is not incidental."""
    return not old or not new or (old.isdigit() and new.isdigit()) or \
        _UNIQUIFIED.sub("", old) == _UNIQUIFIED.sub("", new)


_UNIQUIFIED = re.compile(r"_\d+$")


def _with_incidental_metadata(findings: list[Finding], noise: list[Change],
                              stage: str) -> list[Finding]:
    """Incidental metadata goes under the first finding that changes the
    program; with none, it is one metadata finding of its own."""
    if not noise:
        return findings
    home = next((i for i, f in enumerate(findings) if f.kind != "metadata"), None)
    if home is None:
        # op_names renumbered; else only source locations: lines moved (an edit above)
        what = "op_name numbering or presence differs" if any(
            "op_name" in c.detail for c in noise) else "source locations moved"
        return findings + [finding("metadata", stage, noise, old="", new="",
                                   summary=f"{what} at {len(noise)} places")]
    host = findings[home]
    findings[home] = replace(host, derived=host.derived + derived_findings(noise, stage))
    return findings


_STRUCTURAL = frozenset({"op_added", "op_removed", "computation_added", "computation_removed"})


def _group_key(change: Change) -> tuple:
    if change.kind == "metadata":
        return (change.kind,) + renamed_part(change.old or "", change.new or "")
    if change.kind == "dtype":  # one switch of element type, whatever the shapes
        return (change.kind, element_types(change.old), element_types(change.new))
    if change.kind == "attribute":
        return (change.kind, change.old, change.new, change.detail)
    return (change.kind, change.old, change.new)


def _summary(change: Change, count: int) -> str:
    """The headline of a plain finding: old -> new, or the changed elements of a
    big literal, or the values module.mlir showed for one XLA printed as {...},
    or the changed words of a long attribute."""
    if change.kind == "elided_constant" and change.detail:
        where = f" of {change.element_type}" if change.element_type else ""
        return f"constant printed as {{...}}{where}: {change.detail}"
    if change.kind == "constant" and change.detail and len(change.old or "") > 40:
        return f"constant {change.detail}"
    if change.kind == "attribute" and change.detail == "module header: input_output_alias":
        return _donation(change.old, change.new)
    if change.kind == "attribute" and change.detail == "module header: frontend_attributes" \
            and (reshaped := mesh_change(change.old, change.new)):
        return f"{DEVICE_MESH} {reshaped}"
    if change.kind == "attribute" and max(len(change.old or ""), len(change.new or "")) > 40:
        if change.detail.startswith("module header: ") and change.old and change.new:
            return f"{change.detail}: {text_difference(change.old, change.new)}"
        return f"attribute {change.detail}"  # name: the changed words
    return ""


def _donation(old: str | None, new: str | None) -> str:
    """input_output_alias in the user's words: which parameters are donated
    (their buffers may be reused for outputs: JAX's donate_argnums)."""
    said = [", ".join(map(str, _donated(text))) or "none" for text in (old, new)]
    return f"donated parameters (buffers reused for outputs): {said[0]} -> {said[1]}"


def _donated(text: str | None) -> list[int]:
    from ..syntax.values import PieceError, alias_entries  # here: a cached report loads no parser
    try:
        entries = alias_entries("input_output_alias", text) if text else ()
    except PieceError:  # the parser let it through: say what can be read
        entries = ()
    return sorted({parameter for _, parameter, _, _ in entries})


# What a finding of a device mesh laid out otherwise starts with (advice.py and
# explain.py read it).
DEVICE_MESH = "device mesh:"
# A mesh JAX hands Shardy, in the module header: ``mesh = #sdy.mesh<["data"=4, "model"=2]>``
# (``, device_ids=[...]`` after the axes where the devices are not in order).
_MESH = re.compile(r'([\w.$-]+)\s*=\s*#sdy\.mesh<(.*?)>(?=\s*[,}])')


def meshes(text: str | None) -> dict[str, str]:
    """The Shardy meshes a module's frontend attributes define, by name:
    ``{"mesh": "data=4, model=2"}`` (``(no axes)`` for JAX's empty mesh)."""
    found = {}
    for name, mesh in _MESH.findall((text or "").replace('\\"', '"')):
        axes, _, devices = mesh.partition("]")
        said = re.sub(r'"([^"]*)"\s*=\s*', r"\1=", axes.lstrip("[")).strip() or "(no axes)"
        found[name] = said + devices
    return found


def mesh_change(old: str | None, new: str | None) -> str:
    """``mesh data=8, model=1 -> data=4, model=2``: the meshes of that name
    in both texts (module headers' frontend attributes) laid out otherwise;
    "" where none is (a mesh only one run defines comes with what uses it:
    a sharding JAX added, an argument placed on it)."""
    x, y = meshes(old), meshes(new)
    return "; ".join(f"{name} {x[name]} -> {y[name]}" for name in x
                     if name in y and x[name] != y[name])


def renamed_axes(old: str | None, new: str | None) -> dict[str, str]:
    """Axis names of a mesh that only took other names, old to new, the
    sizes kept (``data=4, model=2 -> data=4, tensor=2``: model -> tensor)."""
    out = {}
    x, y = meshes(old), meshes(new)
    for name in x.keys() & y.keys():
        a, b = (re.findall(r"([^=,\s]+)=(\d+)", t) for t in (x[name], y[name]))
        if len(a) == len(b) and [n for _, n in a] == [n for _, n in b]:
            out.update({p: q for (p, _), (q, _) in zip(a, b) if p != q})
    return out


_WORD_EDGES = "/()[]{}., :"


def renamed_part(old: str, new: str) -> tuple[str, str]:
    """The whole words that differ: .../jvp(mlp)/dot -> .../jvp(feedforward)/dot
    gives (mlp, feedforward), so one rename seen in many op_names is one finding."""
    limit = min(len(old), len(new))
    start = 0
    while start < limit and old[start] == new[start]:
        start += 1
    end = 0
    while end < limit - start and old[-1 - end] == new[-1 - end]:
        end += 1
    while start > 0 and old[start - 1] not in _WORD_EDGES:
        start -= 1
    while end > 0 and old[len(old) - end] not in _WORD_EDGES:
        end -= 1
    return old[start:len(old) - end], new[start:len(new) - end]


# --- structure: added, removed, replaced ---------------------------------------------------

def _structural(changes: list[Change], following: dict[int, list[Change]], stage: str,
                a: Module, b: Module) -> list[Finding]:
    """Added and removed instructions, grouped by dataflow and by scope."""
    if not changes:
        return []
    parent = list(range(len(changes)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def join(i: int, j: int) -> None:
        parent[find(i)] = find(j)

    by_place: dict[tuple[str, str, str], int] = {}
    for i, change in enumerate(changes):
        side, name = ("b", change.b) if change.b is not None else ("a", change.a)
        by_place[(side, change.computation if side == "b" else change.computation_a or
                  change.computation, name or change.computation)] = i
    # the ops moved into (out of) a branch or loop body, by its name
    moved_to = {change.detail.removeprefix(MOVED_INTO).removeprefix(MOVED_OUT_OF)
                .split(" ", 1)[0]: i for i, change in enumerate(changes)
                if change.detail.startswith((MOVED_INTO, MOVED_OUT_OF))}
    # dataflow: an added instruction reading another added one; a conditional
    # or loop added (removed) and the ops moved into (out of) what it runs
    for i, change in enumerate(changes):
        side, _, computation, instruction = _held(change, a, b)
        if instruction is None:
            continue
        for operand in instruction.operands:
            j = by_place.get((side, computation, operand))
            if j is not None:
                join(i, j)
        for callee in instruction.called_computations:
            if callee in moved_to:
                join(i, moved_to[callee])
    # scope: the same source line (else the same name scope), or moved to one place
    by_scope: dict[tuple, int] = {}
    for i, change in enumerate(changes):
        for key in _scope_keys(change):
            if key in by_scope:
                join(i, by_scope[key])
            else:
                by_scope[key] = i
    components: dict[int, list[Change]] = defaultdict(list)
    for i, change in enumerate(changes):
        components[find(i)].append(change)
    arguments = {id(c): p for c in changes if (p := _argument_reshape(c, a, b)) is not None}
    annotated = {id(c): p for c in changes if (p := _sharding_annotation(c, a, b)) is not None}
    passing = [g for g in components.values() if all(id(c) in arguments for c in g)
               or all(id(c) in annotated for c in g)]
    groups = _merge_plumbing([g for g in components.values()
                              if not any(g is p for p in passing)]) + passing
    return [_argument_finding(members, following, stage, arguments)
            if all(id(c) in arguments for c in members) else
            _annotation_finding(members, following, stage, annotated)
            if all(id(c) in annotated for c in members) else
            _structural_finding(members, following, stage, times)
            for members, times in _parallel(sorted(groups, key=lambda m: _component_key(m)))]


def _held(change: Change, a: Module, b: Module
          ) -> tuple[str, Module, str | None, Instruction | None]:
    """Where the instruction of an added or removed ``change`` is: the run
    that holds it (b where it has a b side), that run's module, the
    computation's name there, and the instruction (None if not found)."""
    side, module, name = ("b", b, change.b) if change.b is not None else ("a", a, change.a)
    computation = change.computation if side == "b" else change.computation_a
    holder = module.by_name.get(computation or "")
    return side, module, computation, \
        holder.by_name.get(name) if holder is not None and name else None


def _in_entry(change: Change, a: Module, b: Module) -> tuple[Module, Instruction] | None:
    """The module and instruction of ``change`` where it is in the entry."""
    _, module, computation, instruction = _held(change, a, b)
    if computation != module.entry.name or instruction is None:
        return None
    return module, instruction


# What an argument_passing finding's summary starts with (advice.py reads it).
ARGUMENT_PASSING = "argument passed another way:"


def _argument_reshape(change: Change, a: Module, b: Module) -> Instruction | None:
    """The entry parameter that the instruction ``change`` added or removed
    only reshapes to its own shape, where that takes a reshape with no
    metadata at all (no op_name, op_type or source): the framework's own
    handling of an argument, not an op of the model. TensorFlow reshapes
    every argument it gets as a tensor, and not the value of a tf.Variable
    (a resource), so a captured tf.Variable made a tf.constant adds one.
    Where two reshapes stand between the argument and its user the aligner
    may call either one added: the whole chain counts."""
    held = _in_entry(change, a, b) if change.opcode == "reshape" else None
    if held is None:
        return None
    module, instruction = held
    entry, unnamed = module.entry, False
    while instruction is not None and instruction.opcode == "reshape" \
            and len(instruction.operands) == 1:
        source = entry.by_name.get(instruction.operands[0])
        if source is None or source.shape is None or instruction.shape is None \
                or source.shape.without_layout() != instruction.shape.without_layout():
            return None
        unnamed = unnamed or not module.origin(instruction)
        instruction = source
    if instruction is None or instruction.opcode != "parameter" or not unnamed:
        return None
    return instruction


def _argument_finding(members: list[Change], following: dict[int, list[Change]], stage: str,
                      arguments: dict[int, Instruction]) -> Finding:
    """Reshapes of the framework's own around entry parameters, in one run only."""
    parameters = ", ".join(dict.fromkeys(
        f"argument {arguments[id(c)].parameter_number} {arguments[id(c)].shape.without_layout()}"
        for c in members))
    return _framework_finding(members, following, stage, lambda run: (
        f"{ARGUMENT_PASSING} {parameters} reshaped by the framework (no op_name) in run {run} "
        "only"))


def _framework_finding(members: list[Change], following: dict[int, list[Change]], stage: str,
                       says: Callable[[str], str]) -> Finding:
    """Ops the framework adds around the model's in one run only (``says``
    words them for that run): one finding, their consequences under it."""
    derived = [d for c in members for d in following.get(id(c), ())]
    added = members[0].kind == "op_added"
    text = _ops_text(members)
    return finding(members[0].kind, stage, members, old="" if added else text,
                   new=text if added else "", derived=derived,
                   summary=says("b" if added else "a"), count=len(members), ranked=True)


# What a sharding_annotation finding's summary starts with (advice.py reads it).
SHARDING_ANNOTATION = "sharding annotation by JAX:"
# JAX's custom-calls that carry the sharding of an argument or of the result.
_ARGUMENT_SHARDING, _RESULT_SHARDING = '"Sharding"', '"xla.sdy.FuncResultSharding"'
# What a typed PRNG key's data is annotated with: no mesh, the key's own axis unsplit.
_TYPED_KEY = "@empty_mesh"


def _sharding_annotation(change: Change, a: Module, b: Module) -> str | None:
    """What the instruction ``change`` added or removed annotates with a
    sharding, where JAX put it there and not the model code: a ``Sharding``
    custom-call reading an entry parameter (JAX annotates the data of a typed
    PRNG key so, jax.random.key, and not a raw uint32 key, jax.random.PRNGKey;
    an argument given a sharding carries it on the parameter itself), or the
    ``xla.sdy.FuncResultSharding`` call on the result (jit's out_shardings)
    and the tuple JAX then returns it in. ``argument 1 key u32[2] (a typed
    PRNG key)`` or ``the result f32[16,16]``; None for anything else (a
    with_sharding_constraint in the model code reads no parameter)."""
    held = _in_entry(change, a, b)
    if held is None:
        return None
    module, instruction = held
    entry, seen = module.entry, 0
    while instruction is not None and instruction.opcode in ("tuple", "get-tuple-element") \
            and not module.origin(instruction) and len(instruction.operands) == 1 and seen < 4:
        instruction, seen = entry.by_name.get(instruction.operands[0]), seen + 1
    if instruction is None or instruction.opcode != "custom-call":
        return None
    items = dict(instruction.attribute_items)
    target = items.get("custom_call_target")
    if target == _RESULT_SHARDING:
        return f"the result {instruction.shape.without_layout()}"
    if target != _ARGUMENT_SHARDING or seen or len(instruction.operands) != 1:
        return None
    parameter = entry.by_name.get(instruction.operands[0])
    if parameter is None or parameter.opcode != "parameter":
        return None
    named = module.origin(parameter).op_name
    key = _TYPED_KEY in items.get("frontend_attributes", "") and \
        str(parameter.shape.without_layout()).startswith("u32[")
    return (f"argument {parameter.parameter_number}{f' {named}' if named else ''} "
            f"{parameter.shape.without_layout()}{' (a typed PRNG key)' if key else ''}")


def _annotation_finding(members: list[Change], following: dict[int, list[Change]], stage: str,
                        annotated: dict[int, str]) -> Finding:
    """JAX's sharding annotations of arguments or of the result, in one run only."""
    annotates = ", ".join(dict.fromkeys(annotated[id(c)] for c in members))
    return _framework_finding(members, following, stage,
                              lambda run: f"{SHARDING_ANNOTATION} {annotates} in run {run} only")


def _parallel(groups: list[list[Change]]) -> list[tuple[list[Change], int]]:
    """Groups of the same ops in scopes that differ only by TensorFlow's
    suffix (``clip_by_norm``, ``clip_by_norm_1``, ...): one change made once
    per weight, as a clip norm or a regularizer is, is one finding, counted;
    each group with how many it stands for. The same ops are the same op_names
    under each scope: which constants, broadcasts or divides the aligner
    paired with ops the other run added differs from scope to scope (Keras'
    clipnorm -> global_clipnorm read 14, 15 and 14 ops removed in
    clip_by_norm, clip_by_norm_1 and clip_by_norm_2/_3, three findings)."""
    buckets: dict[tuple, list[list[Change]]] = defaultdict(list)
    for members in groups:
        scope = _common_scope(members)
        ops = frozenset(c.origin.op_name[len(scope) + 1:] for c in members
                        if c.origin.op_name and c.origin.op_name.startswith(f"{scope}/"))
        key = (tuple(sorted({c.kind for c in members})), ops or _ops_text(members),
               "/".join(_UNIQUIFIED.sub("", part) for part in scope.split("/")))
        buckets[key if scope else (id(members),)].append(members)
    return [([c for members in bucket for c in members], len(bucket))
            for bucket in buckets.values()]


def _merge_plumbing(groups: list[list[Change]]) -> list[list[Change]]:
    """A group that only carries values (constants, broadcasts, reshapes) was
    added (removed) for the ops of a bigger group in the same computation that
    adds (removes) ops too: one finding."""
    working = [g for g in groups if not all(c.opcode in _QUIET_OPCODES for c in g)]
    if not working:
        return groups
    out = [list(g) for g in working]
    for group_ in groups:
        if any(group_ is g for g in working):
            continue
        kinds = {c.kind for c in group_}
        home = max((g for g in out if _computation(g[0]) == _computation(group_[0])
                    and any(c.kind in kinds for c in g)),
                   key=lambda g: (len(g), _component_key(g)), default=None)
        if home is None:
            out.append(group_)
        else:
            home.extend(group_)
    return out


def _computation(change: Change) -> str:
    """The computation a change is in, by run a's name whichever run holds the
    instruction (an added one's computation is named by run b: TensorFlow's
    trace counter in the name moves between the runs)."""
    return change.computation_a or change.computation


def _scope_keys(change: Change) -> list[tuple]:
    keys = []
    if change.detail.startswith((MOVED_INTO, MOVED_OUT_OF)):  # one branch: one move
        keys.append(("moved", change.detail))
    origin = change.origin
    if origin.location:
        keys.append(("line", origin.location))
    elif origin.name_scope:
        keys.append(("scope", origin.name_scope))
    return keys


def _component_key(members: list[Change]) -> tuple:
    return min(_rank_key(c) for c in members)


def _rank_key(change: Change) -> tuple:
    return (PRIORITY.get(change.kind, 99), change.origin.location is None,
            sorted([change.old or "", change.new or ""]))


# Elementwise arithmetic is everywhere; the rest (batch-norm-training, dot,
# reduce, cosine) says better what a group of added ops is.
_ARITHMETIC = frozenset({"add", "subtract", "multiply", "divide", "maximum", "minimum", "select",
                         "compare", "negate", "and", "or", "not", "abs", "clamp"})
_QUIET_OPCODES = frozenset({"parameter", "constant", "broadcast", "reshape", "bitcast", "copy",
                            "get-tuple-element", "tuple", "convert", "transpose"})


def _structural_finding(members: list[Change], following: dict[int, list[Change]],
                        stage: str, times: int = 1) -> Finding:
    """One group of ops added or removed (``times`` alike groups in parallel
    scopes, see _parallel: told once, with the scopes)."""
    if times > 1:
        first = _structural_finding(members[:len(members) // times], following, stage)
        scopes = sorted(dict.fromkeys(_common_scope([c]) for c in members), key=lambda text: [
            int(piece) if piece.isdigit() else piece for piece in re.split(r"(\d+)", text)])
        shown = ", ".join(scopes[:3]) + (", ..." if len(scopes) > 3 else "")
        whole = _structural_finding(members, following, stage)
        return replace(whole, old=first.old, new=first.new,
                       summary=f"{first.summary}, {times} times ({shown})")
    moved = [c for c in members if c.detail.startswith((MOVED_INTO, MOVED_OUT_OF))]
    stayed = [c for c in members if not c.detail.startswith((MOVED_INTO, MOVED_OUT_OF))]
    added = [c for c in stayed if c.kind in ("op_added", "computation_added")]
    removed = [c for c in stayed if c.kind in ("op_removed", "computation_removed")]
    derived = [d for c in members for d in following.get(id(c), ())]
    # the ops that do the work first, those of the source line most of them
    # come from first among them, then what carries values to them
    working = Counter(c.origin.location for c in members
                      if c.origin.location and c.opcode not in _QUIET_OPCODES)
    line = max(working, key=working.get) if working else None
    ordered = sorted(members, key=lambda c: (c.opcode in _QUIET_OPCODES,
                                             c.kind.startswith("computation"),
                                             c.origin.location != line,
                                             c.opcode in _ARITHMETIC,
                                             c.origin.location is None))
    scope = _common_scope(ordered)
    lines = _lines(ordered)
    where_text = (f" in {scope}" if scope else "") + (f", {lines}" if lines else "")
    brought = [c for c in added if c.opcode == "parameter"]
    if brought and len(brought) < len(added):  # an op and the parameters it brings
        shapes = ", ".join(dict.fromkeys((c.new or "").split(" parameter")[0].split(" ")[-1]
                                         for c in brought))
        where_text += f"; with {len(brought)} new parameter{'s' if len(brought) != 1 else ''} " \
                      f"({shapes})"
    # a chain of one op collapsed into its last, which is paired and now reads
    # more values (three binary concatenates became one of four operands), or
    # the reverse: removed (or added) ops of one opcode, and that survivor
    chain = removed if not added else added if not removed else []
    survivor = next((d for d in derived if d.kind == "operands" and chain
                     and {c.opcode for c in chain} == {d.opcode}
                     and d.detail.endswith("reads a different number of values")), None)
    if survivor is not None:
        many = _ops_text(chain + [survivor])
        at = f" ({survivor.origin.op_name})" if survivor.origin.op_name else ""
        if chain is removed:
            old, new = many, f"{survivor.opcode} of {survivor.new}"
            summary = f"replaced: {old}{where_text} by one {new}{at}"
        else:
            old, new = f"{survivor.opcode} of {survivor.old}", many
            summary = f"replaced: one {old}{at} by {new}{where_text}"
        kind = "replaced"
    elif added and removed:
        summary = (f"replaced: {_ops_text(removed)} by {_ops_text(added)}{where_text}")
        kind, old, new = "replaced", _ops_text(removed), _ops_text(added)
    elif added:
        summary = f"added: {_ops_text(added)}{where_text}"
        kind, old, new = ("op_added", None, _ops_text(added))
    else:
        summary = f"removed: {_ops_text(removed)}{where_text}"
        kind, old, new = ("op_removed", _ops_text(removed), None)
    if all(c.kind.startswith("computation") for c in members):
        kind = members[0].kind
    if moved:
        kind, old, new, summary = _moved_finding(kind, old, new, summary, moved, added,
                                                 removed, where_text)
    return finding(kind, stage, ordered, old=old or "", new=new or "", derived=derived,
                   summary=summary, count=len(members), ranked=True)


def _moved_finding(kind: str, old: str | None, new: str | None, summary: str,
                   moved: list[Change], added: list[Change], removed: list[Change],
                   where_text: str) -> tuple[str, str | None, str | None, str]:
    """Kind, old, new and summary of a group that holds ops moved into a
    branch or loop body of one run only (diff.py's MOVED_INTO, or out of
    one: MOVED_OUT_OF). They did not go: where nothing else went (came),
    the group is an "op_moved" finding, the ops added with them (the
    condition, the conditional itself) said beside; else the move is said
    after what went or came."""
    into = [c for c in moved if c.detail.startswith(MOVED_INTO)]
    out = [c for c in moved if not c.detail.startswith(MOVED_INTO)]
    ops, word = (into, MOVED_INTO) if len(into) >= len(out) else (out, MOVED_OUT_OF)
    place = Counter(c.detail[len(word):] for c in ops).most_common(1)[0][0]
    said = f"{word}{place}: {_ops_text(ops)}"
    others = removed if word == MOVED_INTO else added  # what went where these stay
    if not others and not (into and out):
        companions = [(f"with {_ops_text(added)} added", added),
                      (f"with {_ops_text(removed)} removed", removed)]
        beside = "; ".join(text for text, group_ in companions if group_)
        summary = said + (f"; {beside}{where_text}" if beside else where_text)
        if word == MOVED_INTO:
            return "op_moved", _ops_text(ops), f"inside {place}", summary
        return "op_moved", f"inside {place}", _ops_text(ops), summary
    return kind, old, new, f"{summary}; {said}"


def _ops_text(changes: list[Change]) -> str:
    """``24 ops (reduce, subtract, rsqrt, multiply, ...)`` or ``tanh f32[16,8]`` for one."""
    instructions = [c for c in changes if not c.kind.startswith("computation")]
    if len(instructions) == 1:
        return instructions[0].new or instructions[0].old or ""
    ordered = sorted(instructions, key=lambda c: (c.opcode in _QUIET_OPCODES,
                                                  c.opcode in _ARITHMETIC))
    values = {_opcode_label(c) for c in ordered if c.opcode == "constant"}
    constant = values.pop() if len(values) == 1 else "constant"  # one value: name it
    opcodes = list(dict.fromkeys(constant if c.opcode == "constant" else c.opcode
                                 for c in ordered if c.opcode))
    shown = ", ".join(opcodes[:5]) + (", ..." if len(opcodes) > 5 else "")
    computations = len(changes) - len(instructions)
    extra = f" and {computations} computation{'s' if computations != 1 else ''}" \
        if computations else ""
    if not instructions:
        return f"{computations} computation{'s' if computations != 1 else ''}"
    return f"{len(instructions)} ops ({shown}){extra}"


def _opcode_label(change: Change) -> str:
    """The opcode, or ``constant(2)`` where the change's text names a scalar's
    value (diff.py's ``_opcode_text``)."""
    text = change.new if change.new is not None else change.old
    if change.opcode == "constant" and text and text.startswith("constant("):
        label = text.rpartition(" ")[0]
        return label if label.endswith(")") else text
    return change.opcode


def _common_scope(changes: list[Change]) -> str:
    """The longest op_name scope the changes share (``extra_layernorm``)."""
    scopes = [c.origin.op_name for c in changes if c.origin.op_name]
    if not scopes:
        return ""
    parts = [s.split("/") for s in scopes]
    common = []
    for pieces in zip(*parts):
        if len(set(pieces)) != 1:
            break
        common.append(pieces[0])
    if len(scopes) == 1 and len(parts[0]) > 1:
        common = parts[0][:-1]
    return "/".join(p for p in common if p)


def _lines(changes: list[Change]) -> str:
    """``lines 252-253`` of the user's file, or ``train.py:252``."""
    located = [(c.origin.source_file, c.origin.source_line) for c in changes
               if c.origin.source_file and c.origin.source_line]
    if not located:
        return ""
    files = {f for f, _ in located}
    numbers = sorted({n for _, n in located})
    if len(files) > 1:
        return ", ".join(sorted(f"{f}:{n}" for f, n in set(located))[:3])
    file = next(iter(files))
    if len(numbers) == 1:
        return f"{file}:{numbers[0]}"
    return f"{file}:{numbers[0]}-{numbers[-1]}"


# --- the entry parameters ----------------------------------------------------------------------

def _parameters(changes: list[Change], following: dict[int, list[Change]], stage: str,
                a: Module, b: Module) -> list[Finding]:
    """Entry parameters changed in place: one finding for layers stacked into
    one parameter each, else one per set of moved dimensions, one for a change
    of order, one per other kind of change."""
    if not changes:
        return []
    stacked = _stacked_finding(changes, following, stage, a, b)
    if stacked is not None:
        return [stacked]
    out = []
    shuffled = _shuffled(changes)
    if shuffled:
        out.append(_shuffled_finding(shuffled, following, stage))
        changes = [c for c in changes if not any(c is s for s in shuffled)]
    by_dims: dict[tuple, list[Change]] = defaultdict(list)
    reordered = []
    returned, trains = _returned(b), None  # the program's file is read once, if asked
    for change in changes:
        moved = moved_dims(change)
        if moved:
            by_dims[moved].append(change)
        elif _number_only(change):
            reordered.append(change)
        else:
            by_dims[(change.old, change.new)].append(change)
    for moved, group_ in by_dims.items():
        derived = [d for c in group_ for d in following.get(id(c), ())]
        summary = ""
        if group_ and moved_dims(group_[0]):
            names = " and ".join(_parameter_label(c, b, old=True) for c in group_[:4])
            more = f" and {len(group_) - 4} more" if len(group_) > 4 else ""
            dims_text = ", ".join(f"{o} -> {n}" for o, n in moved)
            # a batch comes in and is not handed back: a weight a training
            # step returns updated (an embedding of a bigger vocabulary, layers
            # stacked for a scan) is a dimension of the model; a helper that
            # normalises a batch returns it too, and runs no backward pass
            state = all(_shape_text(c.new) in returned for c in group_)
            if state and trains is None:
                trains = runs_backward(b.path)
            state = state and trains
            leading = not state and all(_leading_moves(c) for c in group_)
            retyped = dict.fromkeys(f"{o} -> {n}" for o, n in map(_element_types, group_)
                                    if o != n)
            dtype_text = f" and {', '.join(retyped)}" if retyped else ""
            what = "PRNG key data" if all(map(_key_data, group_)) else \
                "model dimension" if state else \
                "loop length" if leading and _loop_length(moved, derived, b) else \
                "batch" if leading else "dimension"
            summary = f"{what} {dims_text}{dtype_text} in {names}{more}"
        out.append(finding("parameter", stage, group_, derived=derived, summary=summary))
    if reordered:
        out.append(_order_finding(reordered, following, stage, b))
    return out


def _loop_length(moved: tuple, derived: list[Change], module: Module) -> bool:
    """Is the first dimension that moved (old -> new) also the bound a while
    loop tests its counter against, moved the same way: the length a
    ``lax.scan`` or ``fori_loop`` runs over, a Python int baked into the
    program, not a batch (a helper session's scan of length 6, then 10,
    over ``xs[:T]`` read "batch 6 -> 10 in xs")?"""
    if len(moved) != 1:
        return False
    old, new = map(str, moved[0])
    bounds = [d for d in derived if d.kind == "constant" and (d.old, d.new) == (old, new)]
    if not bounds:
        return False
    conditions = _loop_conditions(module)
    return any(d.computation in conditions for d in bounds)


def _loop_conditions(module: Module) -> frozenset[str]:
    """The computations a while loop of ``module`` tests whether to go on with,
    and those they call (a fused compare after optimization)."""
    found: set[str] = set()
    for computation in module.computations:
        for instruction in computation.instructions:
            if instruction.opcode == "while" and instruction.called_computations:
                found.add(instruction.called_computations[-1])
    todo = list(found)
    while todo:
        computation = module.by_name.get(todo.pop())
        for instruction in computation.instructions if computation is not None else ():
            for callee in instruction.called_computations:
                if callee not in found:
                    found.add(callee)
                    todo.append(callee)
    return frozenset(found)


_ARRAY = re.compile(r"([a-z][a-z0-9]*)\[(\d+)(?:,([\d,]*))?\]")


def _stacked_finding(changes: list[Change], following: dict[int, list[Change]], stage: str,
                     a: Module, b: Module) -> Finding | None:
    """The layers of one run are stacked in the other (flax's nn.scan, a
    scanned or vmapped stack of layers): every parameter the other run has
    and this one does not is L of this run's, one on top of another. The
    arguments are then paired by position across two trees of weights, and
    each pair's shapes say nothing (a helper session's flax run read "model
    dimension 8 -> 16" of an attention bias paired with a norm's scale)."""
    old, new = _signature(a), _signature(b)
    found, word = _stacking(old, new), "stacked"
    if found is None:
        found, word = _stacking(new, old), "unstacked"
    if found is None:
        return None
    layers, examples = found
    shown = ", ".join(f"{one} -> {many}" if word == "stacked" else f"{many} -> {one}"
                      for one, many in examples[:3]) + (", ..." if len(examples) > 3 else "")
    count_a, count_b = sum(old.values()), sum(new.values())
    held = "stacked, one argument per weight" if word == "stacked" else "one argument per layer"
    summary = (f"layers {word}: run b holds the weights of {layers} layers {held}, "
               f"{count_a} -> {count_b} arguments ({shown})")
    derived = [d for c in changes for d in following.get(id(c), ())]
    return finding("parameter", stage, changes, old=f"{count_a} arguments",
                   new=f"{count_b} arguments", derived=derived, summary=summary)


def _signature(module: Module) -> Counter:
    """The shapes (no layouts) of the program's arguments, counted."""
    return Counter(str(p.shape.without_layout()) for p in module.entry.parameters
                   if p.shape is not None)


def _stacking(few: Counter, many: Counter) -> tuple[int, list[tuple[str, str]]] | None:
    """L and (shape, stacked shape) pairs when ``many``'s arguments are
    ``few``'s with L >= 2 of them stacked along a new first dimension in
    place of each shape ``few`` lacks; None otherwise."""
    extra = many - few
    split = {}
    for text in extra:
        match = _ARRAY.fullmatch(text)
        if match is None:
            return None
        split[text] = (int(match.group(2)), f"{match.group(1)}[{match.group(3) or ''}]")
    if len({layers for layers, _ in split.values()}) != 1:
        return None
    layers = next(iter(split.values()))[0]
    if layers < 2:
        return None
    rebuilt = many - extra
    for text, count in extra.items():
        rebuilt[split[text][1]] += layers * count
    if rebuilt != few:
        return None
    return layers, sorted(((one, text) for text, (_, one) in split.items()),
                          key=lambda pair: -extra[pair[1]])


_U32_SHAPE = re.compile(r"u32\[([\d,]*)\]")


def _key_data(change: Change) -> bool:
    """A JAX PRNG key's data changed size: u32[..., 2] under threefry2x32,
    u32[..., 4] under rbg (jax_default_prng_impl), not a batch (a helper
    session's run read "batch 2 -> 4 in key u32[2]")."""
    shapes = [_U32_SHAPE.match(text or "") for text in (change.old, change.new)]
    if None in shapes:
        return False
    old, new = (match.group(1).split(",") for match in shapes)
    return len(old) == len(new) and old[:-1] == new[:-1] and {old[-1], new[-1]} == {"2", "4"}


def _number_only(change: Change) -> bool:
    old, new = (change.old or "").rsplit(" ", 1), (change.new or "").rsplit(" ", 1)
    return len(old) == len(new) == 2 and old[0] == new[0] and old[1] != new[1]


def _number(text: str | None) -> int | None:
    if not text or "parameter(" not in text:
        return None
    try:
        return int(text.rsplit("parameter(", 1)[1].rstrip(")"))
    except ValueError:
        return None


def _element_types(change: Change) -> tuple[str, str]:
    """``("s32", "f32")``: the element type each side's shape starts with."""
    return tuple((text or "").split("[", 1)[0].strip() for text in (change.old, change.new))


def _returned(module: Module) -> frozenset[str]:
    """The shapes (no layouts) of what the program returns."""
    result = module.entry.root.shape
    if result is None:
        return frozenset()
    leaves = result.without_layout().tuple_shapes or (result.without_layout(),)
    return frozenset(map(str, leaves))


def _shape_text(text: str | None) -> str:
    """``f32[160,32]`` of ``f32[160,32]{1,0} parameter(3)``."""
    shape = (text or "").split(" parameter(")[0]
    return shape[:shape.index("]{") + 1] if "]{" in shape else shape


def _leading_moves(change: Change) -> bool:
    """Does the change move the first dimension only (what a batch size does)?"""
    from .causes import dims
    old, new = dims(change.old or ""), dims(change.new or "")
    return bool(old) and len(old) == len(new) and old[0] != new[0] and old[1:] == new[1:]


def _parameter_label(change: Change, b: Module, old: bool = False) -> str:
    """``x f32[16,32]`` where the framework named the argument (JAX writes its
    name as the parameter's op_name), else ``argument 1 f32[16,32]``."""
    shape = _shape_text(change.old if old else change.new)
    computation = b.by_name.get(change.computation)
    own = computation.by_name.get(change.b) if computation is not None and change.b else None
    name = b.origin(own).op_name if own is not None else None
    if name and "/" not in name and name not in GENERIC_PARAMETER_NAMES:
        return f"{name} {shape}"
    number = _number(change.new)
    return f"argument {number} {shape}" if number is not None else shape


def _shuffled(changes: list[Change]) -> list[Change]:
    """Parameters that changed shape in place, where the shapes they had are
    the shapes they have, in another order: arguments named by position (a
    list built from a set, whose order changes with PYTHONHASHSEED) in
    another order, not dimensions that moved (a helper session's heads of
    widths 3, 7, 5, 2, 4 read "model dimension 3 -> 4")."""
    moved = [c for c in changes if c.a is not None and c.b is not None
             and _shape_text(c.old) != _shape_text(c.new)]
    if len(moved) < 2 or sorted(_shape_text(c.old) for c in moved) != \
            sorted(_shape_text(c.new) for c in moved):
        return []
    return moved


def _shuffled_finding(changes: list[Change], following: dict[int, list[Change]],
                      stage: str) -> Finding:
    first = min(changes, key=lambda c: _number(c.old) or 0)
    shapes = ", ".join(dict.fromkeys(_shape_text(c.old) for c in changes))
    summary = (f"parameter order: the same {len(changes)} argument shapes ({shapes}) in "
               f"another order, e.g. position {_number(first.old)} was {_shape_text(first.old)}"
               f", is {_shape_text(first.new)}")
    derived = [d for c in changes for d in following.get(id(c), ())]
    return finding("parameter_order", stage, changes, old=_shape_text(first.old),
                   new=_shape_text(first.new), derived=derived, summary=summary)


def _order_finding(changes: list[Change], following: dict[int, list[Change]], stage: str,
                   b: Module) -> Finding:
    """Parameters that changed places: name the one that moved furthest; the
    others shifted to make room."""
    moves = sorted(((abs(_number(c.new) - _number(c.old)), c) for c in changes
                    if _number(c.old) is not None and _number(c.new) is not None),
                   key=lambda m: (-m[0], _number(m[1].old)))
    mover = moves[0][1] if moves else changes[0]
    users = _users_text(mover, b)
    shifted = len(changes) - 1
    summary = (f"parameter order: {(mover.new or '').split(' parameter(')[0]}"
               f"{users} moved from position {_number(mover.old)} to {_number(mover.new)}"
               + (f" (the {shifted} other{'s' if shifted != 1 else ''} shifted)" if shifted else ""))
    derived = [d for c in changes for d in following.get(id(c), ())] + \
        [c for c in changes if c is not mover]
    return finding("parameter_order", stage, [mover], old=f"position {_number(mover.old)}",
                   new=f"position {_number(mover.new)}", derived=derived, summary=summary)


def _users_text(change: Change, b: Module) -> str:
    computation = b.by_name.get(change.computation)
    if computation is None or change.b is None:
        return ""
    for instruction in computation.instructions:
        if change.b in instruction.operands:
            op_name = instruction.metadata.get("op_name") if not instruction.unchanged else None
            if op_name:
                return f" used by {op_name}"
    return ""
