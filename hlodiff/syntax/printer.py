"""A Module back to HLO text that XLA's parser and hlodiff's accept.

The output uses the current default print style (``%`` sigils, untyped
operands, a signature on every computation) so that parse -> print -> parse
gives an equal model; tests rely on that to show the parser keeps every
piece of a module it claims to model.
"""

from __future__ import annotations

from ..model import Computation, Instruction, Module, StackFrameTable


def to_text(module: Module) -> str:
    """The HLO text of ``module``."""
    parts = [_header(module)]
    if module.frames is not None:
        parts.append(_frame_tables(module.frames))
    parts.extend(_computation(c) for c in module.computations)
    return "\n\n".join(parts) + "\n"


def _header(module: Module) -> str:
    return ", ".join([f"HloModule {module.name}"] + [f"{a.name}={a.text}" for a in module.header])


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _frame_tables(table: StackFrameTable) -> str:
    lines = ["FileNames"]
    lines += [f"{k} {_quote(v)}" for k, v in table.file_names.items()]
    lines += ["", "FunctionNames"]
    lines += [f"{k} {_quote(v)}" for k, v in table.function_names.items()]
    lines += ["", "FileLocations"]
    for k, (file_id, function_id, line, column) in table.locations.items():
        lines.append(f"{k} {{file_name_id={file_id} function_name_id={function_id} line={line} "
                     f"end_line={line} column={column} end_column={column}}}")
    lines += ["", "StackFrames"]
    # Printed the way JAX/XLA print it: the parent's id plus one.
    lines += [f"{k} {{file_location_id={loc} parent_frame_id={parent + 1}}}"
              for k, (loc, parent) in table.frames.items()]
    return "\n".join(lines)


def _computation(computation: Computation) -> str:
    head = f"{'ENTRY ' if computation.is_entry else ''}%{computation.name} {_signature(computation)}{{"
    body = [f"  {_instruction(i)}" for i in computation.instructions]
    tail = "}"
    if computation.execution_thread is not None:
        tail += f", execution_thread={_quote(computation.execution_thread)}"
    return "\n".join([head, *body, tail])


def _signature(computation: Computation) -> str:
    """``(p: f32[]) -> f32[] `` when every shape is known; XLA also takes none."""
    shapes = [p.shape for p in computation.parameters] + [computation.root.shape]
    if any(s is None for s in shapes):
        return ""
    params = ", ".join(f"{p.name}: {p.shape}" for p in computation.parameters)
    return f"({params}) -> {computation.root.shape} "


def _instruction(instruction: Instruction) -> str:
    operands = instruction.operand_text or ", ".join(
        _operand(name) for name in instruction.operands)
    shape = f"{instruction.shape} " if instruction.shape is not None else ""
    text = f"{'ROOT ' if instruction.is_root else ''}%{instruction.name} = {shape}" \
           f"{instruction.opcode}({operands})"
    for attribute in instruction.attributes:
        text += f", {attribute.name}={attribute.text}"
    return text


def _operand(name: str) -> str:
    # Nested instructions ("add(...)") and compact GTE ("t#0") are kept as printed.
    return name if "(" in name else f"%{name}"
