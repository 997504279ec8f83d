"""dynamo_app has no import cycle, late imports counted (bin/import_cycles.py
prints any, with the edges that close it)."""

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "bin" / "import_cycles.py"
_spec = importlib.util.spec_from_file_location("import_cycles", SCRIPT)
import_cycles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_cycles)


def test_the_package_has_no_import_cycle():
    found = [" <-> ".join(cycle) for cycle in import_cycles.cycles(import_cycles.graph())]
    assert found == [], f"import cycles (run python bin/import_cycles.py): {found}"


def test_a_late_import_counts():
    edges = import_cycles.graph()
    assert "dynamo_app.local_shared" in edges["dynamo_app.handle"]  # imported in a method


def test_the_script_finds_a_cycle_and_only_it():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles.cycles(edges) == [["a", "b", "c"]]
