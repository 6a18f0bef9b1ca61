"""Compilations found in framework logs: how often each program compiled, and why.

A recompile shows in the log long before anyone dumps HLO. Each framework
says so in its own words; these are the lines read (with the setting that
makes the framework write them):

* JAX (``jax_log_compiles``): ``Compiling jit(f) ...`` starts an executable
  request, ``Finished XLA compilation of jit(f)`` ends it. A persistent
  cache makes JAX print both for a load too: only ``Persistent compilation
  cache hit`` (a load) versus ``PERSISTENT COMPILATION CACHE MISS`` (a
  compilation) tell them apart.
* JAX (``jax_explain_cache_misses``): a ``TRACING CACHE MISS`` block per
  trace of a user function, naming the function and what changed. It is
  the cause of the next compilation of that function; alone (no
  ``Compiling`` lines in the log) each block counts as one compilation.
  JAX writes no block for functions defined in its own files (the eager
  set-up ops), which is how user programs are told from JAX's own.
* XLA (``TF_CPP_VMODULE=py_executable=1``): ``Fingerprint for executable
  NAME: N`` belongs to the request open for NAME, never a compilation of
  its own; so does a ``Compiling [NAME] for PLATFORM`` line.
* TensorFlow (``TF_CPP_VMODULE=device_compiler=3``): ``Instantly compiling
  for signature: __inference_f_38[...],float [4,4],...`` names the concrete
  function (one per trace of a ``tf.function``); ``Loading cached entry
  for:`` (``device_executable_persistor=3``) turns it into a load. At
  ``device_compiler=1`` only ``Compilation of XLA executable time ...
  #called: N`` lines say that something compiled, not what. Default
  logging only warns ``N out of the last M calls to <function f> triggered
  tf.function retracing``: f traced at least N times.
* PyTorch/XLA (``PT_XLA_DEBUG_LEVEL=1`` or ``2``): a ``Compilation
  Analysis`` block with the cause, the graph hash and the Python frames
  that triggered it. ``Execution Analysis`` blocks are runs, not
  compilations.
* Graphcore (TensorFlow IPU backend): ``Begin XLA compilation: NAME
  (Hash: 0x...)``, then ``Loaded NAME from FILE`` (a cache load) or
  ``Couldn't find FILE in executable cache`` (compiled); ``End XLA
  compilation`` closes the same request.

A program is what the user wrote and the framework traced: a jitted JAX
function (``jit_train_step``), a ``tf.function`` (its concrete functions,
one per trace, are listed under it), the graph a PyTorch/XLA sync point
compiles (named by the user's line that triggered it), a Graphcore cluster.
Its first compilation is the warm-up; every later one is a recompilation.
"""

from __future__ import annotations

import re
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..dumps import Dump, DumpModule, normalise_program
from ..dumps.naming import is_framework_helper, jax_module_name
from ..errors import HlodiffError
from ..model import is_library_file

# --- what the lines say ---------------------------------------------------------------

_JAX_COMPILING = re.compile(
    r"Compiling (?:(?P<api>p?jit|pmap)\((?P<fn>[^()]*)\)|(?P<bare>[\w<>.-]+)(?P<pmap> \(\d+\))?)"
    r" (?:with global shapes|for )")
_JAX_FINISHED = re.compile(r"Finished XLA compilation of (?:(?P<api>p?jit|pmap)\((?P<fn>[^()]*)\)"
                           r"|(?P<bare>\S+)) in ")
_JAX_MISS = re.compile(r"TRACING CACHE MISS at (?P<where>.+?)(?: \([^()]*\))?(?: because)?:\s*$")
_JAX_MISS_FUNCTION = re.compile(r"^\s+(?:for (?P<seen>\S+)(?: defined at .*)?|(?P<new>\S+) id=\d+.*)$")
_JAX_PERSISTENT = re.compile(r"(?P<what>PERSISTENT COMPILATION CACHE MISS|Persistent compilation "
                             r"cache hit) for '(?P<program>[^']+)'(?: with key '(?P<key>[^']+)')?")
_XLA_FINGERPRINT = re.compile(r"Fingerprint for executable (?P<program>\S+): (?P<key>\w*)")
_XLA_COMPILING = re.compile(r"Compiling \[(?P<program>[^\]]+)\] for ")
_TF_COMPILING = re.compile(r"Instantly compiling for signature: (?P<signature>(?P<fn>[^\[,\s]+)\S*.*\S)")
_TF_INPUTS = re.compile(r"device_compiler\.h:\d+\] num_inputs=")
_TF_RESOURCE = re.compile(r"device_compiler\.h:\d+\] \d+: kind=resource name=(?P<name>\S+)")
_TF_LOADING = re.compile(r"Loading cached entry for: (?P<fn>[^\[,\s]+)")
_TF_TIMED = re.compile(r"Compilation of XLA executable time: .*#called: (?P<count>\d+)")
_TF_RETRACING = re.compile(r"(?P<traces>\d+) out of the last \d+ calls to <(?:function|bound method) "
                           r"(?P<fn>\S+).*? triggered tf\.function retracing")
_TORCH_FIELD = re.compile(r"Compilation Analysis:(?P<indent>\s+)(?P<text>\S.*?)\s*$")
_TORCH_FRAME = re.compile(r"^(?P<function>\S+) \((?P<file>.+):(?P<line>\d+)\)$")
_GRAPHCORE_BEGIN = re.compile(r"Begin XLA compilation: (?P<module>\S+)\s+\(Hash:? (?P<key>0x[0-9a-fA-F]+)\)")
_GRAPHCORE_LOADED = re.compile(r"\bLoaded \S.* from \S")
_GRAPHCORE_MISSING = re.compile(r"Couldn't find ")

# The graph name PyTorch/XLA gives every program its sync points compile.
TORCH_PROGRAM = "SyncTensorsGraph"

def concrete_function(module: str) -> str | None:
    """The TensorFlow concrete function an XLA module compiles, as TF names it.

    >>> concrete_function("a_inference_train_step_38__XlaMustCompile_true_.2")
    '__inference_train_step_38'
    >>> concrete_function("jit_f") is None
    True
    """
    match = re.match(r"(?:a|_)_(?P<name>(?:inference|forward|backward)_\w*?_\d+)(?=__|\.\d+$|$)",
                     module)
    return f"__{match['name']}" if match else None


def tf_function(concrete: str) -> str:
    """The ``tf.function`` (its Python name) a concrete function was traced from.

    >>> tf_function("__inference_one_step_on_data_231")
    'one_step_on_data'
    """
    match = re.fullmatch(r"__(?:inference|forward|backward)_(?P<name>.+?)_\d+", concrete)
    return match["name"] if match else concrete


# --- records --------------------------------------------------------------------------


@dataclass(frozen=True)
class Compilation:
    """One executable request seen in a log: a compilation, or a load from a cache.

    ``module`` is what the framework calls the compiled thing, as a dump
    names it: the XLA module (``jit_train_step``, ``cluster_5__...``.169),
    TensorFlow's concrete function (``__inference_f_38``), PyTorch/XLA's
    ``SyncTensorsGraph``; None when the log does not say (TensorFlow at
    ``device_compiler=1``). ``key`` is the framework's cache key or hash
    when the log gives one, ``fingerprint`` XLA's. ``cache`` is ``"hit"``
    for a load (no compilation), ``"miss"`` when the log says the cache
    did not have it, None when it says nothing. ``cause`` is the
    framework's own explanation, whole; ``where`` the user's line.
    ``signature`` is TensorFlow's argument list (types, no shapes);
    ``resources`` the variables it reads, where the log lists its inputs
    (``device_compiler=3``). ``source`` is ``"dump"`` for a compilation the
    log does not show at all, counted from a module of the run's dump
    (TensorFlow's default logging); ``file`` is then that module's file.
    """

    program: str
    module: str | None
    framework: str
    file: str
    line: int
    key: str | None = None
    fingerprint: str | None = None
    cache: str | None = None
    cause: str = ""
    where: str | None = None
    signature: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    source: str = "log"

    @property
    def loaded(self) -> bool:
        return self.cache == "hit"


@dataclass(frozen=True)
class Retracing:
    """TensorFlow's warning that ``function`` traced at least ``traces`` times."""

    function: str
    traces: int
    file: str
    line: int
    cause: str


@dataclass(frozen=True)
class Scan:
    """Everything found in some logs, in the order it appeared."""

    compilations: tuple[Compilation, ...]
    retracings: tuple[Retracing, ...] = ()
    explained: frozenset[str] = frozenset()  # logs with JAX's TRACING CACHE MISS blocks


@dataclass(frozen=True)
class Program:
    """Every executable request for one program, with the dump modules it compiled.

    ``name`` is empty when the log does not say what compiled (TensorFlow
    at ``device_compiler=1``). ``user`` is False for a framework's own
    set-up programs, which compile once per shape by design. ``modules``
    holds the dump module of each compilation (None where the dump has
    none), in order. ``traces`` is at least how often TensorFlow traced
    it when only its retracing warning says so.
    """

    name: str
    framework: str
    user: bool
    requests: tuple[Compilation, ...]
    traces: int = 0
    trace_warning: str = ""  # TensorFlow's retracing warning, whole
    note: str = ""  # why the dump could not name or match these compilations
    modules: tuple[DumpModule | None, ...] = field(default=(), compare=False)

    @property
    def compilations(self) -> tuple[Compilation, ...]:
        return tuple(c for c in self.requests if not c.loaded)

    @property
    def loads(self) -> int:
        return sum(1 for c in self.requests if c.loaded)

    @property
    def recompilations(self) -> int:
        """Compilations after the warm-up (the first one)."""
        return max(0, len(self.compilations) - 1)

    @property
    def retraces(self) -> int:
        """Traces after the first that the log shows only as TensorFlow's warning."""
        return max(0, self.traces - 1)

    @property
    def keys(self) -> tuple[str, ...]:
        """Distinct cache keys (or fingerprints) of the compilations, first seen first."""
        return tuple(dict.fromkeys(k for c in self.compilations if (k := c.key or c.fingerprint)))

    @property
    def concrete_functions(self) -> tuple[tuple[str, int], ...]:
        """TensorFlow: each concrete function (one per trace) and how often it compiled."""
        counts: dict[str, int] = {}
        for c in self.requests:
            if c.framework == "tensorflow" and c.module:
                counts[c.module] = counts.get(c.module, 0) + (0 if c.loaded else 1)
        return tuple(counts.items())

    @property
    def from_dump(self) -> bool:
        """Every compilation counted from the dump: the log shows none of them."""
        return bool(self.requests) and all(c.source == "dump" for c in self.requests)

    @property
    def recompiled(self) -> bool:
        """A user program built more than once (or, unnamed, cannot be told apart)."""
        return self.user and bool(self.recompilations or self.retraces)


# --- reading ----------------------------------------------------------------------------


@dataclass
class _Miss:
    """A JAX TRACING CACHE MISS block being read."""

    function: str | None
    where: str
    line: int
    lines: list[str]


@dataclass
class _Scanner:
    """Reads one log line by line; each framework's lines go to its own method.

    A request stays open between JAX's ``Compiling`` and ``Finished XLA
    compilation`` lines, so cache, key and fingerprint lines in between
    land on it, never on a new one.
    """

    path: str
    found: list[Compilation] = field(default_factory=list)
    retracings: list[Retracing] = field(default_factory=list)
    misses: list[_Miss] = field(default_factory=list)  # blocks waiting for their compilation
    reading_miss: _Miss | None = None
    explained: bool = False  # JAX wrote TRACING CACHE MISS blocks: explain_cache_misses was on
    open_jax: dict[str, int] = field(default_factory=dict)  # module -> index in found
    jax_compiling_lines: bool = False
    tf_pending: int | None = None  # index of a named TF request not yet timed
    tf_resources: list[str] = field(default_factory=list)  # of the inputs listed last
    torch_block: dict | None = None

    def feed(self, number: int, line: str) -> None:
        if self.reading_miss is not None:
            if line.startswith("  "):
                self._miss_line(line)
                return
            self.reading_miss = None
        if self.torch_block is not None:
            self._torch(number, line)
            return
        for reader in (self._jax, self._xla, self._tensorflow, self._torch_start, self._graphcore):
            if reader(number, line):
                return

    def _add(self, number: int, program: str, module: str | None, framework: str,
             **fields) -> int:
        self.found.append(Compilation(program, module, framework, self.path, number, **fields))
        return len(self.found) - 1

    def _update(self, index: int, **changes) -> None:
        self.found[index] = replace(self.found[index], **changes)

    # JAX ----------------------------------------------------------------------------

    def _jax(self, number: int, line: str) -> bool:
        match = _JAX_MISS.search(line)
        if match:
            where = re.sub(r"(:\d+):\d+$", r"\1", match["where"])
            self.reading_miss = _Miss(None, where, number, [line[match.start():].rstrip()])
            self.misses.append(self.reading_miss)
            self.explained = True
            return True
        match = _JAX_COMPILING.search(line)
        if match:
            self.jax_compiling_lines = True
            api = match["api"] or ("pmap" if match["pmap"] else "jit")
            function = match["fn"] if match["fn"] is not None else match["bare"]
            module = jax_module_name(api, function)
            miss = next((m for m in reversed(self.misses) if m.function == function), None)
            self.misses.clear()  # blocks of functions traced inside this one compile nothing
            fields = {} if miss is None else {"cause": "\n".join(miss.lines), "where": miss.where}
            self.open_jax[module] = self._add(number, module, module, "jax", **fields)
            return True
        match = _JAX_PERSISTENT.search(line)
        if match:
            cache = "hit" if match["what"].startswith("Persistent") else "miss"
            index = self._open(match["program"])
            if index is None:
                index = self._add(number, match["program"], match["program"], "jax")
            self._update(index, cache=cache, key=match["key"] or self.found[index].key)
            return True
        match = _JAX_FINISHED.search(line)
        if match:
            api = match["api"] or "jit"
            function = match["fn"] if match["fn"] is not None else match["bare"]
            self.open_jax.pop(jax_module_name(api, function), None)
            return True
        return False

    def _open(self, module: str) -> int | None:
        """The request open for ``module``: between its Compiling and Finished lines."""
        index = self.open_jax.get(module)
        if index is None:
            index = next((i for i in range(len(self.found) - 1, -1, -1)
                          if self.found[i].module == module), None)
        return index

    def _miss_line(self, line: str) -> None:
        miss = self.reading_miss
        miss.lines.append(line.rstrip())
        match = _JAX_MISS_FUNCTION.match(line)
        if miss.function is None and match:
            miss.function = (match["seen"] or match["new"]).rsplit(".", 1)[-1]

    # XLA ----------------------------------------------------------------------------

    def _xla(self, number: int, line: str) -> bool:
        match = _XLA_FINGERPRINT.search(line)
        if match:
            module = match["program"]
            index = self._open(module)
            if index is None or self.found[index].fingerprint is not None:
                self._add(number, normalise_program(module), module, "xla",
                          fingerprint=match["key"] or None)
            else:
                self._update(index, fingerprint=match["key"] or None)
            return True
        match = _XLA_COMPILING.search(line)
        if match:
            module = match["program"]
            if module not in self.open_jax:
                self.open_jax[module] = self._add(number, normalise_program(module), module, "xla")
            return True
        return False

    # TensorFlow ---------------------------------------------------------------------

    def _tensorflow(self, number: int, line: str) -> bool:
        match = _TF_COMPILING.search(line)
        if match:
            concrete = match["fn"]
            self.tf_pending = self._add(number, tf_function(concrete), concrete, "tensorflow",
                                        key=match["signature"],
                                        signature=_argument_types(match["signature"]),
                                        resources=tuple(self.tf_resources))
            self.tf_resources = []
            return True
        if _TF_INPUTS.search(line):
            self.tf_resources = []
            return True
        match = _TF_RESOURCE.search(line)
        if match:
            self.tf_resources.append(match["name"])
            return True
        match = _TF_LOADING.search(line)
        if match:
            index = next((i for i in range(len(self.found) - 1, -1, -1)
                          if self.found[i].module == match["fn"]), None)
            if index is not None:
                self._update(index, cache="hit")
            return True
        if _TF_TIMED.search(line):
            if self.tf_pending is None:
                self._add(number, "", None, "tensorflow")
            self.tf_pending = None
            return True
        match = _TF_RETRACING.search(line)
        if match:
            self.retracings.append(Retracing(match["fn"].rsplit(".", 1)[-1], int(match["traces"]),
                                             self.path, number, line[match.start():].strip()))
            return True
        return False

    # PyTorch/XLA --------------------------------------------------------------------

    def _torch_start(self, number: int, line: str) -> bool:
        if "Compilation Analysis: Compilation Cause" in line:
            self.torch_block = {"line": number, "section": "cause", "cause": [], "frames": []}
            return True
        return False

    def _torch(self, number: int, line: str) -> None:
        block = self.torch_block
        if "Compilation Analysis: ====" in line:
            self._torch_end()
            return
        match = _TORCH_FIELD.search(line)
        if match is None:
            return
        text = match["text"]
        if len(match["indent"]) == 1:  # a heading: Graph Info, Python Frame Triggered Execution
            block["section"] = "frames" if text.startswith("Python Frame") else "info"
        elif block["section"] == "cause":
            block["cause"].append(text)
        elif block["section"] == "info" and text.startswith("Graph Hash: "):
            block["key"] = text.split(": ", 1)[1]
        elif block["section"] == "info" and text.startswith("Number of Graph Inputs: "):
            block["inputs"] = text.split(": ", 1)[1]
        elif block["section"] == "frames":
            frame = _TORCH_FRAME.match(text)
            if frame:
                block["frames"].append((frame["function"], frame["file"], int(frame["line"])))

    def _torch_end(self) -> None:
        """The Compilation Analysis block read: one compilation, named by the user's line.

        Where every frame printed is library code (``torch.compile``: dynamo
        compiles its forward, backward and optimizer graphs from its own
        frames, and the printout stops after eight), the graph is named by
        its number of inputs instead, as ``hlodiff recompiles`` tells
        PyTorch/XLA programs apart in a dump: a new batch changes the shapes
        of a graph's inputs, not their number, while dynamo's graphs of one
        step take different inputs. Without that count they stay one program.
        """
        block, self.torch_block = self.torch_block, None
        user = next((f for f in block["frames"] if not is_library_file(f[1])), None)
        where = f"{user[1]}:{user[2]}" if user else None
        if where:
            program = f"{TORCH_PROGRAM} at {where}"
        elif "inputs" in block:
            inputs = block["inputs"]
            program = f"{TORCH_PROGRAM} ({inputs} input{'' if inputs == '1' else 's'})"
        else:
            program = TORCH_PROGRAM
        self._add(block["line"], program, TORCH_PROGRAM, "pytorch", key=block.get("key"),
                  cause="\n".join(block["cause"]), where=where)

    # Graphcore ----------------------------------------------------------------------

    def _graphcore(self, number: int, line: str) -> bool:
        match = _GRAPHCORE_BEGIN.search(line)
        if match:
            module = match["module"]
            self._add(number, re.sub(r"\.\d+$", "", module), module, "graphcore", key=match["key"])
            return True
        if not self.found or self.found[-1].framework != "graphcore":
            return False
        if _GRAPHCORE_LOADED.search(line):
            self._update(len(self.found) - 1, cache="hit")
            return True
        if _GRAPHCORE_MISSING.search(line) and self.found[-1].cache is None:
            self._update(len(self.found) - 1, cache="miss")
            return True
        return False

    def finish(self) -> None:
        """What the end of the log settles: a PyTorch/XLA block cut off by a crash still
        compiled; a log with TRACING CACHE MISS blocks and no Compiling line compiled once
        per block."""
        if self.torch_block is not None:
            self._torch_end()
        if self.jax_compiling_lines:
            return
        for miss in self.misses:
            if miss.function is not None:
                module = jax_module_name("jit", miss.function)
                self._add(miss.line, module, module, "jax", cause="\n".join(miss.lines),
                          where=miss.where)


def _argument_types(signature: str) -> tuple[str, ...]:
    """The argument types of a TensorFlow signature, shapes left out.

    >>> _argument_types("__inference_f_3[_XlaMustCompile=true],float [4,4],int32 []")
    ('float', 'int32')
    """
    function = re.match(r"[^\[,]*(?:\[[^\]]*\])?", signature)  # the name and its attributes
    return tuple(re.findall(r",\s*([\w-]+) \[", signature[function.end():]))


def scan(paths: list[Path]) -> Scan:
    """Every compilation and load in the logs, in the order they appear."""
    found: list[Compilation] = []
    retracings: list[Retracing] = []
    explained: set[str] = set()
    for path in paths:
        scanner = _Scanner(str(path))
        try:
            with open(path, "rb") as raw:
                start = raw.read(65536)
                if b"\0" in start:
                    raise HlodiffError(f"{path}: a binary file, not a log (hlodiff log reads "
                                       "the text a framework writes to stderr)")
                if not start.strip():
                    raise HlodiffError(f"{path}: empty: no log lines to read (hlodiff log "
                                       "reads the text a framework writes to stderr)")
            with open(path, encoding="utf-8", errors="replace") as stream:
                for number, line in enumerate(stream, 1):
                    scanner.feed(number, line.rstrip("\n"))
        except OSError as err:
            raise HlodiffError(f"{path}: cannot read: {err.strerror}") from None
        scanner.finish()
        found.extend(scanner.found)
        retracings.extend(scanner.retracings)
        if scanner.explained:
            explained.add(str(path))
    return Scan(tuple(found), tuple(retracings), frozenset(explained))


# --- programs ---------------------------------------------------------------------------


def summarise(found: Scan, dump: Dump | None = None) -> list[Program]:
    """Per program: its requests in log order; with the run's dump, each compilation's module.

    Recompiled user programs come first, the rest in the order they first
    compiled. TensorFlow's concrete functions group into one program per
    function name and the variables it reads: Keras' train, test and
    predict steps are all ``one_step_on_data`` but read different variables,
    while a retrace reads the same ones, even when it takes a Python float
    as a tensor now (one argument more). Where the log does not list the
    variables, the number of arguments stands in for them.
    """
    compilations = list(found.compilations)
    note = ""
    if dump is not None:
        compilations, note = _name_from_dump(compilations, dump)
        compilations += _unlogged_from_dump(found, compilations, dump)
    groups: dict[tuple, list[Compilation]] = {}
    for c in compilations:
        groups.setdefault(_group(c), []).append(c)
    shared = _shared_names(groups)
    programs = []
    for key, requests in groups.items():
        first = requests[0]
        name = first.program
        if key[0] == "tensorflow" and name in shared:
            name = f"{name} [{first.module}]"
        programs.append(Program(name, first.framework, _is_user(requests, found.explained),
                                tuple(requests),
                                note=note if first.framework == "tensorflow" and not name else ""))
    programs = _add_retracings(programs, found.retracings)
    if dump is not None:
        programs = _attach_modules(programs, compilations, dump)
    order = {id(p): n for n, p in enumerate(programs)}
    return sorted(programs, key=lambda p: (not p.recompiled,
                                           -(p.recompilations + p.retraces), order[id(p)]))


def _group(c: Compilation) -> tuple:
    if c.framework == "tensorflow" and c.module:
        return ("tensorflow", c.program, c.resources or len(c.signature))
    return (c.framework if c.framework in ("tensorflow", "pytorch", "graphcore") else "jax",
            c.program)


def _shared_names(groups: dict[tuple, list[Compilation]]) -> set[str]:
    """TensorFlow function names that several programs have (different arguments)."""
    seen: dict[str, int] = {}
    for key in groups:
        if key[0] == "tensorflow" and key[1]:
            seen[key[1]] = seen.get(key[1], 0) + 1
    return {name for name, count in seen.items() if count > 1}


def _is_user(requests: list[Compilation], explained: frozenset[str]) -> bool:
    """False for JAX's own programs: no TRACING CACHE MISS block where JAX writes them, else
    an eager op's or JAX helper's name."""
    first = requests[0]
    if first.framework not in ("jax", "xla"):
        return True
    if first.framework == "jax" and all(c.file in explained for c in requests):
        return any(c.cause for c in requests)
    return not is_framework_helper(first.program)  # the log cannot tell: the name says


def _add_retracings(programs: list[Program], retracings: tuple[Retracing, ...]) -> list[Program]:
    """TensorFlow's retracing warnings: on the function's program, or a program of their own."""
    out = list(programs)
    for warning in retracings:
        index = next((i for i, p in enumerate(out) if p.framework == "tensorflow"
                      and p.name.split(" [", 1)[0] == warning.function), None)
        if index is None:
            out.append(Program(warning.function, "tensorflow", True, (), warning.traces,
                               trace_warning=warning.cause))
        elif warning.traces >= out[index].traces:
            out[index] = replace(out[index], traces=warning.traces, trace_warning=warning.cause)
    return out


def _name_from_dump(compilations: list[Compilation], dump: Dump) -> tuple[list[Compilation], str]:
    """Name the compilations TensorFlow did not name, from the dump's modules, in order.

    Every compilation writes one module (a cache load writes none), so when
    the counts agree the k-th unnamed compilation is the k-th TensorFlow module.
    """
    unnamed = [i for i, c in enumerate(compilations) if c.framework == "tensorflow" and not c.module]
    if not unnamed:
        return compilations, ""
    modules = [m for m in dump.modules if m.name.frontend == "tensorflow"]
    if len(modules) != len(unnamed):
        return compilations, (f"the log does not name these; the dump holds {len(modules)} "
                              f"TensorFlow modules for its {len(unnamed)} compilations, so they "
                              "are not matched")
    out = list(compilations)
    for index, module in zip(unnamed, modules):
        concrete = concrete_function(module.program) or module.program
        out[index] = replace(out[index], program=tf_function(concrete) if concrete.startswith("__")
                             else module.normalised, module=concrete,
                             signature=entry_types(module))
    return out, ""


def _unlogged_from_dump(found: Scan, compilations: list[Compilation],
                        dump: Dump) -> list[Compilation]:
    """TensorFlow's default logging: the compilations the log never shows, from the dump.

    Such a log only warns that a tf.function retraced and says nothing of
    what XLA compiled; every compilation of a ``tf.function`` wrote one
    module named after its concrete function (``__inference_step_9``), so
    the dump's modules, in module order, are its compilations. Only when
    the log warns of retracing and names no TensorFlow compilation at all:
    then no module of the dump is already one of the log's.
    """
    if not found.retracings or any(c.framework == "tensorflow" for c in compilations):
        return []
    out = []
    for module in dump.modules:
        concrete = concrete_function(module.program)
        if module.primary is None or concrete is None or module.loaded_from_cache:
            continue
        out.append(Compilation(tf_function(concrete), concrete, "tensorflow",
                               str(module.path), 0,
                               signature=entry_types(module), source="dump"))
    return out


def entry_types(module: DumpModule) -> tuple[str, ...]:
    """The element types of the entry parameters, read from the module's header line only."""
    file = module.primary
    if file is None:
        return ()
    try:
        with open(module.root / file.relative, encoding="utf-8", errors="replace") as stream:
            header = stream.readline()
    except OSError:
        return ()
    match = re.search(r"entry_computation_layout=\{\((?P<params>.*?)\)->", header)
    return tuple(re.findall(r"\b([a-z]+\d*)\[", match["params"])) if match else ()


def _module_key(module: DumpModule) -> tuple:
    concrete = concrete_function(module.program)
    if concrete:
        return ("tensorflow", concrete)
    if module.name.frontend == "tensorflow":  # an auto-clustered graph: cluster_N
        return ("exact", module.program)
    if module.normalised == TORCH_PROGRAM:
        return ("pytorch",)
    if module.program.startswith("cluster_"):
        return ("exact", module.program)
    return ("name", module.normalised)


def _compilation_key(c: Compilation) -> tuple:
    if c.framework == "tensorflow":
        return ("tensorflow", c.module)
    if c.framework == "pytorch":
        return ("pytorch",)
    if c.framework == "graphcore":
        return ("exact", c.module)
    return ("name", normalise_program(c.module or c.program))


def _attach_modules(programs: list[Program], compilations: list[Compilation],
                    dump: Dump) -> list[Program]:
    """Each compilation's dump module: the next one of its name, in module id order."""
    queues: dict[tuple, deque[DumpModule]] = {}
    for module in dump.modules:
        if module.primary is not None:
            queues.setdefault(_module_key(module), deque()).append(module)
    matched: dict[tuple[str, int], DumpModule | None] = {}
    for c in compilations:
        if not c.loaded:
            queue = queues.get(_compilation_key(c))
            matched[(c.file, c.line)] = queue.popleft() if queue else None
    return [replace(p, modules=tuple(matched.get((c.file, c.line)) for c in p.compilations))
            for p in programs]
