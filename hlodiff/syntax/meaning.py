"""What attributes mean, whatever their spelling: the keys models compare.

XLA reads attributes into typed fields and prints them back its own way,
so many spellings are one program: ``dimensions={0, 1}`` and
``dimensions={0,1}``, ``to_apply=%add`` and ``to_apply=add``,
``slice={[0:4]}`` and ``slice={[0:4:1]}``, ``feature_group_count=1`` and no
feature_group_count, ``operand_precision={HIGH,HIGH}`` and ``{high,high}``,
one sharding on a tuple-shaped instruction and that sharding once per
element, ``replica_count=1`` in a header and none. ``instruction_keys`` and
``header_key`` give such spellings one key (plain, hashable data); models
are equal when their keys are (hlodiff/model.py). Each rule was found
comparing texts with XLA's print of them (jaxlib 0.10.2), on XLA's parser
tests and on modules from public repositories.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any

from ..model import CALL_ATTRIBUTES, Shape, StackFrameTable
from ..errors import HloSyntaxError
from .lexer import balanced_end
from .literals import LiteralError, element_bits_of
from .values import (Pair, PieceError, Seq, alias_entries, parse_literal, parse_shape, parse_value,
                     split_operands)

# Header attributes XLA does not print when they hold their default.
_HEADER_DEFAULTS = {"is_scheduled": "false", "replica_count": 1, "num_partitions": 1,
                    "alias_passthrough_params": "false"}
_EMPTY_BY_DEFAULT = frozenset({"frontend_attributes"})
_ALIAS_TABLES = frozenset({"input_output_alias", "buffer_donor"})
_BOOL_LISTS = frozenset({"allow_spmd_sharding_propagation_to_parameters",
                         "allow_spmd_sharding_propagation_to_output"})

# Attribute values XLA gives an instruction that does not print them, and
# does not print itself: (opcodes or None for any) -> {name: text}.
_COLLECTIVES = frozenset("""
all-gather all-gather-start all-reduce all-reduce-start all-to-all collective-broadcast
ragged-all-to-all reduce-scatter
""".split())
_DEFAULTS: tuple[tuple[frozenset[str] | None, dict[str, str]], ...] = (
    (None, {"backend_config": '""'}),
    (frozenset({"dot", "ragged-dot", "scaled-dot"}),
     {"lhs_batch_dims": "{}", "rhs_batch_dims": "{}", "lhs_contracting_dims": "{}",
      "rhs_contracting_dims": "{}"}),
    (frozenset({"convolution", "custom-call"}), {"feature_group_count": "1",
                                                  "batch_group_count": "1"}),
    (frozenset({"sort", "topk"}), {"is_stable": "false"}),
    (frozenset({"topk"}), {"largest": "true"}),
    (frozenset({"scan"}), {"is_reverse": "false", "is_associative": "false"}),
    (frozenset({"gather", "scatter"}), {"indices_are_sorted": "false", "unique_indices": "false"}),
    (_COLLECTIVES, {"replica_groups": "{}", "constrain_layout": "false",
                    "use_global_device_ids": "false"}),
    (frozenset({"send", "recv", "send-done", "recv-done"}), {"is_host_transfer": "false"}),
    (frozenset({"call"}), {"is_composite": "false"}),
    (frozenset({"triangular-solve", "cholesky"}), {"lower": "false"}),
    (frozenset({"custom-call"}), {"custom_call_has_side_effect": "false",
                                  "api_version": "API_VERSION_ORIGINAL",
                                  "schedule": "SCHEDULE_NONE"}),
    (frozenset({"broadcast"}), {"dimensions": "{}"}),
)
_LOWER_CASE = frozenset({"operand_precision", "api_version", "schedule", "mode"})
_WINDOW_DEFAULTS = {"stride": 1, "lhs_dilate": 1, "rhs_dilate": 1, "rhs_reversal": 0}


def frozen(value: Any) -> Any:
    """``value`` (from the generic value grammar) as hashable data, names
    without their optional ``%``."""
    if isinstance(value, dict):
        return frozenset((key, frozen(item)) for key, item in value.items())
    if isinstance(value, Seq):
        return ("seq",) + tuple(frozen(item) for item in value)
    if isinstance(value, (list, tuple)):
        return (type(value).__name__,) + tuple(frozen(item) for item in value)
    if isinstance(value, Pair):
        return ("pair", frozen(value.key), value.sep, frozen(value.value))
    if isinstance(value, str) and value.startswith("%"):
        return value[1:]
    if isinstance(value, str) and _FLOAT.fullmatch(value):
        return float(value)  # epsilon=0.001 is epsilon=1.000000e-03
    return value


_FLOAT = re.compile(r"-?(?:\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+)")


def _value(text: str) -> Any:
    try:
        return parse_value(text)
    except PieceError:
        return ("unreadable", " ".join(text.split()))


def attribute_key(name: str, text: str, frames: StackFrameTable | None = None) -> Any:
    """The meaning of an instruction's ``name=text`` on its own; None when
    XLA keeps nothing of it. ``frames`` is the module's stack frame table."""
    reader = _READERS.get(name)
    if reader is not None:
        return reader(text, frames)
    value = _value(text)
    if name in _LOWER_CASE:
        value = _lower(value)
    return frozen(value)


def _lower(value: Any) -> Any:
    if isinstance(value, str):
        return value.lower()
    if isinstance(value, list):
        return [_lower(item) for item in value]
    return value


_METADATA_SHOWN = ("op_type", "op_name", "source_file", "scheduling_name")


def _metadata(text: str, frames) -> Any:
    """Metadata as XLA prints it: empty fields left out, none at all unless
    one of op_type, op_name, source_file, scheduling_name is set, and the
    stack frame as the call stack it names (XLA renumbers its frame table
    when it prints it, and drops an id that names no frame)."""
    value = _value(text)
    if not isinstance(value, dict):
        return None if value == [] else frozen(value)
    fields = {key: item for key, item in value.items() if item not in ("", 0)}
    if not any(fields.get(key) for key in _METADATA_SHOWN):
        return None
    frame = fields.pop("stack_frame_id", None)
    if frames is not None and frame in frames.frames:
        fields["stack_frame_id"] = frames.stack(frame)
    return frozen(fields)


def _backend_config(text: str, frames) -> Any:
    """The config as a string (XLA prints it raw when it is a ``{...}``
    blob, quoted otherwise); JSON as its data, since a backend reads it
    into a proto, where the order of the fields is no part of the value
    (a dump and ``Compiled.as_text()`` of one program order them otherwise)."""
    value = _value(text)
    config = value.strip() if isinstance(value, str) else text.strip()
    if config[:1] == "{":
        try:
            return frozen(json.loads(config))
        except ValueError:
            pass
    return config or None


def _frontend_attributes(text: str, frames) -> Any:
    """``{k="v", k2={raw}}``: a quoted value and the same text raw are one."""
    inner = text.strip()
    if not (inner.startswith("{") and inner.endswith("}")):
        return frozen(_value(text))
    pairs = {}
    try:
        items = split_operands(inner[1:-1]) if inner[1:-1].strip() else []
    except PieceError:
        return frozen(_value(text))
    for _, item in items:
        key, _, raw = item.partition("=")
        raw = raw.strip()
        value = _value(raw) if raw.startswith(('"', "'")) else raw
        pairs[key.strip()] = value if isinstance(value, str) else raw
    return frozenset(pairs.items()) or None


_SLICE = re.compile(r"\[\s*(-?\d+)\s*:\s*(-?\d+)\s*(?::\s*(-?\d+)\s*)?\]")


def _slice(text: str, frames) -> Any:
    """``{[0:4], [1:9:2]}``: the stride is 1 unless given."""
    return ("slice",) + tuple((int(a), int(b), int(c or 1)) for a, b, c in _SLICE.findall(text))


def _numbers(part: str) -> tuple[int, ...]:
    return tuple(int(n) for n in part.split("_"))


def _padding(text: str, frames) -> Any:
    """``0_1x2_3_1``: low, high and interior padding per dimension (0 unless given)."""
    try:
        return ("padding",) + tuple((_numbers(d) + (0,))[:3] for d in text.strip().split("x"))
    except ValueError:
        return frozen(_value(text))


def _window(text: str, frames) -> Any:
    """``{size=3x3 stride=1x1 pad=0_0x0_0}``: fields at their default left out."""
    value = _value(text)
    if value == []:
        return None
    if not isinstance(value, dict):
        return frozen(value)
    kept = {}
    for key, item in value.items():
        try:
            dims = tuple(_numbers(str(d)) for d in str(item).split("x"))
        except ValueError:
            kept[key] = frozen(item)
            continue
        default = (0, 0) if key == "pad" else (_WINDOW_DEFAULTS.get(key),)
        if all(d == default for d in dims):
            continue
        kept[key] = dims
    return frozenset(kept.items()) or None


def _result_accuracy(text: str, frames) -> Any:
    """``{mode=DEFAULT}`` is XLA's default; numbers and modes as values."""
    value = _value(text)
    if isinstance(value, dict) and "mode" in value and str(value["mode"]).lower() == "default":
        return None
    return frozen(_as_numbers(value))


def _as_numbers(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _as_numbers(item) for key, item in value.items()}
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return value.lower()
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _operand_precision(text: str, frames) -> Any:
    value = _lower(_value(text))
    if isinstance(value, list) and all(item == "default" for item in value):
        return None
    return frozen(value)




def _leaves(shape: Shape) -> int:
    """ShapeUtil::GetLeafCount: an empty tuple is a leaf too."""
    if shape.is_tuple and shape.tuple_shapes:
        return sum(_leaves(s) for s in shape.tuple_shapes)
    return 1


# An iota device list: "<=[dims]" and maybe "T(permutation)".
_IOTA = re.compile(r"<=\[([0-9,\s]+)\](?:T\(([0-9,\s]+)\))?")


def _plain_iota(match: re.Match) -> str:
    """The iota as XLA prints it (``IotaTileAssignment``'s canonical form):
    dimensions of size 1 dropped, dimensions the permutation keeps side by
    side merged, no ``T(...)`` for the identity: ``<=[2,2,2]T(1,2,0)`` is
    ``<=[2,4]T(1,0)``, ``<=[2,2]`` is ``<=[4]``."""
    dims = [int(d) for d in match.group(1).split(",")]
    order = [int(d) for d in match.group(2).split(",")] if match.group(2) else list(range(len(dims)))
    if sorted(order) != list(range(len(dims))):
        return match.group(0)
    for dim in [d for d in range(len(dims)) if dims[d] == 1][::-1]:  # size 1: nothing to permute
        del dims[dim]
        order = [o - (o > dim) for o in order if o != dim]
    merged = True
    while merged:
        merged = False
        for k in range(len(order) - 1):
            if order[k + 1] == order[k] + 1:
                dim = order[k]
                dims[dim:dim + 2] = [dims[dim] * dims[dim + 1]]
                order = [o - (o > dim) for o in order[:k + 1] + order[k + 2:]]
                merged = True
                break
    if order == list(range(len(order))):
        return f"<=[{math.prod(dims)}]"
    return "<=[" + ",".join(map(str, dims)) + "]T(" + ",".join(map(str, order)) + ")"


def _devices(text: str, frames) -> Any:
    """A sharding or replica groups, with iota device lists in XLA's form."""
    return frozen(_value(_IOTA.sub(_plain_iota, text)))


_SHARDING_METADATA = re.compile(r"\s*\bmetadata=\{")
# A tiled sharding's tiles and device list: explicit (``0,1,2,3``) or an iota.
_TILED = re.compile(r"devices=\[([0-9,\s]+)\]\s*(<=\[[0-9,\s]+\](?:T\([0-9,\s]+\))?|[0-9][0-9,\s]*)")
_SUBGROUPS = re.compile(r"\blast_tile_dim_replicate\b|\blast_tile_dims=\{([a-z,\s]*)\}")
# The order XLA sorts subgroup types in (``kOrderedTypes`` in hlo_sharding.cc).
_SUBGROUP_ORDER = ("maximal", "tuple", "other", "manual", "unreduced", "replicated")
_MAX_DEVICES = 1 << 16


def _sharding(text: str, frames) -> Any:
    """A sharding as XLA stores it: the metadata it may carry
    (``{replicated metadata={op_name="a"}}``) is metadata, left out of
    the program like an instruction's; a tiled one is its tiles, its
    devices and its subgroups as ``HloSharding::Subgroup`` and
    ``PartialTile`` normalise them (see ``_tiled``)."""
    text = _without_metadata(text)
    tiled = _tiled(text)
    if tiled is None or isinstance(tiled, str):  # not tiled, or tiles that split nothing
        return _devices(tiled or text, frames)
    return tiled


def _without_metadata(text: str) -> str:
    while (match := _SHARDING_METADATA.search(text)) is not None:
        try:
            end = balanced_end(text, match.end() - 1)
        except (HloSyntaxError, ValueError):
            return text
        text = text[:match.start()] + text[end:]
    return text


def _tiled(text: str) -> Any:
    """A single tiled sharding (``{devices=[2,1,2]1,0,3,2 last_tile_dim_replicate}``)
    as XLA keeps it, None for any other. XLA drops subgroup dimensions of
    size 1, merges those of one type, sorts the types (manual, unreduced,
    then replicated) moving the devices along, and sorts the devices of
    each replicated group: ``1,0,3,2`` is ``0,1,2,3`` there. Tiles that then
    split no data dimension are ``{replicated}`` or ``{manual}``. The key is
    the device array itself, and whether the text gave it as an iota (XLA
    prints an iota as an iota, a list as a list)."""
    tiled, subgroups = _TILED.search(text), _SUBGROUPS.search(text)
    if tiled is None or text.count("devices=") != 1:
        return None
    dims = [int(d) for d in tiled.group(1).split(",") if d.strip()]
    devices = _device_array(tiled.group(2), dims)
    if devices is None:
        return None
    if subgroups is None:
        kinds, replicate = [], False
    elif subgroups.group(1) is None:
        kinds, replicate = ["replicated"], True
    else:
        kinds = [kind.strip() for kind in subgroups.group(1).split(",") if kind.strip()]
        replicate = False
    if len(kinds) > len(dims) or any(kind not in _SUBGROUP_ORDER for kind in kinds):
        return None
    rest = text[:tiled.start()] + text[tiled.end():]
    if subgroups is not None:
        at = subgroups.start() - len(tiled.group(0)) if subgroups.start() > tiled.start() \
            else subgroups.start()
        rest = rest[:at] + rest[at + len(subgroups.group(0)):]
    iota = tiled.group(2).startswith("<=")
    made = _partial_tile(dims, devices) if replicate else _subgroup(dims, devices, kinds)
    if isinstance(made, str):
        return made
    dims, devices, kinds = made
    return ("tiled", tuple(dims), tuple(devices), iota, tuple(kinds), frozen(_value(rest)))


def _device_array(text: str, dims: list[int]) -> list[int] | None:
    """The devices of a tile assignment in row-major order: a list as
    written, an iota ``<=[4,2]T(1,0)`` as the devices it numbers; None
    when it does not fit the tiles."""
    count = math.prod(dims)
    if count > _MAX_DEVICES:
        return None
    text = " ".join(text.split())
    if not text.startswith("<="):
        devices = [int(d) for d in text.split(",") if d.strip()]
        return devices if len(devices) == count else None
    match = _IOTA.match(text.replace(" ", ""))
    if match is None:
        return None
    shape = [int(d) for d in match.group(1).split(",")]
    order = [int(d) for d in match.group(2).split(",")] if match.group(2) else \
        list(range(len(shape)))
    if sorted(order) != list(range(len(shape))) or math.prod(shape) != count:
        return None
    return _transposed(list(range(count)), shape, order)


def _transposed(values: list[int], shape: list[int], order: list[int]) -> list[int]:
    """``values``, an array of ``shape`` in row-major order, with its
    dimensions in ``order`` (numpy's ``transpose``), in row-major order."""
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    out_shape = [shape[d] for d in order]
    out_strides = [strides[d] for d in order]
    offsets = [0]
    for size, stride in zip(out_shape, out_strides):
        offsets = [o + k * stride for o in offsets for k in range(size)]
    return [values[o] for o in offsets]


def _partial_tile(dims: list[int], devices: list[int]) -> tuple | str:
    """``HloSharding::PartialTile``: the last dimension replicates; the
    devices of each group sorted."""
    if len(dims) == 1 or dims[-1] == len(devices):
        return "{replicated}"
    if dims[-1] == 1:
        return dims[:-1], devices, []
    size = dims[-1]
    devices = [d for k in range(0, len(devices), size) for d in sorted(devices[k:k + size])]
    return dims, devices, ["replicated"]


def _subgroup(dims: list[int], devices: list[int], kinds: list[str]) -> tuple | str:
    """``HloSharding::Subgroup``: subgroup dimensions of size 1 dropped,
    those of one type merged, the types in XLA's order."""
    if not kinds:
        return dims, devices, []
    data = len(dims) - len(kinds)
    if len(set(kinds)) == 1 and math.prod(dims[:data]) == 1 \
            and kinds[0] in ("replicated", "manual", "unreduced"):
        return "{" + kinds[0] + "}"
    by_kind: dict[str, list[int]] = {}
    removed, merging = [], False
    for k, kind in enumerate(kinds):
        if dims[data + k] == 1:
            removed.append(data + k)
            merging = True
            continue
        merging |= kind in by_kind
        by_kind.setdefault(kind, []).append(data + k)
    merging |= len(by_kind) > 1
    if merging:
        order, merged, kinds = list(range(data)), dims[:data], []
        for kind in sorted(by_kind, key=_SUBGROUP_ORDER.index):
            order += by_kind[kind]
            merged.append(math.prod(dims[d] for d in by_kind[kind]))
            kinds.append(kind)
        devices = _transposed(devices, dims, order + removed)
        dims = merged
    if kinds == ["replicated"]:
        return _partial_tile(dims, devices)
    if kinds == ["manual"] and len(devices) == dims[-1]:
        return "{manual}"
    if kinds and kinds[-1] == "replicated":
        made = _partial_tile(dims, devices)
        if isinstance(made, str):
            return made
        return made[0], made[1], kinds
    return dims, devices, kinds


def _literal(text: str, frames) -> Any:
    """``literal=f32[2] {0.1, 2}`` (a custom-call's): the shape and the
    elements as XLA stores them (``0.1`` is ``1.000000e-01``, a ``pred`` 2 is
    true). A tuple, ``( s32[2] {1, 2}, pred[1] {1} )``, is its elements,
    each with its own shape, as XLA prints and reads it."""
    try:
        return _literal_key(text.strip())
    except (PieceError, HloSyntaxError, LiteralError):
        return text.strip()


def _literal_key(text: str) -> Any:
    if text.startswith("(") and balanced_end(text, 0) == len(text):
        return ("tuple", tuple(_literal_key(item.strip())
                               for _, item in split_operands(text[1:-1])))
    match = _SHAPE_PREFIX.match(text)
    end = match.end() if match else 0
    shape = parse_shape(text[:end])
    return shape, _bits(parse_literal(text[end:], shape))


def _bits(literal) -> tuple:
    if literal.parts:
        return tuple(_bits(part) for part in literal.parts)
    return element_bits_of(literal)


_SHAPE_PREFIX = re.compile(r"[a-z][a-z0-9]*(\[[^\]]*\])?(\{[^}]*\})?")


_READERS = {
    "literal": _literal, "metadata": _metadata, "backend_config": _backend_config,
    "frontend_attributes": _frontend_attributes, "slice": _slice, "padding": _padding,
    "window": _window, "result_accuracy": _result_accuracy,
    "operand_precision": _operand_precision, "sharding": _sharding, "replica_groups": _devices,
}


def _tuple_sharding(text: str, shape: Shape) -> Any:
    """A tuple's sharding, one per element: a single sharding stands for
    itself once per element (``HloSharding::NormalizeTupleSharding``)."""
    inner = text.strip()
    if inner[1:].lstrip().startswith("{"):
        try:
            parts = [item for _, item in split_operands(inner[1:-1])]
        except PieceError:
            return frozen(_value(text))
        return ("tuple sharding",) + tuple(attribute_key("sharding", part) for part in parts)
    return ("tuple sharding",) + (attribute_key("sharding", text),) * _leaves(shape)


def instruction_keys(opcode: str, shape: Shape | None, items,
                     frames: StackFrameTable | None = None) -> frozenset:
    """(name, key) of each attribute of an instruction that XLA keeps, its
    called computations left out (the model compares those by name)."""
    keys = {}
    for name, text in items:
        if name in CALL_ATTRIBUTES:
            continue
        if name == "sharding" and shape is not None and shape.is_tuple:
            keys[name] = _tuple_sharding(text, shape)
            continue
        keys[name] = attribute_key(name, text, frames)
    for opcodes, defaults in _DEFAULTS:
        if opcodes is None or opcode in opcodes:
            for name, text in defaults.items():
                if name in keys and keys[name] == attribute_key(name, text):
                    del keys[name]
    if opcode == "map":  # XLA reads map's dimensions and keeps none: it maps over all
        keys.pop("dimensions", None)
    if opcode in _COLLECTIVES and keys.get("mode") == _default_mode(keys):
        del keys["mode"]
    return frozenset((name, key) for name, key in keys.items() if key is not None)


def _default_mode(keys: dict) -> str:
    """The group mode XLA derives from channel_id and use_global_device_ids."""
    if "channel_id" not in keys:
        return "cross_replica"
    return "flattened_id" if keys.get("use_global_device_ids") == "true" \
        else "cross_replica_and_partition"


# Header attributes that, away from their default, make XLA's parser install
# a module config of its own (``ParseHloModule`` in hlo_parser.cc).
_CONFIG_FIELDS = frozenset({"replica_count", "num_partitions", "alias_passthrough_params"})


def replaces_config(name: str, text: str) -> bool:
    """Does ``name=text`` in a module header make XLA's parser replace the
    module's config? It copies the config before it reads the entry
    computation's layouts into it, and installs the copy when the header
    sets any of these (even ``allow_spmd_sharding_propagation_to_output=
    {false}``, which it then does not print): with no
    entry_computation_layout, the program then takes each parameter and the
    result with its dimensions in the default order (jaxlib 0.10.2)."""
    if name in _BOOL_LISTS:
        value = _value(text)
        return value not in ([], {}, "")
    return name in _CONFIG_FIELDS and header_key(name, text) is not None


def header_key(name: str, text: str, parse_module: Callable[[str], Any] | None = None) -> Any:
    """The meaning of a module header's ``name=text``; None when it is
    XLA's default (then XLA does not print it). ``parse_module`` reads the
    HLO modules an origin_recovery_table holds (else they stay text)."""
    if name in _ALIAS_TABLES:
        return _alias_table(name, text)
    value = _value(text)
    if name in _HEADER_DEFAULTS:
        return None if value == _HEADER_DEFAULTS[name] else frozen(value)
    if name in _EMPTY_BY_DEFAULT and value in ([], {}):
        return None
    if name == "frontend_attributes":
        return _frontend_attributes(text, None)
    if name == "origin_recovery_table":
        return frozen(_recovery_modules(value, parse_module))
    if name in _BOOL_LISTS:
        flags = tuple(value) if isinstance(value, list) else (value,)
        return None if all(flag == "false" for flag in flags) else flags
    return frozen(value)


def _recovery_modules(value: Any, parse_module: Callable[[str], Any] | None) -> Any:
    """``origin_recovery_table={ {"x"} : {"x__ovp0"}, "HloModule ..." }``
    with each recovery module as the program it is: XLA reads it and
    prints it back its own way."""
    if isinstance(value, list):
        return [_recovery_modules(item, parse_module) for item in value]
    if isinstance(value, Pair):
        return Pair(_recovery_modules(value.key, parse_module),
                    _recovery_modules(value.value, parse_module), value.sep)
    if parse_module is not None and isinstance(value, str) and value.lstrip().startswith("HloModule"):
        try:
            return parse_module(value)
        except HloSyntaxError:
            return value
    return value


def _alias_table(name: str, text: str) -> Any:
    """``input_output_alias`` or ``buffer_donor`` as XLA keeps it: a set,
    whatever order the entries are written in, each output index aliased
    by its first entry (XLA's parser drops a later one); None when empty."""
    try:
        entries = alias_entries(name, text)
    except PieceError:
        return ("unreadable", " ".join(text.split()))
    if name == "input_output_alias":
        first: dict[tuple, tuple] = {}
        for output, *alias in entries:
            first.setdefault(output, tuple(alias))
        return frozenset(first.items()) or None
    return frozenset(entries) or None
