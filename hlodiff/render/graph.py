"""A finding's neighbourhood (hlodiff/analysis/context.py) drawn as inline SVG.

The graphs are small (a few dozen nodes at most), so they are laid out here,
in Python, and the page needs no JavaScript library: operands above their
users, one row per step of the longest path from the graph's inputs, the
order within a row settled by a few barycenter sweeps (the mean position of
a node's neighbours in the row before), which keeps edges from crossing in
most neighbourhoods. Colours are the page's (hlodiff/render/assets/report.css):
each node has the class of its status.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..analysis.context import Node, Side
from .escape import html

NODE_HEIGHT = 38
ROW_GAP = 34
COLUMN_GAP = 14
MARGIN = 8
CHAR_WIDTH = 6.8  # of the 12 px label font, generously
MIN_WIDTH, MAX_WIDTH = 78, 200
SWEEPS = 4


@dataclass(frozen=True)
class Box:
    x: float  # left
    y: float  # top
    width: float


def title(node: Node) -> str:
    """The node's first line: its opcode, or a parameter's name."""
    if node.opcode == "parameter":
        return f"parameter {node.name}"
    return node.opcode


def subtitle(node: Node) -> str:
    """The node's second line: its shape, after a constant's value."""
    return f"{node.value} {node.shape}" if node.value else node.shape


def _fit(text: str, width: float) -> str:
    chars = int((width - 14) / CHAR_WIDTH + 0.5)
    return text if len(text) <= chars else text[:max(1, chars - 1)] + "…"


def layout(side: Side) -> tuple[dict[str, Box], float, float]:
    """Where each node goes, and the drawing's width and height."""
    names = [n.name for n in side.nodes]
    operands: dict[str, list[str]] = defaultdict(list)
    users: dict[str, list[str]] = defaultdict(list)
    for operand, user in side.edges:
        operands[user].append(operand)
        users[operand].append(user)
    rank = _ranks(names, operands, users)
    rows: dict[int, list[str]] = defaultdict(list)
    line = {n.name: n.number for n in side.nodes}
    for name in sorted(names, key=lambda n: line[n]):
        rows[rank[name]].append(name)
    order = [rows[r] for r in sorted(rows)]
    _sweep(order, operands, users)
    widths = {n.name: min(MAX_WIDTH, max(MIN_WIDTH, CHAR_WIDTH * max(
        len(title(n)), len(subtitle(n))) + 16)) for n in side.nodes}
    row_widths = [sum(widths[n] for n in row) + COLUMN_GAP * (len(row) - 1) for row in order]
    width = max(row_widths, default=0) + 2 * MARGIN
    boxes = {}
    for r, (row, row_width) in enumerate(zip(order, row_widths)):
        x = MARGIN + (width - 2 * MARGIN - row_width) / 2
        for name in row:
            boxes[name] = Box(x, MARGIN + r * (NODE_HEIGHT + ROW_GAP), widths[name])
            x += widths[name] + COLUMN_GAP
    height = 2 * MARGIN + len(order) * NODE_HEIGHT + max(0, len(order) - 1) * ROW_GAP
    return boxes, width, height


def _ranks(names: list[str], operands: dict[str, list[str]],
           users: dict[str, list[str]]) -> dict[str, int]:
    """Each node's row: one below its lowest operand (the graph is acyclic, as
    dataflow inside a computation is)."""
    waiting = {n: len(operands[n]) for n in names}
    ready = [n for n in names if waiting[n] == 0]
    rank = dict.fromkeys(names, 0)
    while ready:
        name = ready.pop()
        for user in users[name]:
            rank[user] = max(rank[user], rank[name] + 1)
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    return rank


def _sweep(rows: list[list[str]], operands: dict[str, list[str]],
           users: dict[str, list[str]]) -> None:
    """Order each row by the mean position of its neighbours in the row above,
    then below, a few times over."""
    for sweep in range(SWEEPS):
        down = sweep % 2 == 0
        sequence = range(1, len(rows)) if down else range(len(rows) - 2, -1, -1)
        for r in sequence:
            fixed = rows[r - 1] if down else rows[r + 1]
            position = {n: i for i, n in enumerate(fixed)}
            links = operands if down else users

            def centre(name: str, current: int) -> float:
                found = [position[n] for n in links[name] if n in position]
                return sum(found) / len(found) if found else current
            rows[r] = [n for _, n in sorted(((centre(n, i), i), n)
                                            for i, n in enumerate(rows[r]))]


def svg(side: Side, run: str, detail_ids: dict[str, str]) -> str:
    """The SVG of one run's half; ``detail_ids`` names the template holding
    each node's line and origin, which the page shows on a click."""
    boxes, width, height = layout(side)
    parts = [f'<svg class="graph-svg" viewBox="0 0 {width:.0f} {height:.0f}" '
             f'width="{width:.0f}" height="{height:.0f}" role="img" '
             f'aria-label="run {run}: {len(side.nodes)} instructions around the change">']
    for operand, user in side.edges:
        a, b = boxes[operand], boxes[user]
        x1, y1 = a.x + a.width / 2, a.y + NODE_HEIGHT
        x2, y2 = b.x + b.width / 2, b.y
        bend = (y2 - y1) / 2
        parts.append(f'<path class="edge" d="M{x1:.1f} {y1:.1f} C{x1:.1f} {y1 + bend:.1f} '
                     f'{x2:.1f} {y2 - bend:.1f} {x2:.1f} {y2 - 3:.1f}" marker-end="url(#arrow)"/>')
    for node in side.nodes:
        box = boxes[node.name]
        classes = f"node {node.status}" + (" focus" if node.focus else "")
        partner = f' data-partner="{html(node.partner)}"' if node.partner else ""
        parts.append(
            f'<g class="{classes}" tabindex="0" role="button" data-run="{run}" '
            f'data-name="{html(node.name)}"{partner} data-detail="{detail_ids[node.name]}" '
            f'transform="translate({box.x:.1f} {box.y:.1f})">'
            f'<title>{html(node.name)} ({node.status})</title>'
            f'<rect width="{box.width:.1f}" height="{NODE_HEIGHT}" rx="5"/>'
            f'<text class="op" x="{box.width / 2:.1f}" y="16">{html(_fit(title(node), box.width))}'
            f'</text><text class="shape" x="{box.width / 2:.1f}" y="30">'
            f'{html(_fit(subtitle(node), box.width))}</text></g>')
    parts.append("</svg>")
    return "".join(parts)


ARROW = ('<svg class="defs" width="0" height="0" aria-hidden="true"><defs>'
         '<marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" '
         'markerHeight="7" orient="auto-start-reverse"><path d="M0 0L8 4L0 8z"/></marker>'
         '</defs></svg>')
