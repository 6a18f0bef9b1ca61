"""JSON output: stable key order, UTF-8, one document per run."""

from __future__ import annotations

import json
from typing import Any, TextIO

from ..constants import ConstantSite
from .records import constant_record

SCHEMA_VERSION = 1


def dump(data: dict[str, Any], stream: TextIO) -> None:
    json.dump(data, stream, indent=2, ensure_ascii=False, sort_keys=False)
    stream.write("\n")


def constants_document(path: str, module_name: str, sites: list[ConstantSite]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "file": path,
        "module": module_name,
        "constants": [constant_record(s) for s in sites],
    }
