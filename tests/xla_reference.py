"""What XLA's own C++ parser (bundled in jaxlib) makes of HLO text.

Run as a subprocess by the tests (jaxlib's parser can abort the process on
some inputs, so it never runs inside pytest): reads JSON lines
``{"key": ..., "text": ...}`` on stdin and prints, for each, a line
``{"key", "ok": null}`` when it starts, then one of

    {"key", "ok": true, "module": name, "entry": name, "scheduled": bool,
     "computations": [{"name", "root", "thread",
                       "instructions": [{"name", "opcode", "shape", "operands",
                                         "called"}, ...]}, ...],
     "reprint": XLA's print of the module,
     "program": the program without names or metadata (see ``_program``)}
    {"key", "ok": false, "error": ...}

Instructions are in each computation's own order (the text's, with the
instructions XLA makes for nested operands just before their user); shapes
are XLA's print of them, layouts included; operands and called computations
are names. The re-print is ``HloModule.to_string()`` with large constants
printed (the default would print ``{...}`` for any constant of more than a
few elements, which is a different program). Called computations and roots
come from the module's HloModuleProto, decoded with a few lines of protobuf
wire format (no protobuf package needed).
"""

from __future__ import annotations

import json
import os
import re
import select
import subprocess
import sys
import tempfile
import threading
from pathlib import Path


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, i
        shift += 7


def _fields(data: bytes):
    """(field number, wire type, value) of each field of a message."""
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 1:
            value, i = data[i:i + 8], i + 8
        elif wire == 2:
            length, i = _varint(data, i)
            value, i = data[i:i + length], i + length
        elif wire == 5:
            value, i = data[i:i + 4], i + 4
        else:
            raise ValueError(f"protobuf wire type {wire}")
        yield number, wire, value


def _ints(wire: int, value) -> list[int]:
    if wire == 0:
        return [value]
    out, i = [], 0
    while i < len(value):
        number, i = _varint(value, i)
        out.append(number)
    return out


def _proto_computations(data: bytes) -> dict[str, dict]:
    """From HloModuleProto (computations: 3): per computation name (1), its
    root id (6) and, per instruction name (1), its id (35), opcode (2) and
    called computation ids (38)."""
    computations, names = {}, {}
    for number, _, value in _fields(data):
        if number != 3:
            continue
        computation = {"name": "", "id": 0, "root_id": 0, "called": {}}
        for cn, cw, cv in _fields(value):
            if cn == 1:
                computation["name"] = cv.decode()
            elif cn == 5:
                computation["id"] = cv
            elif cn == 6:
                computation["root_id"] = cv
            elif cn == 2:
                name, opcode, ident, called = "", "", 0, []
                for number_, wire, field in _fields(cv):
                    if number_ == 1:
                        name = field.decode()
                    elif number_ == 2:
                        opcode = field.decode()
                    elif number_ == 35:
                        ident = field
                    elif number_ == 38:
                        called += _ints(wire, field)
                computation["called"][name] = (ident, opcode, called)
        computations[computation["name"]] = computation
        names[computation["id"]] = computation["name"]
    for computation in computations.values():
        computation["called"] = {name: (ident, opcode, [names[c] for c in called])
                                 for name, (ident, opcode, called)
                                 in computation["called"].items()}
    return computations


_DEFINITION = re.compile(r"\s*(?:ROOT\s+)?%?\S+\s*=\s*")
_MARKER = re.compile(r"/\*.*?\*/")


def _printed_shape(printed: str) -> str:
    """The shape in XLA's print of one instruction (``%x = SHAPE opcode(...)``),
    without the ``/*index=5*/`` markers XLA puts into long tuples."""
    i = _DEFINITION.match(printed).end()
    start, depth = i, 0
    while i < len(printed):
        c = printed[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == " " and depth == 0 and printed[i - 1] != ",":
            break
        i += 1
    return _MARKER.sub("", printed[start:i])


def describe(text: str) -> dict:
    from jax._src.lib import hlo

    module = hlo.hlo_module_from_text(text)
    options = hlo.HloPrintOptions()
    options.print_large_constants = True
    reprint = module.to_string(options)
    proto = _proto_computations(module.as_serialized_hlo_module_proto())
    computations = []
    for computation in module.computations():
        facts = proto[computation.name]
        rows, root = [], None
        for instruction in computation.instructions():
            ident, opcode, called = facts["called"][instruction.name]
            if ident == facts["root_id"]:
                root = instruction.name
            rows.append({"name": instruction.name, "opcode": opcode,
                         "shape": _printed_shape(instruction.to_string()),
                         "operands": [o.name for o in instruction.operands()], "called": called})
        computations.append({"name": computation.name, "root": root, "instructions": rows})
    entry = re.search(r"^ENTRY %?(\S+)", reprint, re.M).group(1)
    header = reprint.split("\n", 1)[0]
    return {"module": module.name, "entry": entry, "scheduled": "is_scheduled=true" in header,
            "computations": computations, "reprint": reprint, "program": _program(module)}


def _program(module) -> str:
    """The program and nothing else: XLA's canonical print (instructions
    named by position, no metadata, every constant and backend_config in
    full, called computations inlined where they are called) without the
    names of the module and of its computations, and without
    ``statistics={...}`` (numbers for visualisation tools, which XLA's
    compilers never read). Two texts are the same program exactly when
    these are equal. Computations the entry never calls count too, as in
    XLA's fingerprint of a module."""
    from jax._src.lib import hlo

    options = hlo.HloPrintOptions.canonical()
    options.print_backend_config = True
    options.print_large_constants = True
    printed = _STATISTICS.sub("", module.to_string(options))
    printed = re.sub(r"^HloModule \S+?(,|\n)", r"HloModule\1", printed)
    return _COMPUTATION.sub(r"\1COMPUTATION {", printed)


_COMPUTATION = re.compile(r"^(ENTRY )?[^\s{}]+ \{$", re.M)
_STATISTICS = re.compile(r", statistics=\{[^{}]*\}")


def views(entries: list[tuple[str, str]], per_text: float = 60.0) -> dict[str, dict]:
    """XLA's view of each (key, text), from this file run as a subprocess,
    restarted after an input that crashed it, or that it worked on for more
    than ``per_text`` seconds (some one-token edits make jaxlib's printer run
    for minutes: seeds 37 and 79 of the verdict fuzz); such an input is
    recorded as rejected."""
    results: dict[str, dict] = {}
    pending = list(entries)
    while pending:
        payload = "".join(json.dumps({"key": k, "text": t}) + "\n" for k, t in pending)
        with tempfile.TemporaryFile() as errors:
            run = subprocess.Popen([sys.executable, str(Path(__file__))], stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, stderr=errors)
            feeding = threading.Thread(target=_feed, args=(run.stdin, payload.encode()),
                                       daemon=True)
            feeding.start()
            started, stalled = None, False
            for line in _lines(run.stdout.fileno(), per_text):
                if line is None:  # no answer for too long: the text being read is at fault
                    stalled = True
                    run.kill()
                    break
                answer = json.loads(line)
                if answer["ok"] is None:
                    started = answer["key"]
                else:
                    results[answer["key"]] = answer
                    started = None
            run.wait()
            feeding.join()
            errors.seek(0)
            error = errors.read().decode(errors="replace")
        if started is not None:  # it died, or stalled, inside this one
            results[started] = {"key": started, "ok": False, "error":
                                f"XLA's parser took more than {per_text:.0f} s" if stalled else
                                f"crashed XLA's parser (exit {run.returncode})"}
        elif stalled or run.returncode != 0:
            raise RuntimeError(f"xla_reference.py failed: {error[-2000:]}")
        pending = [(k, t) for k, t in pending if k not in results]
    return results


def _lines(fd: int, timeout: float):
    """The lines read from ``fd`` until it closes; None, and no more, when
    none comes for ``timeout`` seconds. Read unbuffered, so that waiting
    never misses a line already read."""
    started: list[bytes] = []  # the line being read, in pieces
    while True:
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            yield None
            return
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return
        *ended, rest = chunk.split(b"\n")
        if ended:
            ended[0] = b"".join([*started, ended[0]])
            started = []
            yield from (line.decode() for line in ended)
        started.append(rest)


def _feed(stream, payload: bytes) -> None:
    """Write ``payload`` to ``stream`` and close it; quietly stop if the reader died."""
    try:
        stream.write(payload)
        stream.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


def main() -> None:
    for line in sys.stdin:
        request = json.loads(line)
        print(json.dumps({"key": request["key"], "ok": None}), flush=True)  # "started"
        try:
            answer = {"key": request["key"], "ok": True, **describe(request["text"])}
        except Exception as exc:  # XLA rejected the text
            answer = {"key": request["key"], "ok": False, "error": str(exc)[:500]}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main()
