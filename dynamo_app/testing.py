"""Testing a project that uses dynamo_app: the pytest plugin, and helpers that need no pytest.

Importing this module imports no pytest and changes nothing: ``count_requests()``,
``RequestAssertions`` (``assertNumRequests`` for ``django.test.TestCase``) and the
test store's names work under any runner. Under pytest it is the ``pytest11``
plugin, and loads the fixtures from ``dynamo_app.test.plugin`` (see there):
``dynamo_server``, ``dynamo_db``, ``dynamo_requests``, the ``dynamo_db`` mark,
and ``moto_only``, a mark that skips a test about moto itself on another engine.
"""

from __future__ import annotations

from typing import Any

from .test.counting import RequestAssertions, RequestCounter, count_requests
from .test.store import (
    ENDPOINT_ENV,
    ENGINE,
    EXTERNAL_ENDPOINT,
    TEST_CREDENTIALS,
    WORKER,
    WORKER_REGION,
    ExternalServer,
    create_tables,
    settings_for_tests,
)

__all__ = [
    "ENDPOINT_ENV",
    "ENGINE",
    "EXTERNAL_ENDPOINT",
    "TEST_CREDENTIALS",
    "WORKER",
    "WORKER_REGION",
    "ExternalServer",
    "RequestAssertions",
    "RequestCounter",
    "count_requests",
    "create_tables",
    "settings_for_tests",
]

# pytest loads these with this plugin; nothing else imports them.
pytest_plugins = ["dynamo_app.test.plugin"]


def __getattr__(name: str) -> Any:
    if name == "moto_only":  # a pytest mark: made by the plugin, with pytest
        from .test.plugin import moto_only

        return moto_only
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
