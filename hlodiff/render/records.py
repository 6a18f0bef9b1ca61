"""Records to plain JSON-ready data, shared by the JSON and Markdown renderers."""

from __future__ import annotations

from typing import Any

from ..constants import ConstantSite, abbreviate
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
