"""A module printed canonically: what stays when the run-to-run noise is gone.

Two dumps of the same program differ in ways nobody cares about: XLA and
the frontends number instructions and computations with global counters
(``add.123`` in one run is ``add.127`` in the next), JAX writes a table of
stack frames, and every instruction carries metadata pointing at source
lines. ``canonical_text`` prints a ``Module`` with all of that made
stable, so a line-based diff of two canonical texts shows only real
changes. It serves two jobs:

* ``git diff`` through a textconv driver (``hlodiff canon``): a renumber-only
  commit shows no diff, a changed constant shows one line;
* the fingerprints a baseline records: the sha256 of the canonical text
  under what each cache key in ``hashes.HASHES`` ignores (``VIEWS``).

Names are made stable by position, not by the numbers in them: in each
computation, parameters become ``p<N>`` (their parameter number) and every
other instruction ``<opcode>.<k>``, k counting that opcode in definition
order; computations become their name without counters plus a count of
that base name (``region_0.15`` -> ``region.0``), the entry computation is
``main``. Adding one instruction renames only the later instructions of the
same opcode in the same computation. Names repeat across computations, so
the text is for reading and hashing, not for XLA's parser.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ..dumps import normalise_program
from ..analysis.hashes import HASHES
from ..model import CALL_ATTRIBUTES, Computation, Instruction, Module

_INSTRUCTION_LISTS = frozenset({"control-predecessors", "control_predecessors"})
_NAME_TOKEN = re.compile(r"%?([A-Za-z_][\w.\-]*)")
_COUNTERS = re.compile(r"(?:[._]\d+)+$")


@dataclass(frozen=True)
class View:
    """What a canonical text keeps.

    ``metadata`` keeps each instruction's op_type, op_name and source,
    with JAX's stack-frame ids resolved into the call stack (the frame
    tables themselves are never printed: their ids change between runs).
    Literals are kept as printed (``{...}`` stays ``{...}``).
    """

    metadata: bool = False


# The canonical text ``hlodiff canon`` prints, for reading and for git.
READING = View()

# Per cache key (``hashes.HASHES``), the text whose sha256 stands for it: with
# the metadata where the key hashes it (XLA's printed fingerprint, the hashes
# of a module proto), without it elsewhere.
VIEWS = {h.name: View(metadata=h.metadata) for h in HASHES}


def canonical_text(module: Module, view: View = READING) -> str:
    """``module`` printed with stable names and only what ``view`` keeps."""
    computation_names = _computation_names(module)
    parts = [", ".join([f"HloModule {normalise_program(module.name)}"]
                       + [f"{a.name}={a.text}" for a in module.header])]
    for computation in module.computations:
        parts.append(_computation(module, computation, computation_names, view))
    return "\n\n".join(parts) + "\n"


def fingerprints(module: Module) -> dict[str, str]:
    """For each cache key, ``sha256:<hex>`` of the canonical text under its view.

    Equal fingerprints mean the two modules cannot differ in anything that
    key hashes; they are hlodiff's stand-ins, not the frameworks' own values.
    """
    return {name: "sha256:" + hashlib.sha256(canonical_text(module, view).encode()).hexdigest()
            for name, view in VIEWS.items()}


def _computation_names(module: Module) -> dict[str, str]:
    names: dict[str, str] = {}
    seen: dict[str, int] = {}
    for computation in module.computations:
        if computation is module.entry:
            names[computation.name] = "main"
            continue
        base = _COUNTERS.sub("", computation.name) or "computation"
        names[computation.name] = f"{base}.{seen.get(base, 0)}"
        seen[base] = seen.get(base, 0) + 1
    return names


def _instruction_names(computation: Computation) -> dict[str, str]:
    names: dict[str, str] = {}
    seen: dict[str, int] = {}
    for instruction in computation.instructions:
        if instruction.opcode == "parameter":
            names[instruction.name] = f"p{instruction.parameter_number}"
            continue
        names[instruction.name] = f"{instruction.opcode}.{seen.get(instruction.opcode, 0)}"
        seen[instruction.opcode] = seen.get(instruction.opcode, 0) + 1
    return names


def _computation(module: Module, computation: Computation, computation_names: dict[str, str],
                 view: View) -> str:
    names = _instruction_names(computation)
    params = ", ".join(f"{names[p.name]}: {p.shape}" for p in computation.parameters)
    head = f"{'ENTRY ' if computation is module.entry else ''}%{computation_names[computation.name]}" \
           f" ({params}) -> {computation.root.shape} {{"
    body = [f"  {_instruction(module, i, names, computation_names, view)}"
            for i in computation.instructions]
    tail = "}"
    if computation.execution_thread is not None:
        tail += f", execution_thread={_string(computation.execution_thread)}"
    return "\n".join([head, *body, tail])


def _instruction(module: Module, instruction: Instruction, names: dict[str, str],
                 computation_names: dict[str, str], view: View) -> str:
    if instruction.opcode == "constant":
        operands = instruction.operand_text
    elif instruction.opcode == "parameter":
        operands = str(instruction.parameter_number)
    else:
        operands = ", ".join(f"%{names[o]}" if o in names else o for o in instruction.operands)
    shape = f"{instruction.shape} " if instruction.shape is not None else ""
    text = f"{'ROOT ' if instruction.is_root else ''}%{names[instruction.name]} = {shape}" \
           f"{instruction.opcode}({operands})"
    for name, value in instruction.attribute_items:
        if name == "metadata":
            continue
        if name in CALL_ATTRIBUTES:
            value = _rename(value, computation_names)
        elif name in _INSTRUCTION_LISTS:
            value = _rename(value, names)
        text += f", {name}={value}"
    if view.metadata:
        text += _metadata(module, instruction)
    return text


def _rename(text: str, names: dict[str, str]) -> str:
    return _NAME_TOKEN.sub(lambda m: f"%{names[m[1]]}" if m[1] in names else m[0], text)


def _metadata(module: Module, instruction: Instruction) -> str:
    """Origin fields in a fixed order, the stack spelled out instead of frame ids."""
    origin = module.origin(instruction)
    if not origin:
        return ""
    fields = []
    if origin.op_type:
        fields.append(f"op_type={_string(origin.op_type)}")
    if origin.op_name:
        fields.append(f"op_name={_string(origin.op_name)}")
    if origin.location:
        fields.append(f"source={_string(origin.location)}")
    if origin.stack:
        stack = " < ".join(f"{f.function} ({f.file}:{f.line})" for f in origin.stack)
        fields.append(f"stack={_string(stack)}")
    return ", metadata={" + " ".join(fields) + "}"


def _string(text: str) -> str:
    """``text`` as an HLO string: quotes and backslashes escaped, so a name
    holding them ends where it should (``hlodiff canon`` writes control
    characters as escapes: render/escape.py)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
