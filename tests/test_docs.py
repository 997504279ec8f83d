"""The manual builds (bin/docs' build: Sphinx, warnings as errors) and its reference
documents every name the public modules export."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

from tests.test_public_surface import PUBLIC_MODULES

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.skipif(
    sys.version_info >= (3, 12), reason="the manual is built once, on the 3.11 line"
)


def inventory(path: Path) -> set[str]:
    """The Python objects a built site documents (Sphinx's objects.inv, format 2)."""
    header, _, body = path.read_bytes().partition(b"zlib.\n")
    assert header.startswith(b"# Sphinx inventory version 2"), header
    names = set()
    for line in zlib.decompress(body).decode().splitlines():
        name, role = line.split(" ", 2)[:2]
        if role.startswith("py:"):
            names.add(name)
    return names


def test_the_manual_builds_and_its_reference_has_every_public_name(tmp_path: Path) -> None:
    environment = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.typing_settings"}
    command = [sys.executable, "-m", "sphinx", "-E", "-W", "--keep-going", "-q", "-b", "html"]
    build = subprocess.run(
        [*command, "docs", str(tmp_path)], cwd=ROOT, env=environment, capture_output=True, text=True
    )
    assert build.returncode == 0, build.stdout + build.stderr

    documented = inventory(tmp_path / "objects.inv")
    exports = {
        f"{name}.{export}": getattr(module, export)
        for name in PUBLIC_MODULES
        for module in [importlib.import_module(name)]
        for export in module.__all__
    }
    # A name exported by two modules is documented once, under one of them.
    found = {id(obj) for name, obj in exports.items() if name in documented}
    missing = [name for name, obj in exports.items() if id(obj) not in found]
    assert not missing, f"not in docs/reference/api.md: {missing}"
