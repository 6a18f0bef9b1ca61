"""Stack frames by what they say, not by their number.

A module's stack frame tables (FileNames, FunctionNames, FileLocations,
StackFrames) number frames in the order the trace met them, so one op more
renumbers every later frame, and every ``stack_frame_id=N`` after it. Two
frames are the same when they name the same place in the same file and
function, called from the same frame. ``renumbered`` rewrites run b's ids to
run a's for the same frame, so that lines compare as their origins do.
"""

from __future__ import annotations

import re
from collections.abc import Hashable

_SECTIONS = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")
_ENTRY = re.compile(r"^(\d+) (.*)$", re.M)
_FIELD = re.compile(r"(\w+)=(-?\d+)")
_FRAME_ID = "stack_frame_id="
_FRAME_ID_NUMBER = re.compile(_FRAME_ID + "([0-9]*)")


def frame_tables(preamble: str) -> str:
    """The frame tables of a module, as printed ("" when it has none)."""
    at = preamble.find(_SECTIONS[0])
    return "" if at < 0 else preamble[at:]


def renumbered(text_b: str, preamble_a: str, preamble_b: str) -> str | None:
    """``text_b`` with each stack_frame_id of a frame run a has too rewritten
    to run a's id (the others to ids run a has not); None when the tables
    cannot be read."""
    frames_a, frames_b = _frames(preamble_a), _frames(preamble_b)
    if frames_a is None or frames_b is None:
        return None
    by_content = {content: number for number, content in frames_a.items()}
    ids = {number: _FRAME_ID + by_content.get(content, "x" + number)
           for number, content in frames_b.items()}

    def renumber(found: re.Match) -> str:
        number = found[1]  # a frame b's tables do not list is told apart with an "x"
        return ids.get(number) or _FRAME_ID + "x" + number

    return _FRAME_ID_NUMBER.sub(renumber, text_b)


def _frames(preamble: str) -> dict[str, Hashable] | None:
    """Each frame id, with what it stands for: (location, caller's)."""
    tables = _tables(preamble)
    if tables is None:
        return None
    files, functions, locations, frames = tables
    places = {}
    for number, text in locations.items():
        fields = dict(_FIELD.findall(text))
        file, function = fields.pop("file_name_id", None), fields.pop("function_name_id", None)
        places[number] = (files.get(file), functions.get(function), tuple(sorted(fields.items())))
    callers = {}
    for number, text in frames.items():
        fields = dict(_FIELD.findall(text))
        parent = int(fields.get("parent_frame_id", "1")) - 1  # printed as the parent's id + 1
        callers[number] = (places.get(fields.get("file_location_id")),
                           str(parent) if parent > 0 else None)
    contents: dict[str, Hashable] = {}
    for number in callers:
        chain, at = [], number
        while at is not None and at not in contents:
            if at in chain or at not in callers:
                return None  # a frame that calls itself, or one never listed
            chain.append(at)
            at = callers[at][1]
        for link in reversed(chain):
            place, parent = callers[link]
            contents[link] = (place, contents[parent] if parent is not None else None)
    return contents


def _tables(preamble: str) -> tuple[dict[str, str], ...] | None:
    starts = [preamble.find("\n" + name + "\n") for name in _SECTIONS]
    if any(at < 0 for at in starts) or starts != sorted(starts):
        return None
    ends = starts[1:] + [len(preamble)]
    return tuple(dict(_ENTRY.findall(preamble, start, end)) for start, end in zip(starts, ends))
