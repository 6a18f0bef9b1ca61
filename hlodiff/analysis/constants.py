"""The constant hunter: every constant of a module with where it came from.

A constant baked into a program (a learning rate closed over as a Python
float, a loop bound, frozen weights) is the commonest reason two runs do not
share an executable. Scalars usually carry no metadata of their own in JAX
dumps, so their origin is taken from the instructions that use them,
following shape-only users (broadcast, reshape, convert, ...) until one that
records an op_name.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ..model import GENERIC_PARAMETER_NAMES, Computation, Instruction, Module, Origin

# Users that only move or reshape a value: look through them for an origin.
_PASS_THROUGH = frozenset({"broadcast", "reshape", "convert", "bitcast", "copy", "transpose",
                           "bitcast-convert", "tuple", "get-tuple-element", "slice"})


@dataclass(frozen=True)
class ConstantSite:
    """One ``constant`` instruction and what a user needs to know about it."""

    computation: str
    instruction: Instruction
    origin: Origin
    origin_via: tuple[str, ...] = ()  # names of the users the origin was taken from; () if its own

    @property
    def name(self) -> str:
        return self.instruction.name

    @property
    def shape(self) -> str:
        return str(self.instruction.shape)


def users_of(computation: Computation) -> dict[str, list[Instruction]]:
    """Map each instruction name to the instructions that read it."""
    users: dict[str, list[Instruction]] = defaultdict(list)
    for instruction in computation.instructions:
        for operand in instruction.operands:
            users[operand].append(instruction)
    return users


def _readers_by_distance(module: Module, start: Instruction,
                         users: dict[str, list[Instruction]]
                         ) -> Iterator[list[tuple[Instruction, Origin]]]:
    """The users of ``start`` that record where they came from, nearest
    first, one list per distance (in file order), looking through
    shape-only users that record nothing."""
    frontier, seen = [start], {start.name}
    while frontier:
        found, next_frontier = [], []
        for instruction in frontier:
            for user in users.get(instruction.name, ()):
                if user.name in seen:
                    continue
                seen.add(user.name)
                origin = module.origin(user)
                if origin.op_name or origin.source_file or origin.stack:
                    found.append((user, origin))
                elif user.opcode in _PASS_THROUGH:
                    next_frontier.append(user)
        yield found
        frontier = next_frontier


def origin_from_users(module: Module, start: Instruction,
                      users: dict[str, list[Instruction]]) -> tuple[Origin, tuple[str, ...]]:
    """The origin of the nearest users of ``start`` that have metadata.

    Breadth-first through shape-only users; among users at the same
    distance the first in file order wins, and its name is reported.
    """
    for found in _readers_by_distance(module, start, users):
        if found:
            return found[0][1], tuple(u.name for u, _ in found)
    return Origin(), ()


def reader_locations(module: Module, start: Instruction,
                     users: dict[str, list[Instruction]]) -> frozenset[str]:
    """The source lines of the instructions that read ``start`` (JAX's
    broadcast of a value it keeps once looked through). A constant read at
    one line only is that line's own literal; one read at several holds a
    value other lines share."""
    return frozenset(origin.location for found in _readers_by_distance(module, start, users)
                     for _, origin in found)


def constant_origin(module: Module, instruction: Instruction,
                    users: dict[str, list[Instruction]]) -> tuple[Origin, tuple[str, ...]]:
    """Where a constant or a parameter came from, and the users it was learnt
    from (if any).

    A constant's own metadata rarely says where it is used: JAX gives scalars
    none, PyTorch/XLA names them ``prim__Constant``. When its own op_name has
    no scope path, the scope of the nearest users is taken, keeping the
    constant's own source line when it has one (PyTorch/XLA's is the line
    that made the tensor). A parameter keeps its own op_name where it names
    the argument (JAX writes ``x``, ``params['w']``), and borrows where the
    framework wrote the same placeholder for all (GENERIC_PARAMETER_NAMES).
    """
    origin = module.origin(instruction)
    if origin.op_name and "/" in origin.op_name:
        return origin, ()
    if instruction.opcode == "parameter" and origin.op_name and \
            origin.op_name not in GENERIC_PARAMETER_NAMES:
        return origin, ()
    borrowed, via = origin_from_users(module, instruction, users)
    if not origin:
        return borrowed, via
    if not borrowed.op_name:
        return origin, ()
    return replace(borrowed, source_file=origin.source_file or borrowed.source_file,
                   source_line=origin.source_line or borrowed.source_line,
                   stack=origin.stack or borrowed.stack), via


def constant_sites(module: Module) -> list[ConstantSite]:
    """Every constant in ``module``, in file order, with its origin."""
    sites: list[ConstantSite] = []
    for computation in module.computations:
        constants = [i for i in computation.instructions if i.opcode == "constant"]
        if not constants:
            continue
        users = users_of(computation)
        for instruction in constants:
            origin, via = constant_origin(module, instruction, users)
            sites.append(ConstantSite(computation.name, instruction, origin, via))
    return sites


def abbreviate(instruction: Instruction, limit: int = 6) -> str:
    """A constant's value as a person wants to read it in a table.

    >>> from hlodiff import parse
    >>> m = parse("ENTRY e { ROOT c = f32[8] constant({1, 2, 3, 4, 5, 6, 7, 8}) }")
    >>> abbreviate(m.entry.root)
    '{1, 2, 3, 4, 5, 6, ... (8 values)}'
    """
    literal = instruction.literal
    if literal is None:
        return ""
    if literal.elided:
        return "{...} (elided)"
    if literal.parts:
        return "(" + ", ".join(_abbreviate_elements(p.elements, limit) if not p.elided else "{...}"
                               for p in literal.parts) + ")"
    if literal.is_scalar:
        return literal.elements[0]
    return _abbreviate_elements(literal.elements, limit)


def _abbreviate_elements(elements: tuple[str, ...], limit: int) -> str:
    if len(elements) <= limit:
        return "{" + ", ".join(elements) + "}"
    return "{" + ", ".join(elements[:limit]) + f", ... ({len(elements)} values)}}"


@dataclass(frozen=True)
class VaryingConstant:
    """A constant whose value is not the same in every run (first run's site)."""

    site: ConstantSite
    values: tuple[str | None, ...]  # per run, as printed; None where no counterpart was found
    # printed as {...} in every run: the values cannot be compared from the text
    undecided: bool = False


def varying_constants(modules: list[Module]) -> list[VaryingConstant]:
    """Constants of ``modules[0]`` whose value differs in at least one other run,
    and those printed as ``{...}`` in every run (``undecided``: the text does
    not tell).

    Each later module is aligned structurally with the first, so renumbered
    names do not matter; a constant with no counterpart in a run shows None.
    """
    from .align import align

    first = modules[0]
    runs: list[_Run] = []
    for other in modules[1:]:
        alignment = align(first, other)
        found: dict[tuple[str, str], Instruction] = {}
        computations: dict[str, Computation] = {}
        for match in alignment.computations:
            computations[match.a.name] = match.b
            for a_name, b_name in match.pairs.items():
                found[(match.a.name, a_name)] = match.b.by_name[b_name]
        runs.append(_Run(found, computations))
    out = []
    for site in constant_sites(first):
        own = site.instruction.literal.text if site.instruction.literal else None
        values = [own]
        for run in runs:
            twin = run.twins.get((site.computation, site.name))
            values.append(twin.literal.text if twin is not None and twin.literal else None)
        if len(set(values)) > 1:
            out.append(VaryingConstant(site, tuple(values)))
        elif site.instruction.literal is not None and site.instruction.literal.elided:
            # the same {...} everywhere: "no constant varies" would be a guess
            # (a frozen f32[64,32] whose 2048 values all changed read so)
            out.append(VaryingConstant(site, tuple(values), undecided=True))
        else:
            out.extend(_varying_at_users(first, site, own, runs))
    return out


@dataclass(frozen=True)
class _Run:
    """A later run as aligned with the first: each instruction's twin, and the
    computation paired with each of the first's."""

    twins: dict[tuple[str, str], Instruction]
    computations: dict[str, Computation]

    def constant_read(self, computation: str, user: str, position: int) -> str | None:
        """The value the twin of ``user`` reads at ``position`` where that is a
        constant; None where it has no twin or reads something else."""
        twin = self.twins.get((computation, user))
        there = self.computations.get(computation)
        if twin is None or there is None or position >= len(twin.operands):
            return None
        read = there.by_name.get(twin.operands[position])
        if read is None or read.opcode != "constant" or read.literal is None:
            return None
        return read.literal.text


def _varying_at_users(first: Module, site: ConstantSite, own: str | None,
                      runs: list[_Run]) -> list[VaryingConstant]:
    """A constant the same in every run, read by a user that reads another
    value elsewhere: XLA keeps one constant per value, so a clip norm of 1
    shares Adam's 1 in one run and has a 0.5 of its own in the other. Each
    such user gives the value it reads in each run."""
    out = []
    for user in users_of(first.computation(site.computation)).get(site.name, ()):
        position = user.operands.index(site.name)
        values = [own, *(run.constant_read(site.computation, user.name, position) for run in runs)]
        if None not in values and len(set(values)) > 1:
            out.append(VaryingConstant(replace(site, origin=first.origin(user) or site.origin,
                                               origin_via=(user.name,)), tuple(values)))
    return out
