"""pytest fixtures for projects that use dynamo_app (a pytest11 plugin).

* ``dynamo_server`` (session): a live local DynamoDB server on a free
  127.0.0.1 port, and ``settings.DYNAMO`` pointed at it for the whole run.
  Under pytest-xdist every worker process gets its own server.
* ``dynamo_db``: fresh, empty tables for every registered model (and the app's
  own tables) for one test. Use it like pytest-django's ``db``.
* ``dynamo_requests``: counts the DynamoDB API calls a test makes
  (``count_requests()`` is the same as a context manager).

Nothing here fakes DynamoDB: requests go over HTTP through the same handle
and client a project uses.

Another engine: set ``DYNAMO_TEST_ENDPOINT`` (e.g. ``http://127.0.0.1:4566``,
a MiniStack or another DynamoDB-compatible server you started) and the run
uses it instead of starting moto. Then ``dynamo_db`` resets by deleting every
table in the run's region (ListTables + DeleteTable, waiting until they are
gone) and creates the registered tables again, waiting until ACTIVE. So point
it only at a throwaway server. Under pytest-xdist the workers share that
server, and each gets a region of its own (``test-gw0``; tables are regional,
on DynamoDB and on the local engines), so they never see each other's tables,
whatever their names. Build any section a test needs with ``test_settings()``
or from ``settings.DYNAMO`` to stay in the worker's region. ``ENGINE`` says
which engine runs; mark tests that are about moto itself with ``moto_only``.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from . import apps, handle, local

# A test run makes its own tables: the startup check would only find none.
apps.schema_check_at_startup = False
# ENDPOINT = "embedded" in a test run: a server of the run's own, in memory,
# never the project's shared development store.
local.share_embedded = False
# Local engines accept requests DynamoDB rejects: keep botocore's own request
# validation on in tests as a guard against malformed requests built by the app.
handle.validate_parameters = True

TEST_CREDENTIALS = {"ACCESS_KEY_ID": "testing", "SECRET_ACCESS_KEY": "testing", "SESSION_TOKEN": ""}

ENDPOINT_ENV = "DYNAMO_TEST_ENDPOINT"
EXTERNAL_ENDPOINT = os.environ.get(ENDPOINT_ENV, "").rstrip("/")
ENGINE = "external" if EXTERNAL_ENDPOINT else "moto"
# This process's share of an external server: a region per pytest-xdist worker.
WORKER = os.environ.get("PYTEST_XDIST_WORKER")
WORKER_REGION = f"test-{WORKER}" if WORKER else "us-east-1"

moto_only = pytest.mark.skipif(
    ENGINE != "moto",
    reason=f"about dynamo_app.local's moto server, not the engine {ENDPOINT_ENV} selects",
)


def test_settings(base: dict[str, Any], endpoint: str) -> dict[str, Any]:
    """The project's DYNAMO section, pointed at a local server for tests
    (and at this worker's region on the external engine; moto knows only AWS's regions)."""
    return {
        **base,
        **TEST_CREDENTIALS,
        "ENABLED": True,
        "ENDPOINT": endpoint,
        "REGION": WORKER_REGION if endpoint == EXTERNAL_ENDPOINT else "us-east-1",
        "AUTO_MIGRATE": False,
        "VERIFY_SCHEMA": False,
    }


def create_tables() -> None:
    """Create every registered table (and enable its TTL) on the current endpoint,
    waiting until each is ACTIVE (at once on local engines)."""
    from .handle import get_handle
    from .schema import create_table
    from .tables import registry

    handle = get_handle()
    for definition in registry.definitions():
        create_table(definition, handle=handle, timeout=_POLL["Delay"] * _POLL["MaxAttempts"])


_POLL = {"Delay": 1, "MaxAttempts": 120}


class ExternalServer:
    """A DynamoDB-compatible server this run did not start (``DYNAMO_TEST_ENDPOINT``)."""

    running = True

    def __init__(self, url: str) -> None:
        self.url = url

    def reset(self) -> None:
        """Delete every table in this worker's region and wait until they are gone
        (at once on local engines, seconds on DynamoDB)."""
        from .handle import get_handle
        from .schema import table_names

        handle = get_handle()
        for name in table_names(handle):
            handle.call("delete_table", TableName=name)
        for _ in range(_POLL["MaxAttempts"]):
            if not table_names(handle):
                return
            time.sleep(_POLL["Delay"])
        raise TimeoutError(f"Tables still being deleted on {self.url}: {table_names(handle)}")


class RequestCounter(Counter):
    """Counts DynamoDB API calls by operation name (``GetItem``, ``Query``, ...);
    ``calls`` lists each as ``(operation, parameters as sent)``."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, model: Any, params: dict[str, Any], **kwargs: Any) -> None:
        self[model.name] += 1
        self.calls.append((model.name, json.loads(params["body"])))  # DynamoDB speaks JSON

    @property
    def total(self) -> int:
        return sum(self.values())


@contextlib.contextmanager
def count_requests() -> Iterator[RequestCounter]:
    """Count the API calls made through the process handle inside the block."""
    from .handle import get_handle

    counter = RequestCounter()
    events = get_handle().client.meta.events
    events.register("before-call.dynamodb", counter, unique_id="dynamo_app.count_requests")
    try:
        yield counter
    finally:
        events.unregister("before-call.dynamodb", unique_id="dynamo_app.count_requests")


@pytest.fixture(scope="session")
def dynamo_server(django_test_environment: Any) -> Iterator[Any]:
    from django.conf import settings
    from django.test.utils import override_settings

    from .local import LocalServer, embedded_server

    server = ExternalServer(EXTERNAL_ENDPOINT) if EXTERNAL_ENDPOINT else embedded_server()
    started_here = server is None or not server.running
    if started_here:
        server = LocalServer().start()
    override = override_settings(DYNAMO=test_settings(getattr(settings, "DYNAMO", {}), server.url))
    override.enable()
    try:
        yield server
    finally:
        override.disable()
        if started_here:
            server.stop()


@pytest.fixture
def dynamo_db(dynamo_server: Any) -> Iterator[Any]:
    from django.conf import settings

    from .handle import get_handle

    endpoint = settings.DYNAMO.get("ENDPOINT")
    if endpoint != dynamo_server.url:
        pytest.fail(
            f"settings.DYNAMO['ENDPOINT'] is {endpoint!r}, not the test server "
            f"{dynamo_server.url}: an override_settings entered before dynamo_server's own was "
            "exited after it. Request dynamo_db (or dynamo_server) before overriding settings."
        )
    dynamo_server.reset()
    create_tables()
    yield get_handle()


@pytest.fixture
def dynamo_requests(dynamo_db: Any) -> Iterator[RequestCounter]:
    with count_requests() as counter:
        yield counter
