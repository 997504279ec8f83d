"""The settings and process-state modules stay out of every import cycle
(bin/import_cycles.py prints all of the package's cycles)."""

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "bin" / "import_cycles.py"
_spec = importlib.util.spec_from_file_location("import_cycles", SCRIPT)
import_cycles = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(import_cycles)

OUT_OF_CYCLES = ["conf", "handle", "retry", "apps", "testing", "tables", "sessions", "app_tables"]


@pytest.mark.parametrize("module", OUT_OF_CYCLES)
def test_module_is_in_no_import_cycle(module):
    name = f"dynamo_app.{module}"
    for cycle in import_cycles.cycles(import_cycles.graph()):
        assert name not in cycle, f"{name} is in the import cycle {' <-> '.join(cycle)}"


def test_the_script_finds_a_cycle_and_only_it():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert import_cycles.cycles(edges) == [["a", "b", "c"]]
