"""What differs between two aligned modules: a list of ``Change`` records.

Each matched instruction pair is compared on what XLA would compile:
opcode, shape (split into dtype, dimensions and layout), constant value
(by value, not by spelling), attributes (parsed, so spacing does not count),
what it reads (its operands must be paired with each other, in order) and
what it calls (its called computations must be paired with each other),
and, separately, metadata, which no compiled program depends on. Unmatched
instructions are added or removed. Every change carries the origin of its
instruction in the user's code; a constant without metadata borrows its
users' origin.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Callable

from ..model import (CALL_ATTRIBUTES, GENERIC_PARAMETER_NAMES, Attribute, Computation,
                     Instruction, Literal, Module, Origin, Shape, element_value)
from .constants import constant_origin, users_of

if TYPE_CHECKING:  # aligning is imported when a diff is computed, not to read a cached one
    from .align import Alignment, ComputationMatch


# How an operands change says that an instruction, or a computation's root,
# reads another value (not a different number of values, nor lines that run
# in another order): findings tell such programs apart (findings.REWIRED).
READS_ANOTHER = "reads another value"
RETURNS_ANOTHER = "returns another value"


# Ops that carry one value on unchanged (a scalar broadcast to a shape, a
# reshape): a constant is read through them.
_CARRIERS = frozenset({"broadcast", "reshape", "bitcast", "copy"})


def _carried(computation: Computation, value: Instruction
             ) -> tuple[Instruction | None, list[Instruction]]:
    """What ``value`` carries on, and the carriers it goes through to it,
    ``value`` first: the instruction under its chain of single-operand
    carriers (None where one reads what ``computation`` does not define)."""
    chain = []
    while value.opcode in _CARRIERS and len(value.operands) == 1:
        chain.append(value)
        value = computation.by_name.get(value.operands[0])
        if value is None:
            return None, chain
    return value, chain


def calls(instruction: Instruction) -> dict[str, list[str]]:
    from .align import calls as called
    return called(instruction)

KINDS = ("constant", "shape", "dtype", "layout", "opcode", "op_added", "op_removed", "attribute",
         "operands", "called_computation", "computation_added", "computation_removed",
         "parameter", "constant_to_parameter", "parameter_to_constant", "metadata",
         "elided_constant", "module_added", "module_removed", "environment", "stablehlo")

_NOT_COMPILED = frozenset({"metadata", "statistics"})
# Attributes that name other instructions of the computation. XLA's
# canonical print, and the fingerprint hashed from it, leave them out
# (jaxlib 0.10.2: send's control-predecessors={%recv} against {%recv-done}
# print alike): they count only by the order they give that print (see
# print_order), never as an attribute.
_INSTRUCTION_LISTS = frozenset({"control-predecessors", "control_predecessors"})


@dataclass(frozen=True)
class Change:
    """One difference at one place.

    ``old`` and ``new`` are as printed in the HLO (a literal, a shape, an
    opcode, an attribute value); ``detail`` says more where needed (the
    attribute name and the path inside it, the differing array elements).
    ``a`` and ``b`` name the instruction on each side (None when it exists
    on one side only), ``computation`` the computation it is in (b's name
    where it has a b side), ``computation_a`` a's; ``opcode`` is the
    instruction's (b's where it has one); ``line_a``/``line_b`` where it is
    in each file.
    """

    kind: str
    old: str | None
    new: str | None
    computation: str
    a: str | None
    b: str | None
    origin: Origin = field(default_factory=Origin, compare=False)
    detail: str = ""
    element_type: str | None = None  # of a constant, for the hash rules
    all_zero_or_one: tuple[bool, bool] = (False, False)  # old, new constant is all 0 / all 1
    # For elided constants: None while unknown, True/False once another source
    # (JAX's module.mlir) showed the values.
    values_differ: bool | None = None
    opcode: str | None = None
    computation_a: str | None = None
    line_a: int | None = field(default=None, compare=False)
    line_b: int | None = field(default=None, compare=False)


_FLOATING = re.compile(r"b?f\d+\w*")  # f32, bf16, f8e4m3fn: precisions a user picks


def _opcode_text(instruction: Instruction) -> str:
    """``constant(2)`` for a scalar constant, so that an added multiply by a
    learning rate of 2 (where 1 was left out) shows its value; the opcode
    alone for anything else."""
    if instruction.opcode == "constant" and instruction.shape is not None \
            and not instruction.shape.dimensions:
        literal = instruction.literal
        if literal is not None and not literal.parts and len(literal.text) <= _SCALAR_SHOWN:
            return f"constant({literal.text})"
    return instruction.opcode


_SCALAR_SHOWN = 24  # characters of a scalar constant's value that a summary shows


def diff_modules(a: Module, b: Module, alignment: Alignment | None = None) -> list[Change]:
    """Every change between ``a`` and ``b``, in b's file order."""
    if alignment is None:
        from .align import align
        alignment = align(a, b)
    changes: list[Change] = header_changes(a, b)
    alike: set[tuple[str, str]] = set()  # ("a" or "b", computation): see _unpaired_computations
    for match in alignment.computations:
        changes.extend(_ComputationDiff(alignment, match, alike).changes())
    if any(c.kind != "metadata" for c in changes):
        changes.extend(_unpaired_computations(alignment, alike))
        changes = _moved(alignment, changes)
    else:  # calls alike are all that may differ: the twin stays a change, as may the order
        changes.extend(_unpaired_computations(alignment, set()))
        if not changes:  # computations alike may be paired either way: the order tells
            changes.extend(_order_of_computations(alignment))
    if all(c.kind == "metadata" for c in changes):
        changes.extend(_order_changes(alignment))
    return changes


def _order_changes(alignment: Alignment) -> list[Change]:
    """Lines in another order, or reading another of lines alike, where
    nothing else but metadata differs.

    XLA prints and hashes each line by its place (``print_order``): a
    scheduled module runs each computation's lines (fusion bodies aside)
    in text order, and prints them so; other computations it prints in
    post order. The same lines in another order are another program
    (jaxlib 0.10.2's canonical prints of two independent lines swapped in
    a scheduled module differ), and so is a line that reads another of two
    lines alike, though it computes the same (two copies of one value
    swapped in a tuple). Where the program changed otherwise, the scheduler
    moves lines because of that change (12 corpus cases: a dtype, a batch
    size, an XLA upgrade...), and saying so would only bury the cause; here
    nothing else can be."""
    a, b = alignment.a, alignment.b
    scheduled = (a.schedule or {}) if a.is_scheduled and b.is_scheduled else {}
    out = []
    for match in alignment.computations:
        if match.unchanged:
            continue
        computation = _ComputationDiff(alignment, match)
        in_text_order = match.a.name in scheduled
        moved = computation.order_changes() if in_text_order \
            else computation.unread_order_changes()
        out.extend(moved or computation.printed_place_changes(in_text_order))
    return out


def attribute_data(attribute: Attribute) -> Any:
    """An attribute's value as data; a backend_config holding JSON as that
    JSON, printed raw or quoted."""
    if attribute.text[:1] in "{[" and attribute.text[1:2] in ('"', "}", "]"):
        try:
            return json.loads(attribute.text)  # JSON printed as is (backend_config)
        except ValueError:
            pass
    value = attribute.value
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def attribute_difference(old: Attribute, new: Attribute) -> str:
    """Where two values of an attribute differ, as a person reads it: the
    fields of JSON (``fusion_backend_config.kind: kLoop -> kInput``), else
    the changed words with a little of what is around them
    (``devices=[2,1]… -> devices=[1,2]…``)."""
    a, b = attribute_data(old), attribute_data(new)
    if isinstance(a, dict) and isinstance(b, dict):
        return _json_difference(a, b) or text_difference(old.text, new.text)
    return text_difference(old.text, new.text)


def _json_difference(old: dict, new: dict, limit: int = 3) -> str:
    """deepdiff is imported here, on first use: it pulls in numpy and pydantic,
    which would double the start-up of every command."""
    from deepdiff import DeepDiff
    tree = DeepDiff(old, new, view="tree")
    lines = []
    for items in tree.values():
        for item in items:
            path = ".".join(str(p) for p in item.path(output_format="list"))
            before = "(none)" if type(item.t1).__name__ == "NotPresent" else _short(item.t1)
            after = "(none)" if type(item.t2).__name__ == "NotPresent" else _short(item.t2)
            if before == after:  # alike for as long as shown: the words that differ
                before, after = text_difference(str(item.t1), str(item.t2)).split(" -> ", 1)
            lines.append(f"{path}: {before} -> {after}" if path else f"{before} -> {after}")
    lines.sort()
    more = f" (and {len(lines) - limit} more)" if len(lines) > limit else ""
    return "; ".join(lines[:limit]) + more


_WORDS = re.compile(r"\w+|\s+|.", re.S)


def text_difference(old: str, new: str, reach: int = 16, limit: int = 3) -> str:
    """The changed words of two texts, each widened to the whole
    space-separated word around it (at most ``reach`` characters either
    side), ``…`` where text was left out, whitespace shown as one space:
    ``devices=[2,1]0,1 -> devices=[1,2]0,1``; places joined by ``; ``."""
    from difflib import SequenceMatcher
    a, b = _WORDS.findall(old), _WORDS.findall(new)

    def widen(tokens: list[str], start: int, end: int) -> tuple[int, int]:
        width = 0
        while start > 0 and not tokens[start - 1].isspace() and width < reach:
            start -= 1
            width += len(tokens[start])
        width = 0
        while end < len(tokens) and not tokens[end].isspace() and width < reach:
            width += len(tokens[end])
            end += 1
        return start, end

    places: list[list[int]] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag == "equal":
            continue
        place = [*widen(a, i1, i2), *widen(b, j1, j2)]
        if places and (place[0] <= places[-1][1] or place[2] <= places[-1][3]):
            places[-1][1], places[-1][3] = place[1], place[3]  # one word: one place
        else:
            places.append(place)

    def shown(tokens: list[str], start: int, end: int) -> str:
        text = re.sub(r"\s+", " ", "".join(tokens[start:end])).strip()
        return ("…" if start > 0 else "") + (text or "(nothing)") + ("…" if end < len(tokens) else "")

    said = [f"{shown(a, i1, i2)} -> {shown(b, j1, j2)}" for i1, i2, j1, j2 in places[:limit]]
    more = f" (and {len(places) - limit} more)" if len(places) > limit else ""
    return "; ".join(said) + more


def _short(value: Any, limit: int = 40) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit - 1] + "…"


def header_changes(a: Module, b: Module) -> list[Change]:
    """Module header attributes whose meaning differs (spelling and XLA's
    defaults aside: ``Module.header_keys``): input_output_alias (buffer
    donation), replica_count, num_partitions, the entry computation
    layout, ... An attribute printed the same in both is not read at all
    (a train step's header lists every output)."""
    old = {attr.name: attr for attr in a.header}
    new = {attr.name: attr for attr in b.header}
    out = []
    x, y = old.get(_LAYOUT), new.get(_LAYOUT)
    if not (x and y and x.text == y.text) and a.entry_layout != b.entry_layout:
        # a header without one has the one XLA derives (Module.entry_layout)
        out.append(Change("attribute", x.text if x else _layout_text(a), y.text if y else _layout_text(b),
                          "", None, None, Origin(), f"module header: {_LAYOUT}"))
    for name in list(old) + [n for n in new if n not in old]:
        x, y = old.get(name), new.get(name)
        if x is not None and y is not None and x.text == y.text or name == _LAYOUT:
            continue
        if _header_key(x) == _header_key(y):
            continue
        out.append(Change("attribute", None if x is None else x.text, None if y is None else y.text,
                          "", None, None, Origin(), f"module header: {name}"))
    return out


_LAYOUT = "entry_computation_layout"


def _layout_text(module: Module) -> str:
    """The entry computation layout XLA derives for ``module``, as it prints it."""
    parameters, result = module.entry_layout
    return "{(" + ", ".join(map(str, parameters)) + ")->" + str(result) + "}"


def _header_key(attribute: Attribute | None) -> Any:
    return None if attribute is None else attribute.reader.header_key(attribute)


def _unpaired_computations(alignment: Alignment, alike: set[tuple[str, str]]) -> list[Change]:
    """Computations of one run only. One that a paired instruction calls shows
    as that instruction's called_computation change as well; one nothing calls
    changes no executable, but the module text differs, so it is listed. One
    a paired instruction calls where its partner calls a computation that
    computes alike (``alike``: reducers that both add, paired otherwise) is
    that computation's twin, not added or removed."""
    out = []
    for computation in alignment.only_a:
        if ("a", computation.name) not in alike:
            out.append(_computation_change(computation, "computation_removed", "a"))
    for computation in alignment.only_b:
        if ("b", computation.name) not in alike:
            out.append(_computation_change(computation, "computation_added", "b"))
    return out


# What the detail of an op_removed (op_added) change starts with where the
# instruction did not go (come): the other run runs it inside a branch or a
# loop body of its own (findings.py makes such ops an "op_moved" finding).
MOVED_INTO, MOVED_OUT_OF = "moved into ", "moved out of "
# The callers whose computations are code of the user's moved under a
# condition or into a loop (not a fusion XLA made, nor a reducer).
_CONTROL_FLOW = {"conditional": "a branch of the conditional", "while": "the while loop"}
_UNIQUIFIER = re.compile(r"_\d+$")


def _moved(alignment: Alignment, changes: list[Change]) -> list[Change]:
    """Instructions removed from a computation of both runs that run b runs,
    by op_name and opcode, inside a branch or loop body it alone has (and
    the reverse for instructions added): they moved there, they did not go.
    Keras' LossScaleOptimizer (mixed_float16) puts the optimizer's update
    and its step count under a conditional that skips non-finite steps; the
    step count's ``add(iterations, constant(1))`` read as removed, with
    advice about a 1 folded away (a helper session's TF runs).

    The op_name may gain the scopes of the branch (``Add_2`` becomes
    ``cond/Add``, ``jit(f)/mul`` ``jit(f)/cond/branch_1_fun/mul``) and
    TensorFlow's numbering of unique names starts again in the branch's own
    graph: an op_name's parts, numbering aside, must be those of the moved
    one's in order, with the same last part; of several, the one with the
    fewest parts more. Each instruction of the branch is taken once. An
    instruction with no such namesake (JAX gives a scalar constant and its
    broadcast no op_name, or the broadcast only) moved where every
    instruction that reads it moved."""
    out = list(changes)
    for kind, side, word in (("op_removed", "a", MOVED_INTO), ("op_added", "b", MOVED_OUT_OF)):
        module = alignment.a if side == "a" else alignment.b
        other = alignment.b if side == "a" else alignment.a
        only = alignment.only_b if side == "a" else alignment.only_a
        wanted = [k for k, c in enumerate(out) if c.kind == kind]
        places = _control_flow_places(other, only) if wanted and only else {}
        if not places:
            continue
        candidates: dict[tuple[str, str], list[tuple[tuple[str, ...], str, str]]] = {}
        for computation in only:
            if computation.name not in places:
                continue
            for instruction in computation.instructions:
                parts = _op_name_parts(instruction)
                if parts:
                    candidates.setdefault((instruction.opcode, parts[-1]), []).append(
                        (parts, computation.name, instruction.name))
        taken: set[tuple[str, str]] = set()
        moved: dict[tuple[str, str], str] = {}  # (computation, instruction) -> where to
        unmatched: list[tuple[int, Computation, Instruction]] = []
        for k in wanted:
            change = out[k]
            holder = module.by_name.get((change.computation_a or change.computation)
                                        if side == "a" else change.computation)
            instruction = holder.by_name.get(change.a if side == "a" else change.b) \
                if holder is not None else None
            if instruction is None or instruction.opcode == "parameter":
                continue
            parts = _op_name_parts(instruction)
            namesakes = candidates.get((instruction.opcode, parts[-1]), ()) if parts else ()
            fits = [(len(theirs) - len(parts), n, computation, name)
                    for n, (theirs, computation, name) in enumerate(namesakes)
                    if (computation, name) not in taken and _within(parts, theirs)]
            if fits:
                _, _, computation, name = min(fits)
                taken.add((computation, name))
                moved[(holder.name, instruction.name)] = places[computation]
                out[k] = replace(change, detail=word + places[computation])
            else:
                unmatched.append((k, holder, instruction))
        users: dict[str, dict[str, list[Instruction]]] = {}
        while unmatched:  # a constant moved with the broadcast that moved with its reader
            left = []
            for k, holder, instruction in unmatched:
                readers = users.setdefault(holder.name, users_of(holder)).get(instruction.name, [])
                where_to = {moved.get((holder.name, r.name)) for r in readers}
                if readers and len(where_to) == 1 and None not in where_to:
                    moved[(holder.name, instruction.name)] = where_to.pop()
                    out[k] = replace(out[k], detail=word + moved[(holder.name, instruction.name)])
                else:
                    left.append((k, holder, instruction))
            if len(left) == len(unmatched):
                break
            unmatched = left
    return out


def _op_name_parts(instruction: Instruction) -> tuple[str, ...]:
    """The parts of the instruction's own op_name, TensorFlow's numbering of
    unique names left out (``sgd_1/Mul_1``: ``sgd``, ``Mul``)."""
    op_name = instruction.metadata.get("op_name") if instruction.metadata else None
    if not isinstance(op_name, str):
        return ()
    return tuple(_UNIQUIFIER.sub("", part) for part in op_name.split("/") if part)


def _within(parts: tuple[str, ...], theirs: tuple[str, ...]) -> bool:
    """Are ``parts`` ``theirs`` with some parts left out, ending alike?"""
    if not parts or not theirs or parts[-1] != theirs[-1]:
        return False
    remaining = iter(theirs)
    return all(part in remaining for part in parts)


def _control_flow_places(module: Module, only: list[Computation]) -> dict[str, str]:
    """For each computation of ``only`` (one run's own) that runs under a
    conditional or a while loop of that run, directly or through other such
    computations (a fusion inside a branch), the place, as a person reads
    it: ``cond_true_12 (a branch of the conditional at cond)``."""
    names = {c.name for c in only}
    callers: dict[str, tuple[str, Instruction]] = {}  # callee -> (computation, instruction)
    for computation in module.computations:
        if computation.unchanged:
            continue
        for instruction in computation.instructions:
            if instruction.unchanged:
                continue
            for callee in instruction.called_computations:
                if callee in names:
                    callers.setdefault(callee, (computation.name, instruction))
    places: dict[str, str] = {}
    for name in names:
        current, seen = name, set()
        while current in callers and current not in seen:
            seen.add(current)
            holder, caller = callers[current]
            if caller.opcode in _CONTROL_FLOW:
                op_name = caller.metadata.get("op_name") if caller.metadata else None
                at = f"at {op_name}" if isinstance(op_name, str) else caller.name
                places[name] = f"{current} ({_CONTROL_FLOW[caller.opcode]} {at})"
                break
            current = holder
    return places


def _twins(alignment: Alignment, x: str, y: str) -> set[tuple[str, str]]:
    """Computation ``x`` of a and ``y`` of b, which compute alike, and what
    each calls, in the order their instructions call it, where those compute
    alike too: a copy's callees are copies (``_bernoulli_8`` calls
    ``_uniform_9``), not computations of their own."""
    out: set[tuple[str, str]] = set()
    todo = [(x, y)]
    while todo:
        x, y = todo.pop()
        if ("a", x) in out or alignment.computation_pairs.get(x) == y:
            continue
        out.update((("a", x), ("b", y)))
        cx, cy = alignment.a.by_name.get(x), alignment.b.by_name.get(y)
        if cx is None or cy is None:
            continue
        called_x = [n for i in cx.instructions for n in i.called_computations]
        called_y = [n for i in cy.instructions for n in i.called_computations]
        if len(called_x) == len(called_y):
            todo.extend((m, n) for m, n in zip(called_x, called_y)
                        if alignment.same_code(m, n))
    return out


def _order_of_computations(alignment: Alignment) -> list[Change]:
    """Calls that read another computation that computes alike can leave
    the computations in another order as XLA prints them (callees first, in
    the order they are called): XLA hashes that text, so the same code in
    another order is another fingerprint (a reduce that called a second
    adder instead of the first, which then went unused: jaxlib 0.10.2
    prints them apart). Where every name was renumbered, the aligner may
    pair the adders either way, so that no call reads another: the order
    is compared wherever nothing else differs. Where it holds, nothing
    differs."""
    order_a, order_b = _post_order(alignment.a), _post_order(alignment.b)
    pairs = alignment.computation_pairs
    moved = next((k for k, (x, y) in enumerate(zip(order_a, order_b))
                  if pairs.get(x.name) != y.name and not alignment.same_code(x.name, y.name)),
                 None)
    if moved is None and len(order_a) == len(order_b):
        return []
    k = min(len(order_a), len(order_b)) - 1 if moved is None else moved
    x, y = order_a[k], order_b[k]
    return [Change("called_computation", _describe_call(alignment.a, x.name),
                   _describe_call(alignment.b, y.name), y.name, None, None, Origin(),
                   f"computation {k + 1} of {len(order_b)} as XLA prints them: {x.name} -> "
                   f"{y.name} (calls that read another computation alike moved the order)",
                   opcode=y.root.opcode, computation_a=x.name, line_a=x.line, line_b=y.line)]


def _post_order(module: Module) -> list[Computation]:
    """The computations as XLA orders them to print a module: from each one
    nothing calls (the entry, and any left unused), in the module's order,
    the computations it calls first, in the order its instructions call
    them, each once. (An unused adder printed first: jaxlib 0.10.2 prints
    two such modules apart or alike exactly as this order says.)"""
    called = {c for computation in module.computations
              for instruction in computation.instructions
              for c in instruction.called_computations}
    out: list[Computation] = []
    seen: set[str] = set()
    for root in module.computations:
        if root.name not in called and root.name not in seen:
            seen.add(root.name)
            _visit(module, root, seen, out)
    return out


def _visit(module: Module, root: Computation, seen: set[str], out: list[Computation]) -> None:
    """Append ``root`` to ``out`` after what it calls (iterative: calls nest deep)."""
    stack = [(root, iter(root.instructions), iter(()))]
    while stack:
        computation, instructions, callees = stack[-1]
        callee = next(callees, None)
        if callee is None:
            instruction = next(instructions, None)
            if instruction is None:
                stack.pop()
                out.append(computation)
            else:
                stack[-1] = (computation, instructions, iter(instruction.called_computations))
            continue
        inner = module.by_name.get(callee)
        if inner is not None and callee not in seen:
            seen.add(callee)
            stack.append((inner, iter(inner.instructions), iter(())))


# Collectives XLA prints after the earlier ones of their channel_id
# (HloComputation::ComputeChannelDependencies).
_CHANNEL_ORDERED = frozenset({"all-reduce", "all-gather", "all-to-all", "collective-broadcast",
                              "collective-permute", "ragged-all-to-all", "reduce-scatter"})


def print_order(computation: Computation, scheduled: bool) -> list[Instruction]:
    """The lines of ``computation`` in the order XLA prints and hashes them,
    each named by its place: text order when ``scheduled``; else XLA's post
    order (HloComputation::MakeInstructionPostOrder, jaxlib 0.10.2): from
    each line no other reads, in text order, depth first, each line after
    its control predecessors (the last first), its operands (the first
    first) and the collectives of its channel_id above it."""
    instructions = computation.instructions
    if scheduled:
        return list(instructions)
    by_name = computation.by_name
    read = {operand for instruction in instructions for operand in instruction.operands}
    channels = _earlier_of_channel(instructions)
    printed: dict[str, bool] = {}  # False while its operands are visited, then True
    out: list[Instruction] = []
    for start in instructions:
        if start.name in read or start.name in printed:
            continue
        stack = [start]
        while stack:  # XLA's own stack: the same quirks, the same order
            current = stack[-1]
            state = printed.get(current.name)
            if state is not None:
                stack.pop()
                if not state:
                    printed[current.name] = True
                    out.append(current)
                continue
            printed[current.name] = False
            waiting = [] if current is start else channels.get(current.name, [])
            waiting += [by_name[o] for o in reversed(current.operands) if o in by_name]
            waiting += [by_name[p] for p in _control_predecessors(current) if p in by_name]
            stack.extend(w for w in waiting if printed.get(w.name) is not True)
    return out


def _earlier_of_channel(instructions: tuple[Instruction, ...]) -> dict[str, list[Instruction]]:
    """For each collective with a channel_id, those of the same channel above it."""
    groups: dict[str, list[Instruction]] = {}
    out: dict[str, list[Instruction]] = {}
    for instruction in instructions:
        if instruction.opcode in _CHANNEL_ORDERED:
            channel = instruction.attribute("channel_id")
            if channel is not None:
                group = groups.setdefault(channel.text.strip(), [])
                out[instruction.name] = list(group)
                group.append(instruction)
    return out


def _control_predecessors(instruction: Instruction) -> list[str]:
    """The names ``control-predecessors={%a, %b}`` lists, in order (a line
    the unchanged pass left unread is read only if it names some)."""
    if instruction.unchanged and "control" not in instruction.reader.line_text(instruction.offset):
        return []
    attribute = instruction.attribute("control-predecessors") \
        or instruction.attribute("control_predecessors")
    return [] if attribute is None else re.findall(r"%?([A-Za-z_][\w.\-]*)", attribute.text)


def _unread(computation: Computation) -> list[str]:
    """The lines no other line of ``computation`` reads, in text order."""
    read = {operand for instruction in computation.instructions for operand in instruction.operands}
    return [i.name for i in computation.instructions if i.name not in read]


def _computation_change(computation: Computation, kind: str, side: str) -> Change:
    text = f"{computation.name} ({len(computation.instructions)} instructions, " \
           f"root {computation.root.opcode})"
    old, new = (text, None) if side == "a" else (None, text)
    return Change(kind, old, new, computation.name, None, None, Origin(),
                  opcode=computation.root.opcode,
                  computation_a=computation.name if side == "a" else None,
                  line_a=computation.line if side == "a" else None,
                  line_b=computation.line if side == "b" else None)


class _ComputationDiff:
    def __init__(self, alignment: Alignment, match: ComputationMatch,
                 alike: set[tuple[str, str]] | None = None):
        self.alignment = alignment
        self.match = match
        self.alike = set() if alike is None else alike  # filled: see _unpaired_computations
        self.is_entry = match.a is alignment.a.entry
        self._users_a = None
        self._users_b = None

    @cached_property
    def reverse(self) -> dict[str, str]:
        """The pairs of instructions, b's name to a's."""
        return {y: x for x, y in self.match.pairs.items()}

    # origins ------------------------------------------------------------------------

    def _users(self, side: str) -> dict[str, list[Instruction]]:
        """Who reads each instruction of side ``a`` or ``b``, made once."""
        users = getattr(self, f"_users_{side}")
        if users is None:
            users = users_of(self.match.a if side == "a" else self.match.b)
            setattr(self, f"_users_{side}", users)
        return users

    def _origin(self, module: Module, instruction: Instruction, side: str) -> Origin:
        if instruction.opcode not in ("constant", "parameter"):
            return module.origin(instruction)
        return constant_origin(module, instruction, self._users(side))[0]

    def origin_b(self, y: Instruction) -> Origin:
        return self._origin(self.alignment.b, y, "b")

    def origin_a(self, x: Instruction) -> Origin:
        return self._origin(self.alignment.a, x, "a")

    def _origin_of(self, instruction: Instruction, side: str) -> Origin:
        return self.origin_b(instruction) if side == "b" else self.origin_a(instruction)

    # changes --------------------------------------------------------------------------------

    def changes(self) -> list[Change]:
        m = self.match
        out: list[Change] = self._thread_change()
        if m.unchanged:  # the same text in both runs: nothing else can differ
            return out
        code_a, code_b = self.alignment.fingerprints or (None, None)
        self.values_a, self.values_b = _ValueKeys(m.a, code_a), _ValueKeys(m.b, code_b)
        pairs = m.pairs
        for y in m.b.instructions:
            x_name = self.reverse.get(y.name)
            if x_name is None:
                out.extend(self._one_sided("op_added", None, y))
                continue
            how = m.how.get(x_name)
            x = m.a.by_name[x_name]
            if how == "unchanged":  # the same text in both runs: nothing else can differ
                # A line the pass read in full reads a changed line, and its text
                # names what it reads as the pass paired it; the aligner may have
                # paired that otherwise (parameters renumbered crosswise: the
                # same ``subtract(%a, %b)`` is b - a).
                if not x.unchanged and any(pairs.get(o) != q for o, q in
                                           zip(x.operands, y.operands)):
                    out.extend(self._wiring_changes(x, y))
                continue
            if how == "exact" and x.opcode != "constant":
                # Equal fingerprints: opcode, shape and attributes are the same by
                # construction; what it reads and calls, and metadata, can differ.
                # (Constants go the long way: equal text {...} is not equal values.)
                out.extend(self._wiring_changes(x, y))
                out.extend(self._attribute_changes(x, y, only=_NOT_COMPILED))
            else:
                out.extend(self._compare(x, y))
        for x in m.unmatched_a:
            out.extend(self._one_sided("op_removed", x, None))
        out.extend(self._root_change())
        if self.is_entry:
            out.extend(self._parameter_count())
        return out

    def _thread_change(self) -> list[Change]:
        """``}, execution_thread="..."``: the thread a computation runs on
        (``main`` when the text names none)."""
        old, new = (c.execution_thread or "main" for c in (self.match.a, self.match.b))
        if old == new:
            return []
        return [Change("attribute", old, new, self.match.b.name, None, None, Origin(),
                       f"{self.match.b.name}: execution_thread", opcode=self.match.b.root.opcode,
                       computation_a=self.match.a.name, line_a=self.match.a.line,
                       line_b=self.match.b.line)]

    def _change(self, kind, old, new, x, y, detail="", **extra) -> Change:
        origin = self.origin_b(y) if y is not None else Origin()
        if not origin and x is not None:
            origin = self.origin_a(x)
        instruction = y if y is not None else x
        return Change(kind, old, new, self.match.b.name if y is not None else self.match.a.name,
                      x.name if x is not None else None, y.name if y is not None else None,
                      origin, detail, opcode=instruction.opcode, computation_a=self.match.a.name,
                      line_a=x.line if x is not None else None,
                      line_b=y.line if y is not None else None, **extra)

    def _one_sided(self, kind: str, x: Instruction | None, y: Instruction | None) -> list[Change]:
        instruction = y if y is not None else x
        side = "b" if y is not None else "a"
        if instruction.opcode == "convert":
            converted = self._dtype_conversion(x, y)
            if converted is not None:
                return [converted]
        if instruction.opcode in _CARRIERS and self._carries_shared_value(instruction, side):
            return []  # the value it carries changed: that constant's change says it
        if instruction.opcode == "constant":
            changed = self._shared_value_change(instruction, side)
            if changed is not None:  # a value changed where the other run shares a constant
                return [changed]
        text = f"{_opcode_text(instruction)} {instruction.shape}" if instruction.shape \
            else _opcode_text(instruction)
        if kind == "op_added":
            return [self._change(kind, None, text, None, y)]
        return [self._change(kind, text, None, x, None)]

    def _carries_shared_value(self, carrier: Instruction, side: str) -> bool:
        """Does ``carrier`` (a broadcast, reshape... of one run only) carry,
        through carriers of that run only, a constant whose value the other
        run reads from a constant it shares (see _shared_value_change)?"""
        pairs = self.reverse if side == "b" else self.match.pairs
        source, chain = _carried(self.match.b if side == "b" else self.match.a, carrier)
        return source is not None and source.opcode == "constant" \
            and not any(c.name in pairs for c in (*chain[1:], source)) \
            and self._shared_value_change(source, side) is not None

    def _shared_value_change(self, constant: Instruction, side: str) -> Change | None:
        """The change of value of ``constant``, one run's own, where the
        other run reads a constant it shares in its place (_read_instead):
        told where this run's own constant is used, which says where the
        value is. None where there is none, or the values are equal."""
        instead = self._read_instead(constant, side)
        if instead is None:
            return None
        changed = self._constant_change(instead, constant) if side == "b" else \
            self._constant_change(constant, instead)
        return replace(changed[0], origin=self._origin_of(constant, side)) if changed else None

    def _read_instead(self, constant: Instruction, side: str) -> Instruction | None:
        """The constant of the other run that the users of ``constant`` (one
        run has, the other not) read there instead, where they all read one
        and it has its own twin: XLA keeps one constant per value, so a clip
        norm of 1 reads Adam's 1 in one run, and a 0.5 of its own in the
        other. Their values then differ at these users; None otherwise.
        A user may read it through broadcasts and reshapes of this run only
        (JAX keeps one broadcast of a value too: an EMA's decay of 0.999
        reads Adam's broadcast 0.999 where a decay of 0.99 had its own):
        the other run's operand is then read through the same ones. Each
        user and its twin must come from the same code (op_name and stack):
        else they are a pairing of convenience, and the value what another
        line reads (a learning rate made a schedule is no Adam's 0.1)."""
        pairs = self.reverse if side == "b" else self.match.pairs
        other = self.match.a if side == "b" else self.match.b
        other_pairs = self.match.pairs if side == "b" else self.reverse
        read = set()
        for user, chain in self._readers_through_carriers(constant, side):
            twin = other.by_name.get(pairs.get(user.name, ""))
            position = user.operands.index(chain[-1].name if chain else constant.name)
            if twin is None or position >= len(twin.operands) \
                    or not self._same_code(user, twin, side):
                return None
            operand = other.by_name.get(twin.operands[position])
            source, carriers = _carried(other, operand) if operand is not None else (None, [])
            # the same carriers, from the user down to a constant
            if source is None or [c.opcode for c in carriers] != \
                    [c.opcode for c in reversed(chain)]:
                return None
            read.add(source.name)
        if len(read) != 1:
            return None
        instead = other.by_name.get(read.pop())
        if instead is None or instead.opcode != "constant" or instead.name not in other_pairs:
            return None
        return instead

    def _same_code(self, user: Instruction, twin: Instruction, side: str) -> bool:
        mine, theirs = self._origin_of(user, side), self._origin_of(twin, "a" if side == "b" else "b")
        return (mine.op_name, mine.stack or mine.location) == \
            (theirs.op_name, theirs.stack or theirs.location)

    def _readers_through_carriers(self, constant: Instruction, side: str
                                  ) -> list[tuple[Instruction, list[Instruction]]]:
        """Each paired instruction that reads ``constant``, directly or through
        carriers of this run only, with those carriers (nearest the constant
        first); an unpaired reader that is no carrier makes it none."""
        pairs = self.reverse if side == "b" else self.match.pairs
        users = self._users(side)
        out, todo = [], [(constant, [])]
        while todo:
            value, chain = todo.pop()
            for user in users.get(value.name, ()):
                if user.name in pairs:
                    out.append((user, chain))
                elif user.opcode in _CARRIERS and len(user.operands) == 1 and len(chain) < 4:
                    todo.append((user, chain + [user]))
                else:
                    return []
        return out

    def _dtype_conversion(self, x: Instruction | None, y: Instruction | None) -> Change | None:
        """A convert from one floating type to another added is a precision the
        user chose (``f32 -> bf16``); one removed, the same change undone. A
        count made a float (``s32 -> f32``: an optimizer's step for the slots
        of a new layer) computes something: one op among those added."""
        convert = y if y is not None else x
        computation = self.match.b if y is not None else self.match.a
        source = computation.by_name.get(convert.operands[0]) if convert.operands else None
        if source is None or source.shape is None or convert.shape is None:
            return None
        types = _element_types(source.shape), _element_types(convert.shape)
        if types[0] == types[1] or not all(map(_FLOATING.fullmatch, types[0] + types[1])):
            return None
        if y is not None:
            return self._change("dtype", str(source.shape), str(y.shape), None, y,
                                detail="a convert was added")
        return self._change("dtype", str(x.shape), str(source.shape), x, None,
                            detail="a convert was removed")

    def _compare(self, x: Instruction, y: Instruction) -> list[Change]:
        out: list[Change] = []
        if x.opcode != y.opcode:
            # The constant's side says where in the user's code the value is used.
            if x.opcode == "constant" and y.opcode == "parameter":
                return [replace(self._change("constant_to_parameter", x.operand_text.strip(),
                                             _parameter_text(y), x, y),
                                origin=self.origin_a(x) or self.origin_b(y))]
            if x.opcode == "parameter" and y.opcode == "constant":
                return [self._change("parameter_to_constant",
                                     _parameter_text(x),
                                     y.operand_text.strip(), x, y)]
            out.append(self._change("opcode", x.opcode, y.opcode, x, y))
        if self.is_entry and x.opcode == y.opcode == "parameter":
            if str(x.shape) != str(y.shape) or x.parameter_number != y.parameter_number:
                out.append(self._change("parameter", _parameter_text(x),
                                        _parameter_text(y), x, y))
        else:
            out.extend(self._shape_changes(x, y))
            if x.opcode == y.opcode == "parameter" and x.parameter_number != y.parameter_number:
                # another operand of the caller: where the caller's operands
                # moved alike, that is the same value, but not the same text
                out.append(self._change("operands", _parameter_text(x), _parameter_text(y), x, y,
                                        detail="the parameter stands for another operand of "
                                               "the call"))
        if x.opcode == y.opcode == "constant":
            out.extend(self._constant_change(x, y))
        out.extend(self._wiring_changes(x, y))
        out.extend(self._attribute_changes(x, y))
        return out

    def _root_change(self) -> list[Change]:
        """What the computation returns is read like an operand: the two roots
        must be paired with each other (``ROOT`` moved to another line returns
        another value, though every line may be paired as it was). A root with
        no partner is an added or removed instruction, the change already."""
        x, y = self.match.a.root, self.match.b.root
        partner = self.match.pairs.get(x.name)
        if partner is None or partner == y.name or y.name not in self.reverse:
            return []  # the same line at another place moved with others: order_changes
        if self.values_a.key(x.name) == self.values_b.key(y.name):
            return self._root_place_change(x, y)
        return [self._change("operands", f"ROOT {_operand_label(self.match.a, x.name)}",
                             f"ROOT {_operand_label(self.match.b, y.name)}", x, y,
                             detail=f"{self.match.b.name} {RETURNS_ANOTHER}")]

    def _root_place_change(self, x: Instruction, y: Instruction) -> list[Change]:
        """Roots of the same value on two lines that are not partners may
        stand at another place: XLA prints and hashes a computation's
        instructions in order, ROOT among them, so ``ROOT`` moved between two
        identical lines is another program (found by the verdict fuzz). Only
        between computations of as many instructions: else one was added or
        removed, the change already. (The same root line at another place
        moved only with other lines: see order_changes.)"""
        a, b = self.match.a, self.match.b
        if len(a.instructions) != len(b.instructions):
            return []
        i = next(k for k, instruction in enumerate(a.instructions) if instruction.name == x.name)
        j = next(k for k, instruction in enumerate(b.instructions) if instruction.name == y.name)
        if i == j:
            return []
        count = len(b.instructions)
        return [self._change("operands", f"ROOT is instruction {i + 1} of {count}",
                             f"ROOT is instruction {j + 1} of {count}", x, y,
                             detail=f"{b.name} returns the same value from another line: XLA "
                                    "prints and hashes the lines in order")]

    def order_changes(self) -> list[Change]:
        """The first line that runs elsewhere among the paired ones, if any,
        the root among them (see _order_changes). For scheduled modules
        only: an unscheduled computation XLA prints in its own order,
        operands first, not the text's (XLA's print of an external Graphcore
        module moves a ROOT tuple above an after-all the tuple does not read)."""
        pairs, reverse = self.match.pairs, self.reverse
        order_a = [i.name for i in self.match.a.instructions if i.name in pairs]
        order_b = [reverse[i.name] for i in self.match.b.instructions if i.name in reverse]
        moved = next((k for k, (x, y) in enumerate(zip(order_a, order_b)) if x != y), None)
        if moved is None:
            return []
        x, count = order_b[moved], len(order_b)
        return [self._change(
            "operands", f"runs {order_a.index(x) + 1} of {count}", f"runs {moved + 1} of {count}",
            self.match.a.by_name[x], self.match.b.by_name[pairs[x]],
            detail=f"{self.match.b.name} runs its lines in another order: a scheduled module "
                   "runs them in text order, and XLA prints and hashes them so")]

    def printed_place_changes(self, scheduled: bool) -> list[Change]:
        """The first line, as XLA prints them (``print_order``), that is not
        alike in both runs or reads other places, if any. XLA names each line
        by its place: of two lines alike (two copies of one value), reading
        the one or the other is the same value but another program (jaxlib
        0.10.2's canonical prints differ). The pairing cannot tell: it pairs
        lines alike either way, and reading the other is no change of value."""
        a, b = self.match.a, self.match.b
        order_a, order_b = print_order(a, scheduled), print_order(b, scheduled)
        if len(order_a) != len(order_b):
            return []
        place_a = {instruction.name: k for k, instruction in enumerate(order_a)}
        place_b = {instruction.name: k for k, instruction in enumerate(order_b)}
        values_a = values_b = None
        for k, (x, y) in enumerate(zip(order_a, order_b)):
            reads_x, reads_y = x.operands, y.operands
            places_x = [place_a.get(name) for name in reads_x]
            places_y = [place_b.get(name) for name in reads_y]
            if self.match.pairs.get(x.name) != y.name:
                if values_a is None:
                    code_a, code_b = self.alignment.fingerprints or (None, None)
                    values_a, values_b = _ValueKeys(a, code_a), _ValueKeys(b, code_b)
                alike = values_a.key(x.name) == values_b.key(y.name)
            else:
                alike = True
            if alike and places_x == places_y and (x is a.root) == (y is b.root):
                continue
            count = len(order_b)
            where = "in text order, as the module is scheduled" if scheduled \
                else "in post order, operands first"
            moved = next((j for j, (p, q) in enumerate(zip(places_x, places_y))
                          if p != q and None not in (p, q)), None)
            if alike and moved is not None and len(places_x) == len(places_y):
                return [self._change(
                    "operands", f"{_operand_label(a, reads_x[moved])} printed "
                    f"{places_x[moved] + 1} of {count}", f"{_operand_label(b, reads_y[moved])} "
                    f"printed {places_y[moved] + 1} of {count}", x, y,
                    detail=f"{y.opcode} operand {moved} reads another of lines alike: the same "
                           f"value, but XLA prints and hashes each line by its place ({where})")]
            return [self._change(
                "operands", f"printed {k + 1} of {count}: {_operand_label(a, x.name)}",
                f"printed {k + 1} of {count}: {_operand_label(b, y.name)}", x, y,
                detail=f"{b.name} holds the same lines as XLA prints them in another order "
                       f"({where}), and XLA hashes them so")]
        return []

    def unread_order_changes(self) -> list[Change]:
        """The first of the lines nothing reads (unused ones, and the ROOT)
        that stands elsewhere among them, if any. XLA prints and hashes an
        unscheduled computation in post order, from each such line in text
        order: two unused lines swapped, or one moved past the ROOT, are
        another program (jaxlib 0.10.2), other lines moved are not."""
        pairs, reverse = self.match.pairs, self.reverse
        unread_a, unread_b = _unread(self.match.a), _unread(self.match.b)
        order_a = [name for name in unread_a if name in pairs]
        order_b = [reverse[name] for name in unread_b if name in reverse]
        if len(order_a) < len(unread_a) or len(order_b) < len(unread_b) \
                or sorted(order_a) != sorted(order_b):
            return []  # a line added, removed or read anew is the change
        moved = next((k for k, (x, y) in enumerate(zip(order_a, order_b)) if x != y), None)
        if moved is None:
            return []
        x, count = order_b[moved], len(order_b)
        return [self._change(
            "operands", f"unread line {order_a.index(x) + 1} of {count}",
            f"unread line {moved + 1} of {count}",
            self.match.a.by_name[x], self.match.b.by_name[pairs[x]],
            detail=f"{self.match.b.name} has the lines nothing reads (unused ones, ROOT) in "
                   "another order: XLA prints and hashes the computation from each in text order")]

    def _wiring_changes(self, x: Instruction, y: Instruction) -> list[Change]:
        """What a paired pair reads and calls must be paired with each other.

        An operand on either side that has no partner (an instruction added
        or removed) says nothing here: the added or removed instruction is
        the change. ``subtract(a, b)`` against ``subtract(b, a)`` is one.
        """
        out = []
        pairs = self.match.pairs
        if len(x.operands) != len(y.operands):
            if x.opcode == y.opcode:
                out.append(self._change("operands", f"{len(x.operands)} operands",
                                        f"{len(y.operands)} operands", x, y,
                                        detail=f"{y.opcode} reads a different number of values"))
        else:
            moved = [(k, ox, oy) for k, (ox, oy) in enumerate(zip(x.operands, y.operands))
                     if ox in pairs and oy in self.reverse and pairs[ox] != oy
                     and self.values_a.key(ox) != self.values_b.key(oy)]
            same = bool(moved) and self._same_code(x, y, "a")
            values = [self._constants_read(ox, oy) if same else None for _, ox, oy in moved]
            if moved and all(values):  # another value, each run's shared with other readers
                for cx, cy in values:
                    out.extend(replace(change, origin=self.origin_b(y) or self.origin_a(x))
                               for change in self._constant_change(cx, cy))
            elif moved:
                old, new = _telling_apart(self.match.a, x.operands, self.match.b, y.operands)
                positions = ", ".join(str(k) for k, _, _ in moved)
                out.append(self._change("operands", f"{y.opcode}({old})", f"{y.opcode}({new})",
                                        x, y, detail=f"operand {positions} {READS_ANOTHER}"))
        calls_x, calls_y = calls(x), calls(y)
        pairs = self.alignment.computation_pairs
        for attribute in list(calls_x) + [n for n in calls_y if n not in calls_x]:
            names_x, names_y = calls_x.get(attribute, []), calls_y.get(attribute, [])
            for cx, cy in zip(names_x, names_y):
                if pairs.get(cx) == cy:
                    continue
                if self.alignment.same_code(cx, cy):
                    self.alike.update(_twins(self.alignment, cx, cy))
                else:
                    out.append(self._change(
                        "called_computation", _describe_call(self.alignment.a, cx),
                        _describe_call(self.alignment.b, cy), x, y,
                        detail=f"{attribute}: {cx} -> {cy}"))
            if len(names_x) != len(names_y):
                out.append(self._change("called_computation", f"{len(names_x)} computations",
                                        f"{len(names_y)} computations", x, y,
                                        detail=f"{attribute} calls a different number of "
                                               "computations"))
        return out

    def _constants_read(self, ox: str, oy: str) -> tuple[Instruction, Instruction] | None:
        """The constants two operands carry (through the same broadcasts and
        reshapes), when both are constants of different values: a value
        changed where each run keeps one constant for it and other readers
        (an EMA's 1 - decay, 0.01 then 0.001, shares the learning rate's
        0.01 in one run and Adam's 0.001 in the other); floating-point values
        only: which of the small integers a line reads is wiring as often."""
        x, y = self.match.a.by_name.get(ox), self.match.b.by_name.get(oy)
        if x is None or y is None:
            return None
        (x, carriers_x), (y, carriers_y) = _carried(self.match.a, x), _carried(self.match.b, y)
        if [c.opcode for c in carriers_x] != [c.opcode for c in carriers_y]:
            return None
        if x is None or y is None or x.opcode != "constant" or y.opcode != "constant" \
                or y.shape is None or not all(map(_FLOATING.fullmatch, _element_types(y.shape))) \
                or not self._constant_change(x, y):
            return None  # small integers are shared everywhere: indices, shifts, counts
        return x, y

    def _shape_changes(self, x: Instruction, y: Instruction) -> list[Change]:
        sx, sy = x.shape, y.shape
        if sx is None or sy is None or str(sx) == str(sy):
            return []
        if _element_types(sx) != _element_types(sy):
            kind = "dtype"
        elif str(sx.without_layout()) != str(sy.without_layout()):
            kind = "shape"
        else:
            kind = "layout"
        return [self._change(kind, str(sx), str(sy), x, y)]

    def _constant_change(self, x: Instruction, y: Instruction) -> list[Change]:
        lx, ly = x.literal, y.literal
        if lx is None or ly is None:
            return []
        element_type = y.shape.element_type if y.shape is not None else None
        if lx.elided and ly.elided:  # equal text, unknown values
            return [self._change("elided_constant", lx.text, ly.text, x, y,
                                 f"{y.shape}: values not printed (dump with "
                                 "XLA_FLAGS=--xla_dump_large_constants to compare them)",
                                 element_type=element_type)]
        if x.shape is not None and y.shape is not None and str(x.shape.without_layout()) != str(
                y.shape.without_layout()):
            return []  # a shape change says it already; the values cannot line up
        if lx.elided or ly.elided:  # printed in one run only: the other's values are unknown
            unprinted = "run a" if lx.elided else "run b"
            return [self._change("elided_constant", lx.text, ly.text, x, y,
                                 f"{y.shape}: values not printed in {unprinted} (one run was "
                                 "dumped with XLA_FLAGS=--xla_dump_large_constants)",
                                 element_type=element_type)]
        if lx == ly:
            return []
        detail = _element_differences(lx, ly) if not lx.parts else ""
        return [self._change("constant", lx.text, ly.text, x, y, detail,
                             element_type=element_type,
                             all_zero_or_one=(_all_zero_or_one(lx.elements),
                                              _all_zero_or_one(ly.elements)))]

    def _attribute_changes(self, x: Instruction, y: Instruction,
                           only: frozenset[str] | None = None) -> list[Change]:
        """Attributes whose meaning differs (``Instruction.attribute_keys``:
        spelling and XLA's defaults aside), called computations left to
        the wiring; metadata as the origin it names."""
        tx = {n: t for n, t in x.attribute_items if n not in CALL_ATTRIBUTES and (only is None or n in only)}
        ty = {n: t for n, t in y.attribute_items if n not in CALL_ATTRIBUTES and (only is None or n in only)}
        if tx == ty and not ("metadata" in tx and self._frames_moved(x, y)):
            return []
        kx, ky = dict(x.attribute_keys), dict(y.attribute_keys)
        out = []
        for name in list(tx) + [n for n in ty if n not in tx]:
            if name in _NOT_COMPILED or tx.get(name) == ty.get(name):
                continue
            if name in _INSTRUCTION_LISTS or kx.get(name) == ky.get(name):
                continue
            old, new = x.attribute(name), y.attribute(name)
            where = None if old is None or new is None else attribute_difference(old, new)
            detail = f"{name}: {where}" if where else name
            out.append(self._change("attribute", None if old is None else old.text,
                                    None if new is None else new.text, x, y, detail=detail))
        if (only is None or "metadata" in only) and (
                tx.get("metadata") != ty.get("metadata") or self._frames_moved(x, y)):
            origins = self.alignment.a.origin(x), self.alignment.b.origin(y)
            described = _metadata_difference(*origins) \
                or _library_source_difference(x.metadata, y.metadata)
            if described:
                out.append(self._change("metadata", described[0], described[1], x, y,
                                        detail=described[2]))
        return out

    def _frames_moved(self, x: Instruction, y: Instruction) -> bool:
        """Do the frames two equal ``stack_frame_id=N`` name differ? The tables
        say where a frame is; an edit above the jitted function moves its
        lines there, and not in the instruction's text."""
        a, b = self.alignment.a.frames, self.alignment.b.frames
        if a is None or b is None or not self.alignment.frames_differ:
            return False
        fx, fy = x.metadata.get("stack_frame_id"), y.metadata.get("stack_frame_id")
        return isinstance(fx, int) and isinstance(fy, int) and a.stack(fx) != b.stack(fy)

    def _parameter_count(self) -> list[Change]:
        na, nb = len(self.match.a.parameters), len(self.match.b.parameters)
        if na == nb:
            return []
        return [Change("parameter", f"{na} parameters", f"{nb} parameters", self.match.b.name,
                       None, None, Origin(), "the entry computation takes a different number "
                       "of parameters", opcode="parameter", computation_a=self.match.a.name)]


# Instructions two of which, alike in every way, are still two values: what
# they read from outside or change there (two infeeds read two inputs).
_EFFECTS = frozenset({"infeed", "outfeed", "recv", "recv-done", "send", "send-done", "rng",
                      "rng-get-and-update-state", "custom-call", "after-all"})


class _ValueKeys:
    """What an instruction computes, as a hash, names aside: two equal
    constants, or two broadcasts of the same value, read as the same value,
    so reading one instead of the other changes nothing; parameters keep
    their number (which argument a value is counts), an instruction with
    effects outside (``_EFFECTS``) is only itself; what an instruction
    calls counts by its code (``code``: the aligner's fingerprint of a
    computation), so two maps over computations that compute alike are one
    value."""

    def __init__(self, computation: Computation, code: Callable[[str], Any] | None = None):
        self.computation = computation
        self.code = code or (lambda name: name)
        self.known: dict[str, int] = {}

    def key(self, name: str) -> int:
        known = self.known.get(name)
        if known is not None:
            return known
        from .align import meaning_number  # attributes as a number: see there
        by_name = self.computation.by_name
        pending = [name]
        while pending:  # iterative: value chains run thousands deep
            current = pending[-1]
            instruction = by_name.get(current)
            if instruction is None:
                self.known[current] = hash(("outside", current))
                pending.pop()
                continue
            missing = [o for o in instruction.operands if o not in self.known and o in by_name
                       and o not in pending]
            if missing:
                pending.extend(missing)
                continue
            pending.pop()
            if instruction.opcode in _EFFECTS:  # each one is its own value
                self.known[current] = hash(("effect", id(self), current))
                continue
            value = instruction.operand_text if instruction.opcode in ("constant", "parameter") \
                else ""
            attributes, callees = None, ()
            if instruction.attribute_items:
                attributes = meaning_number(frozenset(k for k in instruction.attribute_keys
                                                      if k[0] not in _NOT_COMPILED))
                callees = tuple(map(self.code, instruction.called_computations))
            self.known[current] = hash((instruction.opcode, str(instruction.shape), value,
                                        tuple(self.known.get(o, hash(o))
                                              for o in instruction.operands),
                                        attributes, callees))
        return self.known[name]


def _operand_label(computation: Computation, name: str) -> str:
    """An operand as a person tells it apart, without the run's own names:
    ``parameter 1``, ``constant 0.5``, ``multiply f32[8]``."""
    instruction = computation.by_name.get(name)
    if instruction is None:
        return name
    if instruction.opcode == "parameter":
        return f"parameter {instruction.parameter_number}"
    if instruction.opcode == "constant":
        text = " ".join(instruction.operand_text.split())
        return f"constant {text if len(text) <= 20 else text[:19] + '…'}"
    return f"{instruction.opcode} {instruction.shape}" if instruction.shape else instruction.opcode


def _telling_apart(a: Computation, xs: list[str], b: Computation, ys: list[str],
                   deepest: int = 3) -> tuple[str, str]:
    """Two operand lists as a person tells them apart: ``tanh f32[2,4]``
    where that differs, else what each reads, a level deeper at a time
    (``tanh(dot(parameter 5 x, parameter 3 p['eps']))``): the same ops
    read in another order (a set iterated in another order while tracing)
    differ only in what they read."""
    for depth in range(deepest + 1):
        old = ", ".join(_reading(a, o, depth) for o in xs)
        new = ", ".join(_reading(b, o, depth) for o in ys)
        if old != new:
            break
    return old, new


def _reading(computation: Computation, name: str, depth: int, below: bool = False) -> str:
    """An operand and, ``depth`` levels down, what it reads; a parameter by
    number and, once the label goes deeper (``below``), the argument name
    the framework gave it."""
    instruction = computation.by_name.get(name)
    if instruction is None or depth == 0 and not below:
        return _operand_label(computation, name)
    if instruction.opcode == "parameter":
        argument = instruction.metadata.get("op_name")
        if isinstance(argument, str) and argument not in GENERIC_PARAMETER_NAMES:
            return f"parameter {instruction.parameter_number} {argument}"
    if depth == 0 or instruction.opcode in ("constant", "parameter") or not instruction.operands:
        return _operand_label(computation, name)
    read = ", ".join(_reading(computation, o, depth - 1, below=True) for o in instruction.operands)
    return f"{instruction.opcode}({read})"


def _describe_call(module: Module, name: str) -> str:
    """A called computation as a person tells it apart: a small one by what it
    computes (``maximum``), a bigger one by its name and size."""
    computation = module.by_name.get(name)
    if computation is None:
        return name
    body = [i for i in computation.instructions if i.opcode != "parameter"]
    if len(body) <= 2 and body:
        return " ".join(i.opcode for i in body)
    return f"{name} ({len(computation.instructions)} instructions)"


def _parameter_text(instruction: Instruction) -> str:
    """``f32[16,8]{1,0} parameter(0)``, as the HLO line prints it."""
    return f"{instruction.shape} parameter({instruction.parameter_number})"


def _element_types(shape: Shape) -> tuple[str, ...]:
    if shape.tuple_shapes:
        return tuple(t for s in shape.tuple_shapes for t in _element_types(s))
    return (shape.element_type,)


def _all_zero_or_one(elements: tuple[str, ...]) -> bool:
    if not elements:
        return False
    try:
        values = {element_value(e) for e in elements}
    except ValueError:
        return False
    return len(values) == 1 and next(iter(values)) in (0, 1)


# --- literal values ------------------------------------------------------------------------

def _element_differences(old: Literal, new: Literal, limit: int = 5) -> str:
    """``[3]: 0.5 -> 0.7, [9]: 1 -> 2 (2 of 16 elements differ)`` for arrays,
    elements compared as XLA stores them (``Literal.bits``)."""
    if len(old.elements) <= 1 or len(old.elements) != len(new.elements):
        return ""
    differing = [i for i, (o, n) in enumerate(zip(old.bits, new.bits)) if o != n]
    shown = ", ".join(f"[{i}]: {old.elements[i]} -> {new.elements[i]}" for i in differing[:limit])
    more = ", ..." if len(differing) > limit else ""
    return f"{shown}{more} ({len(differing)} of {len(old.elements)} elements differ)"


def _library_source_difference(old: dict, new: dict) -> tuple[str, str, str] | None:
    """(old, new, which fields) for a source location inside an installed package
    (TensorFlow records its own ops.py on almost every op): no user's line, so
    the origin leaves it out, yet it is metadata the hashes over the module
    proto read (another install path moves them)."""
    keys = [k for k in ("source_file", "source_line") if old.get(k) != new.get(k)]
    if not keys:
        return None
    return (f"{old.get('source_file')}:{old.get('source_line')}",
            f"{new.get('source_file')}:{new.get('source_line')}", ", ".join(keys))


def _stacks_apart(old: tuple, new: tuple, shown: int = 3) -> tuple[str, str]:
    """Two call stacks from the first frame where they part (``… <`` where
    frames before it were the same), ``shown`` frames of each, as
    ``file:line``, with the function or the column where only that differs
    (``x @ w`` moved along its line)."""
    parting = next((i for i, (x, y) in enumerate(zip(old, new)) if x != y),
                   min(len(old), len(new)))
    pairs = dict(enumerate(zip(old, new)))

    def label(n: int, frame) -> str:
        text = f"{frame.file}:{frame.line}"
        x, y = pairs.get(n, (None, None))
        if x is None or (x.file, x.line) != (y.file, y.line):
            return text
        if x.function != y.function:
            return f"{frame.function} ({text})"
        return f"{text}:{frame.column}" if x.column != y.column else text

    def text(stack: tuple) -> str:
        frames = [label(n, f) for n, f in enumerate(stack[parting:parting + shown], parting)]
        return ("… < " if parting else "") + " < ".join(frames) if frames else "(no frame)"
    return text(old), text(new)


def _metadata_difference(old: Origin, new: Origin) -> tuple[str, str, str] | None:
    """(old, new, which fields) for the metadata a person cares about.

    Stack frames are compared resolved (file, function, line): their ids
    are renumbered between runs and mean nothing by themselves.
    """
    keys = [k for k in ("op_name", "op_type", "source_file", "source_line", "stack")
            if getattr(old, k) != getattr(new, k)]
    if not keys:
        return None
    key = keys[0]
    if key == "stack":
        return (*_stacks_apart(old.stack, new.stack), "stack")
    before, after = getattr(old, key), getattr(new, key)
    return ("" if before is None else str(before), "" if after is None else str(after),
            ", ".join(keys))
