"""Shared by the tests that run Python in processes of their own against the run's
store: the environment that hands a child the test's DYNAMO section, the child's
side of it (``store_section()``, for its settings), and processes that start
together.

A child reads the section the test has (the run's server, region, credentials and
table prefix), so it reaches exactly the tables the test's ``dynamo_db`` made, on
either engine.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
STORE = "TEST_DYNAMO"  # the parent test's DYNAMO section, as JSON
GO = "TEST_GO"  # a file: it exists once every process started together is ready


def child_environ(**environ: str) -> dict[str, str]:
    """This process's environment, with the test's DYNAMO section in ``TEST_DYNAMO``,
    the repository on ``PYTHONPATH``, and ``environ`` over them."""
    from django.conf import settings

    return {
        **os.environ,
        STORE: json.dumps(settings.DYNAMO),
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        **environ,
    }


def store_section(**overrides: Any) -> dict[str, Any]:
    """In a child's settings: the parent test's DYNAMO section, with ``overrides``."""
    return {**json.loads(os.environ[STORE]), **overrides}


def run_python(
    *args: str, env: dict[str, str], timeout: int = 120
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` in the repository, its output captured as text."""
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


# The start of a script for run_together(): dynamo_app alone, on the test's store.
TOGETHER = """
import json, os, sys, time
import django
from django.conf import settings

settings.configure(INSTALLED_APPS=["dynamo_app"], DYNAMO=json.loads(os.environ["TEST_DYNAMO"]))
django.setup()


def start_together():
    print("ready", flush=True)
    while not os.path.exists(os.environ["TEST_GO"]):  # every process ready
        time.sleep(0.01)
"""


def run_together(script: str, *args: str, processes: int, go: Path) -> list[str]:
    """Run ``script`` (after ``TOGETHER``) with ``args`` in ``processes`` processes;
    where each calls ``start_together()``, let them all go at once (``go`` is the
    file they wait for). Return what each printed after that; each must succeed."""
    env = child_environ(**{GO: str(go)})
    running = [
        subprocess.Popen(
            [sys.executable, "-c", TOGETHER + script, *args],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        for _ in range(processes)
    ]
    for process in running:
        assert process.stdout is not None and process.stdout.readline() == "ready\n"
    go.touch()
    outputs = []
    for process in running:
        out, _ = process.communicate(timeout=300)
        assert process.returncode == 0
        outputs.append(out)
    return outputs
