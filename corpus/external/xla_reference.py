"""What XLA's own C++ HLO parser (bundled in jaxlib) makes of every module.

``python3 xla_reference.py [--modules DIR] [--out DIR]`` reads
``DIR/<slug>/<n>.hlo`` and writes, for each, ``OUT/<slug>/<n>.json``:

    {"name": "<slug>/<n>.hlo", "accepted": true|false, "error": "...",
     "module": "<module name>", "entry": "<entry computation>",
     "computations": [{"name", "instruction_count", "root",
                       "instructions": [{"name", "opcode", "shape", "operands",
                                         "called", "is_root"}, ...]}, ...]}

and, when XLA accepts the text, ``OUT/<slug>/<n>.reprint.hlo``: XLA's own
print of the parsed module (``HloModule.to_string()``).

Instructions are listed in the computation's own order (the text's, with
the instructions XLA makes for nested operands just before their user). The
model is read from the module's serialized HloModuleProto (names,
opcodes, operand and called-computation ids, root ids: decoded here with a
few lines of protobuf wire format, so no protobuf package is needed) and each
instruction's shape from XLA's print of that instruction. Parsing runs in a
worker process, since jaxlib's parser can abort the process on some inputs;
the worker is restarted after the module that killed it, which is recorded
as ``{"accepted": false, "error": "crashed (exit code N)"}``.

``python3 xla_reference.py --text FILE`` prints the same JSON for one file;
``--repros DIR`` writes ``X.xla.hlo`` (XLA's re-print) beside each ``X.hlo``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

# --- protobuf wire format: just enough for HloModuleProto ---------------------------------


def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7


def _fields(data: bytes):
    """(field number, wire type, value) for each field; packed repeated ints
    come as one length-delimited bytes value."""
    i, n = 0, len(data)
    while i < n:
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
            raise ValueError(f"wire type {wire}")
        yield number, wire, value


def _ints(wire: int, value) -> list[int]:
    if wire == 0:
        return [value]
    out, i = [], 0
    while i < len(value):
        v, i = _varint(value, i)
        out.append(v)
    return out


def decode_module(data: bytes) -> dict:
    """HloModuleProto: name (1), entry_computation_name (2), computations (3):
    HloComputationProto name (1), instructions (2), id (5), root_id (6);
    HloInstructionProto name (1), opcode (2), id (35), operand_ids (36),
    called_computation_ids (38)."""
    module = {"name": "", "entry": "", "computations": []}
    for number, wire, value in _fields(data):
        if number == 1:
            module["name"] = value.decode()
        elif number == 2:
            module["entry"] = value.decode()
        elif number == 3:
            computation = {"name": "", "id": 0, "root_id": 0, "instructions": []}  # proto3: 0 is not sent
            for cn, cw, cv in _fields(value):
                if cn == 1:
                    computation["name"] = cv.decode()
                elif cn == 5:
                    computation["id"] = cv
                elif cn == 6:
                    computation["root_id"] = cv
                elif cn == 2:
                    instruction = {"name": "", "opcode": "", "id": 0, "operand_ids": [],
                                   "called_ids": []}
                    for inn, iw, iv in _fields(cv):
                        if inn == 1:
                            instruction["name"] = iv.decode()
                        elif inn == 2:
                            instruction["opcode"] = iv.decode()
                        elif inn == 35:
                            instruction["id"] = iv
                        elif inn == 36:
                            instruction["operand_ids"] += _ints(iw, iv)
                        elif inn == 38:
                            instruction["called_ids"] += _ints(iw, iv)
                    computation["instructions"].append(instruction)
            module["computations"].append(computation)
    return module


# --- the worker ---------------------------------------------------------------------------

_NAME = re.compile(r"\s*(?:ROOT\s+)?%?[^\s=]+\s*=\s*")


def shape_of(printed: str) -> str | None:
    """The shape in XLA's print of one instruction ('%x = SHAPE opcode(...)'):
    brackets are balanced, so tuple and buffer shapes, b(...) included, stay whole."""
    m = _NAME.match(printed)
    if not m:
        return None
    i, depth = m.end(), 0
    while i < len(printed):
        c = printed[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == " " and depth == 0:
            if printed[i - 1] != ",":
                break
        i += 1
    return printed[m.end():i]


def describe(text: str) -> tuple[dict, str]:
    """XLA's model of the text and its re-print; raises if XLA rejects it."""
    from jax._src.lib import hlo

    module = hlo.hlo_module_from_text(text)
    reprint = module.to_string()
    proto = decode_module(module.as_serialized_hlo_module_proto())
    shapes, order = {}, {}
    for computation in module.computations():
        for k, instruction in enumerate(computation.instructions()):
            shapes[(computation.name, instruction.name)] = shape_of(instruction.to_string())
            order[(computation.name, instruction.name)] = k
    names = {c["id"]: c["name"] for c in proto["computations"]}
    computations = []
    for c in proto["computations"]:
        ids = {i["id"]: i["name"] for i in c["instructions"]}
        # the proto lists a computation in post order; the computation's own
        # list (what the text gave, anonymous operands just before their user)
        # is the order kept here
        c["instructions"].sort(key=lambda i: order.get((c["name"], i["name"]), 1 << 30))
        rows = []
        root = None
        for i in c["instructions"]:
            is_root = i["id"] == c["root_id"]
            if is_root:
                root = i["name"]
            rows.append({"name": i["name"], "opcode": i["opcode"],
                         "shape": shapes.get((c["name"], i["name"])),
                         "operands": [ids.get(o, f"#{o}") for o in i["operand_ids"]],
                         "called": [names.get(k, f"#{k}") for k in i["called_ids"]],
                         "is_root": is_root})
        computations.append({"name": c["name"], "instruction_count": len(rows), "root": root,
                             "instructions": rows})
    return ({"module": proto["name"], "entry": proto["entry"], "computations": computations},
            reprint)


def worker(out: Path) -> None:
    """Reads 'name<TAB>path' lines; writes the JSON (and re-print) for each."""
    for line in sys.stdin:
        name, path = line.rstrip("\n").split("\t")
        print(json.dumps({"started": name}), flush=True)
        target = out / name[:-len(".hlo")]
        target.parent.mkdir(parents=True, exist_ok=True)
        text = Path(path).read_text(encoding="utf-8")
        try:
            model, reprint = describe(text)
        except Exception as exc:  # XLA rejected the text
            record = {"name": name, "accepted": False, "error": str(exc)[:2000]}
        else:
            record = {"name": name, "accepted": True, **model}
            Path(f"{target}.reprint.hlo").write_text(reprint, encoding="utf-8")
        Path(f"{target}.json").write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
        print(json.dumps({"done": name}), flush=True)


def run_all(modules: Path, out: Path, names: list[str] | None = None) -> dict[str, str]:
    """Runs the worker over every module, restarting it after a crash."""
    pending = names or sorted(str(p.relative_to(modules)) for p in modules.glob("*/*.hlo"))
    status: dict[str, str] = {}
    while pending:
        payload = "".join(f"{n}\t{modules / n}\n" for n in pending)
        run = subprocess.run([sys.executable, __file__, "--worker", "--out", str(out)],
                             input=payload, capture_output=True, text=True)
        started = None
        for line in run.stdout.splitlines():
            event = json.loads(line)
            if "started" in event:
                started = event["started"]
            else:
                status[event["done"]] = "done"
                started = None
        if started is not None:  # the worker died inside this one
            record = {"name": started, "accepted": False,
                      "error": f"crashed (exit code {run.returncode}): {run.stderr[-500:]}"}
            target = out / started[:-len(".hlo")]
            Path(f"{target}.json").write_text(json.dumps(record, indent=1) + "\n")
            status[started] = "crashed"
            print(f"XLA crashed on {started} (exit {run.returncode})", file=sys.stderr)
        elif run.returncode != 0:
            raise SystemExit(f"worker failed: {run.stderr[-2000:]}")
        pending = [n for n in pending if n not in status]
    return status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--modules", default="/work/external-hlo/modules")
    parser.add_argument("--out", default="/work/external-hlo/xla")
    parser.add_argument("--text", help="print XLA's view of one file")
    parser.add_argument("--repros", metavar="DIR",
                        help="write X.xla.hlo, XLA's re-print, beside every X.hlo in DIR")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("names", nargs="*", help="only these modules (<slug>/<n>.hlo)")
    args = parser.parse_args()
    if args.worker:
        worker(Path(args.out))
    elif args.repros:
        for path in sorted(Path(args.repros).glob("*.hlo")):
            if path.name.endswith(".xla.hlo"):
                continue
            _, reprint = describe(path.read_text(encoding="utf-8"))
            path.with_suffix(".xla.hlo").write_text(reprint, encoding="utf-8")
            print(f"{path.with_suffix('.xla.hlo')}")
    elif args.text:
        try:
            model, reprint = describe(Path(args.text).read_text(encoding="utf-8"))
            print(json.dumps({"accepted": True, **model}, indent=1))
            print(reprint)
        except Exception as exc:
            print(json.dumps({"accepted": False, "error": str(exc)}))
    else:
        status = run_all(Path(args.modules), Path(args.out), args.names or None)
        accepted = sum(json.loads(Path(args.out, n[:-4] + ".json").read_text())["accepted"]
                       for n in status)
        print(f"{len(status)} modules, {accepted} accepted by XLA, "
              f"{sum(s == 'crashed' for s in status.values())} crashed it")


if __name__ == "__main__":
    main()
