"""From a pile of changes to an explanation: findings, ranked, with verdicts.

For each program paired across the two runs:

* the cause graph (hlodiff/analysis/causes.py) folds every change that
  follows from another under it, and ``findings.group`` makes one finding
  of each thing the user did (hlodiff/analysis/findings.py);
* the two stages are merged. A change seen in the compile input and again
  in the optimized program is one finding of stage ``both``. When the
  compile input differs, what differs only after optimization is XLA's
  consequence of it: counted under the cause it descends from (fusions carry
  the op_names of what they fused) as "XLA then optimized N instructions
  differently". Only when the compile inputs are the same are such changes
  causes in their own right (flags, the XLA version);
* findings are ranked, the environment first, then what moves a cache key,
  causes visible in the compile input before the rest;
* the verdicts: ``recompiles`` (do the compile-input cache keys move?) and
  ``same_executable`` (is the optimized program the same, names and
  metadata aside?), each True, False or None (cannot tell, with the
  reason), and per cache key (hlodiff/analysis/hashes.py).

The run's verdict covers every paired program; modules compiled in one run
only are extra compilations, listed apart.
"""

from __future__ import annotations

import filecmp
import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from ..dumps.environment import changes_code, is_version
from ..dumps.naming import classify
from ..model import Module, element_value, in_backward_pass
from . import recompute, residuals, unroll
from .advice import advice_for
from .causes import PRIORITY, CauseGraph
from .context import FindingContext
from .diff import Change
from .findings import (ARGUMENT_SHARDING, DEVICE_MESH, RESULT_SHARDING, SHARDING_ANNOTATION,
                       SIXTY_FOUR_BIT, Finding, Where, finding, group, moved_by, renamed_axes,
                       taken_under)
from .hashes import (COMPILE_INPUT, HASHES, NEVER_COMPILED, OUTSIDE_KINDS, applicable, compiled,
                     rule, unseen_without, verdicts)

if TYPE_CHECKING:
    from .align import Alignment

BEFORE, AFTER = "before_optimizations", "after_optimizations"
STAGES = (BEFORE, AFTER)

__all__ = ["ExtraCompilation", "Finding", "ModulePairing", "ProgramDiff", "ProgramVerdict",
           "Report", "STAGES", "Split", "StageDiff", "Where", "explain"]


@dataclass(frozen=True)
class ModulePairing:
    """Which module of each run was compared, and how they were paired."""

    a: str | None
    b: str | None
    how: str


@dataclass(frozen=True)
class ProgramVerdict:
    """The verdicts for one program paired across the runs.

    ``reason`` says why a verdict is None, and what the comparison could
    not see (a stage that was not dumped).
    """

    program: str
    a: str | None
    b: str | None
    how: str
    recompiles: bool | None
    same_executable: bool | None
    hashes: dict[str, bool | None]
    causes: int = 0  # findings that move a cache key
    reason: str = ""
    main: bool = False  # the main program of the runs (dumps/catalogue.py's choice)


@dataclass(frozen=True)
class ExtraCompilation:
    """A module compiled in one run only: itself a compilation the other run did not do."""

    run: str  # "a" or "b"
    module: str
    program: str
    # A program both runs compiled, compiled again in this run: how its
    # inputs differ from the paired compilation's, ``f32[8,16] -> f32[4,16]``
    # (or "the same input shapes"); "" for a program of this run alone.
    again: str = ""
    smaller: bool = False  # every input that changed shrank (a short last batch?)


@dataclass(frozen=True)
class Split:
    """Run ``run`` compiled in several graphs what the other run compiled in one.

    ``modules`` are that run's graphs of the program, the one paired with
    the other run's ``whole`` first; ``holders`` those that hold ``moved``
    of the ``missing`` operations the paired graph lacks (they still run,
    elsewhere). A sync point inside the step does this: PyTorch/XLA's
    ``xm.mark_step()`` or a value read back, or ``torch.compile``'s graphs.
    """

    run: str  # "a" or "b"
    program: str
    whole: str
    modules: tuple[str, ...]
    holders: tuple[str, ...]
    moved: int
    missing: int

    @property
    def sentence(self) -> str:
        """``run b compiled in 2 graphs (...) what run a compiled in 1 (...): ...``"""
        other = "a" if self.run == "b" else "b"
        return (f"run {self.run} compiled in {len(self.modules)} graphs "
                f"({', '.join(self.modules)}) what run {other} compiled in 1 ({self.whole}): "
                f"{self.moved} of the {self.missing} operations missing from {self.modules[0]} "
                f"run in {', '.join(self.holders)}")


@dataclass(frozen=True)
class Report:
    """What differs between two runs, and what it means for their executables."""

    same_executable: bool | None
    findings: tuple[Finding, ...]
    hashes: dict[str, bool | None]
    stages: dict[str, dict[str, str | int | None]] = field(default_factory=dict)
    modules: tuple[ModulePairing, ...] = ()
    notes: tuple[str, ...] = ()  # what a person should know beyond the findings
    recompiles: bool | None = None
    programs: tuple[ProgramVerdict, ...] = ()
    extra_compilations: tuple[ExtraCompilation, ...] = ()
    splits: tuple[Split, ...] = ()  # programs one run compiled in several graphs
    # why the comparison itself may be the wrong one (two frameworks, programs
    # paired only for lack of better): said before anything else
    warnings: tuple[str, ...] = ()
    # each finding's lines and neighbourhood, aligned with ``findings``; filled
    # only when asked for (compare(..., context=True)), else ()
    context: tuple[FindingContext, ...] = ()

    @property
    def top(self) -> Finding | None:
        return self.findings[0] if self.findings else None

    @property
    def shares_executable(self) -> bool:
        """Would the second run have used the first one's executable? Only
        where it is the same and nothing recompiles it: a cache key that
        moved compiles again even where XLA makes the same executable (a
        renamed function, jit's compiler options), which is what a person
        chasing recompiles, or a gate against them, must hear (exit 1); so
        must "cannot tell"."""
        return self.same_executable is True and self.recompiles is False


@dataclass
class StageDiff:
    """The changes found at one stage, with the module each side was read from
    (None for files that are the same byte for byte: not parsed)."""

    stage: str
    a: Module | None
    b: Module | None
    changes: list[Change]
    path_a: str | None = None
    path_b: str | None = None
    alignment: Alignment | None = field(default=None, repr=False)  # how a and b were paired


@dataclass
class ProgramDiff:
    """Everything compared for one program: its stages, and changes outside
    the HLO (the environment, XLA flags)."""

    program: str
    pairing: ModulePairing
    stages: list[StageDiff]
    outside: list[Change] = field(default_factory=list)
    framework: str | None = None
    notes: tuple[str, ...] = ()
    is_main: bool = False
    loaded: str = ""  # "run b", "run a" or "both runs": loaded from JAX's cache, not compiled
    # the runs without the program's module.mlir ("run b", "run a and run b"),
    # where a key hashes what only that file shows (JAX's); "" otherwise
    no_stablehlo: str = ""
    # only the optimized program was dumped, and both runs' module.mlir are the
    # same (locations aside): JAX's key reads it in place of the compile input
    stablehlo_same: bool = False


def explain(programs: list[ProgramDiff], extra: tuple[ExtraCompilation, ...] = (),
            notes: tuple[str, ...] = (), warnings: tuple[str, ...] = ()) -> Report:
    """Turn per-program, per-stage changes into a ranked report with verdicts."""
    verdicts_: list[ProgramVerdict] = []
    findings: list[Finding] = []
    stage_info: dict[str, dict] = {}
    for program in programs:
        found, verdict = _explain_program(program)
        verdicts_.append(verdict)
        findings.extend(found)
        for stage in program.stages:
            key = stage.stage if len(programs) == 1 else f"{program.program}: {stage.stage}"
            stage_info[key] = {"a": stage.path_a, "b": stage.path_b, "changes": len(stage.changes)}
    # the main program's findings first: a run-wide finding shows its values
    main = next((p.program for p in programs if p.is_main), None)
    findings.sort(key=lambda f: f.program != main)
    findings = _once_per_run(findings, len(programs))
    ordered = sorted(range(len(verdicts_)),
                     key=lambda i: _program_rank(verdicts_[i], programs[i].is_main, i))
    verdicts_ = [verdicts_[i] for i in ordered]
    by_program = {v.program: n for n, v in enumerate(verdicts_)}
    by_program[""] = -1  # what holds for the whole run (a version, a flag) comes first
    findings.sort(key=lambda f: (by_program.get(f.program, 0),) + _rank(f))
    hashes = {h.name: _combine([v.hashes[h.name] for v in verdicts_ if h.name in v.hashes],
                               any_true=True)
              for h in HASHES if any(h.name in v.hashes for v in verdicts_)}
    program_notes = tuple(note for p in programs for note in p.notes) + \
        _loaded_fingerprints(verdicts_)
    # Nothing both runs compiled, but something: no program to call the same
    # (a module.mlir given as HLO, read "Same executable", exit 0).
    unknown = [None] if not verdicts_ and extra else []
    return Report(
        same_executable=_combine([v.same_executable for v in verdicts_] + unknown,
                                 any_true=False),
        findings=tuple(findings), hashes=hashes, stages=stage_info,
        modules=tuple(p.pairing for p in programs), notes=program_notes + tuple(notes),
        recompiles=_combine([v.recompiles for v in verdicts_] + unknown, any_true=True),
        programs=tuple(verdicts_), extra_compilations=tuple(extra), warnings=tuple(warnings))


def _once_per_run(findings: list[Finding], programs: int) -> list[Finding]:
    """A difference outside the program text that is the same for several
    programs of the run is one finding, counted over the programs it
    touched: a version or a flag, and the trace counters and module numbers
    that shifted because one run built other functions first."""
    out: list[Finding] = []
    seen: dict[tuple, int] = {}
    for f in findings:
        key = _run_wide_key(f)
        if key is None:
            out.append(f)
            continue
        if key not in seen:
            seen[key] = len(out)
            out.append(replace(f, count=0, derived=(), optimized=0))
        first = out[seen[key]]
        out[seen[key]] = replace(first, count=first.count + 1,
                                 derived=first.derived + f.derived,
                                 optimized=first.optimized + f.optimized,
                                 affects=moved_by([first, f]))
    wide = {n for n in seen.values() if out[n].count > 1 or out[n].kind == "environment"}
    # an environment difference holds for the run (program ""), ranked first;
    # a shift counted over programs stays with the first program's findings
    # (the main one's), so a program that really changed still comes first
    return [replace(f, program="" if f.kind == "environment" else f.program,
                    detail=f"{f.detail} ({f.count} of {programs} programs)".lstrip())
            if n in wide and programs > 1 else f for n, f in enumerate(out)]


def _run_wide_key(finding: Finding) -> tuple | None:
    """What makes two programs' outside findings one: an environment
    difference by what it is (``XLA flag xla_...``); a shifted trace counter
    or module number by its sentence, numbers aside."""
    if finding.kind == "environment":
        return (finding.kind, finding.detail.split(":")[0])
    if finding.kind in ("program_name", "module_number"):
        return (finding.kind, re.sub(r"\d+", "N", finding.detail))
    if finding.summary.startswith(SIXTY_FOUR_BIT):  # one switch of the process
        return (finding.kind, finding.summary.split(":")[0])
    if finding.summary.startswith(DEVICE_MESH):  # one mesh, every program on it
        return (finding.kind, finding.summary)
    return None


def _combine(values: list[bool | None], any_true: bool) -> bool | None:
    """One verdict for several programs. ``recompiles``: True if any does;
    ``same_executable``: False if any differs; None where one cannot tell."""
    if not values:
        return False if any_true else True
    decisive = True if any_true else False
    if decisive in values:
        return decisive
    if None in values:
        return None
    return not decisive


def _program_rank(verdict: ProgramVerdict, is_main: bool, index: int) -> tuple:
    """Programs that differ first; among them the main program, then the one
    with more causes."""
    return (verdict.same_executable is True and verdict.recompiles is not True,
            not is_main, -verdict.causes, index)


# --- one program -----------------------------------------------------------------------------

def _explain_program(program: ProgramDiff) -> tuple[list[Finding], ProgramVerdict]:
    per_stage = {stage.stage: _stage_findings(stage) for stage in program.stages}
    before, after = per_stage.pop(BEFORE, None), per_stage.pop(AFTER, None)
    input_differs = any(compiled(c) for s in program.stages if s.stage == BEFORE for c in s.changes)
    findings = _merge_stages(before, after, input_differs)
    for rest in per_stage.values():  # a single file, or a pass snapshot: its own stage
        findings.extend(rest)
    findings += [finding(c.kind, "both", [c], summary=_outside_summary(c)) for c in program.outside]
    findings = _fold_environment(findings)
    structure = _compile_input(program.stages)
    if structure is not None:
        texts = _texts(structure)
        findings = _fold_checkpointing(findings, structure, texts)
        if _has_loop(texts):
            findings = _fold_unrolling(findings, structure, program.framework)
            findings = residuals.fold(findings, structure.a, structure.b)
    keys = {h.name for h in applicable(program.framework)}
    compared = {s.stage for s in program.stages}
    unseen = {
        # Seen only after optimization, beside a compile input that was
        # compared: a key over the compile input does not see it.
        AFTER: {h for h in keys if rule(h).stage == COMPILE_INPUT} if BEFORE in compared
        else set(),
        # Seen in the compile input where the optimized program was not
        # dumped: what XLA made of it, and so a hash over that, is unknown
        # (the verdict says "cannot tell").
        BEFORE: {h for h in keys if rule(h).stage != COMPILE_INPUT} if AFTER not in compared
        else set()}
    findings = [replace(f, program=program.program, advice=advice_for(f, program.framework),
                        affects=_moved(f, keys, unseen),
                        derived=tuple(replace(d, affects=_moved(d, keys, unseen))
                                      for d in f.derived))
                for f in findings]
    findings.sort(key=_rank)
    verdict = _verdict(program, findings)
    findings = _moving_what_moved(findings, verdict.hashes)
    return findings, replace(verdict, causes=sum(1 for f in findings if f.moves_a_hash))


def _moving_what_moved(findings: list[Finding], hashes: dict[str, bool | None]) -> list[Finding]:
    """``findings`` claiming no hash the program's verdict says is unchanged.
    A change moves a hash by the rule of its stage, the verdict decides from
    both: a mesh axis renamed is a frontend attribute of the compile input,
    which moves XLA's fingerprint by that rule, while the optimized programs
    are the same byte for byte; the row read "moves JAX, XLA" under "XLA
    executable fingerprint: unchanged" (a helper session's sharding hunt)."""
    still = {name for name, moved in hashes.items() if moved is False}
    if not still or not any(still.intersection(f.affects) for f in findings):
        return findings

    def trimmed(f: Finding) -> Finding:
        return replace(f, affects=tuple(h for h in f.affects if h not in still),
                       derived=tuple(map(trimmed, f.derived)))
    return sorted(map(trimmed, findings), key=_rank)


def _moved(finding: Finding, keys: set[str], unseen: dict[str, set[str]]) -> tuple[str, ...]:
    """The hashes of ``keys`` the finding certainly moves; ``unseen``: by
    stage, those a change found in that stage alone does not tell."""
    return tuple(h for h in finding.affects
                 if h in keys and h not in unseen.get(finding.stage, ()))


def _stage_findings(stage: StageDiff) -> list[Finding]:
    if not stage.changes:
        return []
    graph = CauseGraph(stage.changes, stage.a, stage.b)
    following = graph.following()
    roots = [stage.changes[i] for i in graph.roots()]
    by_root = {id(stage.changes[root]): [stage.changes[i] for i in sorted(children)]
               for root, children in following.items()}
    return group(roots, by_root, stage.stage, stage.a, stage.b)


def _outside_summary(change: Change) -> str:
    return change.detail if change.kind in OUTSIDE_KINDS else ""


def _fold_environment(findings: list[Finding]) -> list[Finding]:
    """What follows from an environment difference is folded under it.

    A new framework or XLA version lowers the same code differently: what
    differs in the HLO then follows from the version, unless it is a value
    the user's code wrote (a constant with a source line stays its own).
    Another device count partitions the program otherwise: its shardings,
    the header's partition counts, sharding-propagation flags and device
    mesh follow from it. A TensorFlow trace counter that moved because the
    run traced other functions first moved the module's number with it. A
    sharding JAX gave an argument or the result (a typed PRNG key, jit's
    out_shardings) brings the module's mesh and sharding-propagation flags;
    so does an argument placed with another sharding, and Shardy's copy of
    each argument's sharding (the ``xla.sdy.sharding`` frontend attribute);
    where Shardy's sharding of an argument changed, XLA's follows from it.
    A device mesh of another shape (or other axis names) on the same devices
    tiles every sharding on it otherwise, PartitionSpecs kept: those
    shardings follow from it, and Shardy's copies that only name the mesh's
    renamed axes. A result returned with another sharding (jit's
    out_shardings) brings XLA's sharding of the unnamed tuple element JAX
    returns it in."""
    for cause, follows in ((_is_version, _alone(_from_version)),
                           (_is_device_count, _alone(_partitioning)),
                           (_is_trace_counter, _alone(_is_module_number)),
                           (_is_mesh_change, _on_the_mesh),
                           (_is_result_sharding, _alone(_result_plumbing)),
                           (_is_sharding_annotation, _alone(_header_partitioning)),
                           (_is_partition_spec, _alone(_partitioning_by_xla)),
                           (_is_argument_sharding, _alone(_partitioning_by_xla))):
        home = next((f for f in findings if cause(f)), None)
        if home is None:
            continue
        folded = [f for f in findings
                  if f.kind != "environment" and not cause(f) and follows(f, home)]
        if not folded:
            continue
        findings = taken_under(findings, home, folded)
    return findings


def _alone(follows: Callable[[Finding], bool]) -> Callable[[Finding, Finding], bool]:
    """``follows`` asked of a finding whatever its cause's values (most rules
    of ``_fold_environment``; a mesh's renamed axes are read off the mesh)."""
    return lambda finding, _home: follows(finding)


def _fold_checkpointing(findings: list[Finding], stage: StageDiff,
                        texts: tuple[str | None, str | None]) -> list[Finding]:
    """A change of JAX's checkpointing (a block wrapped in jax.checkpoint, or
    another policy) as one finding, with what follows from it under it
    (hlodiff/analysis/recompute.py)."""
    changed = recompute.change_of(stage.a, texts[0], stage.b, texts[1])
    return recompute.fold(findings, *changed) if changed else findings


def _has_loop(texts: tuple[str | None, str | None]) -> bool:
    """May either text hold a while loop (a side with no file may)? The
    passes over loops walk every line's head: 0.05-0.07 s of a big compile
    input's diff with no loop at all."""
    return not all(text is not None and " while(" not in text for text in texts)


def _fold_unrolling(findings: list[Finding], stage: StageDiff,
                    framework: str | None) -> list[Finding]:
    """A loop unrolled (lax.scan's unroll=) as one finding, with what follows
    from it under it (hlodiff/analysis/unroll.py)."""
    word = "lax.scan" if framework == "jax" else "a while loop"
    unrolled = unroll.change_of(stage.a, stage.b, word)
    return unroll.fold(findings, unrolled, stage.a, stage.b) if unrolled else findings


def _compile_input(stages: list[StageDiff]) -> StageDiff | None:
    """The stage a change of the model's structure (a checkpoint, an unroll)
    is told by: the compile input, where the framework's names and loops are
    as it wrote them (the only stage, without one); None where it holds no
    change beyond metadata."""
    stage = next((s for s in stages if s.stage == BEFORE), stages[0] if stages else None)
    return stage if stage is not None and any(c.kind != "metadata" for c in stage.changes) \
        else None


def _texts(stage: StageDiff) -> tuple[str | None, str | None]:
    """The texts of the stage's two files, read once for the passes that
    look at them whole; None for a side with no file (a capture)."""
    def read(path: str | None) -> str | None:
        try:
            with open(path, encoding="utf-8", errors="replace") as stream:
                return stream.read()
        except (OSError, TypeError):
            return None
    return read(stage.path_a), read(stage.path_b)


def _is_version(finding: Finding) -> bool:
    return finding.kind == "environment" and is_version(finding.detail)


def _is_device_count(finding: Finding) -> bool:
    return finding.kind == "environment" and finding.detail.startswith("device count")


# How compare.py names a counter in a TensorFlow program's name that moved
# because the run built other programs first.
TRACE_COUNTER = "the function's trace counter"
CLUSTER_NUMBER = "the auto-clustering cluster number"


def _is_trace_counter(finding: Finding) -> bool:
    """TensorFlow's trace counter (or auto-clustering's cluster number) in
    the program's name: it moved because the run traced other functions (or
    formed other clusters) first, and so did the module's number."""
    return finding.kind == "program_name" and (
        TRACE_COUNTER in finding.detail or CLUSTER_NUMBER in finding.detail)


def _is_sharding_annotation(finding: Finding) -> bool:
    return finding.summary.startswith(SHARDING_ANNOTATION)


def _is_argument_sharding(finding: Finding) -> bool:
    return finding.summary.startswith(ARGUMENT_SHARDING)


def _is_partition_spec(finding: Finding) -> bool:
    """An argument placed with another sharding, in Shardy's words: the
    PartitionSpec the user wrote, where XLA's tiling of it follows."""
    return _is_argument_sharding(finding) and finding.detail.startswith("frontend_attributes")


def _partitioning_by_xla(finding: Finding) -> bool:
    """What an argument's sharding brings: XLA's shardings, partition counts
    and propagation flags, the mesh where only one run defines it (a mesh
    both runs define laid out otherwise, and jit's out_shardings, are causes
    of their own)."""
    return _partitioning(finding) and not _is_mesh_change(finding) \
        and not _is_result_sharding(finding)


def _header_partitioning(finding: Finding) -> bool:
    """The module's mesh or sharding-propagation flags (not an op's sharding),
    where the mesh came with what uses it, not laid out otherwise."""
    return _partitioning(finding) and finding.detail.startswith("module header: ") \
        and not _is_mesh_change(finding)


def _is_result_sharding(finding: Finding) -> bool:
    return finding.summary.startswith(RESULT_SHARDING)


def _result_plumbing(finding: Finding) -> bool:
    """XLA's sharding of an op with no name (JAX's own: the tuple element it
    returns the result in), not Shardy's copy of one."""
    return _partitioning(finding) and not finding.origin.op_name and \
        finding.detail.split(":")[0] == "sharding"


def _is_mesh_change(finding: Finding) -> bool:
    """A mesh both runs define laid out otherwise (findings.py says so)."""
    return finding.kind == "attribute" and finding.summary.startswith(DEVICE_MESH)


def _on_the_mesh(finding: Finding, mesh: Finding) -> bool:
    """What follows from ``mesh`` laid out otherwise: a sharding (XLA's
    tiling over the devices, which the mesh sets) or a partition count; a
    Shardy sharding only where it names the mesh's renamed axes and nothing
    else changed (another PartitionSpec is a cause of its own)."""
    if not _partitioning(finding):
        return False
    if finding.detail.removeprefix("module header: ").split(":")[0].strip() != \
            "frontend_attributes":
        return True
    renamed = renamed_axes(mesh.old, mesh.new)
    if not renamed or finding.old is None or finding.new is None:
        return False
    axis = re.compile(r'(?<=")(%s)(?=\\?")' % "|".join(map(re.escape, renamed)))
    return axis.sub(lambda m: renamed[m.group(1)], finding.old) == finding.new


def _is_module_number(finding: Finding) -> bool:
    return finding.kind == "module_number"


def _from_version(finding: Finding) -> bool:
    return not (finding.kind == "constant" and finding.origin.location)


# Attributes that say how a program is partitioned over its devices.
_PARTITIONING = frozenset({"sharding", "num_partitions", "replica_count",
                           "allow_spmd_sharding_propagation_to_parameters",
                           "allow_spmd_sharding_propagation_to_output"})


def _partitioning(finding: Finding) -> bool:
    """A sharding, a partition count, or Shardy's mesh and shardings (the
    ``xla.sdy.`` frontend attributes)."""
    if finding.kind != "attribute":
        return False
    name = finding.detail.removeprefix("module header: ").split(":")[0].strip()
    if name == "frontend_attributes":
        return "xla.sdy." in f"{finding.old}{finding.new}"
    return name in _PARTITIONING


def _rank(finding: Finding) -> tuple:
    """The environment first; then what moves a cache key; among those, what
    changes the compiled program before what only renames or re-describes it
    (a renamed scope never explains different executables); then causes
    visible in the compile input; then by kind; then with a source line; then
    the most frequent."""
    return (finding.kind != "environment",
            not finding.moves_a_hash and finding.kind != "elided_constant",
            finding.kind in NEVER_COMPILED,
            finding.stage == AFTER, _backward_only(finding), PRIORITY.get(finding.kind, 4.5),
            finding.origin.location is None, -finding.count, finding.old or "", finding.new or "")


def _backward_only(finding: Finding) -> bool:
    """Is every place of the finding in a backward pass? The framework derives
    it from the forward code, so what changed there follows from a change of
    the forward pass (a residual added in the forward pass adds the gradient
    sums of the backward pass), and the forward change is the one to show first."""
    names = [o.op_name for o in finding.origins if o.op_name]
    return bool(names) and all(map(in_backward_pass, names))


# --- across stages ---------------------------------------------------------------------------------

def _merge_stages(before: list[Finding] | None, after: list[Finding] | None,
                  input_differs: bool) -> list[Finding]:
    """One finding for a change seen in both stages; after-only findings folded
    under the input's causes when the compile input differs."""
    if before is None or after is None:
        return list(before or after or [])
    before = sorted(before, key=_symmetric)  # twins found the same way whichever run is a
    after = sorted(after, key=_symmetric)
    merged: list[Finding] = []
    used: set[int] = set()
    for found in before:
        twin = next((i for i, g in enumerate(after) if i not in used and _same_finding(found, g)),
                    None)
        if twin is None:
            merged.append(found)
            continue
        used.add(twin)
        other = after[twin]
        merged.append(replace(found, stage="both",
                              affects=_with_executable_hashes(found.affects, [other]),
                              origins=found.origins + tuple(o for o in other.origins
                                                            if o not in found.origins),
                              optimized=found.optimized + other.optimized))
    rest = [g for i, g in enumerate(after) if i not in used]
    # what renames or re-describes (metadata) makes XLA optimize nothing otherwise
    causes = [f for f in merged if f.moves_a_hash and f.kind not in NEVER_COMPILED]
    if not input_differs or not causes:
        return merged + rest
    folded: dict[int, list[Finding]] = {}
    for g in rest:
        home = _descends_from(g, causes)
        folded.setdefault(id(home), []).append(g)
    out = []
    for f in merged:
        extra = folded.get(id(f), [])
        if extra:
            # what XLA optimized otherwise: not names and metadata it carried over
            f = replace(f, optimized=f.optimized + sum(
                            g.count + sum(d.count for d in g.derived
                                          if d.kind not in NEVER_COMPILED)
                            for g in extra if g.kind not in NEVER_COMPILED),
                        affects=_with_executable_hashes(f.affects, extra))
        out.append(f)
    return out


def _with_executable_hashes(affects: tuple[str, ...], after: list[Finding]) -> tuple[str, ...]:
    """``affects`` of a finding in the compile input, and what its findings
    after optimization move of the hashes over the executable. A hash over
    the compile input sees only that stage: a Keras step's frozen batch norm
    claimed "TF signature" from the optimized program's changes, where TF's
    argument lists were the same (a helper session's run)."""
    return tuple(h.name for h in HASHES if h.name in affects or h.stage != COMPILE_INPUT
                 and any(h.name in g.affects for g in after))


def _symmetric(finding: Finding) -> tuple:
    return (finding.kind, sorted([finding.old or "", finding.new or ""]), -finding.count,
            finding.summary)


def _descends_from(finding: Finding, causes: list[Finding]) -> Finding:
    """The cause whose op_names an optimized change carries (a fusion carries
    the op_names of what it fused); where none shares a scope with it, the
    first cause that changed what the program computes rather than a value
    in it: a value's change keeps the names of what reads it, and a learning
    rate changed beside lax.scan's unroll took "XLA then optimized 52
    instructions differently" from the weights' bitcast into the unrolled
    layout (corpus/jax_scan_unroll_and_lr)."""
    names = {o.op_name for o in finding.origins if o.op_name}

    def claim(cause: Finding) -> tuple[int, bool]:
        theirs = {o.op_name for o in cause.origins if o.op_name}
        theirs |= {o.op_name for d in cause.derived for o in d.origins if o.op_name}
        return sum(_shared_scope(n, m) for n in names for m in theirs), cause.kind != "constant"
    return max(causes, key=claim)


def _shared_scope(a: str, b: str) -> int:
    """How many leading op_name components two op_names share."""
    n = 0
    for x, y in zip(a.split("/"), b.split("/")):
        if x != y:
            break
        n += 1
    return n


def _same_finding(a: Finding, b: Finding) -> bool:
    if a.kind != b.kind:
        return False
    if (a.old, a.new) == (b.old, b.new):
        return True
    if a.kind == "constant":
        return _reciprocal(a.old, b.old) and _reciprocal(a.new, b.new)
    if a.kind in ("parameter", "constant_to_parameter"):
        return a.old == b.old or a.summary == b.summary != ""
    if a.kind == "parameter_to_constant":
        return a.new == b.new
    if a.kind in ("op_added", "op_removed", "op_moved", "replaced", "metadata",
                  "parameter_order"):
        return a.origin.op_name == b.origin.op_name and a.origin.op_name is not None
    return False


def _reciprocal(x: str | None, y: str | None) -> bool:
    try:
        a, b = float(element_value(x.strip())), float(element_value(y.strip()))
    except (ValueError, AttributeError, TypeError):
        return False
    return a != 0 and b != 0 and math.isclose(a * b, 1.0, rel_tol=1e-5)


# --- verdicts ---------------------------------------------------------------------------------------

def _verdict(program: ProgramDiff, findings: list[Finding]) -> ProgramVerdict:
    by_stage = {s.stage: s.changes for s in program.stages}
    outside = program.outside
    stages = set(by_stage)
    single = None if stages & {BEFORE, AFTER} else next(iter(stages), None)
    input_changes = by_stage.get(BEFORE, by_stage.get(single, [])) if (BEFORE in stages or single) \
        else None
    output_changes = by_stage.get(AFTER, by_stage.get(single, [])) if (AFTER in stages or single) \
        else None
    reasons = []
    recompiles = _differs((input_changes or []) + outside) if input_changes is not None else None
    if input_changes is None:
        after = _differs(output_changes + outside)
        recompiles = True if after else None
        if after is not True and not program.stablehlo_same:
            reasons.append("only the optimized program was dumped: the compile input "
                           "(before_optimizations) could differ")
    if output_changes is not None:
        same = _differs(output_changes)
        same = None if same is None else not same
        if same is True and any(c.kind == "environment" and changes_code(c.detail)
                                for c in outside):
            same = False  # the same optimized HLO, compiled by another XLA or with other flags
            reasons.append("the optimized HLO is the same, but XLA flags or versions differ: "
                           "XLA generates other code from it")
    elif recompiles is False:
        same = True
    else:
        same = None
        reasons.append("only the compile input was dumped: XLA may still produce the same program")
    if recompiles is None and input_changes is not None or same is None and any(
            c.kind == "elided_constant" for s in program.stages for c in s.changes):
        elided = [c for s in program.stages for c in s.changes
                  if c.kind == "elided_constant" and c.values_differ is None]
        if elided:
            reasons.append(elided[0].detail or "constants XLA printed as {...} might differ")
    hashes = verdicts(by_stage.get(BEFORE) if BEFORE in by_stage else by_stage.get(single),
                      by_stage.get(AFTER) if AFTER in by_stage else by_stage.get(single), outside,
                      program.framework,
                      frozenset({"module.mlir"}) if program.stablehlo_same else frozenset())
    unseen = unseen_without(hashes, frozenset({"module.mlir"}) if program.no_stablehlo
                            else frozenset())
    hashes.update(dict.fromkeys(unseen))
    if unseen:
        reasons.append(f"no module.mlir for {program.program} in {program.no_stablehlo}: "
                       "JAX's key hashes the StableHLO it holds, which has what the HLO text "
                       "lacks (the results' names, converts XLA folds away)")
    if _FINGERPRINT in hashes:
        texts_differ = _optimized_texts_differ(program)
        if texts_differ and not any(_FINGERPRINT in f.affects for f in findings):
            reasons.append("the optimized texts differ where no finding shows it (names, or "
                           "the order of their stack frame tables): XLA's fingerprint hashes "
                           "them")
        if texts_differ is not None:
            hashes[_FINGERPRINT] = texts_differ
    keyed = [value for name, value in hashes.items()
             if rule(name).stage == COMPILE_INPUT and rule(name).cache_key]
    if keyed:  # the framework's own compile-input keys decide whether it recompiles
        recompiles = True if True in keyed else (None if None in keyed else False)
    if program.loaded and recompiles is None:  # no compile input: the load says it
        recompiles = False
        reasons = [f"{program.loaded}{LOADED}"]
    return ProgramVerdict(program.program, program.pairing.a, program.pairing.b, program.pairing.how,
                          recompiles, same, hashes, sum(1 for f in findings if f.moves_a_hash),
                          "; ".join(dict.fromkeys(reasons)), program.is_main)


_FINGERPRINT = "xla_executable_fingerprint"
# The reason of a program a run loaded from JAX's persistent cache, after "run b".
LOADED = " loaded it from JAX's persistent cache: JAX found its key there and compiled nothing"


def _loaded_fingerprints(verdicts_: list[ProgramVerdict]) -> tuple[str, ...]:
    """Why "Same executable" stands beside "XLA executable fingerprint:
    changed" where a run loaded programs from JAX's persistent cache: XLA
    prints a loaded executable's stack frame tables in another order, and
    the fingerprint it logs hashes that text (a helper session's optax and
    flax nnx runs; the fingerprint line is tested against XLA's own)."""
    loaded = [v for v in verdicts_ if loaded_by(v) and v.same_executable is True
              and v.hashes.get(_FINGERPRINT) is True]
    if not loaded:
        return ()
    named = [v.program for v in loaded[:3]] + \
        ([f"{len(loaded) - 3} more"] if len(loaded) > 3 else [])
    names = " and ".join(filter(None, (", ".join(named[:-1]), named[-1])))
    runs = " and ".join(dict.fromkeys(loaded_by(v) for v in loaded))
    return (f"the fingerprint XLA logs changed for {names}, though {runs} loaded "
            f"{'them' if len(loaded) > 1 else 'it'} from JAX's persistent cache and compiled "
            "nothing: XLA prints a loaded executable's stack frame tables in another order, "
            "and hashes that text.",)


def loaded_by(verdict: ProgramVerdict) -> str:
    """``run b`` (``run a``, ``both runs``) where that run loaded the program
    from JAX's persistent cache instead of compiling it; "" otherwise."""
    return verdict.reason.removesuffix(LOADED) if verdict.reason.endswith(LOADED) else ""


def _optimized_texts_differ(program: ProgramDiff) -> bool | None:
    """Do the two CPU after-optimization files differ byte for byte? XLA's CPU
    fingerprint is a hash of that very text (corpus/gen/HASHES.md: it matched
    the observed fingerprints of all 86 program pairs of the corpus), so this
    decides it, also where the differ sees only what means the same (a run
    whose executable came from the persistent cache prints its stack frame
    tables in another order). None when there are no two such files."""
    stage = next((s for s in program.stages if s.stage == AFTER), None)
    if stage is None or stage.path_a is None or stage.path_b is None:
        return None
    paths = [Path(stage.path_a), Path(stage.path_b)]
    # An executable loaded from the persistent cache is dumped without its
    # platform (after_optimizations.txt): CPU still, beside a CPU one.
    stages = [classify(path.name).stage for path in paths]
    platforms = {"?" if stage is None else stage.platform for stage in stages}
    if "cpu" not in platforms or not platforms <= {"cpu", None}:
        return None
    try:
        return not filecmp.cmp(*paths, shallow=False)
    except OSError:
        return None


def _differs(changes: list[Change]) -> bool | None:
    """True when a compiled change is certain, None when only constants nobody
    printed might differ, False otherwise."""
    undecided = False
    for change in changes:
        if not compiled(change):
            continue
        if change.kind == "elided_constant" and change.values_differ is None:
            undecided = True
            continue
        return True
    return None if undecided else False
