"""Django's own tests of a contract, from the sdist of the installed Django.

Django's wheel ships no tests. The first run that needs them downloads the sdist
of exactly the installed version with pip (``pip download --no-binary :all:
--no-deps Django==X``) and keeps its ``tests/<package>/`` under the venv
(``<sys.prefix>/django-tests/X/``); later runs are offline. ``load("cache")``
then imports ``tests/cache/tests.py`` as ``cache.tests``, the name Django's
test settings give it (``KEY_FUNCTION: "cache.tests.custom_key_func"``).
"""

from __future__ import annotations

import importlib
import importlib.util
import shutil
import subprocess
import sys
import tarfile
import tempfile
import types
from pathlib import Path

import django

HOME = Path(sys.prefix) / "django-tests" / django.__version__


def _fetch(package: str) -> Path:
    """``tests/<package>`` of this Django's sdist, downloaded once per venv."""
    target = HOME / package
    if target.is_dir():
        return target
    HOME.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=HOME) as tmp:
        done = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
             "--no-binary", ":all:", "--no-deps",
             f"Django=={django.__version__}", "-d", tmp],
            capture_output=True,
            text=True,
        )  # fmt: skip
        sdists = list(Path(tmp).glob("*.tar.gz"))
        if not sdists:
            raise RuntimeError(
                f"Could not download Django {django.__version__}'s sdist (for its tests/"
                f"{package}), which these tests run: pip said:\n{done.stderr}\nRun the tests "
                "once with access to PyPI; the tests are kept in the venv after that."
            )
        prefix = f"django-{django.__version__}/tests/{package}/"
        with tarfile.open(sdists[0]) as sdist:
            members = [m for m in sdist.getmembers() if m.name.startswith(prefix) and m.isfile()]
            sdist.extractall(tmp, members=members, filter="data")
        try:
            Path(tmp, prefix).rename(target)
        except OSError:  # another worker got there first
            if not target.is_dir():
                raise
        shutil.rmtree(Path(tmp, f"django-{django.__version__}"), ignore_errors=True)
    return target


def load(package: str, *, stubs: dict[str, types.ModuleType] | None = None) -> types.ModuleType:
    """Import ``<package>.tests`` from Django's ``tests/<package>``; ``stubs``
    stand in for its submodules that need Django's own test project (its
    models, whose app is not installed here)."""
    if f"{package}.tests" in sys.modules:
        return sys.modules[f"{package}.tests"]
    path = _fetch(package)
    spec = importlib.util.spec_from_file_location(
        package, path / "__init__.py", submodule_search_locations=[str(path)]
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[package] = module
    spec.loader.exec_module(module)
    for name, stub in (stubs or {}).items():
        sys.modules[f"{package}.{name}"] = stub
    return importlib.import_module(f"{package}.tests")
