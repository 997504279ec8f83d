"""``manage.py test`` with a throwaway DynamoDB:
``TEST_RUNNER = "dynamo_app.test.runner.DynamoTestRunner"``.

Django's runner creates a test database, and rolls back (``TestCase``) or
flushes (``TransactionTestCase``) around each test. DynamoDB has neither
rollback nor a cheap flush, so this runner starts the run's ``TestStore`` with
the test databases and empties it before each test of a ``TestCase`` or
``TransactionTestCase``: every such test starts with empty tables, with no
change to the test code. A ``TestCase`` with ``setUpTestData`` gets DynamoDB
in its class setup too, on empty tables, and each of its tests starts with
what that setup wrote (``TestStore.empty(test_class)``): Django's class-wide
data, put back where Django rolls back. Other tests (``SimpleTestCase``,
``unittest.TestCase``) and other code between tests (``setUpClass`` of other
classes, module level) get ``AccessNotAllowed``, as ``SimpleTestCase`` gets
for SQL.

Without this runner, ``manage.py test`` refuses DynamoDB altogether
(``refuse_without_runner()``, called by ``AppConfig.ready()``): a test never
reaches the configured store.

Under ``--parallel`` each worker process starts a store of its own, as it gets
a database of its own: one store shared by workers would be emptied under
another worker's test.
"""

from __future__ import annotations

import unittest
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.test import TransactionTestCase
from django.test import runner as django_runner
from django.test.runner import DiscoverRunner, ParallelTestSuite, RemoteTestResult, RemoteTestRunner

from ..client import handle
from .store import ENDPOINT_ENV, EXTERNAL_ENDPOINT, TestStore, has_class_data

RUNNER = "dynamo_app.test.runner.DynamoTestRunner"

NO_RUNNER = (
    "DynamoDB access not allowed: manage.py test keeps tests off the configured DynamoDB, "
    f"and this run has no store of its own. Set TEST_RUNNER = {RUNNER!r} in your settings: "
    "it gives the run a throwaway server and each TestCase test empty tables."
)
OUTSIDE_A_TEST = (
    "DynamoDB access not allowed outside a test (setUpClass, module level): the tables are "
    "emptied before each test, so create items in setUp, in the test, or in a TestCase's "
    "setUpTestData (put back before each of its tests)."
)
NOT_A_DB_TEST = (
    "DynamoDB access not allowed in {name}: it is not a django.test.TestCase or "
    "TransactionTestCase, the tests that start with empty tables of the run's own store."
)


def refuse_without_runner() -> None:
    """Refuse DynamoDB in this ``manage.py test`` process until the runner's store is up."""
    handle.refused = NO_RUNNER


_store: TestStore | None = None  # this process's: the run's, or a parallel worker's own


def _start_store() -> None:
    global _store
    handle.refused = OUTSIDE_A_TEST
    _store = TestStore().start()


class _EmptyTablesPerTest(unittest.TestResult):
    """Opens DynamoDB to each TestCase / TransactionTestCase test, on empty tables
    (``startTest`` runs after setUpClass and before setUp), and closes it after."""

    def startTest(self, test: unittest.TestCase) -> None:
        if isinstance(test, TransactionTestCase):
            assert _store is not None, "DynamoTestRunner.setup_databases() starts the store"
            handle.refused = None
            _store.empty(type(test))
        else:
            handle.refused = NOT_A_DB_TEST.format(name=type(test).__qualname__)
        super().startTest(test)

    def stopTest(self, test: unittest.TestCase) -> None:
        super().stopTest(test)
        handle.refused = OUTSIDE_A_TEST


class _Suite(unittest.TestSuite):
    """Opens DynamoDB, on empty tables, to the class setup of a ``TestCase`` with
    ``setUpTestData`` (the class setup runs before the result's ``startTest``)."""

    def _handleClassSetUp(self, test: unittest.TestCase, result: unittest.TestResult) -> None:
        test_class = type(test)
        same_class = getattr(result, "_previousTestClass", None) is test_class
        if same_class or not has_class_data(test_class):
            super()._handleClassSetUp(test, result)  # type: ignore[misc]  # private: not in typeshed
            return
        assert _store is not None, "DynamoTestRunner.setup_databases() starts the store"
        handle.refused = None
        try:
            _store.empty()
            super()._handleClassSetUp(test, result)  # type: ignore[misc]
        finally:
            handle.refused = OUTSIDE_A_TEST


def _init_worker(*args: Any) -> None:
    """A ``--parallel`` worker: Django's own setup, then a store of the worker's own."""
    django_runner._init_worker(*args)  # type: ignore[attr-defined]  # private: not in django-stubs
    _start_store()


class _WorkerResult(_EmptyTablesPerTest, RemoteTestResult):
    pass


class _WorkerRunner(RemoteTestRunner):
    resultclass = _WorkerResult


class _ParallelSuite(ParallelTestSuite):
    init_worker = _init_worker
    runner_class = _WorkerRunner


class DynamoTestRunner(DiscoverRunner):
    """``DiscoverRunner`` plus the run's throwaway DynamoDB (see the module docstring)."""

    test_suite = _Suite
    parallel_test_suite = _ParallelSuite

    def setup_databases(self, **kwargs: Any) -> Any:
        if self.parallel > 1 and EXTERNAL_ENDPOINT:
            raise ImproperlyConfigured(
                f"--parallel with {ENDPOINT_ENV}: the workers would empty each other's tables "
                "on the one server. Run without --parallel, or without the variable (each "
                "worker then starts a local server of its own)."
            )
        old_config = super().setup_databases(**kwargs)
        _start_store()
        return old_config

    def teardown_databases(self, old_config: Any, **kwargs: Any) -> None:
        if _store is not None:
            _store.stop()
        handle.refused = NO_RUNNER
        super().teardown_databases(old_config, **kwargs)

    def get_resultclass(self) -> type[unittest.TextTestResult]:
        base = super().get_resultclass() or unittest.TextTestResult
        return type(base.__name__, (_EmptyTablesPerTest, base), {})
