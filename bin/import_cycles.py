"""The import cycles among a package's modules: ``python bin/import_cycles.py [PACKAGE_DIR]``.

The graph holds what Python runs (PACKAGE_DIR defaults to dynamo_app):

* every import statement, top-level and late (inside a function), except what
  only a type checker reads: the body of ``if TYPE_CHECKING:`` (or
  ``typing.TYPE_CHECKING``), the ``else:`` of ``if not TYPE_CHECKING:``;
* the parent packages: ``import a.b.c`` and ``from a.b.c import x`` run
  ``a/__init__`` and ``a/b/__init__`` first, so they are edges too - except
  the importer's own packages, which are already running when it runs;
* ``from a.b import c`` where ``c`` is a submodule: an edge to ``a.b`` and to
  ``a.b.c``.

A cycle is a strongly connected component of that graph; each is printed with
the edges that close it (``(late)``: only inside a function), and the exit
status is the number of cycles. A cycle without late imports is the kind that
raises ImportError ("partially initialized module") for one import order.
tests/test_import_cycles.py fails the build on any such cycle in dynamo_app,
and on any cycle beyond the one it names.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "dynamo_app"


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _value_at_runtime(test: ast.expr) -> bool | None:
    """What an ``if`` test made of ``TYPE_CHECKING``, ``not``, ``and`` and ``or`` is
    when the code runs (``TYPE_CHECKING`` is False then); None when it depends on
    anything else, whose branches may both run."""
    if isinstance(test, ast.Name | ast.Attribute):
        name = test.id if isinstance(test, ast.Name) else test.attr
        return False if name == "TYPE_CHECKING" else None
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        value = _value_at_runtime(test.operand)
        return None if value is None else not value
    if isinstance(test, ast.BoolOp):
        values = [_value_at_runtime(v) for v in test.values]
        decisive = isinstance(test.op, ast.Or)  # True decides an ``or``, False an ``and``
        if decisive in values:
            return decisive
        return not decisive if all(v is not None for v in values) else None
    return None


def _runtime_imports(nodes: Iterable[ast.AST], late: bool) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements in ``nodes`` that run: not those only a type checker
    reads, and with ``late=False`` only those that run at import (not in a function)."""
    for node in nodes:
        if isinstance(node, ast.If):
            value = _value_at_runtime(node.test)
            if value is not False:
                yield from _runtime_imports(node.body, late)
            if value is not True:
                yield from _runtime_imports(node.orelse, late)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif late or not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            yield from _runtime_imports(ast.iter_child_nodes(node), late)


def _with_parents(module: str) -> list[str]:
    """``a.b.c`` and the packages importing it runs first: ``a``, ``a.b``."""
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts) + 1)]


def _targets(node: ast.Import | ast.ImportFrom, package: str, modules: set[str]) -> list[str]:
    """Every module ``node`` runs, parent packages included."""
    if isinstance(node, ast.Import):
        return [m for alias in node.names for m in _with_parents(alias.name)]
    base = package.split(".")
    base = base[: len(base) - node.level + 1] if node.level else []
    module = ".".join([*base, node.module] if node.module else base)
    # ``from . import handle`` also runs the module handle; ``from .conf import X`` a value
    submodules = [f"{module}.{alias.name}" for alias in node.names]
    return [*_with_parents(module), *(m for m in submodules if m in modules)]


def imports(
    path: Path, modules: set[str], package_dir: Path = PACKAGE, late: bool = True
) -> set[str]:
    """The package modules that run when ``path`` is imported or (``late``) its functions run."""
    name = module_name(path, package_dir)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    running = set(_with_parents(name))  # itself and its own packages
    found: set[str] = set()
    for node in _runtime_imports([ast.parse(path.read_text())], late):
        found |= {t for t in _targets(node, package, modules) if t in modules and t not in running}
    return found


def graph(package_dir: Path = PACKAGE, late: bool = True) -> dict[str, set[str]]:
    """Each module's edges; ``late=False`` keeps only the imports that run at import time."""
    paths = sorted(package_dir.rglob("*.py"))
    modules = {module_name(p, package_dir) for p in paths}
    return {module_name(p, package_dir): imports(p, modules, package_dir, late) for p in paths}


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(edges[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while (member := stack.pop()) != node:
                component.append(member)
            if component:
                found.append(sorted([node, *component]))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def main(argv: list[str]) -> int:
    package_dir = Path(argv[0]).resolve() if argv else PACKAGE
    edges = graph(package_dir)
    at_import = graph(package_dir, late=False)
    found = cycles(edges)
    for component in found:
        print(" <-> ".join(component))
        for module in component:
            inside = sorted(edges[module] & set(component))
            marked = [m if m in at_import[module] else f"{m} (late)" for m in inside]
            print(f"    {module} -> {', '.join(marked)}")
    print(
        f"{len(found)} import cycle(s) among {len(edges)} modules of {package_dir.name}, "
        f"{len(cycles(at_import))} of them without late imports"
    )
    return len(found)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
