"""Today's hlodiff against XLA's C++ parser on the external corpus.

``PYTHONPATH=<checkout> python3 measure.py`` reads the modules
(``/work/external-hlo/modules``) and what XLA made of them
(``/work/external-hlo/xla``, written by xla_reference.py) and, on every
module XLA accepts, asks three questions:

a. parse   -- does ``hlodiff.parse(text)`` read it, and ``hlodiff.check`` every
              attribute value and literal in it (read lazily otherwise)?
b. model   -- does hlodiff's model match XLA's, computation by computation:
              instruction count, and per instruction opcode, shape, operands,
              called computations and whether it is the root?
c. same    -- does ``python3 -m hlodiff diff MODULE REPRINT --format json``
              say same_executable true with no finding that moves a hash
              (a finding whose ``affects`` is not empty)? REPRINT is XLA's own
              print of the module, so any such finding is a false alarm.

It prints the counts per repository and the failures grouped by cause (a
module can have several causes; each is counted once per module), and writes
the per-module details to ``OUT/measure/<slug>/<n>.json`` (the diff's JSON is
cached there: ``--fresh`` reruns it).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path("/work/external-hlo")

# --- causes ------------------------------------------------------------------------------

CAUSES = {
    "default-layout": "the text gives a shape without a layout; XLA assigns the default "
                      "(major-to-minor) layout and prints it",
    "inline-operands": "an operand written as a nested instruction, e.g. add(x, f32[] "
                       "constant(0)); XLA makes it a separate instruction named <opcode>.anon",
    "inline-computation": "a called computation written inline (to_apply={...}); XLA makes it a "
                          "computation of its own named '_' ('_.1', ...); hlodiff keeps the body "
                          "as an attribute value (called_computations raises on it, and a tiled "
                          "layout like {:T(256)} inside it does not read)",
    "async-sugar": "async syntax sugar: a bare call-start/-done pair becomes async-start/-done "
                   "around an async_wrapped computation, and XLA prints an async-start of a "
                   "single op in the sugared form (negate-start)",
    "shape-rewritten": "XLA replaces the written shape: an old-style outfeed declared as () or "
                       "(s32[]) becomes token[]",
    "async-done-calls": "hlodiff lists the wrapped computation as called by async-done/-update; "
                        "in XLA only the async-start calls it",
    "inferred-shape": "the shape is left out of the text; XLA infers it from the operands",
    "names": "XLA renames: instruction names are made unique across the module (x -> x.1), "
             "computation names starting with '_' are rewritten",
    "implicit-root": "no instruction is marked ROOT; XLA takes the last one as the root "
                     "(hlodiff's Computation.root does too, but no Instruction.is_root is set)",
    "line-breaks": "several instructions on one line or one over several lines in a way "
                   "hlodiff's parser does not read",
    "whitespace": "whitespace inside a shape, e.g. 'f32[51, 16] {0, 1}'",
    "entry-layout-header": "the header has no entry_computation_layout; XLA computes one from "
                           "the entry's parameters and root and prints it",
    "backend-config-quoting": "backend_config written as a quoted string; XLA prints JSON "
                              "configs unquoted (backend_config={...})",
    "literal-spelling": "the same constant spelled differently (0.0 vs 0, {1,2} vs {1, 2}, "
                        "-448. vs -448, -0 vs 0 for integers), or given with more digits than "
                        "its type holds (f16 0.1 is printed 0.099976)",
    "computation-order": "the text lists an instruction's called computations in another order "
                         "than XLA prints them (while ... body=B, condition=C; XLA prints "
                         "condition= first); hlodiff pairs them by position, compares the body "
                         "with the condition and reports ops changed",
    "implicit-attribute": "XLA fills in and prints an attribute the text left out "
                          "(broadcast dimensions={}, replica_groups={}, outfeed_shape)",
    "default-attribute-dropped": "the text spells an attribute at its default value "
                                 "(num_partitions=1, is_reverse=false...); XLA does not print it",
    "sigil-spelling": "names inside attributes written without '%' (control-predecessors={x}); "
                      "XLA prints {%x}",
    "elided-tuple-literal": "XLA prints a tuple-shaped constant as constant({...}); hlodiff "
                            "cannot read that back (error on XLA's own print)",
    "elided-constant": "XLA's print (to_string) elides constants of many elements as {...}; "
                       "hlodiff counts {...} against the values as a change",
    "scalar-literal-for-array": "a scalar literal for an array shape (f32[2] constant(1)); XLA "
                                "sets the first element and zero-fills the rest",
    "sharding-spelling": "the same sharding spelled differently (e.g. devices=[2,1]0,1 vs "
                         "devices=[2,1]<=[2])",
    "attribute-spelling": "another attribute printed differently by XLA than written",
}

_INLINE_BODY = re.compile(r"\b(?:calls|to_apply|body|condition)=\s*\{\s*(?:ROOT\s+)?%?[\w.\-]+\s*=")
_LAYOUT = re.compile(r"\]\{[^{}]*\}")
_ANON = re.compile(r"\.anon(\.\d+)?$")


def strip_layouts(text: str | None) -> str | None:
    return None if text is None else _LAYOUT.sub("]", text)


def _renamed(ours: str, theirs: str) -> bool:
    """theirs is XLA's uniquified version of ours (x -> x.1 / x.0 -> x.1)."""
    return theirs != ours and (re.sub(r"\.\d+$", "", theirs) in (ours, re.sub(r"\.\d+$", "", ours)))


# --- (b) the model ------------------------------------------------------------------------

def compare_models(module, xla: dict) -> list[tuple[str, str]]:
    """(cause, detail) for every way hlodiff's model differs from XLA's."""
    found: list[tuple[str, str]] = []
    ours = {c.name: c for c in module.computations}
    theirs = {c["name"]: c for c in xla["computations"]}
    only_theirs = [n for n in theirs if n not in ours]
    only_ours = [n for n in ours if n not in theirs]
    pairs = [(ours[n], theirs[n]) for n in ours if n in theirs]
    for name in only_theirs:
        if re.fullmatch(r"_(\.\d+)?", name):
            found.append(("inline-computation", f"XLA computation {name}"))
            continue
        if "async_wrapped" in name or name.startswith("wrapped_"):
            found.append(("async-sugar", f"XLA computation {name}"))
            continue
        # a renamed computation: same instructions under another name
        match = next((o for o in only_ours if len(ours[o].instructions) ==
                      theirs[name]["instruction_count"]), None)
        if match is not None:
            only_ours.remove(match)
            found.append(("names", f"computation {match} -> {name}"))
            pairs.append((ours[match], theirs[name]))
        else:
            found.append(("other", f"XLA has computation {name}"))
    for name in only_ours:
        found.append(("other", f"hlodiff has computation {name}, XLA not"))

    for oc, tc in pairs:
        has_root = any(i.is_root for i in oc.instructions)
        anon = [r for r in tc["instructions"] if _ANON.search(r["name"])]
        for r in anon:
            found.append(("inline-operands", f"{tc['name']}: XLA instruction {r['name']}"))
        rows_in_order = [r for r in tc["instructions"] if not _ANON.search(r["name"])]
        # the computation's list is in text order on both sides: pair by position
        # (XLA may rename an instruction to keep names unique in the module)
        if len(rows_in_order) == len(oc.instructions):
            paired = list(zip(oc.instructions, rows_in_order))
        else:
            found.append(("other", f"{tc['name']}: {len(oc.instructions)} instructions, "
                                   f"XLA {len(rows_in_order)} (+{len(anon)} anonymous)"))
            by_name = {r["name"]: r for r in rows_in_order}
            paired = [(i, by_name[i.name]) for i in oc.instructions if i.name in by_name]
        rename = {i.name: r["name"] for i, r in paired}
        for instruction, row in paired:
            if instruction.name != row["name"]:
                found.append(("names" if _renamed(instruction.name, row["name"]) else "other",
                              f"{tc['name']}: {instruction.name} -> {row['name']}"))
        mine = {i.name: i for i, _ in paired}
        rows = {i.name: r for i, r in paired}
        for name, instruction in mine.items():
            row = rows[name]
            where = f"{tc['name']}/{name}"
            if instruction.opcode != row["opcode"]:
                sugar = row["opcode"].startswith("async-") and \
                    instruction.opcode.endswith(("-start", "-update", "-done"))
                found.append(("async-sugar" if sugar else "other",
                              f"{where}: opcode {instruction.opcode} vs {row['opcode']}"))
            shape = None if instruction.shape is None else str(instruction.shape)
            if row["shape"]:  # XLA's print numbers long tuples: (a, ..., /*index=5*/f)
                row = dict(row, shape=re.sub(r"/\*index=\d+\*/", "", row["shape"]))
            if shape != row["shape"]:
                if shape is None:
                    found.append(("inferred-shape", f"{where}: XLA infers {row['shape']}"))
                elif strip_layouts(shape) == strip_layouts(row["shape"]):
                    found.append(("default-layout", f"{where}: {shape} vs {row['shape']}"))
                elif strip_layouts(shape).replace(" ", "") == strip_layouts(row["shape"]):
                    found.append(("whitespace", f"{where}: {shape} vs {row['shape']}"))
                elif row["opcode"] == "outfeed" and row["shape"] == "token[]":
                    found.append(("shape-rewritten", f"{where}: {shape} vs {row['shape']}"))
                else:
                    found.append(("other", f"{where}: shape {shape} vs {row['shape']}"))
            operands = list(instruction.operands)
            if operands != row["operands"]:
                causes = set()
                for a, b in zip(operands, row["operands"]):
                    if a == b or rename.get(a) == b:
                        continue
                    if _ANON.search(b) or "(" in a:
                        causes.add("inline-operands")
                    elif _renamed(a, b):
                        causes.add("names")
                    else:
                        causes.add("other")
                if len(operands) != len(row["operands"]):
                    causes.add("inline-operands" if any(_ANON.search(b) for b in row["operands"])
                               else "other")
                for cause in sorted(causes):
                    found.append((cause, f"{where}: operands {operands} vs {row['operands']}"))
            called = sorted(instruction.called_computations)
            if called != sorted(row["called"]):
                xla_called = sorted(row["called"])
                if row["opcode"] in ("async-done", "async-update") and not xla_called:
                    cause = "async-done-calls"
                elif any(re.fullmatch(r"_(\.\d+)?", c) for c in xla_called):
                    cause = "inline-computation"
                elif any("async_wrapped" in c for c in xla_called):
                    cause = "async-sugar"
                elif len(called) == len(xla_called) and all(
                        a == b or _renamed(a, b) or (a.startswith("_") and b.endswith(a.lstrip("_")))
                        for a, b in zip(called, xla_called)):
                    cause = "names"
                else:
                    cause = "other"
                found.append((cause, f"{where}: calls {called} vs {xla_called}"))
            if instruction.is_root != row["is_root"]:
                found.append(("implicit-root" if not has_root else "other",
                              f"{where}: is_root {instruction.is_root} vs {row['is_root']}"))
    return found


# --- (a) parse errors ---------------------------------------------------------------------

def classify_parse_error(message: str) -> str:
    if re.search(r"unexpected text after the instruction|expected an instruction name|"
                 r"expected '=' after the instruction name", message):
        return "line-breaks"
    if re.search(r"\] \{", message):
        return "whitespace"
    return "other"


# --- (c) the diff against XLA's re-print -------------------------------------------------

_IMPLICIT_ATTRIBUTES = ("dimensions", "replica_groups", "outfeed_shape")
_STRUCTURAL = ("op_added", "op_removed", "opcode", "constant", "operand", "attribute", "dtype",
               "layout", "shape")


def called_order_changed(module, reprint) -> bool:
    """Does XLA's print list some instruction's called computations in another
    order than the text (a while written body=B, condition=C is printed
    condition=C, body=B)?"""
    theirs = {(c.name, i.name): i for c in reprint.computations for i in c.instructions}
    for c in module.computations:
        for i in c.instructions:
            other = theirs.get((c.name, i.name))
            try:
                mine, xla = i.called_computations, other and other.called_computations
            except Exception:  # noqa: BLE001 - inline computations
                continue
            if other is not None and len(mine) > 1 and mine != xla and sorted(mine) == sorted(xla):
                return True
    return False


def classify_finding(finding: dict, order_changed: bool = False) -> str:
    """The cause of one hash-moving finding of ``hlodiff diff MODULE REPRINT``."""
    kind, detail = finding.get("kind", ""), finding.get("detail") or ""
    old, new = finding.get("old"), finding.get("new")
    places = finding.get("places") or []
    where = finding.get("where") or {}
    if "entry_computation_layout" in detail and old is None:
        return "entry-layout-header"
    if any(_ANON.search(p.get("b") or "") for p in places) or \
            "different number of parameters" in detail:
        return "inline-operands"
    if "backend_config" in detail and isinstance(old, str) and old.startswith('"'):
        return "backend-config-quoting"
    if order_changed and kind in _STRUCTURAL and not detail.startswith("module header"):
        return "computation-order"
    if (kind == "opcode" and str(old).startswith("async-")) or \
            (kind in ("op_added", "op_removed") and re.search(r"\basync-|-start\b|-done\b",
                                                              str(old) + str(new))):
        return "async-sugar"
    if kind == "dtype" and new == "token[]":
        return "shape-rewritten"
    if isinstance(old, str) and isinstance(new, str) and old != new and \
            strip_layouts(old) == strip_layouts(new):
        return "default-layout"
    if kind == "constant" and new == "{...}":
        return "elided-constant"
    if kind == "constant" and isinstance(old, str) and isinstance(new, str) and \
            re.fullmatch(r"-?[\d.]+", old.strip()) and new.startswith("{"):
        return "scalar-literal-for-array"
    if kind == "attribute":
        if detail in _IMPLICIT_ATTRIBUTES and old is None:
            return "implicit-attribute"
        if new is None and (old in ("false", "1", "{}", "0") or detail.startswith("module header")
                            and old in ("false", "1", "{}")):
            return "default-attribute-dropped"
        if detail == "control-predecessors" and isinstance(new, str) and \
                new.replace("%", "") == old:
            return "sigil-spelling"
        if "sharding" in detail:
            return "sharding-spelling"
        if isinstance(old, str) and isinstance(new, str) and \
                old.lower().replace(" ", "") == new.lower().replace(" ", ""):
            return "attribute-spelling"
    if kind in ("constant", "literal") or (isinstance(old, str) and "constant" in old):
        return "literal-spelling"
    return f"other:{kind}:{detail[:40]}"


def run_diff(name: str, fresh: bool, out: Path) -> dict:
    cache = out / "measure" / (name[:-len(".hlo")] + ".diff.json")
    if cache.exists() and not fresh:
        return json.loads(cache.read_text())
    module = ROOT / "modules" / name
    reprint = ROOT / "xla" / (name[:-len(".hlo")] + ".reprint.hlo")
    env = dict(os.environ, HLODIFF_NO_CACHE="1")
    run = subprocess.run([sys.executable, "-m", "hlodiff", "diff", str(module), str(reprint),
                          "--format", "json", "--no-cache", "-q"],
                         capture_output=True, text=True, timeout=1800, env=env)
    try:
        answer = json.loads(run.stdout)
    except ValueError:
        answer = {"error": (run.stderr or run.stdout)[-1500:], "exit": run.returncode}
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(answer))
    return answer


# --- driver -------------------------------------------------------------------------------

def measure(name: str, xla: dict, fresh: bool, out: Path, skip_diff: bool) -> dict:
    import hlodiff

    text = (ROOT / "modules" / name).read_text(encoding="utf-8")
    result = {"name": name, "parse": False, "model": False, "same": False, "causes": {}}
    try:
        module = hlodiff.parse(text)
    except Exception as exc:  # noqa: BLE001 - every failure is data here
        cause = classify_parse_error(str(exc))
        result["causes"]["parse"] = {cause: [str(exc)[:400]]}
        return result
    result["parse"] = True
    try:  # values are read on first use: read them all now, as the differ will
        hlodiff.check(module)
    except Exception as exc:  # noqa: BLE001
        result["parse"] = False
        cause = classify_parse_error(str(exc))
        if cause == "other" and _INLINE_BODY.search(text):
            cause = "inline-computation"
        result["causes"]["parse"] = {f"{cause} (read on first use)": [str(exc)[:400]]}
        return result
    try:
        model = compare_models(module, xla)
    except Exception as exc:  # noqa: BLE001 - a value read while comparing raised
        cause = "inline-computation" if "expects computation names" in str(exc) else "other"
        model = [(cause, f"reading the model raised: {str(exc)[:300]}")]
    result["model"] = not model
    grouped: dict[str, list[str]] = collections.defaultdict(list)
    for cause, detail in model:
        grouped[cause].append(detail)
    result["causes"]["model"] = dict(grouped)
    if skip_diff:
        return result
    answer = run_diff(name, fresh, out)
    if "error" in answer:
        cause = "elided-tuple-literal" if "tuple literal does not match shape" in \
            answer["error"] else "diff-error"
        result["causes"]["same"] = {cause: [answer["error"][-300:]]}
        return result
    moving = [f for f in answer.get("findings", []) if f.get("affects")]
    order_changed = False
    if moving:
        reprint = (ROOT / "xla" / (name[:-len(".hlo")] + ".reprint.hlo")).read_text("utf-8")
        order_changed = called_order_changed(module, hlodiff.parse(reprint))
    result["same"] = bool(answer.get("same_executable")) and not moving
    grouped = collections.defaultdict(list)
    for finding in moving:
        grouped[classify_finding(finding, order_changed)].append(
            f"{finding.get('kind')} {finding.get('detail') or ''}: {str(finding.get('old'))[:120]}"
            f" -> {str(finding.get('new'))[:120]}")
    if not result["same"] and not moving:
        grouped["other:same_executable false without a hash-moving finding"].append("")
    result["causes"]["same"] = dict(grouped)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=str(ROOT))
    parser.add_argument("--fresh", action="store_true", help="rerun every hlodiff diff")
    parser.add_argument("--no-diff", action="store_true", help="only (a) and (b)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--examples", type=int, default=2, help="examples printed per cause")
    args = parser.parse_args()
    out = Path(args.out)
    records = {}
    for path in sorted((ROOT / "xla").glob("*/*.json")):
        record = json.loads(path.read_text())
        records[record["name"]] = record
    accepted = {n: r for n, r in records.items() if r["accepted"]}

    if not args.no_diff:  # the diffs run as subprocesses, several at once
        with ThreadPoolExecutor(args.jobs) as pool:
            list(pool.map(lambda n: run_diff(n, args.fresh, out), sorted(accepted)))
    # hlodiff's parser is not made for threads: parse and compare in this one
    results = [measure(name, accepted[name], False, out, args.no_diff) for name in sorted(accepted)]
    for r in results:
        target = out / "measure" / (r["name"][:-len(".hlo")] + ".json")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(r, indent=1))

    per_repo = collections.defaultdict(collections.Counter)
    for name, record in records.items():
        per_repo[name.split("/")[0]]["modules"] += 1
        per_repo[name.split("/")[0]]["xla"] += record["accepted"]
    for r in results:
        c = per_repo[r["name"].split("/")[0]]
        c["parse"] += r["parse"]
        c["model"] += r["model"]
        c["same"] += r["same"]
    print(f"{'repository slug':24} {'modules':>8} {'XLA ok':>7} {'parse':>6} {'model':>6} {'same':>6}")
    total = collections.Counter()
    for slug in sorted(per_repo):
        c = per_repo[slug]
        total.update(c)
        print(f"{slug:24} {c['modules']:8} {c['xla']:7} {c['parse']:6} {c['model']:6} {c['same']:6}")
    print(f"{'total':24} {total['modules']:8} {total['xla']:7} {total['parse']:6} "
          f"{total['model']:6} {total['same']:6}")

    kinds = {}
    manifest = Path(__file__).with_name("MANIFEST.tsv")
    if manifest.exists():
        for line in manifest.read_text(encoding="utf-8").splitlines()[1:]:
            cells = line.split("\t")
            kinds[cells[0]] = cells[7]
    for kind in ("dump", "test-string"):
        chosen = [r for r in results if kinds.get(r["name"]) == kind]
        everything = [n for n in records if kinds.get(n) == kind]
        print(f"{kind:24} {len(everything):8} {len(chosen):7} "
              f"{sum(r['parse'] for r in chosen):6} {sum(r['model'] for r in chosen):6} "
              f"{sum(r['same'] for r in chosen):6}")

    for question in ("parse", "model", "same"):
        counts = collections.Counter()
        alone = collections.Counter()
        examples = collections.defaultdict(list)
        failing = [r for r in results if not r[question] and question in r["causes"]]
        for r in failing:
            if len(r["causes"][question]) == 1:
                alone[next(iter(r["causes"][question]))] += 1
            for cause, details in r["causes"][question].items():
                counts[cause] += 1
                if len(examples[cause]) < args.examples:
                    examples[cause].append(f"{r['name']}: {details[0][:150]}")
        print(f"\n({question}) {len(failing)} modules fail; causes (modules with the cause, "
              f"modules with it as the only cause):")
        for cause, n in counts.most_common():
            print(f"  {n:5} {alone[cause]:5}  {cause}")
            for e in examples[cause]:
                print(f"           e.g. {e}")


if __name__ == "__main__":
    main()
