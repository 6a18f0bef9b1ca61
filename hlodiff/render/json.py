"""JSON output: stable key order, UTF-8, one document per run."""

from __future__ import annotations

import json
from typing import Any, TextIO

from ..analysis.constants import ConstantSite
from ..dumps import Listing
from .records import constant_record, dump_file_record, listed_module_record

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


def ls_document(listing: Listing, *, explain: bool = False) -> dict[str, Any]:
    main = listing.main.module
    return {
        "schema_version": SCHEMA_VERSION,
        "dump": str(listing.dump.root),
        "main_program": {"id": main.module_id, "program": main.normalised,
                         "path": str(main.path), "reason": listing.main.reason},
        "modules": [listed_module_record(row, explain=explain) for row in listing.rows],
        "unknown_files": [dump_file_record(f, explain=explain) for f in listing.dump.unknown],
    }


def varying_constants_document(paths: list[str], varying) -> dict[str, Any]:
    """Constants whose value differs across runs: ``values`` has one entry per run."""
    return {
        "schema_version": SCHEMA_VERSION,
        "runs": paths,
        "constants": [dict(constant_record(v.site), values=list(v.values))
                      for v in varying if not v.undecided],
        # printed as {...} in every run: not compared
        "undecided": [constant_record(v.site) for v in varying if v.undecided],
    }
