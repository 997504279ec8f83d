"""The package's layers, bottom up: a module imports from its own layer and the layers
below it, never from a layer above.

The graph is what Python runs (bin/import_cycles.py: late imports counted, imports a
type checker alone reads not). ``LAYERS`` is the layer picture of
docs/explanation/layers.md and names every top-level module and subpackage, so the top
of the package reads as the picture and a new module has to take a place in it here.
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "bin" / "import_cycles.py"
_spec = importlib.util.spec_from_file_location("import_cycles", SCRIPT)
import_cycles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_cycles)

# Bottom up. A name is a top-level module or subpackage of dynamo_app.
LAYERS = [
    ("foundation", ["exceptions", "conf", "tables"]),
    ("the local server", ["local"]),
    ("the client", ["client"]),
    ("deploying tables", ["deploy"]),
    (
        "writes",
        ["signals", "expressions", "actions", "app_tables", "unique", "transactions"]
        + ["counters", "sequences"],
    ),
    ("models", ["models"]),
    ("queries and data", ["partiql", "data"]),
    (
        "Django integration",
        ["forms", "admin", "checks", "permissions", "sessions", "cache", "middleware"]
        + ["streams", "contrib", "test", "testing"],
    ),
    ("startup and commands", ["apps", "management"]),
]

# The edges up that remain, each only inside a function (so no import order can meet a
# half-built module; tests/test_import_cycles.py names the cycle they close): the model
# layer calls the JSON form (Model.to_dict/from_dict) and PartiQL (Manager.partiql).
KNOWN_UPWARD = {
    ("dynamo_app.models.base", "dynamo_app.data"),
    ("dynamo_app.models.base", "dynamo_app.data.serialization"),
    ("dynamo_app.models.manager", "dynamo_app.partiql"),
}

ALIAS_MARK = "kept because the docs name it"


def top_name(module: str) -> str:
    """``dynamo_app.client.handle`` -> ``client`` (the package itself: "")."""
    return module.split(".")[1] if "." in module else ""


def aliases() -> dict[str, str]:
    """The documented paths kept for users (module -> its home), read from the tree."""
    found = {}
    for path in sorted((ROOT / "dynamo_app").glob("*.py")):
        text = path.read_text()
        if ALIAS_MARK in text:
            found[f"dynamo_app.{path.stem}"] = re.search(
                r"home of this module is ``([\w.]+)``", text
            )[1]
    return found


def rank() -> dict[str, int]:
    return {name: level for level, (_, names) in enumerate(LAYERS) for name in names}


EDGES = import_cycles.graph()
AT_IMPORT = import_cycles.graph(late=False)
ALIASES = aliases()
LAYERED = {m for m in EDGES if m != "dynamo_app" and m not in ALIASES}


def test_every_module_has_exactly_one_layer():
    placed = [name for _, names in LAYERS for name in names]
    assert len(placed) == len(set(placed)), "a name sits in two layers"
    unplaced = sorted({top_name(m) for m in LAYERED} - set(placed))
    assert not unplaced, f"place these in LAYERS (and docs/explanation/layers.md): {unplaced}"
    gone = sorted(set(placed) - {top_name(m) for m in LAYERED})
    assert not gone, f"LAYERS names what the package no longer has: {gone}"


def test_imports_point_down():
    level = rank()
    upward = sorted(
        (module, imported)
        for module in LAYERED
        for imported in EDGES[module]
        if imported in LAYERED and level[top_name(imported)] > level[top_name(module)]
    )
    unexpected = [edge for edge in upward if edge not in KNOWN_UPWARD]
    assert not unexpected, f"imports from a layer above: {unexpected}"
    assert set(upward) == KNOWN_UPWARD, "a known edge up is gone: drop it from KNOWN_UPWARD"


def test_the_known_edges_up_run_only_late():
    assert not [(m, i) for m, i in KNOWN_UPWARD if i in AT_IMPORT[m]]


@pytest.mark.parametrize(
    ("layer", "never"),
    [
        ("client", {"models", "data", "deploy", "admin", "forms", "sessions", "cache"}),
        ("local", {"client", "models", "conf", "tables"}),
        ("deploy", {"models", "data"}),
        ("models", {"admin", "forms", "sessions", "cache", "streams", "contrib"}),
    ],
)
def test_a_layer_never_imports(layer, never):
    found = sorted(
        (m, i)
        for m in LAYERED
        if top_name(m) == layer
        for i in EDGES[m]
        if i in LAYERED and top_name(i) in never
    )
    assert not found


def test_nothing_imports_apps_or_management():
    found = sorted(
        (m, i)
        for m in EDGES
        for i in EDGES[m]
        if top_name(i) in {"apps", "management"} and top_name(m) != top_name(i)
    )
    assert not found


def test_the_package_never_imports_a_documented_path_kept_for_users():
    assert not sorted((m, i) for m in EDGES for i in EDGES[m] if i in ALIASES)


def test_each_kept_path_is_named_by_the_docs_and_is_its_home_module():
    manual = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    text = "\n".join(page.read_text() for page in manual)
    assert ALIASES, "no kept path found: is ALIAS_MARK still the aliases' wording?"
    for path, home in ALIASES.items():
        assert re.search(rf"{re.escape(path)}(?![\w])", text), f"the docs no longer name {path}"
        assert importlib.import_module(path) is importlib.import_module(home)
