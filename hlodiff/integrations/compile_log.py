"""Compilations found in framework logs: how often each program compiled, and with which keys.

A recompile shows in the log long before anyone dumps HLO. Each framework
says so in its own words; these are the lines read (with the setting that
makes the framework write them):

* JAX (``jax_log_compiles``, ``jax_explain_cache_misses``): ``Compiling
  jit(f) ...`` starts a compilation; ``TRACING CACHE MISS ...`` and its
  indented lines say why; ``PERSISTENT COMPILATION CACHE MISS for 'jit_f'
  with key 'K'`` / ``Persistent compilation cache hit ...`` give the key.
* XLA (``TF_CPP_VMODULE=py_executable=1``): ``Fingerprint for executable
  NAME: N``, the module fingerprint of what was built.
* TensorFlow (``TF_CPP_VMODULE=device_compiler=3``): ``Instantly compiling
  for signature: FUNCTION[attrs],type [shape],...``; ``Already Compiled``
  lines are cache hits and not compilations.
* PyTorch/XLA (``PT_XLA_DEBUG_LEVEL=2``): a ``Compilation Analysis`` block
  with the ``Compilation Cause`` and ``Graph Hash``.
* Graphcore (TensorFlow IPU backend): ``Begin XLA compilation: NAME (Hash
  0x...)``, then ``Loaded ... from ...`` (a cache hit), ``Couldn't find
  ...`` (a miss) or ``Starting phase: graphConstruction`` (really compiling).

Program names are normalised as dump file names are
(``dumps.normalise_program``), so a log's program finds its dump modules.
The first compilation of a program is its warm-up; every later one is a
recompilation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..dumps import Dump, normalise_program
from ..errors import HlodiffError

_JAX_COMPILING = re.compile(r"Compiling (?:p?jit\((?P<fn>[^)]+)\)|(?P<bare>\S+)) (?:with|for)")
_JAX_TRACING_MISS = re.compile(r"TRACING CACHE MISS at (?P<where>\S+)")
_JAX_PERSISTENT = re.compile(r"(?P<what>PERSISTENT COMPILATION CACHE MISS|Persistent compilation "
                             r"cache hit) for '(?P<program>[^']+)' with key '(?P<key>[^']+)'")
_XLA_FINGERPRINT = re.compile(r"Fingerprint for executable (?P<program>\S+): (?P<key>\w+)")
_TF_COMPILING = re.compile(r"Instantly compiling for signature: (?P<signature>(?P<fn>[^\[,]+)\S*.*)")
_TORCH_CAUSE = re.compile(r"Compilation Analysis: Compilation Cause")
_TORCH_FIELD = re.compile(r"Compilation Analysis:\s+(?P<text>.*\S)")
_TORCH_HASH = re.compile(r"Compilation Analysis:\s+Graph Hash: (?P<key>\w+)")
_TORCH_FRAME = re.compile(r"Compilation Analysis:\s+\S+ \((?P<where>[^)]+:\d+)\)")
_GRAPHCORE_BEGIN = re.compile(r"Begin XLA compilation: (?P<program>\S+) \(Hash (?P<key>0x[0-9a-fA-F]+)\)")
_GRAPHCORE_LOADED = re.compile(r"\bLoaded \S.* from \S")
_GRAPHCORE_MISSING = re.compile(r"Couldn't find ")
_GRAPHCORE_BUILD = re.compile(r"Starting phase: graphConstruction")

# The graph name PyTorch/XLA gives the programs its sync points compile.
TORCH_PROGRAM = "SyncTensorsGraph"


@dataclass(frozen=True)
class Compilation:
    """One compilation request seen in a log.

    ``key`` is the framework's cache key or hash when the log gives one
    (JAX's persistent key, TF's signature, PyTorch/XLA's graph hash,
    Graphcore's hash), else XLA's fingerprint. ``cache`` is ``"hit"`` when
    an executable was loaded rather than built, ``"miss"`` when the log
    says it was not found, None when it does not say. ``cause`` is the
    framework's own explanation, ``where`` the user's line when given.
    """

    program: str
    written: str
    framework: str
    file: str
    line: int
    key: str | None = None
    fingerprint: str | None = None
    cache: str | None = None
    cause: str = ""
    where: str | None = None


@dataclass(frozen=True)
class ProgramSummary:
    """Every compilation of one program, and the dump modules to compare."""

    program: str
    compilations: tuple[Compilation, ...]
    keys: tuple[str, ...]  # distinct, in first-seen order
    modules: tuple[tuple[int, str], ...] = ()  # (module id, HLO file) in the dump

    @property
    def diff_next(self) -> tuple[str, str] | None:
        """The warm-up module and the first recompilation: the pair that explains it."""
        return (self.modules[0][1], self.modules[1][1]) if len(self.modules) > 1 else None

    @property
    def recompilations(self) -> int:
        """Compilations after the warm-up (the first one)."""
        return max(0, len(self.compilations) - 1)

    @property
    def cache_hits(self) -> int:
        return sum(1 for c in self.compilations if c.cache == "hit")


@dataclass
class _Scanner:
    path: str
    found: list[Compilation] = field(default_factory=list)
    pending_cause: list[str] = field(default_factory=list)
    in_cause: bool = False
    torch_block: dict | None = None

    def _set_last(self, program: str | None, **changes) -> bool:
        for index in range(len(self.found) - 1, -1, -1):
            if program is None or self.found[index].program == program:
                self.found[index] = replace(self.found[index], **changes)
                return True
        return False

    def _add(self, written: str, framework: str, number: int, **fields) -> None:
        self.found.append(Compilation(normalise_program(written), written, framework, self.path,
                                      number, **fields))

    def feed(self, number: int, line: str) -> None:
        if self.in_cause:
            if line.startswith("  "):
                self.pending_cause.append(line.strip())
                return
            self.in_cause = False
        if self.torch_block is not None:
            self._torch(number, line)
            return
        match = _JAX_TRACING_MISS.search(line)
        if match:
            self.pending_cause = [f"tracing cache miss at {match['where'].rstrip(':')}"]
            self.in_cause = True
            return
        match = _JAX_COMPILING.search(line)
        if match:
            name = match["fn"] or match["bare"]
            written = f"jit_{name}" if match["fn"] else name
            self._add(written, "jax", number, cause="; ".join(self.pending_cause))
            self.pending_cause = []
            return
        match = _JAX_PERSISTENT.search(line)
        if match:
            hit = match["what"].startswith("Persistent")
            program = normalise_program(match["program"])
            if not self._set_last(program, key=match["key"], cache="hit" if hit else "miss"):
                self._add(match["program"], "jax", number, key=match["key"],
                          cache="hit" if hit else "miss")
            return
        match = _XLA_FINGERPRINT.search(line)
        if match:
            program = normalise_program(match["program"])
            last = next((c for c in reversed(self.found) if c.program == program), None)
            if last is not None and last.fingerprint is None:
                self._set_last(program, fingerprint=match["key"])
            else:
                self._add(match["program"], "xla", number, fingerprint=match["key"])
            return
        match = _TF_COMPILING.search(line)
        if match:
            self._add(_xla_module_name(match["fn"].strip()), "tensorflow", number,
                      key=match["signature"].strip())
            return
        if _TORCH_CAUSE.search(line):
            self.torch_block = {"line": number, "cause": None}
            return
        match = _GRAPHCORE_BEGIN.search(line)
        if match:
            self._add(match["program"], "graphcore", number, key=match["key"])
            return
        if self.found and self.found[-1].framework == "graphcore":
            if _GRAPHCORE_LOADED.search(line):
                self._set_last(None, cache="hit")
            elif _GRAPHCORE_MISSING.search(line) or _GRAPHCORE_BUILD.search(line):
                if self.found[-1].cache != "hit":
                    self._set_last(None, cache="miss")

    def _torch(self, number: int, line: str) -> None:
        block = self.torch_block
        hashed = _TORCH_HASH.search(line)
        frame = _TORCH_FRAME.search(line)
        text = _TORCH_FIELD.search(line)
        if hashed:
            block["key"] = hashed["key"]
        elif frame and "site-packages" not in frame["where"]:
            block.setdefault("where", frame["where"])
        elif block["cause"] is None and text:
            block["cause"] = text["text"]
        if "Compilation Analysis: ====" in line:
            self._add(TORCH_PROGRAM, "pytorch", block["line"], key=block.get("key"),
                      cause=block["cause"] or "", where=block.get("where"))
            self.torch_block = None


def _xla_module_name(function: str) -> str:
    """The HloModule name XLA gives a TensorFlow function: ``__inference_f_17`` -> ``a_inference_f_17``."""
    return "a" + function[1:] if function.startswith("_") else function


def scan(paths: list[Path]) -> list[Compilation]:
    """Every compilation in the logs, in the order they appear."""
    found: list[Compilation] = []
    for path in paths:
        scanner = _Scanner(str(path))
        try:
            with open(path, encoding="utf-8", errors="replace") as stream:
                for number, line in enumerate(stream, 1):
                    scanner.feed(number, line.rstrip("\n"))
        except OSError as err:
            raise HlodiffError(f"{path}: cannot read: {err.strerror}") from None
        found.extend(scanner.found)
    return found


def summarise(compilations: list[Compilation], dump: Dump | None = None) -> list[ProgramSummary]:
    """Per program: its compilations and distinct keys; with a dump, its module ids."""
    programs: dict[str, list[Compilation]] = {}
    for compilation in compilations:
        programs.setdefault(compilation.program, []).append(compilation)
    out = []
    for program, found in programs.items():
        keys = tuple(dict.fromkeys(k for c in found if (k := c.key or c.fingerprint)))
        modules = () if dump is None else tuple(
            (m.module_id, str(m.path)) for m in dump.modules
            if m.normalised == program and m.module_id is not None and m.path is not None)
        out.append(ProgramSummary(program, tuple(found), keys, modules))
    out.sort(key=lambda s: -s.recompilations)
    return out
