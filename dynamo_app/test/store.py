"""A test run's DynamoDB: a throwaway server, never the configured store.

Django gives a test run a database of its own; this is DynamoDB's equivalent,
shared by both runners (``dynamo_app.testing`` under pytest,
``dynamo_app.test.runner.DynamoTestRunner`` under ``manage.py test``):

* ``TestStore.start()`` starts moto's server on a free 127.0.0.1 port (or uses
  ``DYNAMO_TEST_ENDPOINT``) and points ``settings.DYNAMO`` at it. The section
  keeps the project's table names and options; endpoint, credentials, state
  file and the startup schema step are the run's own.
* ``TestStore.empty()`` gives every registered table, empty: what each test
  starts with. It recreates only the tables the last test changed
  (``dynamo_app.test.written``, as the run's moto server saw its requests, or,
  on another engine, as this process sent them: ``dynamo_app.test.sent``);
  when anything may have changed, it drops every table and creates the
  registered ones. ``empty(test_class)`` of a ``TestCase`` with
  ``setUpTestData`` puts back the items the class's setup wrote (read once, at
  its first test), as Django rolls each test back to the class's data.
* Until the store is up, and whenever no test may use it, ``handle.refused``
  makes every access fail with ``AccessNotAllowed``. So the configured store
  is never contacted, and an embedded server is never started for it (nor its
  ``LOCAL_STATE_FILE`` read or written): not at startup, not by a test.

Another engine: with ``DYNAMO_TEST_ENDPOINT`` (a MiniStack, or any
DynamoDB-compatible server started for tests) a full reset deletes every table
in the run's region (ListTables + DeleteTable, waiting until they are gone)
and creates the registered ones, waiting until ACTIVE; under pytest-xdist each
worker gets a region of its own (``test-gw0``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured

if TYPE_CHECKING:
    from ..local.server import LocalServer
    from ..tables import TableDefinition
    from .written import WrittenTables

TEST_CREDENTIALS = {"ACCESS_KEY_ID": "testing", "SECRET_ACCESS_KEY": "testing", "SESSION_TOKEN": ""}

ENDPOINT_ENV = "DYNAMO_TEST_ENDPOINT"
EXTERNAL_ENDPOINT = os.environ.get(ENDPOINT_ENV, "").rstrip("/")
ENGINE = "external" if EXTERNAL_ENDPOINT else "moto"
# This process's share of an external server: a region per pytest-xdist worker.
WORKER = os.environ.get("PYTEST_XDIST_WORKER")
WORKER_REGION = f"test-{WORKER}" if WORKER else "us-east-1"
LOCAL_REGION = "us-east-1"  # the run's own moto server knows only AWS's regions

_POLL = {"Delay": 1, "MaxAttempts": 120}

Items = dict[str, list[dict[str, Any]]]  # wire items by deployed table name


def has_class_data(test_class: type | None) -> bool:
    """Whether ``test_class`` is a ``TestCase`` that writes class-wide data in
    ``setUpTestData``: DynamoDB is open to its class setup, and each of its tests
    starts with that data."""
    from django.test import TestCase

    return (
        test_class is not None
        and issubclass(test_class, TestCase)
        and test_class.setUpTestData.__func__ is not TestCase.setUpTestData.__func__  # type: ignore[attr-defined]
    )


def settings_for_tests(base: dict[str, Any], endpoint: str) -> dict[str, Any]:
    """The project's DYNAMO section, pointed at a local server for tests
    (and at this worker's region on the external engine; moto knows only AWS's regions)."""
    return {
        **base,
        **TEST_CREDENTIALS,
        "ENABLED": True,
        "ENDPOINT": endpoint,
        "REGION": WORKER_REGION if endpoint == EXTERNAL_ENDPOINT else LOCAL_REGION,
        "LOCAL_STATE_FILE": "",
        "AUTO_MIGRATE": False,
        "VERIFY_SCHEMA": False,
    }


def _read_items() -> Items:
    """Every item of every table on the current endpoint (a Scan per table)."""
    from ..client.handle import get_handle
    from ..deploy.schema import table_names

    handle = get_handle()
    return {
        name: [item for page in handle.paginate("scan", TableName=name) for item in page["Items"]]
        for name in table_names(handle)
    }


def _write_items(items: Items) -> None:
    """Put ``items`` back (BatchWriteItem, a batch's worth at a time, until all are processed)."""
    from ..client.handle import get_handle
    from ..models.batch import WRITE_CHUNK

    handle = get_handle()
    for name, table in items.items():
        for start in range(0, len(table), WRITE_CHUNK):
            puts = [{"PutRequest": {"Item": item}} for item in table[start : start + WRITE_CHUNK]]
            for _ in handle.until_processed("batch_write_item", {name: puts}, _not_restored):
                pass


def _not_restored(left: dict[str, Any], rounds: int) -> Exception:
    tables = ", ".join(sorted(left))
    return RuntimeError(f"setUpTestData's items not put back in {rounds} rounds (tables {tables})")


def registered_tables() -> dict[str, TableDefinition]:
    """Every registered table definition, by its deployed name under the current settings."""
    from ..client.handle import get_handle
    from ..tables import registry

    handle = get_handle()
    return {handle.table_name(d.declared_name): d for d in registry.definitions()}


def create_tables(definitions: Iterable[TableDefinition] | None = None) -> None:
    """Create these tables (default: every registered one), and enable their TTL,
    on the current endpoint, waiting until each is ACTIVE (at once on local engines)."""
    from ..client.handle import get_handle
    from ..deploy.schema import create_table
    from ..tables import registry

    handle = get_handle()
    for definition in registry.definitions() if definitions is None else definitions:
        create_table(definition, handle=handle, timeout=_POLL["Delay"] * _POLL["MaxAttempts"])


def drop_table(name: str) -> None:
    """Delete a table (at once on a local engine), if it exists."""
    from ..client.handle import get_handle
    from ..exceptions import ServiceError

    try:
        get_handle().call("delete_table", TableName=name)
    except ServiceError as exc:
        if exc.code != "ResourceNotFoundException":
            raise


class ExternalServer:
    """A DynamoDB-compatible server this run did not start (``DYNAMO_TEST_ENDPOINT``)."""

    running = True

    def __init__(self, url: str) -> None:
        self.url = url

    def reset(self) -> None:
        """Delete every table in this worker's region and wait until they are gone."""
        from ..client.handle import get_handle
        from ..deploy.schema import table_names

        self.drop(table_names(get_handle()))

    def drop(self, names: Iterable[str]) -> None:
        """Delete these tables (those that exist) and wait until they are gone
        (at once on local engines, seconds on DynamoDB)."""
        from ..client.handle import get_handle
        from ..deploy.schema import table_names

        dropped = set(names)
        for name in sorted(dropped):
            drop_table(name)
        handle = get_handle()
        for _ in range(_POLL["MaxAttempts"]):
            left = dropped.intersection(table_names(handle)) if dropped else set()
            if not left:
                return
            time.sleep(_POLL["Delay"])
        raise TimeoutError(f"Tables still being deleted on {self.url}: {sorted(left)}")


class TestStore:
    """The run's DynamoDB server, with ``settings.DYNAMO`` pointed at it until ``stop()``."""

    __test__ = False  # not a test class, whatever its name

    def __init__(self) -> None:
        self.server: LocalServer | ExternalServer | None = None
        self._override: Any = None
        self._switches: tuple[bool, bool] | None = None
        self._class_data: tuple[type, Items] | None = None  # the running test class's
        self._written: WrittenTables | None = None  # what the tests change, on our own server
        self._created: dict[str, TableDefinition] | None = None  # the tables empty() made

    def start(self) -> TestStore:
        from django.conf import settings
        from django.test.utils import override_settings

        from ..client import handle
        from ..local import server as local
        from ..local.server import LocalServer
        from . import sent
        from .written import WrittenTables

        configured = getattr(settings, "DYNAMO", {})
        if EXTERNAL_ENDPOINT:
            if EXTERNAL_ENDPOINT == str(configured.get("ENDPOINT", "")).rstrip("/"):
                raise ImproperlyConfigured(
                    f"{ENDPOINT_ENV} is the configured DYNAMO['ENDPOINT'] ({EXTERNAL_ENDPOINT}): "
                    "a test run deletes every table there. Point it at a server started for tests."
                )
            self._written = WrittenTables(TEST_CREDENTIALS["ACCESS_KEY_ID"], WORKER_REGION)
            sent.watch(self._written, EXTERNAL_ENDPOINT)
            self.server = ExternalServer(EXTERNAL_ENDPOINT)
        else:
            self._written = WrittenTables(TEST_CREDENTIALS["ACCESS_KEY_ID"], LOCAL_REGION)
            local.request_hooks.append(self._written)
            self.server = LocalServer().start()
        # While the run's store is up: botocore's own request validation on (local
        # engines accept requests DynamoDB rejects: it guards the suite against
        # malformed requests built by the app), and ENDPOINT = "embedded" served by
        # a server of the process's own, in memory, never the project's shared one.
        self._switches = handle.validate_parameters, local.share_embedded
        handle.validate_parameters, local.share_embedded = True, False
        self._override = override_settings(DYNAMO=settings_for_tests(configured, self.server.url))
        self._override.enable()
        return self

    @property
    def url(self) -> str:
        assert self.server is not None, "TestStore.start() first"
        return self.server.url

    def empty(self, test_class: type | None = None) -> None:
        """Give every registered table, empty (what each test starts with: see
        ``_recreate_tables``), then put back ``test_class``'s ``setUpTestData``
        items, if it has any.

        Tests of a class run one after another: at the first, what the store holds
        is what the class's setup wrote; it is read then, and kept until the next
        class.
        """
        from ..sequences import forget_blocks

        assert self.server is not None, "TestStore.start() first"
        if not has_class_data(test_class):
            self._class_data = None
        elif self._class_data is None or self._class_data[0] is not test_class:
            assert test_class is not None
            self._class_data = (test_class, _read_items())
        self._recreate_tables()
        forget_blocks()
        if self._class_data is not None:
            _write_items(self._class_data[1])

    def _recreate_tables(self) -> None:
        """Make the store hold exactly the registered tables, empty: recreate those
        changed since the last time (by a test, or in the registry or the table
        names), or, when anything may have changed, start from nothing."""
        assert self.server is not None
        wanted = registered_tables()
        changed = self._written.take() if self._written is not None else None
        if changed is None or self._created is None:
            self.server.reset()
            create_tables(wanted.values())
        else:
            made = self._created
            redeclared = {n for n in made.keys() | wanted.keys() if made.get(n) != wanted.get(n)}
            stale = changed | redeclared
            if isinstance(self.server, ExternalServer):
                self.server.drop(stale)
            else:
                for name in sorted(stale):
                    drop_table(name)
            create_tables(wanted[name] for name in sorted(stale) if name in wanted)
        self._created = wanted
        if self._written is not None:
            self._written.take()  # this method's own requests

    def stop(self) -> None:
        """Restore the settings and switches, and stop the server this run started."""
        from ..client import handle
        from ..local import server as local
        from . import sent

        if self._override is not None:
            self._override.disable()
            self._override = None
        if self._switches is not None:
            handle.validate_parameters, local.share_embedded = self._switches
            self._switches = None
        if self.server is not None and not isinstance(self.server, ExternalServer):
            self.server.stop()
        if self._written in local.request_hooks:
            local.request_hooks.remove(self._written)
        if self._written is not None:
            sent.unwatch(self._written)
        self._written = None
        self.server = None
