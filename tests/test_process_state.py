"""Importing the pytest plugin changes no module state; the run's store switches
what a test run needs while it is up, and puts it back when it stops."""

import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.test.utils import override_settings

from dynamo_app import apps
from dynamo_app.client import handle
from dynamo_app.local import server as local
from dynamo_app.test.store import TestStore

IMPORT_THE_PLUGIN = (
    "import dynamo_app.testing, dynamo_app.client.handle as h, dynamo_app.local.server as l, "
    "dynamo_app.apps as a; print(h.validate_parameters, l.share_embedded, "
    "hasattr(a, 'schema_check_at_startup'))"
)


def test_importing_the_plugin_flips_no_globals():
    result = subprocess.run(
        [sys.executable, "-c", IMPORT_THE_PLUGIN],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
        check=True,
    )
    assert result.stdout.split() == ["False", "True", "False"]
    assert not hasattr(apps, "schema_check_at_startup")


def test_the_store_switches_while_up_and_restores_when_stopped(dynamo_db, monkeypatch):
    monkeypatch.setattr(handle, "validate_parameters", False)
    monkeypatch.setattr(local, "share_embedded", True)
    # Started from a project's own configuration: a TestStore refuses to start over
    # the run's store itself (DYNAMO_TEST_ENDPOINT as the configured ENDPOINT).
    project = {**settings.DYNAMO, "ENDPOINT": "http://127.0.0.1:9"}
    with override_settings(DYNAMO=project):
        store = TestStore().start()
        try:
            assert handle.validate_parameters is True and local.share_embedded is False
            assert handle.get_handle().client.meta.config.parameter_validation is True
        finally:
            store.stop()
    assert handle.validate_parameters is False and local.share_embedded is True
