"""Records to plain JSON-ready data, shared by the JSON and Markdown renderers."""

from __future__ import annotations

from typing import Any

from ..analysis.constants import ConstantSite, abbreviate
from ..dumps import DumpFile, ListedModule
from ..dumps import explain_name
from ..model import Origin


def origin_record(origin: Origin) -> dict[str, Any]:
    return {
        "op_name": origin.op_name,
        "op_type": origin.op_type,
        "source_file": origin.source_file,
        "source_line": origin.source_line,
        "stack": [{"file": f.file, "function": f.function, "line": f.line} for f in origin.stack],
    }


def constant_record(site: ConstantSite) -> dict[str, Any]:
    literal = site.instruction.literal
    return {
        "computation": site.computation,
        "name": site.name,
        "line": site.instruction.line,
        "shape": site.shape,
        "value": abbreviate(site.instruction),
        "literal": None if literal is None or literal.elided else literal.text,
        "elided": bool(literal and literal.elided),
        "origin": origin_record(site.origin),
        "origin_from_users": list(site.origin_via),
    }


def dump_file_record(file: DumpFile, *, explain: bool = False) -> dict[str, Any]:
    record: dict[str, Any] = {
        "path": file.relative,
        "kind": file.kind,
        "stage": file.stage.label if file.stage else None,
        "size": file.size,
    }
    if explain:
        record["parts"] = [{"text": p.text, "meaning": p.meaning} for p in explain_name(file)]
    return record


def listed_module_record(row: ListedModule, *, explain: bool = False) -> dict[str, Any]:
    module = row.module
    return {
        "id": module.module_id,
        "program": module.normalised,
        "program_as_written": module.program,
        "frontend": module.name.frontend,
        "timestamp": module.timestamp,
        "stages": list(module.stages),
        "size": module.size,
        "instructions": row.instructions,
        "error": row.error,
        "main": row.is_main,
        "path": None if module.path is None else str(module.path),
        "files": [dump_file_record(f, explain=explain) for f in module.files],
    }
