"""A recorded program to check later dumps against, for a pre-merge gate.

``record(dump)`` keeps, for the main program (or every module), what a
reviewer needs to see and what hlodiff needs to explain a later change
without the old dump: the normalised program name, a fingerprint per cache
key (``canon.fingerprints``), the parameter shapes, every constant with
its origin, and the module's own files (each dumped stage, plus JAX's
module.mlir that settles constants XLA printed as ``{...}``, the XLA flags
in .debug_options, and the compile options and device topology JAX hashes), compressed
when large. ``check`` writes those files back into a directory and runs the
same ``compare`` as ``hlodiff diff``: one differ, one explanation.
"""

from __future__ import annotations

import base64
import json
import tempfile
import zlib
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Iterator

from .canon import fingerprints
from ..analysis.compare import compare_dumps
from ..analysis.constants import abbreviate, constant_sites
from ..dumps import AFTER, BEFORE, Dump, DumpModule, load_dump
from ..errors import HlodiffError
from ..analysis.explain import Report

SCHEMA_VERSION = 1
# Files larger than this are stored zlib-compressed and base64-encoded.
COMPRESS_ABOVE = 16_384


def record(dump: Dump, *, all: bool = False) -> dict[str, Any]:
    """The baseline document for ``dump``: its main program, or every module."""
    modules = [m for m in dump.modules if m.primary is not None] if all else [dump.main_program()]
    return {"schema_version": SCHEMA_VERSION, "all": all,
            "modules": [_module_record(m) for m in modules]}


def _module_record(module: DumpModule) -> dict[str, Any]:
    parsed = module.module()
    return {
        "program": module.normalised,
        "program_as_written": module.program,
        "module_id": module.module_id,
        "fingerprints": fingerprints(parsed),
        "parameters": [{"number": p.parameter_number, "shape": str(p.shape)}
                       for p in parsed.entry.parameters],
        "constants": [{"computation": s.computation, "name": s.name, "shape": s.shape,
                       "value": abbreviate(s.instruction), "op_name": s.origin.op_name,
                       "source": s.origin.location} for s in constant_sites(parsed)],
        "files": [_file_record(module.root / f.relative, f.relative) for f in _kept_files(module)],
    }


def _kept_files(module: DumpModule):
    stages = [module.stage_file(s) for s in (BEFORE, AFTER)]
    kept = [f for f in stages if f is not None] or [module.primary]
    return kept + [f for f in module.files if f.kind in _SIDECARS]


# What JAX hashes beside the HLO (dumps/environment.py) and what settles elided constants.
_SIDECARS = ("module.mlir", "debug_options", "compile_options.textproto", "topology.textproto")


def _file_record(path: Path, relative: str) -> dict[str, str]:
    text = path.read_text()
    if len(text) <= COMPRESS_ABOVE:
        return {"path": relative, "encoding": "text", "text": text}
    packed = base64.b64encode(zlib.compress(text.encode(), 9)).decode("ascii")
    return {"path": relative, "encoding": "zlib+base64", "text": packed}


def write(document: dict[str, Any], path: Path) -> None:
    try:
        path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n")
    except OSError as err:
        raise HlodiffError(f"{path}: cannot write: {err.strerror}") from None


def read(path: Path) -> dict[str, Any]:
    """A baseline file, checked enough that a bad one is one clear error."""
    try:
        document = json.loads(path.read_text())
    except OSError as err:
        raise HlodiffError(f"{path}: cannot read baseline: {err.strerror}") from None
    except ValueError as err:
        raise HlodiffError(f"{path}: not a baseline (invalid JSON: {err})") from None
    if not isinstance(document, dict) or document.get("schema_version") != SCHEMA_VERSION \
            or not isinstance(document.get("modules"), list) or not document["modules"]:
        raise HlodiffError(f"{path}: not an hlodiff baseline of schema version {SCHEMA_VERSION} "
                           "(make one with: hlodiff baseline DUMP_DIR -o FILE)")
    damaged = _damaged(document)
    if damaged:
        raise HlodiffError(f"{path}: not a baseline ({damaged}; make it again with: hlodiff "
                           "baseline DUMP_DIR -o FILE)")
    return document


def _damaged(document: dict[str, Any]) -> str:
    """What of a baseline's structure is not as ``record`` writes it (a bad
    merge, a hand edit), or ""; the fields ``check`` reads back."""
    for m, module in enumerate(document["modules"]):
        if not isinstance(module, dict):
            return f"modules[{m}] is not an object"
        files = module.get("files")
        if not isinstance(files, list) or not files:
            return f"modules[{m}].files is not a list of files"
        for f, file in enumerate(files):
            where = f"modules[{m}].files[{f}]"
            if not isinstance(file, dict):
                return f"{where} is not an object"
            if not isinstance(file.get("path"), str) or not isinstance(file.get("text"), str):
                return f"{where} has no path or text"
            if file.get("encoding", "text") not in ("text", "zlib+base64"):
                return f"{where} has an unknown encoding"
    return ""


@contextmanager
def rebuilt(document: dict[str, Any], source: Path) -> Iterator[Dump]:
    """The baseline's modules as a dump directory that lives for the ``with`` block."""
    with tempfile.TemporaryDirectory(prefix="hlodiff-baseline-") as folder:
        root = Path(folder)
        for module in document["modules"]:
            for file in module.get("files", ()):
                _restore(root, file, source)
        yield load_dump(root)


def _restore(root: Path, file: dict[str, str], source: Path) -> None:
    relative = PurePosixPath(file.get("path", ""))
    if relative.is_absolute() or ".." in relative.parts or not relative.parts:
        raise HlodiffError(f"{source}: baseline file path {str(relative)!r} is not inside a dump")
    if file.get("encoding") == "zlib+base64":
        try:
            text = zlib.decompress(base64.b64decode(file["text"])).decode()
        except (ValueError, zlib.error) as err:
            raise HlodiffError(f"{source}: {relative}: corrupt compressed text ({err})") from None
    else:
        text = file.get("text", "")
    target = root / relative
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


@dataclass(frozen=True)
class Check:
    """A dump checked against a baseline: unchanged, or why not."""

    unchanged: bool
    report: Report


def check(baseline: Path, dump_dir: Path, *, context: bool = False) -> Check:
    """Compare ``dump_dir`` with the baseline the way ``hlodiff diff`` compares two dumps.

    With a main-program baseline only the main programs are compared (the
    baseline does not know the side modules); an ``--all`` baseline also
    reports modules compiled in one run only. ``context`` adds each
    finding's lines and neighbourhood, read while the baseline's files exist.
    """
    document = read(baseline)
    current = load_dump(dump_dir)
    all_modules = bool(document.get("all"))
    with rebuilt(document, baseline) as old:
        report = compare_dumps(old, current, all=all_modules, unpaired=all_modules,
                               context=context)
    return Check(report.shares_executable, report)
