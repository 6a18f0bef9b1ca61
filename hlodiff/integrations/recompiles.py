"""Why one run compiled a program more than once: each recompilation against the one before.

The usual way to meet a recompile is one training run whose step compiles
again at the last, smaller batch, or every few steps because a Python float
changed. Its dump holds the program under several module ids; comparing
each with the one before it, with the same machinery as two runs
(``analysis.compare.compare_dumps``), says what changed and where. The log
of the same run says why the framework traced again; ``explain_log`` puts
the two side by side.
"""

from __future__ import annotations

from collections import Counter
from typing import Sequence
from dataclasses import dataclass

from ..analysis.compare import compare_dumps
from ..analysis.explain import Report
from ..dumps import BEFORE, Dump, DumpModule
from ..dumps.catalogue import compiled_by_framework, traced_function
from ..dumps.pairing import STRUCTURE_THRESHOLD, Signature, structure
from ..errors import HlodiffError
from ..model import Instruction, Module, is_library_file
from .compile_log import Compilation, Program, entry_types


@dataclass(frozen=True)
class Recompilation:
    """Compilation ``number`` of a program (2 is its first recompilation), explained.

    It is compared with the latest earlier compilation that took the same
    input shapes, else with the one just before: a learning rate that
    changed at the last batch shows as the learning rate, not the batch.
    ``against`` is that compilation's number. ``cause`` says in one phrase
    what changed (``batch 32 -> 4 (x, y)``, ``constant -0.01 -> -0.005
    (jit(train_step)/mul)``); ``where`` is the user's line it came from, or
    the line that called the program when its inputs changed; ``hint`` a
    likely reason; ``report`` is the whole diff.
    """

    number: int
    against: int
    before: DumpModule
    after: DumpModule
    report: Report
    cause: str
    where: str | None
    hint: str = ""

    @property
    def line(self) -> str:
        """``#2 batch 32 -> 4 (x, y) at train.py:93 (smaller: the last batch?)``"""
        against = f" (against #{self.against})" if self.against != self.number - 1 else ""
        return (f"#{self.number}{against} {self.cause}" + (f" at {self.where}" if self.where else "")
                + (f" ({self.hint})" if self.hint else ""))


@dataclass(frozen=True)
class RecompiledProgram:
    """A program the dump holds under several module ids, each recompilation explained.

    ``user`` is False for a framework's own set-up programs (JAX compiles
    an eager op once per shape), which recompile by design.
    """

    program: str
    user: bool
    modules: tuple[DumpModule, ...]
    recompilations: tuple[Recompilation, ...]

    @property
    def summary(self) -> str:
        """``jit_train_step compiled 3 times: #2 ...; #3 ...``"""
        return (f"{self.program} compiled {len(self.modules)} times: "
                + "; ".join(r.line for r in self.recompilations))


def compiled_more_than_once(dump: Dump) -> list[tuple[str, tuple[DumpModule, ...]]]:
    """Each program name the dump holds under several module ids, with those modules.

    Read from file names (and header lines) only. PyTorch/XLA names every
    graph ``SyncTensorsGraph`` and TensorFlow gives Keras' train, test and
    predict steps one name, so for them modules that take different numbers
    of inputs are different programs (a new batch changes shapes, not their
    number), unless a PyTorch/XLA graph is the same step traced again with
    more inputs (``_join_retraced_graphs``); those share a name, so each is
    told by its first module. A
    JAX program's name is its function's, and two functions can share it
    (two lambdas, a closure and a module-level function): JAX modules are
    told apart by the function their frame tables name
    (``catalogue.traced_function``). A module JAX loaded from its
    persistent cache was not compiled: it does not count.
    """
    groups: dict[tuple, list[DumpModule]] = {}
    for module in dump.modules:
        if module.primary is None or module.module_id is None or not module.normalised \
                or module.loaded_from_cache:  # JAX loaded it from its persistent cache
            continue
        module.check_whole()  # its head alone is read here: it must be the module's
        key: tuple = (module.normalised,)
        if module.name.frontend in ("tensorflow", "pytorch"):
            key += (len(entry_types(module)),)
        elif module.name.frontend == "jax":
            key += (traced_function(module),)
        groups.setdefault(key, []).append(module)
    groups = _join_retraced_graphs(groups)
    names = Counter(key[0] for key, modules in groups.items() if len(modules) > 1)
    return [(modules[0].normalised if names[key[0]] == 1
             else f"{modules[0].normalised} [module_{modules[0].module_id:04d}]", tuple(modules))
            for key, modules in groups.items() if len(modules) > 1]


def _join_retraced_graphs(groups: dict[tuple, list[DumpModule]]) -> dict[tuple, list[DumpModule]]:
    """PyTorch/XLA groups of different input counts that are one step traced again.

    Adam creates its state inside the first step's graph; from the second
    step on that state is device data, 8 more inputs for 4 weights, and the
    new graph takes the first one's place at the same sync point (torch-xla
    compiled both there and ran the first once). Such a graph is as alike
    to the one before as two programs of different names must be to pair
    across runs (``pairing.STRUCTURE_THRESHOLD``); the graphs one step is
    split into (a forward, a backward, an optimizer update) are not. A group
    joins the earliest earlier one of its name whose last module is so alike.
    """
    torch = [key for key, modules in groups.items() if modules[0].name.frontend == "pytorch"]
    if len(torch) < 2:
        return groups
    signatures: dict[int, Signature | None] = {}

    def signature(module: DumpModule) -> Signature | None:
        if id(module) not in signatures:
            try:
                signatures[id(module)] = Signature(*structure(module.path), module.size)
            except (HlodiffError, OSError):
                signatures[id(module)] = None
        return signatures[id(module)]

    out = {key: list(modules) for key, modules in groups.items()}
    ordered = sorted(torch, key=lambda key: groups[key][0].module_id)
    for n, key in enumerate(ordered):
        first = signature(groups[key][0])
        for earlier in ordered[:n]:
            if earlier not in out or earlier[0] != key[0]:
                continue
            last = signature(out[earlier][-1])
            if first is not None and last is not None \
                    and first.similarity(last) >= STRUCTURE_THRESHOLD:
                out[earlier] = sorted(out[earlier] + out.pop(key), key=lambda m: m.module_id)
                break
    return out


def find_recompilations(dump: Dump, context: bool = False) -> list[RecompiledProgram]:
    """Every program compiled more than once in ``dump``; user programs first.
    ``context``: each report keeps its findings' lines and neighbourhoods (for a page)."""
    out = [RecompiledProgram(name, not compiled_by_framework(modules[0]), modules,
                             tuple(explain_recompilation(modules, n, context)
                                   for n in range(1, len(modules))))
           for name, modules in compiled_more_than_once(dump)]
    return sorted(out, key=lambda p: not p.user)


def explain_recompilation(modules: Sequence[DumpModule], index: int,
                          context: bool = False) -> Recompilation:
    """``modules[index]``, a program's compilation number ``index + 1``, explained against
    the latest earlier one with the same input shapes, else the one before it."""
    new = _read(modules[index])
    shapes = _input_shapes(new)
    against = next((i for i in range(index - 1, -1, -1)
                    if _input_shapes(_read(modules[i])) == shapes), index - 1)
    before, after = modules[against], modules[index]
    old = _read(before)
    report = compare_dumps(_alone(before), _alone(after), unpaired=False, context=context)
    cause, inputs_changed, hint = _cause(report, old, new)
    top = report.top
    where = None if inputs_changed or top is None else top.origin.location
    if where is None:
        where = _call_site(new, after.normalised)
    return Recompilation(index + 1, against + 1, before, after, report, cause, where, hint)


def _alone(module: DumpModule) -> Dump:
    """A dump holding only ``module``, so two compilations of one run compare as two runs."""
    return Dump(module.root, module.files, (module,))


def _read(module: DumpModule) -> Module:
    """The module as its framework handed it to XLA (parsed once, reused by the diff)."""
    return module.module(BEFORE if module.stage_file(BEFORE) else None)


# --- one phrase per recompilation -------------------------------------------------------


def _cause(report: Report, old: Module, new: Module) -> tuple[str, bool, str]:
    """What changed, in a phrase; whether it is the program's inputs; a likely reason."""
    inputs, hint = _input_change(old, new)
    if inputs:
        return inputs, True, hint
    top = report.top
    if top is None:
        return ("the same program text", False,
                "compiled again with nothing changed: a re-created function, a cleared cache, "
                "another device, or a change the HLO does not show")
    if report.same_executable is True and all(f.kind == "metadata" for f in report.findings):
        return f"only metadata differs ({_short(top.old)} -> {_short(top.new)})", False, ""
    scope = f" ({top.origin.op_name})" if top.origin.op_name else ""
    return f"{top.kind} {_short(top.old)} -> {_short(top.new)}{scope}", False, ""


def _input_shapes(module: Module) -> tuple[str, ...]:
    return tuple(str(p.shape.without_layout()) if p.shape is not None else ""
                 for p in module.entry.parameters)


def _input_change(old: Module, new: Module) -> tuple[str, str]:
    """A new batch size or other input shapes (``batch 32 -> 4 (x, y)``), and a hint."""
    before, after = old.entry.parameters, new.entry.parameters
    if len(before) != len(after):
        return f"{len(before)} -> {len(after)} inputs", ""
    changed = [(a, b) for a, b in zip(before, after)
               if a.shape is not None and b.shape is not None
               and a.shape.without_layout() != b.shape.without_layout()]
    if not changed:
        return "", ""
    names = _input_names(new, [b for _, b in changed])
    only_leading = all(a.shape.rank and a.shape.rank == b.shape.rank
                       and a.shape.element_type == b.shape.element_type
                       and a.shape.dimensions[1:] == b.shape.dimensions[1:] for a, b in changed)
    leading = {(a.shape.dimensions[0], b.shape.dimensions[0]) for a, b in changed} \
        if only_leading else set()
    if len(leading) == 1:
        (was, now), = leading
        return (f"batch {was} -> {now} ({', '.join(names)})",
                "smaller: the last batch?" if now < was else "")
    shown = [f"{name} {a.shape.without_layout()} -> {b.shape.without_layout()}"
             for name, (a, b) in zip(names, changed)]
    more = f" and {len(shown) - 3} more" if len(shown) > 3 else ""
    return ", ".join(shown[:3]) + more, ""


def _input_names(module: Module, parameters: list[Instruction]) -> list[str]:
    """What the user called each input: JAX's argument name (its op_name) where every
    input has its own, else the HLO name (TensorFlow names them all ``XLA_Args``)."""
    scopes = {p.name: module.origin(p).op_name for p in module.entry.parameters}
    if all(scopes.values()) and len(set(scopes.values())) == len(scopes):
        return [scopes[p.name] for p in parameters]
    return [p.name.split(".", 1)[0] for p in parameters]


def _call_site(module: Module, program: str) -> str | None:
    """The user's line that called the traced function, from the stack frames XLA keeps.

    A frame of the function itself (``train_step`` for ``jit_train_step``)
    is followed, outwards, by the caller's, and a library's caller (Keras'
    trainer calls the step the user's ``model.fit`` line asked for) by the
    first caller in the user's code; where the library's wrapper hides every
    caller (equinox's filter_jit), the function's own line stands in. The
    most common caller wins.
    """
    function = program.split("_", 1)[1] if program.startswith(("jit_", "pjit_")) else program
    callers: Counter[str] = Counter()
    for computation in module.computations:
        for instruction in computation.instructions:
            stack = module.origin(instruction).stack
            inner = [n for n, f in enumerate(stack) if f.function.rsplit(".", 1)[-1] == function]
            if inner and inner[-1] + 1 < len(stack):
                outwards = stack[inner[-1] + 1:]
                caller = next((f for f in outwards if not is_library_file(f.file)), None) or (
                    stack[inner[-1]] if not is_library_file(stack[inner[-1]].file) else outwards[0])
                callers[f"{caller.file}:{caller.line}"] += 1
        if callers:
            break
    return callers.most_common(1)[0][0] if callers else None


def _short(text: str | None, limit: int = 48) -> str:
    if text is None:
        return "(none)"
    return text if len(text) <= limit else text[:limit] + "…"


# --- the log of the same run ----------------------------------------------------------------


@dataclass(frozen=True)
class LoggedRecompilation:
    """A recompilation the log shows, with the dump's explanation when the dump has both modules."""

    program: str
    number: int
    logged: Compilation
    explained: Recompilation | None


def explain_log(programs: list[Program]) -> list[LoggedRecompilation]:
    """Each recompilation of a user program in the log, explained from its dump modules.

    ``programs`` come from ``compile_log.summarise`` with the run's dump, so
    each compilation knows its module (by program name and order).
    """
    out = []
    for program in programs:
        if not program.user:
            continue
        compilations, modules = program.compilations, program.modules
        for n in range(1, len(compilations)):
            known = len(modules) > n and None not in modules[:n + 1]
            explained = explain_recompilation(modules[:n + 1], n) if known else None
            out.append(LoggedRecompilation(program.name, n + 1, compilations[n], explained))
    return out

