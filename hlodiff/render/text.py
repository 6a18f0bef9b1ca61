"""Rich text for a terminal: the one module that uses rich."""

from __future__ import annotations

from typing import TextIO

from rich.console import Console
from rich.table import Table

from ..constants import ConstantSite, abbreviate


def console(stream: TextIO | None = None) -> Console:
    """A console that colours only real terminals and honours NO_COLOR."""
    return Console(file=stream, highlight=False, soft_wrap=False)


def constants_table(path: str, module_name: str, sites: list[ConstantSite],
                    stream: TextIO | None = None) -> None:
    out = console(stream)
    table = Table(title=f"{len(sites)} constants in {module_name} ({path})", title_justify="left",
                  show_lines=False)
    table.add_column("line", justify="right", style="dim")
    table.add_column("constant")
    table.add_column("shape")
    table.add_column("value", overflow="fold")
    table.add_column("op_name (origin)", overflow="fold")
    table.add_column("source", overflow="fold")
    for site in sites:
        value = abbreviate(site.instruction)
        if site.instruction.literal is not None and site.instruction.literal.elided:
            value = f"[yellow]{value}[/]"
        op_name = site.origin.op_name or ""
        if site.origin_via and op_name:
            op_name += f" [dim](via {site.origin_via[0]})[/]"
        table.add_row(str(site.instruction.line), site.name, site.shape, value, op_name,
                      site.origin.location or "")
    out.print(table)
    if any(s.instruction.literal is not None and s.instruction.literal.elided for s in sites):
        out.print("[yellow]{...}[/] values were not printed by XLA; dump again with "
                  "XLA_FLAGS=--xla_dump_large_constants to see them.")
