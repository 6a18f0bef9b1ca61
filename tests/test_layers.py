"""The package's layers, as a contract: a module imports only from its own layer
or the layers below it, and no group of modules imports itself in a circle.

The pipeline reads from the tree: plain data and paths at the bottom, then
the cache, HLO syntax, dump directories, the analysis, the integrations,
the renderers and the command line on top. Imports inside functions count
as much as those at the top of a file: a lazy import upward is still a
dependency upward.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "hlodiff"

# Lowest first. A module belongs to the first layer one of whose entries is
# its dotted name or a prefix of it.
LAYERS = (
    ("errors", "paths", "plain", "model", "collector"),
    ("cache",),
    ("syntax",),
    ("dumps",),
    ("analysis",),
    ("integrations",),
    ("render",),
    ("cli", "command", "__main__", "__init__", "comparison", "pytest_plugin"),
)


def _layer(module: str) -> int:
    for level, members in enumerate(LAYERS):
        for member in members:
            if module == member or module.startswith(member + "."):
                return level
    raise AssertionError(f"hlodiff.{module} belongs to no layer: add it to LAYERS")


def _modules() -> dict[str, Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _imports(module: str, path: Path) -> set[str]:
    """The hlodiff modules ``module`` imports, anywhere in its file."""
    package = module.split(".")[:-1] if path.name != "__init__.py" else module.split(".")
    if module == "__init__":
        package = []
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - node.level + 1]
                target = base + (node.module.split(".") if node.module else [])
            elif node.module and node.module.split(".")[0] == "hlodiff":
                target = node.module.split(".")[1:]
            else:
                continue
            names = [alias.name for alias in node.names]
            for name in names:  # "from . import cache" imports hlodiff.cache
                candidate = ".".join(target + [name])
                found.add(candidate if candidate in _MODULES else ".".join(target) or "__init__")
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "hlodiff":
                    found.add(".".join(alias.name.split(".")[1:]) or "__init__")
    return {m for m in found if m != module}


_MODULES = _modules()


def _graph() -> dict[str, set[str]]:
    return {module: _imports(module, path) for module, path in _MODULES.items()}


def test_every_import_goes_down_or_across():
    upward = [f"hlodiff.{module} -> hlodiff.{target}"
              for module, targets in _graph().items() for target in targets
              if _layer(target) > _layer(module)]
    assert upward == []


def test_no_import_cycle():
    graph = _graph()
    cycles = []
    state: dict[str, int] = {}  # 1 on the path, 2 done

    def visit(module: str, path: list[str]) -> None:
        state[module] = 1
        for target in sorted(graph.get(module, ())):
            if state.get(target) == 1:
                cycles.append(" -> ".join(path[path.index(target):] + [target]))
            elif target not in state:
                visit(target, path + [target])
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])
    assert cycles == []


def test_the_model_is_plain_data():
    # The model holds a Reader the syntax layer made; it never imports it.
    assert _graph()["model"] == set()
