"""The fast client path (dynamo_app.fastpath): never the reason an app fails to
start or a request fails. A project on a botocore without the internals it uses
imports, starts and serves; each part left out says so once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent


def run_project(store: Any, *gone: str) -> dict[str, Any]:
    """tests/fastpath_project.py on a botocore without the names ``gone``."""
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.fastpath_settings",
        "FASTPATH_DYNAMO_ENDPOINT": store.url,
        "FASTPATH_DYNAMO_PREFIX": settings.DYNAMO["TABLE_PREFIX"],
        "FASTPATH_DYNAMO_REGION": settings.DYNAMO["REGION"],
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [sys.executable, "-m", "tests.fastpath_project", *gone],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["got"] == {"pk": "{'S': 'a'}", "b": "{'B': b'\\x00\\xff'}", "n": "{'N': '1.5'}"}
    assert result["queried"] == 1
    return result


def test_every_part_fits_this_botocore(dynamo_server: Any) -> None:
    assert run_project(dynamo_server)["warnings"] == []


@pytest.mark.parametrize(
    "gone, part",
    [
        ("botocore.context", "pipeline"),  # before botocore 1.38
        ("botocore.handlers:add_retry_headers", "pipeline"),
        ("botocore.auth:SigV4Auth.canonical_headers~", "signing"),  # botocore signs otherwise
    ],
)
def test_a_part_whose_botocore_internal_is_gone_is_left_to_botocore(
    dynamo_server: Any, gone: str, part: str
) -> None:
    warnings = run_project(dynamo_server, gone)["warnings"]
    assert len(warnings) == 1
    assert f"fast client {part} is off" in warnings[0] and "botocore 1." in warnings[0]


def test_the_imports_older_botocore_lacks_are_not_needed(dynamo_server: Any) -> None:
    """Before 1.40.2 botocore.utils had no get_current_datetime, before 1.38 there was
    no botocore.context: dynamo_app imported neither at import time."""
    run_project(dynamo_server, "botocore.utils:get_current_datetime", "botocore.context")
