"""The startup schema step: ``DynamoAppConfig.ready()`` under a server's argv."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.apps import apps as django_apps
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from dynamo_app import apps as dynamo_apps
from dynamo_app.client import handle
from dynamo_app.client.handle import get_handle
from dynamo_app.exceptions import SchemaMismatch
from dynamo_app.tables import registry
from dynamo_app.testing import RequestCounter, count_requests, settings_for_tests
from tests.schema_support import EVENT, S, make_table

Start = Callable[..., RequestCounter]


@pytest.fixture
def start(dynamo_db: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Start]:
    """``start(DEBUG=..., **DYNAMO keys)`` runs ready() as a gunicorn worker would."""
    monkeypatch.setattr(sys, "argv", ["gunicorn", "project.wsgi"])
    endpoint = get_handle().endpoint_url

    def run(debug: bool = False, **dynamo: Any) -> RequestCounter:
        section = {**settings_for_tests({"TABLE_PREFIX": "test-"}, endpoint), "VERIFY_SCHEMA": True}
        with override_settings(DEBUG=debug, DYNAMO={**section, **dynamo}):
            with count_requests() as requests:
                django_apps.get_app_config("dynamo_app").ready()
        return requests

    yield run


def test_startup_refuses_a_mismatch_and_names_the_table(declare, start):
    declare(EVENT)
    make_table("test-sch_event", ("event_id", "N", "HASH"))
    with pytest.raises(SchemaMismatch) as error:
        start()
    message = str(error.value)
    assert "'sch_event' (deployed as 'test-sch_event')" in message
    assert "declared partition key event_id (S)" in message
    assert "deployed partition key event_id (N)" in message


def test_startup_refuses_a_missing_table_and_says_what_to_run(declare, start):
    declare(EVENT)
    with pytest.raises(SchemaMismatch, match="run `python manage.py dynamo_migrate`"):
        start()


def test_startup_verifies_each_table_once(declare, start):
    declare(EVENT)
    make_table("test-sch_event", ("event_id", S, "HASH"))
    requests = start()
    assert requests.total == requests["DescribeTable"] == len(registry.definitions())


def test_auto_migrate_without_debug_is_refused(start):
    with pytest.raises(ImproperlyConfigured, match=r"'AUTO_MIGRATE'.*DEBUG is False"):
        start(debug=False, AUTO_MIGRATE=True)


def test_auto_migrate_with_debug_creates_then_verifies(declare, start):
    declare(EVENT)
    requests = start(debug=True, AUTO_MIGRATE=True)
    assert requests["CreateTable"] == 1
    assert get_handle().client.describe_table(TableName="test-sch_event")["Table"]


def test_auto_migrate_says_what_it_did_and_only_info_for_a_left_over_table(declare, start, caplog):
    declare(EVENT)
    make_table("test-sch_gone", ("id", S, "HASH"))  # a model removed under AUTO_MIGRATE
    with caplog.at_level(logging.INFO, logger="dynamo_app"):
        start(debug=True, AUTO_MIGRATE=True)
    said = [(r.levelno, r.getMessage()) for r in caplog.records if r.name == "dynamo_app"]
    assert (
        logging.INFO,
        "dynamo_app: AUTO_MIGRATE created table 'test-sch_event' (declared 'sch_event'): "
        "partition key event_id (S), no sort key",
    ) in said
    assert not any("does not exist" in message for _, message in said)  # not after creating it
    assert (
        logging.INFO,
        "dynamo_app: no model or app table declares the table sch_gone under TABLE_PREFIX; "
        "`python manage.py dynamo_drop_table NAME` deletes it.",
    ) in said
    assert not [m for level, m in said if level >= logging.WARNING]


def test_auto_migrate_still_refuses_what_it_cannot_fix(declare, start, caplog):
    declare(EVENT)
    make_table("test-sch_event", ("id", S, "HASH"))
    with pytest.raises(SchemaMismatch, match="sch_event"):
        start(debug=True, AUTO_MIGRATE=True)
    assert "AUTO_MIGRATE will not do this" in caplog.text


def test_verify_schema_off_starts_with_a_warning_saying_what_is_unchecked(declare, start, caplog):
    declare(EVENT)  # missing, but not checked
    with caplog.at_level(logging.WARNING, logger="dynamo_app"):
        requests = start(VERIFY_SCHEMA=False)
    assert requests.total == 0
    [record] = [r for r in caplog.records if "VERIFY_SCHEMA" in r.getMessage()]
    assert record.levelno == logging.WARNING
    assert "not checked" in record.getMessage() and "dynamo_plan --check" in record.getMessage()


@pytest.mark.parametrize("command", ["dynamo_plan", "dynamo_migrate", "dynamo_local", "check"])
def test_commands_that_inspect_or_fix_the_schema_start_anyway(declare, start, monkeypatch, command):
    declare(EVENT)
    monkeypatch.setattr(sys, "argv", ["manage.py", command])
    assert start().total == 0


@pytest.mark.parametrize(
    "argv, run_main, applies",
    [
        (["gunicorn", "project.wsgi"], None, True),
        (["manage.py", "shell"], None, True),
        (["manage.py", "my_custom_command"], None, True),
        (["manage.py", "runserver"], None, False),  # the autoreloader's watcher
        (["manage.py", "runserver"], "true", True),  # its serving child
        (["manage.py", "runserver", "--noreload"], None, True),
        (["manage.py", "dynamo_migrate"], None, False),
        (["django-admin", "help"], None, False),
    ],
)
def test_when_the_schema_step_runs(monkeypatch, argv, run_main, applies):
    if run_main:
        monkeypatch.setenv("RUN_MAIN", run_main)
    else:
        monkeypatch.delenv("RUN_MAIN", raising=False)
    assert dynamo_apps.schema_step_applies(argv) is applies


def test_test_runs_skip_the_startup_step(monkeypatch):
    """A test run refuses DynamoDB from startup, so ready() stops before the
    schema step (which would raise AccessNotAllowed here, in a test without the store)."""
    monkeypatch.setattr(sys, "argv", ["gunicorn", "project.wsgi"])
    assert dynamo_apps.schema_step_applies() and handle.refused is not None
    django_apps.get_app_config("dynamo_app").ready()
