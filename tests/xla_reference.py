"""What XLA's own C++ parser (bundled in jaxlib) makes of HLO text.

Run as a subprocess by test_conformance.py: reads JSON lines
``{"key": ..., "text": ...}`` on stdin and prints one JSON line per input:
``{"key", "ok": true, "computations": {name: [[opcode, shape], ...]}}`` or
``{"key", "ok": false, "error": ...}``. jaxlib's parser can crash the
process on some newer syntax, which is why it runs apart from pytest; the
caller restarts it after the input that crashed it.
"""

from __future__ import annotations

import json
import re
import sys

_DEFINITION = re.compile(r"\s*(?:ROOT\s+)?%?[\w.\-]+\s*=\s*(.*?)\s+([a-z][a-z0-9\-]*)\(", re.S)


def describe(text: str) -> dict:
    from jax._src.lib import hlo

    module = hlo.hlo_module_from_text(text)
    computations = {}
    for computation in module.computations():
        rows = []
        for instruction in computation.instructions():
            m = _DEFINITION.match(instruction.to_string())
            rows.append([m.group(2), m.group(1)] if m else [str(instruction.opcode), None])
        computations[computation.name] = rows
    return computations


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps({"key": request["key"], "ok": None}), flush=True)  # "started"
        try:
            answer = {"key": request["key"], "ok": True, "computations": describe(request["text"])}
        except Exception as exc:  # XLA rejected the text
            answer = {"key": request["key"], "ok": False, "error": str(exc)[:300]}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
