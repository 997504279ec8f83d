"""The install: the ``local`` extra brings the moto line the suite runs on, and
without it the embedded server's error names the extra.

(bin/check-dist, run by bin/test, builds the distribution and installs it.)
The missing-moto cases run in a fresh interpreter where a module is made unimportable
(``sys.modules[name] = None``), as if it were not installed: ``moto`` itself,
or ``flask``, which moto's server needs (moto installed without ``[server]``).
"""

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]


def _requirement(lines, name):
    (found,) = (r for r in map(Requirement, lines) if r.name == name)
    return found


def test_local_extra_admits_the_tested_moto_and_not_5_2():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    local = _requirement(extras["local"], "moto")
    pins = [
        line
        for line in (ROOT / "requirements.txt").read_text().splitlines()
        if line and not line.startswith("#")
    ]
    tested = _requirement(pins, "moto")
    (pin,) = tested.specifier
    assert local.extras == tested.extras == {"server"}
    assert local.specifier.contains(pin.version)
    assert not local.specifier.contains("5.2.0")  # 5.2.x: ~3.6x the CPU of 5.1.x per 25-item Query
    assert "django-dynamo-app[local]" in extras["test"]  # the pytest plugin starts moto


def test_runtime_dependencies_are_what_the_package_imports_each_with_its_floor():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    declared = {r.name.lower(): r for r in map(Requirement, project["dependencies"])}
    assert set(declared) == {"django", "boto3", "botocore"}  # django-environ: the demo's only
    floors = subprocess.run(
        [sys.executable, str(ROOT / "bin" / "floors.py"), "local", "drf", "dax", "debug-toolbar"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    for name, requirement in declared.items():  # bin/test's floor leg installs these pins
        (low,) = (s.version for s in requirement.specifier if s.operator == ">=")
        assert f"{requirement.name}=={low}" in floors, name


STARTUP = """
import sys
sys.modules[sys.argv[1]] = None  # as if it were not installed

import django
from django.conf import settings

settings.configure(
    BASE_DIR=sys.argv[2],  # where the project's embedded server would keep its tables
    INSTALLED_APPS=["dynamo_app"],
    DYNAMO={"ENABLED": True, "ENDPOINT": "embedded", "REGION": "us-east-1"},
)
try:
    django.setup()  # opens the handle, which starts the embedded server
except Exception as exc:
    print(type(exc).__name__, exc)
else:
    sys.exit("django.setup() started the embedded server without " + sys.argv[1])
"""


@pytest.mark.parametrize("missing", ["moto", "flask"])
def test_embedded_server_without_moto_names_the_extra(missing, tmp_path):
    result = subprocess.run(
        [sys.executable, "-c", STARTUP, missing, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    error, _, message = result.stdout.partition(" ")
    assert error == "MissingDependency", result.stdout
    assert "not installed (" in message and missing in message  # what was missing
    assert 'pip install "django-dynamo-app[local]"' in message
