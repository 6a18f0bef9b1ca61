"""Does hlodiff read a text as XLA does? Checks shared by the tests that ask.

Two questions, for a module XLA's parser accepts (``xla_reference.py``
gives XLA's view of it):

* ``model_differences``: hlodiff's model is XLA's: the same computations,
  per computation the same root and the same instructions in the same
  order, each with the same name, opcode, shape (layouts included),
  operands and called computations.
* ``reprint_difference``: ``parse(text) == parse(XLA's print of it)``. The
  print is the same program by definition, so the models must be equal,
  except where XLA's print cannot be compared with the text; those cases are
  named (``REPRINT_EXCEPTIONS``), found by a rule, and counted by the tests.
"""

from __future__ import annotations

import re
import sys

import pytest

import hlodiff
from hlodiff.syntax.lexer import balanced_end


def xla_views_or_skip(entries: list[tuple[str, str]]) -> dict[str, dict]:
    """XLA's view of each (key, text); the test is skipped, saying why,
    where jaxlib cannot be imported."""
    try:
        from jax._src.lib import hlo  # noqa: F401
    except Exception as exc:  # pragma: no cover - depends on the machine
        reason = f"jaxlib is not installed here ({exc}); the cross-check needs it"
        print(f"\nSKIPPED cross-check: {reason}", file=sys.stderr)
        pytest.skip(reason)
    import xla_reference
    return xla_reference.views(entries)


def model_differences(module: hlodiff.Module, view: dict) -> list[str]:
    """Where hlodiff's model of a text differs from XLA's (empty: nowhere)."""
    ours = {c.name: c for c in module.computations}
    theirs = {c["name"]: c for c in view["computations"]}
    if set(ours) != set(theirs):
        return [f"computations only in hlodiff: {sorted(set(ours) - set(theirs))}, "
                f"only in XLA: {sorted(set(theirs) - set(ours))}"]
    if module.entry.name != view["entry"]:
        return [f"entry {module.entry.name}, XLA's {view['entry']}"]
    out = []
    for name, computation in theirs.items():
        mine = [{"name": i.name, "opcode": i.opcode, "shape": None if i.shape is None else str(i.shape),
                 "operands": list(i.operands), "called": list(i.called_computations)}
                for i in ours[name].instructions]
        if ours[name].root.name != computation["root"]:
            out.append(f"{name}: root {ours[name].root.name}, XLA's {computation['root']}")
        for index, (a, b) in enumerate(zip(mine, computation["instructions"])):
            if a != b:
                field = next(k for k in b if a[k] != b[k])
                out.append(f"{name}, instruction {index} ({b['name']}): {field} {a[field]}, "
                           f"XLA's {b[field]}")
                break
        if len(mine) != len(computation["instructions"]):
            out.append(f"{name}: {len(mine)} instructions, XLA {len(computation['instructions'])}")
    return out


# XLA prints an async computation holding one instruction as sugar
# (custom-call-start(...)); parsed again, it is a new computation named
# async_wrapped, and every name after it may be renumbered (an all-reduce
# wrapped so even comes back as XLA's own all-reduce-start opcode).
_RESUGARED = "XLA prints the async computation as <op>-start sugar, which renames it"
# origin_recovery_table holds module texts as strings (hlodiff compares them as
# programs); XLA re-prints them: the quotes inside unescaped, which ends the
# string, and a header and its own parameter names added.
_RECOVERY = "XLA re-prints the modules inside an origin_recovery_table"
# dim_labels with '?' for an unknown dimension: XLA prints fewer of them.
_DIM_LABELS = "dim_labels with '?', which XLA prints differently"
REPRINT_EXCEPTIONS = (_RESUGARED, _RECOVERY, _DIM_LABELS)


def reprint_difference(module: hlodiff.Module, text: str, reprint: str) -> str | None:
    """None when parse(XLA's print) equals ``module`` (the parse of ``text``);
    else one of ``REPRINT_EXCEPTIONS``, or what differs.

    Where the text or the print elides a literal (``{...}``), the print gets
    the text's: values one side does not give cannot be compared (XLA
    fills an elided literal with arbitrary values, and its default print
    elides any literal of more than a few elements)."""
    reprint = with_elided_literals(module, reprint)
    again = hlodiff.parse(reprint)
    if again == module:
        return None
    if "origin_recovery_table=" in text:
        return _RECOVERY
    if re.search(r"dim_labels=[^,\s]*\?", text):
        return _DIM_LABELS
    if reprint.count("async-start(") < text.count("async-start("):
        return _RESUGARED
    return _first_difference(module, again)


def with_elided_literals(module: hlodiff.Module, reprint: str) -> str:
    """XLA's ``reprint`` of ``module`` with each literal that either side
    elides (``{...}``) spelled as the module spells it."""
    for _, instruction in module.instructions():
        if instruction.opcode != "constant":
            continue
        at = re.search(rf"%{re.escape(instruction.name)} = [^\n]*? constant\(", reprint)
        if at is None:
            continue
        end = balanced_end(reprint, at.end() - 1)
        if "..." in instruction.operand_text or "..." in reprint[at.end():end]:
            reprint = reprint[:at.end()] + instruction.operand_text + reprint[end - 1:]
    return reprint


def _first_difference(a: hlodiff.Module, b: hlodiff.Module) -> str:
    if (a.name, a.entry.name) != (b.name, b.entry.name):
        return f"module {a.name}/{a.entry.name} vs {b.name}/{b.entry.name}"
    if a.header_keys != b.header_keys or a.entry_layout != b.entry_layout:
        return f"header {sorted(a.header_keys ^ b.header_keys, key=str)[:2]}"
    if a.by_name.keys() != b.by_name.keys():
        return f"computations {sorted(a.by_name.keys() ^ b.by_name.keys())}"
    for name, computation in a.by_name.items():
        other = b.by_name[name]
        if computation != other:
            for instruction in computation.instructions:
                twin = other.by_name.get(instruction.name)
                if twin != instruction:
                    return f"{name}/{instruction.name}: {instruction} vs {twin}"[:400]
            return f"{name}: root or thread"
    return "instruction order (the module is scheduled)"
