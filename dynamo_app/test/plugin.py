"""pytest fixtures for projects that use dynamo_app (loaded by ``dynamo_app.testing``,
the pytest11 plugin).

* ``dynamo_server`` (session): the run's throwaway DynamoDB
  (``dynamo_app.test.store.TestStore``): a live local server on a free
  127.0.0.1 port, and ``settings.DYNAMO`` pointed at it for the whole run.
  Under pytest-xdist every worker process gets its own server.
* ``dynamo_db``: fresh, empty tables for every registered model (and the app's
  own tables) for one test. Use it like pytest-django's ``db``; the
  ``dynamo_db`` mark requests it too, and so does every ``django.test.TestCase``
  / ``TransactionTestCase``. A ``TestCase`` with ``setUpTestData`` gets
  DynamoDB in its class setup, on empty tables, and each of its tests starts
  with what that setup wrote.
* ``dynamo_requests``: counts the DynamoDB requests a test sends
  (``count_requests()`` is the same as a context manager).

DynamoDB is refused (``AccessNotAllowed``, naming the fixture) from startup
on, and in every test that does not use ``dynamo_db`` (or ``dynamo_server``):
no test reaches the configured store, nor any store silently, as
pytest-django's "Database access not allowed" does for SQL.

Nothing here fakes DynamoDB: requests go over HTTP through the same handle
and client a project uses. ``DYNAMO_TEST_ENDPOINT`` selects another engine
(see ``dynamo_app.test.store``); ``ENGINE`` says which one runs; mark tests
that are about moto itself with ``moto_only``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from ..client import handle
from .counting import RequestCounter, count_requests
from .store import ENDPOINT_ENV, ENGINE, TestStore, has_class_data

__all__ = ["moto_only"]

NOT_REQUESTED = (
    'DynamoDB access not allowed: use the "dynamo_db" fixture (or the "dynamo_db" mark) '
    "to give this test empty tables on the run's throwaway store."
)

moto_only = pytest.mark.skipif(
    ENGINE != "moto",
    reason=f"about dynamo_app.local.server's moto server, not the engine {ENDPOINT_ENV} selects",
)


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests() -> None:
    # Before pytest-django's django.setup(): AppConfig.ready() must not reach
    # the configured store (nor start an embedded server for it).
    handle.refused = NOT_REQUESTED


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "dynamo_db: give the test fresh, empty DynamoDB tables")


@contextlib.contextmanager
def _access() -> Iterator[None]:
    previous, handle.refused = handle.refused, None
    try:
        yield
    finally:
        handle.refused = previous


@pytest.fixture(autouse=True, scope="class")
def _dynamo_class_data(request: pytest.FixtureRequest) -> Iterator[None]:
    """Open DynamoDB, on empty tables, to the class setup of a Django ``TestCase``
    with ``setUpTestData`` (pytest runs ``setUpClass`` in a class fixture of the
    class's own, after this plugin's)."""
    if not has_class_data(request.cls):
        yield
        return
    store: TestStore = request.getfixturevalue("dynamo_server")
    with _access():
        store.empty()
        yield


@pytest.fixture(autouse=True)
def _dynamo_access(request: pytest.FixtureRequest) -> Iterator[None]:
    """Open DynamoDB to a test that uses dynamo_server (dynamo_db opens it
    itself, even when requested with getfixturevalue), and give a test with the
    dynamo_db mark, or a Django TestCase / TransactionTestCase, its tables."""
    if request.node.get_closest_marker("dynamo_db") is not None or _is_db_case(request):
        request.getfixturevalue("dynamo_db")
    if "dynamo_server" not in request.fixturenames:
        yield
        return
    with _access():
        yield


def _is_db_case(request: pytest.FixtureRequest) -> bool:
    if request.cls is None:
        return False
    from django.test import TransactionTestCase

    return issubclass(request.cls, TransactionTestCase)


@pytest.fixture(scope="session")
def dynamo_server(django_test_environment: Any) -> Iterator[TestStore]:
    store = TestStore().start()
    try:
        yield store
    finally:
        store.stop()


@pytest.fixture
def dynamo_db(request: pytest.FixtureRequest, dynamo_server: TestStore) -> Iterator[Any]:
    from django.conf import settings

    from ..client.handle import get_handle

    endpoint = settings.DYNAMO.get("ENDPOINT")
    if endpoint != dynamo_server.url:
        pytest.fail(
            f"settings.DYNAMO['ENDPOINT'] is {endpoint!r}, not the test server "
            f"{dynamo_server.url}: an override_settings entered before dynamo_server's own was "
            "exited after it. Request dynamo_db (or dynamo_server) before overriding settings."
        )
    with _access():
        dynamo_server.empty(request.cls)
        yield get_handle()


@pytest.fixture
def dynamo_requests(dynamo_db: Any) -> Iterator[RequestCounter]:
    with count_requests() as counter:
        yield counter
