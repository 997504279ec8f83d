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
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest

from . import apps

# A test run makes its own tables: the startup check would only find none.
apps.schema_check_at_startup = False

TEST_CREDENTIALS = {"ACCESS_KEY_ID": "testing", "SECRET_ACCESS_KEY": "testing", "SESSION_TOKEN": ""}


def test_settings(base: dict[str, Any], endpoint: str) -> dict[str, Any]:
    """The project's DYNAMO section, pointed at a local server for tests."""
    return {
        **base,
        **TEST_CREDENTIALS,
        "ENABLED": True,
        "ENDPOINT": endpoint,
        "REGION": "us-east-1",
        "AUTO_MIGRATE": False,
        "VERIFY_SCHEMA": False,
    }


def create_tables() -> None:
    """Create every registered table (and enable its TTL) on the current endpoint."""
    from .handle import get_handle
    from .tables import registry

    handle = get_handle()
    for definition in registry.definitions():
        name = handle.table_name(definition.declared_name)
        handle.call("create_table", **definition.create_request(name))
        if definition.ttl_attribute:
            handle.call(
                "update_time_to_live",
                TableName=name,
                TimeToLiveSpecification={
                    "Enabled": True,
                    "AttributeName": definition.ttl_attribute,
                },
            )


class RequestCounter(Counter):
    """Counts DynamoDB API calls by operation name (``GetItem``, ``Query``, ...)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, model: Any, params: dict[str, Any], **kwargs: Any) -> None:
        self[model.name] += 1
        self.calls.append((model.name, params))

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

    server = embedded_server()
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
    from .handle import get_handle

    dynamo_server.reset()
    create_tables()
    yield get_handle()


@pytest.fixture
def dynamo_requests(dynamo_db: Any) -> Iterator[RequestCounter]:
    with count_requests() as counter:
        yield counter
