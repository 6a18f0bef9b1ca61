"""A captured program's text made the same on every machine, for a snapshot file.

Two things in HLO text depend on where and how it was produced rather than
on the program: absolute source paths (``/home/alice/proj/model.py`` on one
machine, ``/builds/proj/model.py`` in CI), and, since JAX records the whole
Python stack of every op, the frames of whatever ran the code: pytest,
pluggy, ``runpy``, xdist's workers, each version and invocation of them
different. ``portable`` keeps the program and drops those:

* every stack is cut above its outermost frame in the project (a file under
  the project root, not in an installed package): the runner's frames go,
  the user's code and the libraries it calls stay;
* paths under the project root become relative to it, paths in an installed
  package ``<site-packages>/...``; others stay as they are.

The stack-frame tables are renumbered densely in their original order, and
each instruction's ``stack_frame_id`` follows its frame.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
_INSTALLED = re.compile(r"^/.*?/(?:site|dist)-packages/")
_TABLES = re.compile(r"\nFileNames\n(.*?)\n\nFunctionNames\n(.*?)\n\nFileLocations\n(.*?)"
                     r"\n\nStackFrames\n(.*?)\n(?=\n)", re.S)
_NAME_ROW = re.compile(r'(\d+) (".*")')
_LOCATION_ROW = re.compile(r"(\d+) \{file_name_id=(\d+) function_name_id=(\d+) (.*)\}")
_FRAME_ROW = re.compile(r"(\d+) \{file_location_id=(\d+) parent_frame_id=(\d+)\}")
_FRAME_ID = re.compile(r"( ?)stack_frame_id=(\d+)")


def portable(text: str, root: Path) -> str:
    """``text`` with stacks cut at the project and source paths machine-independent."""
    prefix = str(root).rstrip(os.sep) + os.sep
    return _paths(_cut_stacks(text, prefix), prefix)


def _in_project(path: str, prefix: str) -> bool:
    return path.startswith(prefix) and _INSTALLED.match(path) is None


def _paths(text: str, prefix: str) -> str:
    def relative(match: re.Match) -> str:
        path = match.group(1)
        if _INSTALLED.match(path):
            return f'"{_INSTALLED.sub("<site-packages>/", path)}"'
        if path.startswith(prefix):
            return f'"{path[len(prefix):]}"'
        return match.group(0)

    return _STRING.sub(relative, text)


def _cut_stacks(text: str, prefix: str) -> str:
    tables = _TABLES.search(text)
    if tables is None:  # no stack-frame tables: sources are inline, nothing to cut
        return text
    rows = [_rows(pattern, block) for pattern, block in zip(
        (_NAME_ROW, _NAME_ROW, _LOCATION_ROW, _FRAME_ROW), tables.groups())]
    if None in rows:  # a table printed some other way: left as it is
        return text
    files, functions = dict(rows[0]), dict(rows[1])
    locations = {k: rest for k, *rest in rows[2]}
    frames = {k: (int(location), int(parent) - 1)  # printed as the parent's id plus one
              for k, location, parent in rows[3]}

    def project_frame(frame: int) -> bool:
        file_id = locations.get(frames[frame][0], ("0",))[0]
        return _in_project(_unquoted(files.get(int(file_id), '""')), prefix)

    kept: dict[int, int] = {}  # old frame id -> new parent (old id), for frames kept
    reached: dict[int, bool] = {}  # does the path from the outermost frame reach the project?
    for frame in sorted(frames):
        parent = frames[frame][1]
        reached[frame] = project_frame(frame) or reached.get(parent, False)
        if reached[frame]:
            kept[frame] = parent if reached.get(parent, False) else 0
    if len(kept) == len(frames) or not kept:  # nothing to cut, or no frame in the project
        return text
    new_frame = {old: n for n, old in enumerate(kept, 1)}
    used_locations = list(dict.fromkeys(frames[f][0] for f in kept))
    new_location = {old: n for n, old in enumerate(used_locations, 1)}
    used_files = list(dict.fromkeys(int(locations[l][0]) for l in used_locations))
    used_functions = list(dict.fromkeys(int(locations[l][1]) for l in used_locations))
    new_file = {old: n for n, old in enumerate(used_files, 1)}
    new_function = {old: n for n, old in enumerate(used_functions, 1)}
    rebuilt = "\n".join([
        "", "FileNames", *(f"{new_file[f]} {files[f]}" for f in used_files),
        "", "FunctionNames", *(f"{new_function[f]} {functions[f]}" for f in used_functions),
        "", "FileLocations",
        *(f"{new_location[l]} {{file_name_id={new_file[int(locations[l][0])]} "
          f"function_name_id={new_function[int(locations[l][1])]} {locations[l][2]}}}"
          for l in used_locations),
        "", "StackFrames",
        *(f"{new_frame[f]} {{file_location_id={new_location[frames[f][0]]} "
          f"parent_frame_id={new_frame.get(kept[f], 0) + 1}}}" for f in kept), ""])
    body = _FRAME_ID.sub(lambda m: f"{m.group(1)}stack_frame_id={new_frame[int(m.group(2))]}"
                         if int(m.group(2)) in new_frame else "", text[tables.end():])
    return text[:tables.start()] + rebuilt + body


def _rows(pattern: re.Pattern, block: str) -> list[tuple] | None:
    """The rows of one table with their ids as numbers; None if one row is not of its form."""
    out = []
    for line in block.split("\n"):
        match = pattern.fullmatch(line)
        if match is None:
            return None
        groups = match.groups()
        out.append((int(groups[0]), *groups[1:]))
    return out


def _unquoted(text: str) -> str:
    return text[1:-1].replace('\\"', '"').replace("\\\\", "\\")

