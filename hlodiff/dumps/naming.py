"""What the names of the files in a dump directory say: module, program, stage, kind.

XLA names every file it writes ``[TIMESTAMP.]module_NNNN[.PROGRAM].SUFFIX``
(``FilenameFor`` in XLA's dump.cc): a per-process module counter, the
HloModule name, and a suffix saying when in compilation the module was
printed (the stage) and in what form (HLO text, buffer assignment, a
drawing, LLVM IR...). Users meet hundreds of these and ask which one is
their program; this module answers from the names alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Iterable, Iterator

BEFORE = "before_optimizations"
AFTER = "after_optimizations"
PASS = "pass"  # between two passes of a pipeline
IN_PASS = "in_pass"  # at a step inside one pass (copy-insertion does this)

HLO_TEXT = "hlo"
UNKNOWN = "unknown"

# What each kind of file is, in a user's words (shown by ``hlodiff ls --explain``).
KIND_MEANINGS = {
    HLO_TEXT: "HLO text: the program itself, the file hlodiff reads",
    "buffer-assignment": "buffer assignment: which memory buffer holds each value (not HLO)",
    "buffer-assignment-values": "buffer assignment listed value by value (not HLO)",
    "live-range": "live ranges of the buffers over the schedule (not HLO)",
    "memory-usage-report": "memory usage report: the largest buffers (not HLO)",
    "debug_options": "the XLA debug options this module was compiled with",
    "module.mlir": "the StableHLO program the frontend handed to XLA (MLIR text)",
    "compile_options.textproto": "compile options (devices, flags) as a text protobuf",
    "topology.textproto": "the device topology the module was compiled for",
    "metadata.textproto": "module metadata: the passes run and their timings "
                          "(--xla_dump_module_metadata)",
    "hlo_snapshot.pb": "arguments and result of one execution (--xla_dump_hlo_snapshots)",
    ".pb": "HLO or options as a binary protobuf (--xla_dump_hlo_as_proto)",
    ".dot": "a Graphviz drawing of the HLO graph (--xla_dump_hlo_as_dot)",
    ".html": "an HTML drawing of the HLO graph (--xla_dump_hlo_as_html)",
    ".url": "a link to a rendered drawing of the HLO graph (--xla_dump_hlo_as_url)",
    ".ll": "LLVM IR the backend generated for a kernel",
    ".o": "machine code the backend compiled for a kernel",
    ".ptx": "PTX assembly the GPU backend generated",
    UNKNOWN: "not a name XLA writes: listed, never read",
}


# --- names ------------------------------------------------------------------------

@dataclass(frozen=True)
class Stage:
    """When in compilation XLA printed a module.

    ``name`` is BEFORE (as the frontend handed it over), AFTER (after every
    optimisation pass: what actually ran) or PASS (a snapshot between two
    passes, from ``--xla_dump_hlo_pass_re``). ``platform`` is the backend
    prefix of AFTER (``cpu``, ``sm_8.0_gpu``, ``gfx90a_gpu``; None in
    older dumps). A PASS has its ``step`` (the module's dump counter), the
    ``pipeline`` and the passes it sits between; an IN_PASS snapshot has
    its ``step``, the pass (``pipeline`` holds its name) and the pass's own
    ``pass_step`` (``after_adding_copies_to_resolve_interference``).
    """

    name: str
    platform: str | None = None
    step: int | None = None
    pipeline: str | None = None
    after_pass: str | None = None
    before_pass: str | None = None
    pass_step: str | None = None

    @property
    def label(self) -> str:
        """The stage as spelled in the file name."""
        if self.name == PASS:
            return (f"{self.step:04d}.{self.pipeline}.after_{self.after_pass}"
                    f".before_{self.before_pass}")
        if self.name == IN_PASS:
            return f"{self.step:04d}.{self.pipeline}.{self.pass_step}"
        if self.name == AFTER and self.platform:
            return f"{self.platform}_{AFTER}"
        return self.name

    @property
    def meaning(self) -> str:
        if self.name == BEFORE:
            return "stage: the module as the frontend handed it to XLA, before any optimization"
        if self.name == AFTER:
            backend = f" for the {self.platform} backend" if self.platform else ""
            return f"stage: after all of XLA's optimization passes{backend}: what actually ran"
        if self.name == IN_PASS:
            return (f"stage: snapshot {self.step} of this module, taken inside pass "
                    f"'{self.pipeline}' at its step '{self.pass_step}' (--xla_dump_hlo_pass_re)")
        return (f"stage: snapshot {self.step} of this module, in pass pipeline "
                f"'{self.pipeline}', after pass '{self.after_pass}' and before pass "
                f"'{self.before_pass}' (--xla_dump_hlo_pass_re)")


@dataclass(frozen=True)
class ProgramName:
    """A program (HloModule) name as written and as compared across runs.

    Frontends put counters into names that change between runs of the same
    code; ``normalised`` strips them so the same program pairs up.
    ``frontend`` says whose naming scheme was recognised (None: none).
    """

    written: str
    normalised: str
    frontend: str | None
    meaning: str
    scheme: str = ""  # the naming scheme, said for every name of this form

    @property
    def counter_follows_program(self) -> bool:
        """Does the counter in the name follow from the program itself?
        PyTorch/XLA's SyncTensorsGraph.N changes when the graph does, so a
        new N says nothing the graph's own changes do not."""
        return self.frontend == "pytorch"


# (frontend, whole-name pattern with a <name> group, meaning of one name, the
# naming scheme said once for all names of that form). The first match wins.
_PROGRAM_FORMS = (
    ("tensorflow",
     re.compile(r"(?P<name>(?:a_|__)(?:inference|forward|backward)_\w+?)_\d+(?:__\w*)?(?:\.\d+)?"),
     "the TensorFlow function {name}; its counter, attributes and trailing .N change "
     "between runs",
     "a TensorFlow function, a_inference_FUNCTION_COUNTER__ATTRIBUTES.N; the counter, "
     "attributes and .N change between runs, so programs are compared by a_inference_FUNCTION"),
    ("tensorflow", re.compile(r"(?P<name>cluster)_\d+(?:__\w*)?(?:\.\d+)?"),
     "a graph TensorFlow auto-clustered for XLA; its number and attributes change between runs",
     "a graph TensorFlow auto-clustered for XLA, cluster_NUMBER__ATTRIBUTES; the number and "
     "attributes change between runs"),
    ("pytorch", re.compile(r"(?P<name>SyncTensorsGraph|IrToHlo)\.\d+"),
     "a PyTorch/XLA graph; the number after the dot changes when the graph changes",
     "a PyTorch/XLA graph, SyncTensorsGraph.N; the number after the dot changes when the "
     "graph changes"),
    ("jax", re.compile(r"(?P<name>p?jit_\w+?)(?:\.\d+)?"),
     "the JAX function compiled with jax.jit",
     "the JAX function compiled with jax.jit, jit_FUNCTION"),
    (None, re.compile(r"(?P<name>.*?)(?:\.\d+)?", re.S), "the HloModule name",
     "the HloModule name"),
)


# Programs JAX compiles on its own behalf, not a function the user jitted:
# primitives run eagerly (jnp.zeros, astype, x * 2 outside jit compile
# jit_broadcast_in_dim, jit_convert_element_type, jit_multiply), the jitted
# functions of jax.nn and jax.numpy (jax.nn.relu outside jit compiles
# jit_relu) and its private helpers (jit__threefry_split, jit__normal; a name
# starting with "_", except a jitted lambda, jit__lambda). Where a dump has
# stack frame tables, catalogue.compiled_by_framework tells them by those first.
_JAX_EAGER = frozenset("""
abs acos acosh add and argmax argmin asin asinh atan atan2 atanh bitcast_convert_type
broadcast_in_dim cbrt ceil clamp concatenate convert_element_type copy copy_p cos cosh
cumlogsumexp cummax cummin cumprod cumsum device_put div dot_general dynamic_slice
dynamic_update_slice eq erf erf_inv erfc exp exp2 expand_dims expm1 floor gather ge gt imag
integer_pow iota is_finite le log log1p logistic lt max min mul multiply ne neg nextafter not
or pad pow random_bits random_seed random_split random_unwrap random_wrap real reduce_and
reduce_max reduce_min reduce_or reduce_precision reduce_prod reduce_sum rem reshape rev round
rsqrt scatter scatter-add scatter_add select_n shift_left shift_right_arithmetic
shift_right_logical sign sin sinh slice sort sqrt square squeeze stage stop_gradient sub
subtract tan tanh top_k transpose true_divide unstack where xor zeros_like ones_like
relu relu6 squareplus softplus sparse_plus soft_sign sigmoid sparse_sigmoid silu mish
log_sigmoid elu leaky_relu hard_tanh celu selu glu logmeanexp log_softmax standardize
hard_sigmoid hard_silu log1mexp floor_divide remainder fmod reciprocal absolute negative
""".split())


def jax_module_name(api: str, function: str) -> str:
    """The HloModule name JAX gives ``jit(f)``: ``jit_f``; ``jit(<lambda>)`` -> ``jit__lambda``."""
    return re.sub(r"[^\w.-]", "_", f"{api}({function})").rstrip("_")


def is_framework_helper(written: str) -> bool:
    """Did the framework compile this program for itself, by its name alone
(see _JAX_EAGER)? A dump's frame tables tell better: catalogue.compiled_by_framework.

    >>> is_framework_helper("jit__threefry_split"), is_framework_helper("jit_train_step")
    (True, False)
    >>> is_framework_helper("jit_convert_element_type"), is_framework_helper("jit__lambda")
    (True, False)
    """
    match = re.fullmatch(r"p?jit_([\w\-]+?)(?:\.\d+)?", written)
    if match is None:
        return False
    name = match.group(1)
    if name.startswith("_"):
        return name not in ("_lambda", "_unnamed_wrapped_function_")
    return name in _JAX_EAGER


def program_name(written: str) -> ProgramName:
    """Recognise a frontend's naming scheme and strip its run-dependent counters.

    >>> program_name("SyncTensorsGraph.168").normalised
    'SyncTensorsGraph'
    >>> program_name("a_inference_train_step_128__XlaMustCompile_true_.5").normalised
    'a_inference_train_step'
    """
    for frontend, pattern, meaning, scheme in _PROGRAM_FORMS:
        match = pattern.fullmatch(written)
        if match:
            name = match["name"]
            return ProgramName(written, name, frontend, meaning.format(name=name), scheme)
    raise AssertionError("the last program form matches every name")


def normalise_program(written: str) -> str:
    """The name two runs of the same program share (see ``program_name``)."""
    return program_name(written).normalised


@dataclass(frozen=True)
class DumpFile:
    """One file of a dump and what its name says.

    ``kind`` is HLO_TEXT, a sidecar kind (a key of KIND_MEANINGS) or
    UNKNOWN. ``program`` is the HloModule name as written ("" when XLA
    left it out of a long name). ``detail`` names the kernel of ``.ll`` /
    ``.o`` files or the execution of a snapshot.
    """

    relative: str
    kind: str
    module_id: int | None = None
    program: str | None = None
    stage: Stage | None = None
    timestamp: int | None = None
    detail: str | None = None
    size: int = field(default=0, compare=False)

    @property
    def name(self) -> str:
        return self.relative.rsplit("/", 1)[-1]

    @property
    def suffix(self) -> str:
        """The end of the name after program and stage: ``.txt``, ``-live-range.txt``..."""
        head = _HEAD.fullmatch(self.name)
        if head is None or self.kind in (UNKNOWN, *FOLDER_FILES):
            return self.name
        tail = head["tail"][1:]
        if self.program:
            tail = tail[len(self.program) + 1:]
        if self.stage is not None:
            tail = tail[len(self.stage.label):]
        return tail

    @property
    def is_hlo_text(self) -> bool:
        return self.kind == HLO_TEXT


_HEAD = re.compile(r"(?:(?P<timestamp>\d+)\.)?module_(?P<id>\d+)(?P<tail>\..+)")
_PLATFORM = r"[a-z][a-z0-9]*(?:_\d+\.\d+[a-z]*)?(?:_gpu)?"

# Stages as spelled in names, each followed by one of the forms below.
_STAGE_FORMS = (
    (BEFORE, r"before_optimizations"),
    (AFTER, rf"(?:(?P<platform>{_PLATFORM})_)?after_optimizations"),
    (PASS, r"(?P<step>\d{4,})\.(?P<pipeline>[^.]+)\.after_(?P<after>[^.]+?)"
           r"\.before_(?P<before>[^.]+?)"),
    (IN_PASS, r"(?P<step>\d{4,})\.(?P<pipeline>[^.]+)\.(?P<pass_step>[^.]+?)"),
)
# Most specific first: "-buffer-assignment.txt" also ends in ".txt".
_ARTIFACT_FORMS = (
    ("buffer-assignment-values", r"-buffer-assignment-values\.txt"),
    ("buffer-assignment", r"-buffer-assignment\.txt"),
    ("live-range", r"-live-range\.txt"),
    ("memory-usage-report", r"-memory-usage-report\.txt"),
    (HLO_TEXT, r"\.txt"),
    (".pb", r"\.hlo\.pb(?:\.gz)?"),
    (".dot", r"\.dot"),
    (".html", r"(?:\.top_level)?\.html"),
    (".url", r"\.url"),
)
# Files XLA writes once per module, with no stage.
_MODULE_FORMS = (
    ("debug_options", r"debug_options"),
    (".ll", r"(?:(?P<detail>.+)\.)?ir-(?:no|with)-opt(?:-noconst)?\.ll"),
    (".o", r"obj-file\.(?P<detail>.+)\.o"),
    (".ptx", r"(?:(?P<detail>.+)\.)?ptx"),
    ("metadata.textproto", r"metadata\.textproto"),
    ("hlo_snapshot.pb", r"execution_(?P<detail>\d+)\.hlo_snapshot\.pb"),
)
# The folder JAX writes next to a module's files: module_NNNN.PROGRAM/<one of these>.
FOLDER_FILES = frozenset({"module.mlir", "compile_options.textproto", "topology.textproto"})
_FOLDER = re.compile(r"(?:(?P<timestamp>\d+)\.)?module_(?P<id>\d+)\.(?P<program>.+)")

_PROGRAM = r"(?:\.(?P<program>.+?))?\."


def _tail_forms() -> tuple[tuple[str, str | None, re.Pattern[str]], ...]:
    """Every (kind, stage name, pattern) a name's tail can take, in the order tried."""
    forms = []
    for stage, stage_pattern in _STAGE_FORMS:
        for kind, artifact in _ARTIFACT_FORMS:
            forms.append((kind, stage, re.compile(
                _PROGRAM + f"(?P<stage>{stage_pattern})(?P<suffix>{artifact})")))
    for kind, pattern in _MODULE_FORMS:
        forms.append((kind, None, re.compile(_PROGRAM + f"(?P<suffix>{pattern})")))
    return tuple(forms)


_TAIL_FORMS = _tail_forms()


def _stage_from(name: str, match: re.Match[str]) -> Stage:
    groups = match.groupdict()
    if name in (PASS, IN_PASS):
        return Stage(name, step=int(groups["step"]), pipeline=groups["pipeline"],
                     after_pass=groups.get("after"), before_pass=groups.get("before"),
                     pass_step=groups.get("pass_step"))
    return Stage(name, platform=groups.get("platform"))


def classify(relative: str, size: int = 0) -> DumpFile:
    """What a file's path inside a dump says about it; never fails.

    >>> f = classify("module_0028.jit_train_step.cpu_after_optimizations.txt")
    >>> f.kind, f.module_id, f.program, f.stage.platform
    ('hlo', 28, 'jit_train_step', 'cpu')
    """
    parent, _, name = relative.rpartition("/")
    folder = _FOLDER.fullmatch(parent.rpartition("/")[2]) if parent else None
    if folder and name in FOLDER_FILES:
        return DumpFile(relative, name, int(folder["id"]), folder["program"],
                        timestamp=_int_or_none(folder["timestamp"]), size=size)
    head = _HEAD.fullmatch(name)
    if head is None:
        return DumpFile(relative, UNKNOWN, size=size)
    for kind, stage, pattern in _TAIL_FORMS:
        match = pattern.fullmatch(head["tail"])
        if match is None:
            continue
        return DumpFile(relative, kind, int(head["id"]), match["program"] or "",
                        stage=_stage_from(stage, match) if stage else None,
                        timestamp=_int_or_none(head["timestamp"]),
                        detail=match.groupdict().get("detail"), size=size)
    return DumpFile(relative, UNKNOWN, size=size)


# The stage at the end of a file name outside a dump's naming (a dump's file
# checked into git, or copied and renamed, keeps it).
_NAMED_STAGE = re.compile(rf"(?:^|.*?[._-])(?:(?P<before>before_optimizations)|"
                          rf"(?:(?P<platform>{_PLATFORM})_)?after_optimizations)\.txt")


def stage_in_name(name: str) -> Stage | None:
    """The stage a file's name ends with where it is not named as XLA names
    dump files (``collect.before_optimizations.txt``), else None.

    >>> stage_in_name("collect.cpu_after_optimizations.txt").platform
    'cpu'
    >>> stage_in_name("model.hlo") is None
    True
    """
    match = _NAMED_STAGE.fullmatch(name)
    if match is None:
        return None
    return Stage(BEFORE) if match["before"] else Stage(AFTER, platform=match["platform"])


def _int_or_none(text: str | None) -> int | None:
    return None if text is None else int(text)


def settle_program(file: DumpFile, known: set[str]) -> DumpFile:
    """Split a sidecar's program from its kernel name the way its module's HLO text does.

    ``module_0003.a_inference_f_1__.5.ir-no-opt.ll`` could be program
    ``a_inference_f_1__`` with kernel ``5``, or program
    ``a_inference_f_1__.5``: the HLO text of module 3 settles it.
    """
    spelled = ".".join(part for part in (file.program, file.detail) if part)
    for program in sorted(known, key=len, reverse=True):
        if spelled == program:
            return replace(file, program=program, detail=None)
        if spelled.startswith(program + "."):
            return replace(file, program=program, detail=spelled[len(program) + 1:])
    if not spelled and len(known) == 1:
        return replace(file, program=next(iter(known)))
    return file


# --- explaining names ---------------------------------------------------------------

# True of every frontend: the counter is XLA's (HloModule::unique_id), bumped
# for every module created in the process, dumped or not. Measured: JAX 0.10
# dumps go 0, 2, 4 (and 0, 3, 6 with its persistent cache on), JAX 0.4.30,
# TensorFlow 2.21 and PyTorch/XLA 2.9 go 0, 1, 2.
_MODULE_ID = ("XLA's counter of the HLO modules this process created, dumped or not, so ids "
              "can skip numbers; not stable across runs")


@dataclass(frozen=True)
class NamePart:
    """A piece of a file name and what it means."""

    text: str
    meaning: str


def explain(file: DumpFile) -> tuple[NamePart, ...]:
    """Spell out each part of a file's name, for people new to XLA dumps."""
    if file.kind == UNKNOWN:
        return (NamePart(file.name, KIND_MEANINGS[UNKNOWN]),)
    parts = []
    if file.timestamp is not None:
        when = datetime.fromtimestamp(file.timestamp / 1e6, tz=timezone.utc)
        parts.append(NamePart(str(file.timestamp),
                              f"timestamp: first dump of this module, "
                              f"{when:%Y-%m-%d %H:%M:%S} UTC (--xla_dump_include_timestamp)"))
    if file.module_id is not None:
        parts.append(NamePart(f"module_{file.module_id:04d}",
                              f"module id {file.module_id}: {_MODULE_ID}"))
    if file.program:
        name = program_name(file.program)
        compared = "" if name.normalised == name.written else f", compared as {name.normalised}"
        parts.append(NamePart(file.program, f"program name: {name.meaning}{compared}"))
    if file.kind in FOLDER_FILES:
        parts.append(NamePart(file.name, KIND_MEANINGS[file.kind] + " (in the module's folder)"))
        return tuple(parts)
    if file.stage is not None:
        parts.append(NamePart(file.stage.label, file.stage.meaning))
    about = f" ({file.detail})" if file.detail else ""
    parts.append(NamePart(file.suffix, KIND_MEANINGS[file.kind] + about))
    return tuple(parts)


def legend(files: Iterable[DumpFile]) -> tuple[NamePart, ...]:
    """Each kind of part the names of ``files`` are made of, explained once.

    ``explain`` spells out one file's name; a dump has hundreds, made of the
    same few parts. Module ids and timestamps are one entry each, with the
    values this dump has; program names one per naming scheme; stages and
    suffixes one per kind, with a count where there is one file per kernel
    or per pass.
    """
    files = list(files)
    parts: dict[str, NamePart] = {}
    stamps = sorted({f.timestamp for f in files if f.timestamp is not None})
    if stamps:
        first, last = (datetime.fromtimestamp(t / 1e6, tz=timezone.utc)
                       for t in (stamps[0], stamps[-1]))
        parts["timestamp"] = NamePart(str(stamps[0]), (
            "timestamp: when XLA first dumped the module, in microseconds since 1970 "
            f"(--xla_dump_include_timestamp); here {first:%Y-%m-%d %H:%M:%S} to "
            f"{last:%H:%M:%S} UTC"))
    ids = sorted({f.module_id for f in files if f.module_id is not None})
    if ids:
        parts["module id"] = NamePart("module_NNNN", f"module id: {_MODULE_ID}; here {_few(ids)}")
    counts: dict[str, int] = {}
    for file in files:
        for key, part in _legend_entries(file):
            counts[key] = counts.get(key, 0) + 1
            parts.setdefault(key, part)
    for key, part in parts.items():
        if key.startswith("each:") and counts[key] > 1:
            parts[key] = NamePart(part.text, f"{part.meaning}; {counts[key]} of them here")
    return tuple(parts.values())


def _legend_entries(file: DumpFile) -> Iterator[tuple[str, NamePart]]:
    """(what kind of part, the part explained) for each part of ``file``'s
    name but its module id and timestamp; kinds starting ``each:`` come
    once per kernel or pass and are counted."""
    if file.kind == UNKNOWN:
        yield "each:unknown", NamePart(file.name, KIND_MEANINGS[UNKNOWN])
        return
    if file.program:
        name = program_name(file.program)
        yield f"program:{name.scheme}", NamePart(file.program, f"program name: {name.scheme}")
    if file.kind in FOLDER_FILES:
        yield f"folder:{file.name}", NamePart(file.name, KIND_MEANINGS[file.kind]
                                              + " (in the module's folder)")
        return
    if file.stage is not None:
        if file.stage.name in (PASS, IN_PASS):
            yield f"each:{file.stage.name}", NamePart(file.stage.label,
                                                      _SNAPSHOT_MEANINGS[file.stage.name])
        else:
            yield f"stage:{file.stage.label}", NamePart(file.stage.label, file.stage.meaning)
    if file.detail:
        yield f"each:{file.kind}", NamePart(file.suffix.replace(file.detail, "KERNEL"),
                                            f"{KIND_MEANINGS[file.kind]}, one per kernel")
    else:
        yield f"suffix:{file.suffix}", NamePart(file.suffix, KIND_MEANINGS[file.kind])


_SNAPSHOT_MEANINGS = {
    PASS: "stage: a snapshot between two passes, STEP.PIPELINE.after_PASS.before_PASS "
          "(--xla_dump_hlo_pass_re)",
    IN_PASS: "stage: a snapshot inside a pass, STEP.PASS.STEP_OF_THE_PASS (--xla_dump_hlo_pass_re)",
}


def _few(numbers: list[int], most: int = 8) -> str:
    """``0, 2, 4, 6`` or ``0, 2, 4, 6, 8, 10, 12, … 98 (50 ids)``."""
    if len(numbers) <= most:
        return ", ".join(map(str, numbers))
    return ", ".join(map(str, numbers[:most - 1])) + f", … {numbers[-1]} ({len(numbers)} ids)"
