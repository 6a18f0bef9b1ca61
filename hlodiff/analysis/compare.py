"""The whole job for two runs: pair modules, diff each stage, explain.

``compare(a, b)`` takes two dump directories or two HLO files and returns
the ``Report`` the ``diff`` command renders. Parsing, pairing and aligning
are imported when a diff is computed: a repeated diff, read back from the
cache, costs only start-up, and they (Lark, rapidfuzz) are most of it.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..collector import paused
from ..dumps import AFTER, BEFORE, HLO_TEXT, Dump, DumpModule, load_target
from ..dumps.catalogue import compiled_by_framework, computes_gradients
from ..dumps.environment import cache_paths_differ, differences, environment, is_version
from ..dumps.mlir import (Settled, first_difference, folded_constants, mlir_type, read_constants,
                          settle, stablehlo_lines)
from ..dumps.naming import program_name
from ..errors import HlodiffError
from ..model import Module, Origin, Shape
from .diff import Change, diff_modules
from .explain import (CLUSTER_NUMBER, TRACE_COUNTER, ExtraCompilation, Finding, ModulePairing,
                      ProgramDiff, Report, Split, StageDiff, explain)
from .hashes import hashes_proto, moves

if TYPE_CHECKING:
    from ..syntax.unchanged import Seed
    from ..syntax.unchanged.plan import Checked

Step = Callable[[str], None]  # told what compare is about to do, for a progress display


def _quiet(_: str) -> None:
    """The default progress callback: nothing to say."""


def compare(a: str | Path, b: str | Path, *, select: str | None = None,
            all: bool = False, cache: bool = False, step: Step = _quiet,
            say: Step = _quiet, context: bool = False) -> Report:
    """Why the programs in ``a`` and ``b`` differ (see ``explain.Report``).

    With ``cache``, a diff of files already diffed once is read back from
    the user's cache (see hlodiff/cache.py) instead of being redone; ``say``
    hears why a cache entry was not used. ``context`` adds each finding's
    lines and neighbourhood (``Report.context``, hlodiff/analysis/context.py).
    """
    dump_a, dump_b = load_target(a), load_target(b)
    unpaired = Path(a).is_dir() and Path(b).is_dir()
    if not cache:
        return compare_dumps(dump_a, dump_b, select=select, all=all, unpaired=unpaired, step=step,
                             context=context)
    from .. import cache as results
    named, by_content = _cache_inputs([dump_a, dump_b])
    entry = results.key("compare", (select, all, unpaired, context), named, by_content)
    report = results.load(entry, Report, say)
    if report is None:
        report = compare_dumps(dump_a, dump_b, select=select, all=all, unpaired=unpaired,
                               step=step, context=context)
        results.store(entry, report)
    return report


# Files a diff reads: by content. Other files take part in pairing only: by name and size.
_READ_BY_CONTENT = frozenset({HLO_TEXT, "module.mlir", "debug_options"})


def _cache_inputs(dumps: list[Dump]) -> tuple[list[str], list[Path]]:
    """What a diff of ``dumps`` depends on, as plain data for the cache key:
    every file's name and size, and the files it reads, to hash by content."""
    named: list[str] = []
    by_content: list[Path] = []
    for dump in dumps:
        named.append("\0dump")
        for file in sorted(dump.files, key=lambda f: f.relative):
            read = file.kind in _READ_BY_CONTENT
            named.append(f"{file.relative}\0{file.size}\0{int(read)}")
            if read:
                by_content.append(dump.root / file.relative)
    return named, by_content


@paused()  # what a diff builds, it keeps until the report is made (hlodiff/collector.py)
def compare_dumps(dump_a: Dump, dump_b: Dump, *, select: str | None = None, all: bool = False,
                  unpaired: bool = True, step: Step = _quiet, context: bool = False) -> Report:
    """``compare`` for dumps already loaded (a baseline rebuilds one from text).

    Every program paired across the runs gets its verdict (``select`` keeps
    those whose name matches a regular expression; ``all`` is the default
    now and kept for callers that ask for it). A program whose files are
    the same byte for byte is not parsed. ``unpaired`` lists modules
    compiled in one run only as extra compilations; off when one side holds
    only the modules a caller chose to keep. ``context``: see ``compare``.
    """
    from ..dumps.pairing import pair_dumps
    pairing = pair_dumps(dump_a, dump_b, select=select, all=True if select is None else all)
    names = [_program_label(pair.a, pair.b) for pair in pairing.pairs]
    programs = [_program_diff(pair, step, pair is pairing.main,
                              name if names.count(name) == 1 else f"{name} ({_which(pair)})")
                for pair, name in zip(pairing.pairs, names)]
    programs = _version_for_the_run(programs)
    extra: tuple[ExtraCompilation, ...] = ()
    if unpaired:
        # a program by its name, where the name tells it (torch-xla calls
        # every graph SyncTensorsGraph)
        named = Counter(module.normalised for pair in pairing.pairs for module in (pair.a, pair.b))
        paired = {(run, module.normalised): module for pair in pairing.pairs
                  for run, module in (("a", pair.a), ("b", pair.b)) if named[module.normalised] <= 2}
        extra = tuple(ExtraCompilation(run, m.label, m.normalised,
                                       *_inputs_again(paired.get((run, m.normalised)), m))
                      for run, modules in (("a", pairing.only_a), ("b", pairing.only_b))
                      for m in modules)
    splits = _splits(pairing, programs) if unpaired else ()
    step("explaining")
    report = explain(programs, extra, tuple(pairing.notes),
                     comparison_warnings(dump_a, dump_b, pairing, chosen_by_user=not unpaired))
    if splits:
        report = replace(report, splits=splits, findings=_moved_findings(report.findings, splits))
    split_modules = {label for split in splits for label in split.modules}
    missing = _main_in_one_run(dump_a, dump_b, pairing, split_modules) \
        if unpaired and select is None else ""
    if missing:  # what the two runs share says nothing of the program one never built
        # one program is not shared, so the runs' executables are not the same
        report = replace(report, warnings=(missing, *report.warnings), recompiles=None,
                         same_executable=False)
    if not context:
        return report
    from .context import finding_contexts
    pairs = {program.program: pair for program, pair in zip(programs, pairing.pairs)}
    return replace(report, context=finding_contexts(
        report.findings, programs,
        lambda name: (_mlir_constants(pairs[name].a), _mlir_constants(pairs[name].b))))


def _inputs_again(first: DumpModule | None, again: DumpModule) -> tuple[str, bool]:
    """How the inputs of ``again``, a program compiled once more in a run
    whose first compilation of it is paired across the runs (``first``),
    differ from the first's (``f32[8,16] -> f32[4,16], f32[8,4] ->
    f32[4,4]``), and whether they are smaller. Read from the two headers,
    nothing parsed: run b fed one short batch more, which "Same executable,
    no recompile" (right of the programs both runs compiled) left unsaid."""
    if first is None or not first.normalised:
        return "", False
    old, new = first.argument_shapes, again.argument_shapes
    if len(old) != len(new):
        return f"{len(old)} -> {len(new)} inputs", False
    changed = [(x, y) for x, y in zip(map(_plain_shape, old), map(_plain_shape, new))
               if str(x) != str(y)]
    if not changed:
        return "the same input shapes", False
    shown = ", ".join(f"{x} -> {y}" for x, y in changed[:3]) + \
        (f" and {len(changed) - 3} more" if len(changed) > 3 else "")
    return shown, all(_smaller(y, x) for x, y in changed)


def _plain_shape(text: str) -> Shape | str:
    """A shape as a user reads it, its layout left out (``f32[8,16]{1,0}``);
    the text itself where it does not read as a shape."""
    from ..syntax.values import PieceError, parse_shape
    try:
        return parse_shape(text).without_layout()
    except PieceError:
        return text


def _smaller(shape: Shape | str, than: Shape | str) -> bool:
    """Is ``shape`` an array of ``than``'s type and rank, no dimension larger,
    one smaller?"""
    if not isinstance(shape, Shape) or not isinstance(than, Shape) or shape.is_tuple or \
            (shape.element_type, shape.rank) != (than.element_type, than.rank):
        return False
    sizes = list(zip(shape.dimensions, than.dimensions))
    return shape.dimensions != than.dimensions and \
        all(d is not None and b is not None and d <= b for d, b in sizes)


def _main_in_one_run(dump_a: Dump, dump_b: Dump, pairing, split: set[str] = frozenset()) -> str:
    """A run's main program that the other run never compiled (its process
    stopped before, or the step was renamed past recognising), or "". The
    programs both compiled said "Same executable", exit 0, where run b had
    crashed before compiling jit_train_step (a helper session's run). A
    graph of a step the run split (``split``: module labels) is not one:
    the other run compiled its operations inside its one graph. A training
    step is told before a run's other main program: the step run without
    jit in the other run, whose largest program is one of its ops."""
    found = []
    for run, dump, alone, other in (("a", dump_a, pairing.only_a, "b"),
                                    ("b", dump_b, pairing.only_b, "a")):
        main = dump.main_program()
        if any(m is main for m in alone) and not compiled_by_framework(main) \
                and main.label not in split:
            found.append((not computes_gradients(main), run, main, other))
    if not found:
        return ""
    _, run, main, other = min(found, key=lambda f: f[:2])
    return (f"run {run}'s main program, {main.normalised or main.label}, has no "
            f"counterpart in run {other}: run {other} never compiled it (did it stop before, "
            "or run the step without jit, as Keras does with jit_compile=False?), so it "
            "cannot have shared its executable")


def _splits(pairing, programs: list[ProgramDiff]) -> tuple[Split, ...]:
    """Programs one run compiled in several graphs where the other compiled one.

    The operations one module of a pair lacks (removed from run a's, added
    to run b's) are looked for in the modules of the same name that only
    the run lacking them compiled: when most of them are there, they did
    not go, the run split the program (an extra ``xm.mark_step()`` puts the
    optimizer update in a graph of its own; ``torch.compile`` compiles the
    forward, backward and optimizer apart). Operations are matched by opcode
    and op_type (the op_name's last part without its counter where there is
    none): names and counters are renumbered per graph.
    """
    out = []
    for pair, program in zip(pairing.pairs, programs):
        stage = next((s for s in program.stages if s.stage == BEFORE), None) \
            or (program.stages[0] if program.stages else None)
        if stage is None:
            continue
        for run, kind, kept, alone in (("b", "op_removed", pair.b, pairing.only_b),
                                       ("a", "op_added", pair.a, pairing.only_a)):
            others = sorted((m for m in alone if m.normalised == kept.normalised
                             and m.primary is not None), key=lambda m: m.module_id or 0)
            missing = Counter(_operation(c.opcode, c.origin) for c in stage.changes
                              if c.kind == kind)
            if not others or not missing:
                continue
            left, holders = missing.copy(), []
            for module in others:
                try:
                    parsed = module.module(BEFORE if module.stage_file(BEFORE) else None)
                except (HlodiffError, OSError):
                    continue
                found = left & Counter(_operation(i.opcode, parsed.origin(i))
                                       for _, i in parsed.instructions())
                if found:
                    holders.append(module.label)
                    left -= found
            total = sum(missing.values())
            moved = total - sum(left.values())
            if moved and 2 * moved >= total:
                whole = pair.a if run == "b" else pair.b
                out.append(Split(run, program.program, whole.label,
                                 (kept.label, *(m.label for m in others)), tuple(holders), moved,
                                 total))
    return tuple(out)


def _operation(opcode: str | None, origin: Origin) -> tuple[str | None, str | None]:
    """An operation as two graphs of one step both spell it: opcode and op_type."""
    kind = origin.op_type
    if not kind and origin.op_name:
        kind = re.sub(r"\.\d+$", "", origin.op_name.rsplit("/", 1)[-1])
    return opcode, kind


def _moved_findings(findings: tuple[Finding, ...],
                    splits: tuple[Split, ...]) -> tuple[Finding, ...]:
    """The removed (or added) operations a split moved to another graph: say so, not that
    the model code stopped (or started) running them."""
    out = []
    for finding in findings:
        split = next((s for s in splits if s.program == finding.program and finding.kind ==
                      ("op_removed" if s.run == "b" else "op_added")), None)
        if split is None:
            out.append(finding)
            continue
        graphs = ", ".join(split.holders)
        own = "a graph of its own" if len(split.holders) == 1 else "graphs of their own"
        said = (f"These operations still run: run b runs them in {graphs}, {own}."
                if split.run == "b" else
                f"These operations are not new: run a ran them in {graphs}, {own}.")
        advice = (f"{said} A sync point inside the step splits it (PyTorch/XLA: xm.mark_step(), "
                  "or a tensor read with .item() or print; torch.compile compiles forward, backward "
                  "and optimizer apart). Nothing is lost and each graph compiles once; remove "
                  "the sync point to compile one graph again.")
        out.append(replace(finding, advice=advice))
    return tuple(out)


_FRAMEWORK_NAMES = {"jax": "JAX", "tensorflow": "TensorFlow", "pytorch": "PyTorch/XLA"}


def comparison_warnings(dump_a: Dump, dump_b: Dump, pairing,
                        chosen_by_user: bool = False) -> tuple[str, ...]:
    """What makes the comparison itself doubtful: runs of two frameworks, or
    main programs paired only as the largest of each run, names apart (not
    when the user named the two files)."""
    from ..dumps.pairing import LARGEST
    out = []
    frameworks = [{m.name.frontend for m in dump.modules} - {None} for dump in (dump_a, dump_b)]
    if all(frameworks) and not frameworks[0] & frameworks[1]:
        said = [" and ".join(sorted(_FRAMEWORK_NAMES[f] for f in names)) for names in frameworks]
        out.append(f"run a was compiled by {said[0]} and run b by {said[1]}: they cannot hold "
                   "the same program, so every difference below is expected")
    main = pairing.main_pair
    eager = [op_by_op(dump, module) for dump, module in ((dump_a, main.a), (dump_b, main.b))] \
        if main is not None and not chosen_by_user else []
    if eager and all(eager):
        out.append(f"no program of these runs is the model: the largest of the user's, "
                   f"{main.a.program}, holds {eager[0][0]} instructions, and the runs compiled "
                   f"{eager[0][1]} and {eager[1][1]} such programs. {OP_BY_OP}: the verdict "
                   "covers the programs both runs compiled, and what one run alone compiled is "
                   "listed apart")
    if main is not None and main.how == LARGEST and main.a.normalised != main.b.normalised \
            and not chosen_by_user:
        out.append(f"the main programs, {main.a.normalised} and {main.b.normalised}, were paired "
                   "only as the largest of each run: nothing else says they are one program "
                   "(--module REGEX picks the program to compare)")
    return tuple(out)


OP_BY_OP = ("The model ran op by op (Keras with jit_compile=False, JAX operations called "
            "outside jax.jit), each operation a program of its own")
# A main program this small among several of the user's is one operation of a
# model run op by op (jit_add: two parameters, an add, its broadcast), not a
# model: a jitted step of the smallest model holds dozens of instructions.
_OPERATION_SIZE = 8
_OPERATION_BYTES = 64_000  # read to count instructions only below this size


def op_by_op(dump: Dump, main: DumpModule) -> tuple[int, int] | None:
    """(instructions of the main program, programs of the user's) where the
    run compiled its model op by op: its largest program of the user's holds
    an operation or two, and it is one of several. None otherwise."""
    if main.size is None or main.size > _OPERATION_BYTES:
        return None
    try:
        count = main.instruction_count
    except HlodiffError:
        return None
    own = sum(1 for m in dump.modules if not compiled_by_framework(m))
    return (count, own) if count <= _OPERATION_SIZE and own >= 3 else None


def _program_label(a: DumpModule, b: DumpModule) -> str:
    """What the report calls a program pair: its name, or both names when the
    pair was made by structure across a rename (a JAX upgrade made
    ``jit_convert_element_type`` into ``jit_stage``): a user looking for
    run b's program finds it."""
    name_a, name_b = a.normalised or a.label, b.normalised or b.label
    return name_a if name_a == name_b else f"{name_a} vs {name_b}"


def _which(pair) -> str:
    """Which of several programs of one name a pair is: ``module_0002 vs
    module_0004``, or ``module_0002`` when both runs numbered it so."""
    a, b = _short_label(pair.a), _short_label(pair.b)
    return a if a == b else f"{a} vs {b}"


def _short_label(module: DumpModule) -> str:
    """module_0002 for a program that shares its name with others (torch-xla's)."""
    return module.label if module.module_id is None else f"module_{module.module_id:04d}"


def _program_diff(pair, step: Step, is_main: bool, name: str) -> ProgramDiff:
    """Every stage of one program pair, and its environment; ``name`` tells the
    program apart from the run's others (torch-xla calls them all SyncTensorsGraph)."""
    stages = _decide_elided(_stage_diffs(pair.a, pair.b, step), pair.a, pair.b)
    env_a, env_b = environment(pair.a), environment(pair.b)
    outside = [Change("environment", d.old, d.new, "", None, None, Origin(), d.detail)
               for d in differences(env_a, env_b)]
    named = next(((s.a.name, s.b.name) for s in stages if s.a is not None), None)
    if named is not None and named[0] != named[1] and not _follows_program(*named):
        outside.append(Change("program_name", named[0], named[1], "", None, None, Origin(),
                              _program_name_detail(*named)))
    ids = pair.a.module_id, pair.b.module_id
    framework = pair.a.name.frontend or pair.b.name.frontend
    if hashes_proto(framework) and None not in ids and ids[0] != ids[1]:
        outside.append(Change("module_number", f"module {ids[0]}", f"module {ids[1]}", "", None,
                              None, Origin(),
                              _module_number_detail(*ids, one_run=pair.a.root == pair.b.root)))
    mlir = _StableHLO(pair.a, pair.b)
    stablehlo = _stablehlo_change(stages, mlir)
    if stablehlo is not None:
        outside.append(stablehlo)
    no_stablehlo = _without_stablehlo(stages, pair.a, pair.b) if framework == "jax" else ""
    stablehlo_same = framework == "jax" and _stablehlo_same_without_input(stages, mlir)
    notes = [cache_paths_differ(env_a, env_b), _one_optimized(pair.a, pair.b, name)]
    loaded = {(True, True): "both runs", (True, False): "run a",
              (False, True): "run b"}.get((pair.a.loaded_from_cache, pair.b.loaded_from_cache), "")
    return ProgramDiff(name,
                       ModulePairing(pair.a.label, pair.b.label, pair.how), stages, outside,
                       framework, tuple(filter(None, notes)), is_main, loaded, no_stablehlo,
                       stablehlo_same)


def _one_optimized(a: DumpModule, b: DumpModule, name: str) -> str:
    """Where one run dumped the optimized program and the other did not, the
    other's executable is told from its compile input alone: say so (a run
    without its optimized file read "Same executable, XLA executable
    fingerprint: unchanged" with no word of it)."""
    has = [m.stage_file(AFTER) is not None for m in (a, b)]
    if has[0] == has[1] or not all(m.stage_file(BEFORE) is not None for m in (a, b)):
        return ""
    missing = "run b" if has[0] else "run a"
    return (f"{missing} dumped no optimized program for {name}: its executable is told from "
            "its compile input")


def _version_for_the_run(programs: list[ProgramDiff]) -> list[ProgramDiff]:
    """A framework or XLA version belongs to the run, not to one program: a
    program whose dump carries no source locations (a helper without
    metadata) shows no sign of it, yet was compiled by the same versions, so
    it gets the version difference its run shows."""
    version = next((c for p in programs for c in p.outside if _is_version(c)), None)
    if version is None:
        return programs
    return [p if any(map(_is_version, p.outside)) else replace(p, outside=[version, *p.outside])
            for p in programs]


def _is_version(change: Change) -> bool:
    return change.kind == "environment" and is_version(change.detail)


def _module_number_detail(old: int, new: int, one_run: bool = False) -> str:
    """Why a module's number matters: its proto's ids count on from what was built before.
    ``one_run``: both are compilations of one run (hlodiff recompiles, which
    calls them run a and run b and says which compilation each is): its
    process numbered them both, and no run built more than another (a
    helper session's recompiles read "run b built 2 more modules")."""
    if one_run:
        return (f"this run's dump numbers the program {old} in run a and {new} in run b: XLA "
                "numbers every module the process builds, so two compilations of one run "
                "never share a number, and the ids in their module protos differ, and the "
                "hashes of those protos with them")
    more, run = abs(new - old), "b" if new > old else "a"
    return (f"the dump numbers this program {old} in run a and {new} in run b: run {run} built "
            f"{more} more module{'s' if more > 1 else ''} before it, so the ids in its module "
            "proto differ, and the hashes of that proto with them")


def _follows_program(old: str, new: str) -> bool:
    """Two HloModule names of one program whose counter follows the program
    (torch-xla's graph number): the name is no cause of its own."""
    a, b = program_name(old), program_name(new)
    return a.normalised == b.normalised and a.counter_follows_program


def _program_name_detail(old: str, new: str) -> str:
    """What a renamed program means: frameworks key their caches on the name."""
    said = []
    configs = _TF_CONFIG.findall(old), _TF_CONFIG.findall(new)
    if configs[0] and configs[1] and configs[0] != configs[1]:
        said.append(f"TensorFlow's configuration differs (config_proto {configs[0][0]} -> "
                    f"{configs[1][0]}): a tf.function's name holds a fingerprint of its "
                    "ConfigProto, and so do TF's cache keys; a tf.config setting differs "
                    "between the runs (tf.config.optimizer.set_experimental_options, "
                    "tf.config.threading, tf.config.set_soft_device_placement): set them "
                    "alike in both runs")
    counters = re.findall(r"_(\d+)__", old), re.findall(r"_(\d+)__", new)
    if counters[0] and counters[1] and counters[0] != counters[1]:
        # TF's auto-clustering names each cluster it forms cluster_N, N counted
        # over the process: a cluster formed first (another function's) read
        # "the function's trace counter 0 -> 1" (a helper session's runs)
        if program_name(old).normalised == program_name(new).normalised == "cluster":
            said.append(f"{CLUSTER_NUMBER} {counters[0][0]} -> {counters[1][0]}: TensorFlow "
                        "numbers the clusters it forms for XLA (tf.config.optimizer.set_jit, "
                        "--tf_xla_auto_jit) over the whole process, so a cluster formed "
                        "first in one run shifts this one's number, and its cache keys hold "
                        "the number (TF_XLA_FLAGS=--tf_xla_deterministic_cluster_names "
                        "numbers them per graph)")
        else:
            said.append(f"{TRACE_COUNTER} {counters[0][0]} -> {counters[1][0]}: TensorFlow "
                        "numbers every traced function, and its cache keys hold the number")
    return "; and ".join(said) or \
        f"the program is named {old} in run a and {new} in run b: cache keys hold the name"


# a jit-compiled tf.function's HloModule name carries its attributes, a
# fingerprint of the session's ConfigProto among them:
# a_inference_step_39__XlaMustCompile_true_config_proto_1356..._executor_type_1116..._
_TF_CONFIG = re.compile(r"_config_proto_(\d+)_")


def _stage_diffs(a: DumpModule, b: DumpModule, step: Step) -> list[StageDiff]:
    """Diffs at every stage both modules were dumped at (or their only files).
    Every file is read whole, also when both are the same: a diff vouches
    for what it read (on big files, what the two share is checked, not
    aligned: hlodiff/syntax/unchanged/). On big dumps the compile input is
    diffed in a worker process while this one diffs the optimized program
    (see ``_diffed_elsewhere``)."""
    shared = [s for s in (BEFORE, AFTER) if a.stage_file(s) and b.stage_file(s)]
    if not shared:
        _same_stage(a, b)
    stages = shared or [None]
    paths = {stage: (a.root / a.file(stage).relative, b.root / b.file(stage).relative)
             for stage in stages}
    names = {stage: stage or (a.primary.stage.name if a.primary and a.primary.stage else "hlo")
             for stage in stages}
    parsed = {stage: a.parsed(stage) is not None or b.parsed(stage) is not None
              for stage in stages}
    from ..dumps import pool
    away = _diffed_elsewhere(a, b, stages, parsed)
    pending = None
    if away is not None:
        # First the checks of the optimized program's run a, wanted soon, then
        # the compile input's diff, wanted last. Started before this process
        # loads the parser (a tenth of a second), which the worker loads meanwhile.
        pending = pool.elsewhere((failing_computations, (str(paths[AFTER][0]),)),
                                 (diff_stage_files, (*paths[away], names[away])))
    from ..syntax.unchanged import Seed
    done: dict[str | None, StageDiff] = {}
    try:
        for stage in sorted(stages, key=lambda s: pending is not None and s == away):
            what = stage or "HLO"  # this process's stages first, then the worker's
            if pending is not None and stage == away:
                step(f"waiting for the diff of {what}")
                outcome = pending.outcome(1)
                if outcome is not None and outcome[1] is None:
                    done[stage] = outcome[0]
                    continue  # else diffed here, to raise its error as a small dump would
            step(f"reading {a.label} and {b.label} {what}")
            if parsed[stage]:  # read whole already (to pair the modules)
                ma, mb = a.module(stage), b.module(stage)
                step(f"aligning and diffing {what}")
                done[stage] = _diff_stage(ma, mb, Seed(), names[stage], *paths[stage])
            else:
                checked = _answer(pending, 0) if pending is not None and stage == AFTER else None
                done[stage] = diff_stage_files(*paths[stage], names[stage], step=step,
                                               failing_a=checked)
    except HlodiffError:
        if pending is not None and away not in done:
            # the earlier stage's error is the one to tell, as in order
            outcome = pending.outcome(1)
            if outcome is None or outcome[1] is not None:
                diff_stage_files(*paths[away], names[away])
        raise
    finally:
        if pending is not None:
            pending.cancel()
    return [done[stage] for stage in stages]


@paused()  # a whole file cut at its names: millions of strings, no garbage
def failing_computations(path: str) -> frozenset[str] | None:
    """hlodiff/syntax/unchanged/checks.py's ``failing_computations``, for a
    worker: named here, a worker is sent it before this process has loaded
    the parser that module needs."""
    from ..syntax.unchanged.checks import failing_computations as failing
    return failing(path)


def _answer(pending, k: int) -> Callable[[], object]:
    """The answer of the worker's call ``k``, waited for when asked; None
    when it has none (the caller then does the work itself)."""
    def answer():
        outcome = pending.outcome(k)
        return outcome[0] if outcome is not None and outcome[1] is None else None
    return answer


# Below this (both files of the compile input together), diffing the compile
# input here costs less than starting a worker and unpickling its diff.
ELSEWHERE_BYTES = 4_000_000


def _diffed_elsewhere(a: DumpModule, b: DumpModule, stages: list[str | None],
                      parsed: dict) -> str | None:
    """The stage to diff in a worker: the compile input of a pair whose
    optimized program is at least as big (this process diffs that
    meanwhile), when there is a core to spare and the files are big enough
    to pay. The diff comes back pickled: a big module unpickles in a tenth of
    the time its diff takes (bench/README.md)."""
    if stages != [BEFORE, AFTER] or any(parsed.values()) or (os.cpu_count() or 1) < 2:
        return None
    sizes = {stage: a.file(stage).size + b.file(stage).size for stage in stages}
    if sizes[BEFORE] < ELSEWHERE_BYTES or sizes[AFTER] < sizes[BEFORE]:
        return None
    return BEFORE


@paused()  # in a worker too: see compare_dumps
def diff_stage_files(path_a: Path, path_b: Path, name: str, step: Step = _quiet,
                     failing_a: Checked = None) -> StageDiff:
    """The diff of two HLO files of one stage: on big files, what they share
    left unparsed and paired already (see hlodiff/syntax/unchanged/;
    ``failing_a``: its checks of run a's file, made elsewhere). A
    module-level function, so that a worker process can run it."""
    from ..syntax import unchanged
    from ..syntax.parser import read_text
    from ..syntax.unchanged import parse_pair
    ma, mb, seed = parse_pair(read_text(path_a), read_text(path_b), str(path_a), str(path_b),
                              min_bytes=unchanged.MIN_BYTES, failing_a=failing_a)
    step(f"aligning and diffing {name}")
    return _diff_stage(ma, mb, seed, name, path_a, path_b)


def _diff_stage(ma: Module, mb: Module, seed: Seed, name: str, path_a: Path,
                path_b: Path) -> StageDiff:
    from .align import align
    alignment = align(ma, mb, seed)
    return StageDiff(name, ma, mb, diff_modules(ma, mb, alignment), str(path_a), str(path_b),
                     alignment)


_STAGE_WORDS = {BEFORE: "the compile input (before optimizations)",
                AFTER: "the optimized program (after optimizations)"}


def _same_stage(a: DumpModule, b: DumpModule) -> None:
    """One file before optimizations against one after is not a question about
    two runs: XLA rewrote the program between the two, they always differ.
    A file whose name gives no stage (``a.hlo``) is told by its header: only
    XLA's scheduler, among its last passes, marks a module ``is_scheduled``,
    so of two files one scheduled and one not, one was optimized and the
    other was not (a hand-written or lowered compile input against the
    optimized program read "Recompiles ... rewritten: expected after a code
    change")."""
    stages = [m.primary.stage.name if m.primary and m.primary.stage else None for m in (a, b)]
    paths = [m.root / m.primary.relative for m in (a, b)]
    if stages[0] != stages[1] and all(s in _STAGE_WORDS for s in stages):
        raise HlodiffError(f"{paths[0]} is {_STAGE_WORDS[stages[0]]} and {paths[1]} is "
                           f"{_STAGE_WORDS[stages[1]]}: XLA rewrote the program between the "
                           "two, so they always differ; compare two files of the same stage")
    if None not in stages:
        return
    scheduled = [_SCHEDULED in m.head().split("\n", 1)[0] for m in (a, b)]
    if scheduled[0] != scheduled[1]:
        optimized, other = (paths[0], paths[1]) if scheduled[0] else (paths[1], paths[0])
        raise HlodiffError(f"{optimized} is scheduled, as XLA's optimized program (after "
                           f"optimizations) is, and {other} is not, as a compile input is: XLA "
                           "rewrote the program between the two, so they always differ; "
                           "compare two files of the same stage")


_SCHEDULED = "is_scheduled=true"


_PRINTED_ONCE = ("printed in one run only (--xla_dump_large_constants): the compile input's "
                 "values are the same, but the optimized texts differ, and XLA's fingerprint "
                 "with them")


def _decide_elided(stages: list[StageDiff], a: DumpModule, b: DumpModule) -> list[StageDiff]:
    """Settle constants both runs printed as ``{...}`` where the dumps allow it.

    Before optimization, JAX's module.mlir (when both runs have it) holds the
    values: a change is dropped only when the values were found on both sides
    and are equal; found and different, it is a change; not found, it stays
    undecided, with the reason. After optimization such constants are folded
    from the compile input's: they differ if those differ, are undecided if
    those are, and are dropped when the compile input showed no difference.
    A constant printed in one run only is never dropped from the optimized
    stage: whatever its values, the optimized text XLA's fingerprint hashes
    differs (hashes.moves).
    """
    has_before = any(s.stage == BEFORE for s in stages)
    mlir_a, mlir_b = _mlir_constants(a), _mlir_constants(b)
    input_decided: list[bool | None] = []  # what the compile input showed, for the optimized stage
    by_type: dict[tuple[str, str], Settled] = {}  # (stage, tensor type): the values compared once
    for stage in sorted(stages, key=lambda s: s.stage != BEFORE):
        kept = []
        for change in stage.changes:
            if change.kind != "elided_constant":
                kept.append(change)
            elif _same_file(stage):
                continue  # one file against itself: its {...} are equal
            elif stage.stage == AFTER and has_before:
                # folded from the compile input's constants: as those go, so do these
                differ = True if True in input_decided else None if None in input_decided \
                    else False
                if differ is not False or change.old != change.new:
                    kept.append(replace(change, values_differ=differ, detail=(
                        "folded from constants of the compile input whose values differ"
                        if differ else _PRINTED_ONCE if differ is False else change.detail)))
            elif mlir_a is not None and mlir_b is not None:
                shape = stage.b.computation(change.computation).by_name[change.b].shape
                tensor = mlir_type(shape)
                if (stage.stage, tensor) not in by_type:
                    settled = settle(tensor, mlir_a.get(tensor), mlir_b.get(tensor))
                    if settled.differ is None and tensor not in mlir_a and tensor not in mlir_b:
                        settled = _settle_folded(tensor, stage, a, b) or settled
                    by_type[(stage.stage, tensor)] = settled
                settled = by_type[(stage.stage, tensor)]
                if stage.stage == BEFORE:
                    input_decided.append(settled.differ)
                if settled.differ is not False:
                    kept.append(replace(change, values_differ=settled.differ,
                                        detail=settled.detail))
            else:
                if stage.stage == BEFORE:
                    input_decided.append(None)
                missing = "run a" if mlir_a is None and mlir_b is not None else \
                    "run b" if mlir_b is None and mlir_a is not None else "either run"
                kept.append(replace(change, detail=f"{change.detail}; no module.mlir in {missing} "
                                                   "shows the values"))
        stage.changes = kept
    return stages


def _settle_folded(tensor: str, stage: StageDiff, a: DumpModule,
                   b: DumpModule) -> Settled | None:
    """A constant module.mlir holds under no type of its own: XLA folded a
    slice, reshape, transpose or size-1 broadcast of a StableHLO constant into
    it when it read the program (labels ``ids[:, 1:]`` of token ids closed
    over are a ``s32[4,15,1]`` constant of the HLO, a slice and a broadcast of
    the ``tensor<4x16xi32>`` in module.mlir). Such folds are paired only when
    each run's module.mlir makes as many constants of the type as its HLO
    holds, so no fold this does not follow can hide among them; None otherwise."""
    folded = []
    for side, module in (("a", a), ("b", b)):
        path = _mlir_path(module)
        program = stage.a if side == "a" else stage.b
        if program is None:
            return None
        try:
            values = folded_constants(path).get(tensor, []) if path else []
        except OSError:
            return None
        held = sum(1 for c in program.computations for i in c.instructions
                   if i.opcode == "constant" and i.shape is not None
                   and mlir_type(i.shape) == tensor)
        if not values or len(values) != held:
            return None
        folded.append(values)
    settled = settle(tensor, *folded)
    return replace(settled, detail=settled.detail.replace(
        "module.mlir", "module.mlir (folded from a slice or reshape of a constant there)", 1))


def _same_file(stage: StageDiff) -> bool:
    """Both sides read from one file: whatever its {...} hold, they are equal."""
    try:
        return stage.path_a is not None and stage.path_b is not None and \
            Path(stage.path_a).samefile(stage.path_b)
    except OSError:
        return False


def _mlir_path(module: DumpModule) -> Path | None:
    """JAX's module.mlir sidecar of ``module``, if it has one."""
    sidecar = next((f for f in module.files if f.kind == "module.mlir"), None)
    return None if sidecar is None else module.root / sidecar.relative


def _mlir_constants(module: DumpModule) -> dict[str, list[str]] | None:
    path = _mlir_path(module)
    if path is None:
        return None
    try:
        return read_constants(path)
    except OSError:  # unreadable: decide as if it were not there
        return None


def _without_stablehlo(stages: list[StageDiff], a: DumpModule, b: DumpModule) -> str:
    """The runs whose dump has no module.mlir for a program whose compile
    input was compared ("run b", "run a and run b"), or "": JAX's key hashes
    the StableHLO in it, which holds what the HLO text does not print. A
    pruned dump, files copied without their module folder, two HLO files
    given alone and JAX 0.4's dumps (which write none) said "JAX persistent
    cache key: unchanged" for the optimizer's init of a flax model whose
    parameters nn.remat renamed: its HLO was the same byte for byte, its
    results' names (jax.result_info) were not, and JAX keyed it anew. The
    same file on both sides (a run given twice) is the same program."""
    before = next((s for s in stages if s.stage == BEFORE), None)
    if before is None or before.path_a is None or before.path_b is None:
        return ""
    try:
        if os.path.samefile(before.path_a, before.path_b):
            return ""
    except OSError:
        pass
    missing = [run for run, module in (("run a", a), ("run b", b)) if _mlir_path(module) is None]
    return " and ".join(missing)


class _StableHLO:
    """The two runs' module.mlir of a program, read (without debug
    information) once, when first asked: the key's StableHLO finding and the
    verdict of a dump with only its optimized programs both compare them."""

    def __init__(self, a: DumpModule, b: DumpModule):
        self.paths = _mlir_path(a), _mlir_path(b)

    @cached_property
    def lines(self) -> tuple[list[str], list[str]] | None:
        """Both files' lines; None where a run has none, or it cannot be read."""
        if None in self.paths:
            return None
        a, b = map(stablehlo_lines, self.paths)
        return None if a is None or b is None else (a, b)


def _stablehlo_change(stages: list[StageDiff], mlir: _StableHLO) -> Change | None:
    """What JAX's key sees and the HLO does not: the StableHLO JAX hashes (its
    module.mlir, debug information aside) differs while no change of the
    compile input moves that key, nor might. A weak-typed Python scalar
    against an f32 array adds a convert that the HLO folds away; other names
    for the outputs change only ``jax.result_info``. Both make another
    persistent-cache entry. Where only the optimized program was dumped, its
    changes stand in for the compile input's."""
    before = next((s for s in stages if s.stage == BEFORE), None) or _optimized_only(stages)
    if before is None or None in mlir.paths or any(moves("jax_cache_key", c) is not False
                                                   for c in before.changes):
        return None  # the compile input says, or may say (a {...} constant), why it moved
    differs = first_difference(*mlir.lines) if mlir.lines is not None else None
    if differs is None:
        return None
    old, new = differs
    return Change("stablehlo", old, new, "", None, None, Origin(),
                  "the StableHLO JAX hashes (module.mlir, locations aside) differs where the "
                  f"HLO does not: {old or '(nothing)'} -> {new or '(nothing)'}")


def _optimized_only(stages: list[StageDiff]) -> StageDiff | None:
    """The optimized program's stage, where the compile input's was not dumped."""
    if any(s.stage == BEFORE for s in stages):
        return None
    return next((s for s in stages if s.stage == AFTER), None)


def _stablehlo_same_without_input(stages: list[StageDiff], mlir: _StableHLO) -> bool:
    """Only the optimized program was dumped, and both runs' module.mlir (the
    StableHLO JAX hashes) are the same, debug information aside: JAX's key is
    then decided from that file and what lies outside the HLO, as from a compile
    input without a change. Over the corpus the two files agree with the keys
    JAX wrote wherever the compile options and XLA flags are the same; the
    side programs of a dump without its before_optimizations files (flax's
    init, optax's) read "may differ" though JAX keyed them alike."""
    if _optimized_only(stages) is None or mlir.lines is None:
        return False
    a, b = mlir.lines
    return a == b
