"""From a pile of changes to an explanation: findings, ranked, with verdicts.

A batch-size change reshapes hundreds of instructions; a learning rate
baked into an optimizer shows up in every fused copy of the update. A
person wants the cause first, once, with where it came from. So:

* derived changes are grouped under their cause: shape changes downstream
  of a changed instruction, and constants that are a function of a changed
  dimension (1/(B*8) after B moved);
* repeats collapse: the same change in N places is one finding with a
  count and all its origins;
* the two stages are merged: a finding says whether it shows before
  optimization (the compile input), after (the executable) or both; a
  divide by T rewritten as a multiply by 1/T counts as the same finding;
* findings are ranked, root causes first, by how directly they explain a
  recompile;
* each finding lists the hashes it moves; the verdict ``same_executable``
  is False when anything compiled differs, None when only values XLA did
  not print might differ, True otherwise.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field

from .diff import Change
from .hashes import HASHES, affects, verdicts
from ..model import Module, Origin, element_value

STAGES = ("before_optimizations", "after_optimizations")

# Lower ranks first: how directly a kind of change explains a recompile.
_PRIORITY = {
    "parameter": 0, "constant_to_parameter": 1, "parameter_to_constant": 1, "constant": 2,
    "dtype": 3, "opcode": 4, "op_added": 5, "op_removed": 5, "attribute": 6, "shape": 7,
    "layout": 8, "elided_constant": 9, "module_added": 10, "module_removed": 10, "metadata": 11,
}
_SHAPE_KINDS = frozenset({"shape", "dtype", "layout"})
# Kinds that follow from a change upstream when an operand carries one.
_FOLLOWING_KINDS = _SHAPE_KINDS | {"attribute"}


@dataclass(frozen=True)
class Where:
    """One place a finding was seen: the instruction on each side, and its own
    old and new (a collapsed finding shows the first place's)."""

    computation: str
    a: str | None
    b: str | None
    old: str | None = None
    new: str | None = None


@dataclass(frozen=True)
class Finding:
    """One explained difference, possibly seen in several places and stages."""

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

    @property
    def origin(self) -> Origin:
        """The most informative origin: one with a source line, else one with an op_name."""
        for origin in self.origins:
            if origin.location:
                return origin
        return self.origins[0] if self.origins else Origin()

    @property
    def moves_a_hash(self) -> bool:
        return bool(self.affects)


@dataclass(frozen=True)
class ModulePairing:
    """Which module of each run was compared, and how they were paired."""

    a: str | None
    b: str | None
    how: str


@dataclass(frozen=True)
class Report:
    same_executable: bool | None
    findings: tuple[Finding, ...]
    hashes: dict[str, bool | None]
    stages: dict[str, dict[str, str | int | None]] = field(default_factory=dict)
    modules: tuple[ModulePairing, ...] = ()
    notes: tuple[str, ...] = ()  # what a person should know beyond the findings

    @property
    def top(self) -> Finding | None:
        return self.findings[0] if self.findings else None


@dataclass
class StageDiff:
    """The changes found at one stage, with the module each side was read from."""

    stage: str
    a: Module
    b: Module
    changes: list[Change]


def explain(stages: list[StageDiff], extra: list[Change] = (),
            modules: tuple[ModulePairing, ...] = ()) -> Report:
    """Turn per-stage changes (plus module-level ones) into a ranked report."""
    per_stage: dict[str, list[Finding]] = defaultdict(list)
    all_changes: list[Change] = list(extra)
    for stage in stages:
        all_changes.extend(stage.changes)
        per_stage[stage.stage].extend(_findings_for_stage(stage))
    findings = _merge_stages(per_stage.pop(STAGES[0], []), per_stage.pop(STAGES[1], []))
    for rest in per_stage.values():
        findings.extend(rest)
    findings += [_collapse([c], "both") for c in extra]
    findings.sort(key=_rank)
    compiled = [c for c in all_changes if c.kind not in ("metadata", "module_added", "module_removed")]
    if any(c.kind != "elided_constant" or c.values_differ for c in compiled):
        same = False
    elif compiled:
        same = None  # only constants nobody printed might differ
    else:
        same = True
    stage_info = {s.stage: {"a": s.a.path, "b": s.b.path, "changes": len(s.changes)}
                  for s in stages}
    return Report(same, tuple(findings), verdicts(all_changes), stage_info, modules)


def _rank(finding: Finding):
    """What moves a cache key first; among those, causes visible in the compile
    input (after-only differences are XLA's consequences of them); then by
    kind; then the most frequent."""
    return (not finding.moves_a_hash and finding.kind != "elided_constant",
            finding.stage == "after_optimizations", _PRIORITY.get(finding.kind, 99),
            finding.origin.location is None, _only_plumbing(finding), -finding.count)


_PLUMBING = ("constant", "broadcast", "parameter", "reshape", "bitcast", "copy")


def _only_plumbing(finding: Finding) -> bool:
    """Added or removed instructions that only carry values (constants,
    broadcasts): they come with a real change rather than being one."""
    if finding.kind not in ("op_added", "op_removed"):
        return False
    texts = (finding.new if finding.kind == "op_added" else finding.old) or ""
    return all(t.strip().startswith(_PLUMBING) for t in texts.split(","))


# --- one stage ------------------------------------------------------------------------------

def _findings_for_stage(stage: StageDiff) -> list[Finding]:
    roots, derived_of = _separate_derived(stage)
    groups: dict[tuple, list[Change]] = defaultdict(list)
    for change in roots:
        groups[_group_key(change)].append(change)
    findings = []
    for key, changes in groups.items():
        derived = [d for c in changes for d in derived_of.get(id(c), [])]
        findings.append(_collapse(changes, stage.stage, derived))
    return findings


def _group_key(change: Change) -> tuple:
    if change.kind in ("op_added", "op_removed"):
        # one edit of the user's code adds several instructions: group by its line
        if change.origin.location:
            return (change.kind, change.origin.location)
        return (change.kind, change.origin.op_name)
    if change.kind == "metadata":
        return (change.kind,) + _renamed_part(change.old or "", change.new or "")
    if change.kind == "parameter" and change.old and change.new:
        moved = _moved_dims(change)
        if moved:  # x f32[16,8] and y s32[16] both moved by a batch 16 -> 32
            return (change.kind, moved)
    if change.kind == "dtype" and change.a is None:  # converts added: by element types
        return (change.kind, _element_type_names(change.old), _element_type_names(change.new))
    if change.kind in _SHAPE_KINDS:
        return (change.kind, change.old, change.new)
    return (change.kind, change.old, change.new, change.detail if change.kind == "attribute" else "")


_WORD_EDGES = "/()[]{}., :"


def _renamed_part(old: str, new: str) -> tuple[str, str]:
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


def _collapse(changes: list[Change], stage: str, derived: list[Change] = ()) -> Finding:
    first = changes[0]
    origins: list[Origin] = []
    for c in changes:
        if c.origin and c.origin not in origins:
            origins.append(c.origin)
    old, new = first.old, first.new
    if first.kind == "metadata":
        old, new = _renamed_part(old or "", new or "")
    elif first.kind in ("op_added", "op_removed"):
        texts = sorted({c.new if first.kind == "op_added" else c.old for c in changes})
        joined = ", ".join(texts[:6]) + (f", ... ({len(texts)} kinds)" if len(texts) > 6 else "")
        old, new = (None, joined) if first.kind == "op_added" else (joined, None)
    derived_findings = _derived_findings(derived, stage)
    moved = set(affects(first))
    for c in changes[1:]:
        moved.update(affects(c))
    return Finding(first.kind, stage, old, new, len(changes),
                   tuple(h.name for h in HASHES if h.name in moved), tuple(origins),
                   tuple(Where(c.computation, c.a, c.b, c.old, c.new) for c in changes), first.detail,
                   derived_findings)


def _derived_findings(derived: list[Change], stage: str) -> tuple[Finding, ...]:
    groups: dict[tuple, list[Change]] = defaultdict(list)
    for change in derived:
        groups[(change.kind,)].append(change)
    out = []
    for (kind,), changes in groups.items():
        first = changes[0]
        out.append(Finding(kind, stage, first.old, first.new, len(changes),
                           tuple(h.name for h in HASHES
                                 if any(h.name in affects(c) for c in changes)),
                           tuple(dict.fromkeys(c.origin for c in changes if c.origin))[:20],
                           tuple(Where(c.computation, c.a, c.b, c.old, c.new) for c in changes),
                           f"{len(changes)} {kind} changes follow from it"))
    return tuple(out)


def _separate_derived(stage: StageDiff) -> tuple[list[Change], dict[int, list[Change]]]:
    """Split changes into root causes and, per root cause, those that follow from it.

    Walks b's instructions in order (operands come first): an instruction
    inherits the cause of the first changed operand; a shape, dtype or
    layout change on an instruction that inherits a cause is derived from
    it, as is the shape change of a computation's parameter (it follows from
    the caller). Constants that are a function of a changed dimension are
    derived from the parameter change that moved it.
    """
    by_place: dict[tuple[str, str], list[Change]] = defaultdict(list)
    loose: list[Change] = []
    for change in stage.changes:
        if change.b is not None:
            by_place[(change.computation, change.b)].append(change)
        else:
            loose.append(change)
    roots: list[Change] = list(loose)
    derived_of: dict[int, list[Change]] = defaultdict(list)
    orphans: list[Change] = []
    # Only shape-like changes follow from others: where there are none, every
    # change is a root, and the walk need not read a single operand.
    walked = {place[0] for place, changes in by_place.items()
              if any(c.kind in _FOLLOWING_KINDS for c in changes)}
    changed = {place[0] for place in by_place}
    for computation in stage.b.computations:
        if computation.name not in changed:  # nothing to place: its lines need not be read
            continue
        cause: dict[str, Change] = {}
        if computation.name not in walked:
            for instruction in computation.instructions:
                here = by_place.get((computation.name, instruction.name))
                if here:
                    roots.extend(sorted(here, key=lambda c: _PRIORITY.get(c.kind, 99)))
            continue
        for instruction in computation.instructions:
            inherited = min((cause[o] for o in instruction.operands if o in cause),
                            key=lambda c: _PRIORITY.get(c.kind, 99), default=None)
            here = sorted(by_place.get((computation.name, instruction.name), ()),
                          key=lambda c: _PRIORITY.get(c.kind, 99))
            for change in here:
                if change.kind in _FOLLOWING_KINDS and inherited is not None:
                    derived_of[id(inherited)].append(change)
                elif change.kind in _SHAPE_KINDS and instruction.opcode == "parameter" \
                        and not computation.is_entry and computation is not stage.b.entry:
                    orphans.append(change)  # follows from the caller's operand
                    inherited = change
                else:
                    roots.append(change)
                    if change.kind != "metadata":
                        # the rest of this instruction's shape changes follow from it
                        inherited = change
            if inherited is not None:
                cause[instruction.name] = inherited
    _attach_orphans(roots, orphans, derived_of)
    roots = _attach_to_moved_constants(roots, derived_of)
    roots = _attach_dimension_constants(roots, derived_of)
    return _attach_entry_layout(roots, derived_of), derived_of


def _attach_entry_layout(roots: list[Change], derived_of: dict[int, list[Change]]) -> list[Change]:
    """The header's entry_computation_layout restates the entry's parameter and
    result shapes: when those changed, its change follows from them."""
    cause = next((c for c in roots if c.kind in ("parameter", "dtype", "constant_to_parameter",
                                                  "parameter_to_constant", "shape")), None)
    if cause is None:
        return roots
    kept = []
    for change in roots:
        if change.detail == "module header: entry_computation_layout":
            derived_of[id(cause)].append(change)
        else:
            kept.append(change)
    return kept


def _attach_to_moved_constants(roots: list[Change], derived_of: dict[int, list[Change]]) -> list[Change]:
    """A constant that became a parameter explains the new parameter count and
    the other copies of the same constant that disappeared."""
    moved = [c for c in roots if c.kind in ("constant_to_parameter", "parameter_to_constant")]
    if not moved:  # a parameter was added or removed: renumbering follows from it
        moved = [c for c in roots if c.kind == "parameter" and c.a is None and c.b is None]
    if not moved:
        return roots
    kept = []
    for change in roots:
        parent = None
        if change is moved[0]:
            parent = None
        elif change.kind == "parameter" and (change.a is None or _renumbered_only(change)):
            parent = moved[0]  # the count, or the numbers of the parameters after it
        elif change.kind == "op_removed" and (change.old or "").startswith("constant"):
            parent = next((c for c in moved if c.kind == "constant_to_parameter"), None)
        elif change.kind == "op_added" and (change.new or "").startswith("constant"):
            parent = next((c for c in moved if c.kind == "parameter_to_constant"), None)
        elif change.kind == "op_added" and (change.new or "").startswith("parameter"):
            parent = next((c for c in moved if c.kind == "constant_to_parameter"), None)
        elif change.kind == "op_removed" and (change.old or "").startswith("parameter"):
            parent = next((c for c in moved if c.kind == "parameter_to_constant"), None)
        elif change.kind in ("op_added", "op_removed") and \
                (change.new or change.old or "").startswith(("reshape", "broadcast", "bitcast")):
            parent = next((c for c in moved if c.computation == change.computation), None)
        if parent is None:
            kept.append(change)
        else:
            derived_of[id(parent)].append(change)
    return kept


def _attach_orphans(roots: list[Change], orphans: list[Change],
                    derived_of: dict[int, list[Change]]) -> None:
    """Shape changes of called computations' parameters go under the first shape cause."""
    if not orphans:
        return
    cause = next((r for r in sorted(roots, key=lambda r: _PRIORITY.get(r.kind, 99))
                  if r.kind in ("parameter", "dtype", "shape", "op_added", "opcode")), None)
    if cause is None:
        roots.extend(orphans)
        return
    for orphan in orphans:
        derived_of[id(cause)].append(orphan)
        derived_of[id(cause)].extend(derived_of.pop(id(orphan), []))


def _renumbered_only(change: Change) -> bool:
    """``f32[8] parameter(4)`` -> ``f32[8] parameter(5)``: same shape, new number."""
    old, new = (change.old or "").rsplit(" ", 1), (change.new or "").rsplit(" ", 1)
    return len(old) == len(new) == 2 and old[0] == new[0] and old[1] != new[1]


def _attach_dimension_constants(roots: list[Change], derived_of: dict[int, list[Change]]) -> list[Change]:
    """Changes that follow from a moved dimension without a data path from it.

    A dimension moves with an entry parameter's shape (a batch size) or with
    an integer constant (a loop trip count 3 -> 4 sizes the stacked loop
    outputs). Constants like 1/(B*8) whose values scale with it, and shapes
    (an iota, a broadcast, a loop's stacked result) whose moved dimensions
    all scale as it did, are derived from that change.
    """
    dims = []
    for change in roots:
        if change.kind == "parameter" and change.old and change.new:
            for d_old, d_new in zip(_dims(change.old), _dims(change.new)):
                if d_old != d_new and d_old and d_new:
                    dims.append((d_old, d_new, change))
        elif change.kind == "constant" and _is_positive_int(change.old) \
                and _is_positive_int(change.new):
            dims.append((int(change.old), int(change.new), change))
    if not dims:
        return roots
    kept = []
    for change in roots:
        parent = None
        if change.kind == "constant" and not any(change is c for _, _, c in dims):
            parent = next((c for d_old, d_new, c in dims
                           if _scales_with(change.old, change.new, d_old, d_new)), None)
        elif change.kind == "shape" and change.old and change.new:
            moved = {(o, n) for o, n in zip(_dims(change.old), _dims(change.new)) if o != n}
            # every moved dimension scales as a parameter's did (16->32, and 128->256
            # where batch and sequence were flattened together)
            parent = next((c for d_old, d_new, c in dims
                           if moved and all(n * d_old == o * d_new for o, n in moved)), None)
        if parent is None:
            kept.append(change)
        else:
            derived_of[id(parent)].append(change)
    return kept


def _element_type_names(shape_text: str | None) -> str:
    """``f32[16,8]{1,0}`` -> ``f32``; ``(f32[], s32[2])`` -> ``f32,s32``."""
    return ",".join(re.findall(r"([a-z][a-z0-9]*)\[", shape_text or ""))


def _is_positive_int(text: str | None) -> bool:
    return bool(text) and text.isdigit() and int(text) > 0


def _moved_dims(change) -> tuple[tuple[int, int], ...]:
    """The (old, new) sizes of the dimensions a shape-like change moved."""
    return tuple(sorted({(o, n) for o, n in zip(_dims(change.old or ""), _dims(change.new or ""))
                         if o != n}))


def _dims(text: str) -> list[int]:
    inside = text[text.find("[") + 1:text.find("]")] if "[" in text else ""
    return [int(d) for d in inside.replace("<=", "").split(",") if d.strip().isdigit()]


def _scales_with(old: str | None, new: str | None, d_old: int, d_new: int) -> bool:
    """old/new are k*B or 1/(k*B) for the same whole k, before and after B moved.

    A whole multiple is what a mean over the batch or a reshape size looks
    like; a learning rate that doubled along with the batch (0.01 -> 0.02
    while 16 -> 32) is proportional too, but 0.01 is not 16 times a whole
    number, nor one over it.
    """
    try:
        a, b = float(element_value(old.strip())), float(element_value(new.strip()))
    except (ValueError, AttributeError, TypeError):
        return False
    if not (math.isfinite(a) and math.isfinite(b)) or a <= 0 or b <= 0:
        return False
    for k_old, k_new in ((a / d_old, b / d_new), (1 / (a * d_old), 1 / (b * d_new))):
        k = round(k_old)
        if k >= 1 and math.isclose(k_old, k, rel_tol=1e-5) and math.isclose(k_new, k, rel_tol=1e-5):
            return True
    return False


# --- across stages ---------------------------------------------------------------------

def _merge_stages(before: list[Finding], after: list[Finding]) -> list[Finding]:
    """One finding for a change seen both before and after optimization."""
    merged: list[Finding] = []
    used = set()
    for finding in before:
        twin = next((i for i, g in enumerate(after) if i not in used and _same_finding(finding, g)),
                    None)
        if twin is None:
            merged.append(finding)
            continue
        used.add(twin)
        other = after[twin]
        merged.append(Finding(finding.kind, "both", finding.old, finding.new, finding.count,
                              tuple(h.name for h in HASHES
                                    if h.name in finding.affects or h.name in other.affects),
                              finding.origins + tuple(o for o in other.origins
                                                      if o not in finding.origins),
                              finding.where, finding.detail, finding.derived))
    merged.extend(g for i, g in enumerate(after) if i not in used)
    return merged


def _same_finding(a: Finding, b: Finding) -> bool:
    if a.kind != b.kind:
        return False
    if (a.old, a.new) == (b.old, b.new):
        return True
    if a.kind == "constant":
        return _reciprocal(a.old, b.old) and _reciprocal(a.new, b.new)
    if a.kind == "parameter" and a.old and a.new and b.old and b.new:
        return _moved_dims(a) == _moved_dims(b) != ()
    if a.kind == "constant_to_parameter":
        return a.old == b.old  # the parameter's number differs after optimization
    if a.kind == "parameter_to_constant":
        return a.new == b.new
    if a.kind in ("op_added", "op_removed", "metadata"):
        return a.origin.op_name == b.origin.op_name and a.origin.op_name is not None
    return False


def _reciprocal(x: str | None, y: str | None) -> bool:
    try:
        a, b = float(element_value(x.strip())), float(element_value(y.strip()))
    except (ValueError, AttributeError, TypeError):
        return False
    return a != 0 and b != 0 and math.isclose(a * b, 1.0, rel_tol=1e-5)
