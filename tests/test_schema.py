"""plan / migrate / verify against the local server: every plan branch, with
tables made "wrong" by hand through the raw client."""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

import pytest
from botocore.exceptions import ClientError
from django.test import override_settings

from dynamo_app.client.handle import get_handle
from dynamo_app.deploy import schema
from dynamo_app.deploy.schema import ChangeKind
from dynamo_app.exceptions import MigrationTimeout, SchemaMismatch
from dynamo_app.tables import IndexDefinition, KeyAttribute, TableDefinition, registry
from dynamo_app.testing import RequestCounter, count_requests, settings_for_tests
from tests.schema_support import (
    EVENT,
    PLAYER,
    PLAYER_GLOBAL_INDEX_ONLY,
    N,
    S,
    changes_of,
    make_player_table,
    make_table,
    pretend_status,
)


def sent(requests: RequestCounter, operation: str) -> list[dict[str, Any]]:
    """The parameters of each ``operation`` request, as sent."""
    return [p for op, p in requests.calls if op == operation]


def describe(name: str) -> dict[str, Any]:
    return get_handle().client.describe_table(TableName=name)["Table"]


# --- create -----------------------------------------------------------------------


def test_missing_table_is_planned_then_created_with_indexes_and_ttl(declare):
    declare(PLAYER)
    [change] = changes_of("sch_player")
    assert change.kind is ChangeKind.CREATE and change.executable
    assert change.deployed_name == "test-sch_player"
    assert "'sch_player' (deployed as 'test-sch_player') does not exist" in change.detail
    assert "dynamo_migrate" in change.detail

    result = schema.migrate()

    assert [c.deployed_name for c in result.applied] == ["test-sch_player"]
    table = describe("test-sch_player")
    assert table["TableStatus"] == "ACTIVE"
    assert [i["IndexName"] for i in table["GlobalSecondaryIndexes"]] == ["by_number"]
    assert [i["IndexName"] for i in table["LocalSecondaryIndexes"]] == ["by_name"]
    ttl = get_handle().client.describe_time_to_live(TableName="test-sch_player")
    assert ttl["TimeToLiveDescription"]["AttributeName"] == "expires_at"
    assert [c.kind for c in changes_of("sch_player")] == [ChangeKind.IN_SYNC]


def test_second_migrate_changes_nothing(declare):
    declare(PLAYER)
    declare(EVENT)
    with count_requests() as first:
        schema.migrate()
    assert first["CreateTable"] == 2 and first["UpdateTimeToLive"] == 1

    with count_requests() as second:
        result = schema.migrate()

    assert second["CreateTable"] == second["UpdateTable"] == second["UpdateTimeToLive"] == 0
    assert second["DescribeTable"] == len(registry.definitions())  # one per table, no waits
    assert result.applied == [] and result.mismatches == []


def test_tables_are_created_under_the_resolved_name(declare):
    declare(EVENT)
    names = {"TABLE_NAMES": {"sch_event": "events-prod-8f21c"}, "TABLE_PREFIX": "test-"}
    with override_settings(DYNAMO=settings_for_tests(names, get_handle().endpoint_url)):
        result = schema.migrate()
        assert [c.deployed_name for c in result.applied] == ["events-prod-8f21c"]
        assert describe("events-prod-8f21c")["TableStatus"] == "ACTIVE"


# --- key mismatches -------------------------------------------------------------------


@pytest.mark.parametrize(
    "keys, observed",
    [
        (
            [("team", S, "HASH"), ("player_id", S, "RANGE")],
            "partition key team (S), sort key player_id (S)",
        ),
        (
            [("team_id", N, "HASH"), ("player_id", S, "RANGE")],
            "partition key team_id (N), sort key player_id (S)",
        ),
        ([("team_id", S, "HASH")], "partition key team_id (S), no sort key"),
        (
            [("player_id", S, "HASH"), ("team_id", S, "RANGE")],
            "partition key player_id (S), sort key team_id (S)",
        ),
    ],
    ids=["wrong-name", "wrong-type", "missing-sort-key", "swapped"],
)
def test_key_mismatch_names_both_shapes_and_is_never_executed(declare, keys, observed):
    declare(PLAYER)
    make_table("test-sch_player", *keys)

    [change] = changes_of("sch_player")

    assert change.kind is ChangeKind.KEY_MISMATCH and not change.executable
    assert change.desired == "partition key team_id (S), sort key player_id (S)"
    assert change.observed == observed
    assert "'sch_player' (deployed as 'test-sch_player')" in change.detail
    assert change.desired in change.detail and observed in change.detail
    with count_requests() as requests:
        result = schema.migrate()
    assert requests["CreateTable"] == requests["UpdateTable"] == requests["DeleteTable"] == 0
    assert result.mismatches == [change]
    with pytest.raises(SchemaMismatch) as error:
        schema.verify()
    assert error.value.problems == [change.detail]


# --- indexes ----------------------------------------------------------------------------


def test_missing_global_index_is_added_one_per_update_table(declare):
    second = IndexDefinition(
        "by_name_g", "global", KeyAttribute("player_name", S), projection=("uniform_number",)
    )
    declare(
        TableDefinition(
            "sch_player",
            PLAYER.partition_key,
            PLAYER.sort_key,
            indexes=(PLAYER.indexes[0], second),
            owner="tests.Player",
        )
    )
    make_player_table()
    changes = changes_of("sch_player")
    assert [(c.kind, c.index_name) for c in changes] == [
        (ChangeKind.ADD_INDEX, "by_number"),
        (ChangeKind.ADD_INDEX, "by_name_g"),
    ]
    assert "has no global index by_number: uniform_number (N), projection ALL" in changes[0].detail

    with count_requests() as requests:
        result = schema.migrate()

    updates = sent(requests, "UpdateTable")
    assert [len(p["GlobalSecondaryIndexUpdates"]) for p in updates] == [1, 1]
    assert requests["CreateTable"] == 0
    assert [c.index_name for c in result.applied] == ["by_number", "by_name_g"]
    indexes = {i["IndexName"]: i for i in describe("test-sch_player")["GlobalSecondaryIndexes"]}
    assert indexes["by_name_g"]["Projection"] == {
        "ProjectionType": "INCLUDE",
        "NonKeyAttributes": ["uniform_number"],
    }
    assert [c.kind for c in changes_of("sch_player")] == [ChangeKind.IN_SYNC]


def test_index_added_to_a_provisioned_table_gets_the_tables_capacity(declare):
    declare(PLAYER_GLOBAL_INDEX_ONLY)
    make_player_table(
        BillingMode="PROVISIONED",
        ProvisionedThroughput={"ReadCapacityUnits": 3, "WriteCapacityUnits": 2},
    )
    with count_requests() as requests:
        schema.migrate()
    [update] = sent(requests, "UpdateTable")
    create = update["GlobalSecondaryIndexUpdates"][0]["Create"]
    assert create["ProvisionedThroughput"] == {"ReadCapacityUnits": 3, "WriteCapacityUnits": 2}


def test_missing_local_index_is_reported_not_executed(declare):
    declare(PLAYER)
    make_player_table(indexes={"by_number": [("uniform_number", N, "HASH")]})
    [change] = changes_of("sch_player")
    assert change.kind is ChangeKind.MISSING_LOCAL_INDEX and not change.executable
    assert "local index by_name: team_id (S), player_name (S)" in change.detail
    assert "only be created with its table" in change.detail
    with count_requests() as requests:
        assert schema.migrate().mismatches == [change]
    assert requests["UpdateTable"] == requests["CreateTable"] == 0


@pytest.mark.parametrize(
    "index_keys, projection, observed",
    [
        ([("uniform_number", S, "HASH")], "ALL", "uniform_number (S)"),
        ([("uniform_number", N, "HASH")], "KEYS_ONLY", "KEYS_ONLY"),
    ],
    ids=["key-type", "projection"],
)
def test_index_mismatch_names_both_shapes(declare, index_keys, projection, observed):
    declare(PLAYER_GLOBAL_INDEX_ONLY)
    make_player_table(indexes={"by_number": index_keys}, projection=projection)
    [change] = changes_of("sch_player")
    assert change.kind is ChangeKind.INDEX_MISMATCH and change.index_name == "by_number"
    assert change.desired == "global index by_number: uniform_number (N), projection ALL"
    assert observed in change.observed and change.observed in change.detail
    assert change.desired in change.detail


def test_indexes_no_model_declares_are_left_alone(declare):
    declare(EVENT)
    make_table(
        "test-sch_event",
        ("event_id", S, "HASH"),
        indexes={"ops_by_kind": [("kind", S, "HASH")]},
    )
    assert [c.kind for c in changes_of("sch_event")] == [ChangeKind.IN_SYNC]


# --- undeclared tables -------------------------------------------------------------------


def test_undeclared_table_under_the_prefix_is_reported_and_kept(declare):
    declare(EVENT)
    make_table("test-legacy_orders", ("id", S, "HASH"))
    make_table("other-app-table", ("id", S, "HASH"))

    undeclared = [c for c in schema.plan() if c.kind is ChangeKind.UNDECLARED]

    assert [c.deployed_name for c in undeclared] == ["test-legacy_orders"]
    assert undeclared[0].declared_name == "legacy_orders"
    assert "never deletes" in undeclared[0].detail
    with count_requests() as requests:
        result = schema.migrate()
    assert requests["DeleteTable"] == 0
    assert undeclared[0] in result.reported and result.mismatches == []
    assert describe("test-legacy_orders")["TableStatus"] == "ACTIVE"
    schema.verify()  # an undeclared table is no reason to refuse to start


def test_undeclared_tables_are_listed_across_pages(declare, monkeypatch):
    for i in range(3):
        make_table(f"test-old_{i}", ("id", S, "HASH"))
    client = get_handle().client
    real = client.list_tables
    monkeypatch.setattr(client, "list_tables", lambda **kw: real(Limit=1, **kw))
    with count_requests() as requests:
        undeclared = [c.deployed_name for c in schema.plan() if c.kind is ChangeKind.UNDECLARED]
    assert undeclared == ["test-old_0", "test-old_1", "test-old_2"]
    assert requests["ListTables"] >= 3


def test_without_a_prefix_no_table_is_called_undeclared(dynamo_db):
    make_table("someone_elses", ("id", S, "HASH"))
    with override_settings(DYNAMO=settings_for_tests({}, get_handle().endpoint_url)):
        with count_requests() as requests:
            changes = schema.plan()
    assert requests["ListTables"] == 0
    assert not [c for c in changes if c.kind is ChangeKind.UNDECLARED]


# --- verify -----------------------------------------------------------------------------------


def test_verify_describes_each_table_once_and_passes_when_in_sync(declare):
    declare(PLAYER)
    declare(EVENT)
    schema.migrate()
    with count_requests() as requests:
        schema.verify()
    assert requests.total == requests["DescribeTable"] == len(registry.definitions())


def test_verify_lists_every_problem_and_says_what_to_run(declare):
    declare(PLAYER)
    declare(EVENT)
    make_table("test-sch_event", ("event_id", N, "HASH"))
    with pytest.raises(SchemaMismatch) as error:
        schema.verify()
    message = str(error.value)
    assert len(error.value.problems) == 2
    assert "'sch_player' (deployed as 'test-sch_player') does not exist" in message
    assert "run `python manage.py dynamo_migrate`" in message
    assert "declared partition key event_id (S)" in message
    assert "deployed partition key event_id (N)" in message


# --- waiting --------------------------------------------------------------------------------


def test_migrate_waits_for_active_and_reports_progress(declare, hook, monkeypatch):
    monkeypatch.setattr(schema, "POLL_FIRST", 0.01)
    declare(EVENT)
    hook("after-call.dynamodb.CreateTable", pretend_status("CREATING", 1, "test-sch_event"))
    hook("after-call.dynamodb.DescribeTable", pretend_status("CREATING", 1, "test-sch_event"))
    seen: list[str] = []

    with count_requests() as requests:
        schema.migrate(progress=lambda change, message: seen.append(message))

    assert requests["DescribeTable"] == len(registry.definitions()) + 2  # plan, then 2 polls
    assert seen[0] == "creating table"
    assert [m for m in seen if m.startswith("waiting")] == [
        "waiting: table CREATING (0s)",
        "waiting: table CREATING (0s)",
    ]
    assert seen[-1] == "created, ACTIVE"


def test_migrate_timeout_names_the_table(declare, hook, monkeypatch):
    monkeypatch.setattr(schema, "POLL_FIRST", 0.01)
    declare(EVENT)
    declare(PLAYER)
    hook("after-call.dynamodb.CreateTable", pretend_status("CREATING", 1, "test-sch_event"))
    hook("after-call.dynamodb.DescribeTable", pretend_status("CREATING", 10**6, "test-sch_event"))

    with pytest.raises(MigrationTimeout) as error:
        schema.migrate(timeout=0.2)

    message = str(error.value)
    assert "'sch_event' (deployed as 'test-sch_event'): table CREATING after" in message
    assert "dynamo_migrate" in message and "--timeout" in message
    assert "sch_player" not in message  # created in parallel, not stuck behind sch_event


def test_ttl_already_enabled_is_not_an_error(declare, hook):
    declare(PLAYER)

    def already(**kwargs: Any) -> None:
        raise ClientError(
            {"Error": {"Code": "ValidationException", "Message": "TimeToLive is already enabled"}},
            "UpdateTimeToLive",
        )

    hook("before-call.dynamodb.UpdateTimeToLive", already)
    assert [c.declared_name for c in schema.migrate().applied] == ["sch_player"]


# --- concurrency ---------------------------------------------------------------------------


def test_verify_of_50_tables_overlaps_the_round_trips(dynamo_db, hook, caplog):
    """verify() describes tables concurrently: DescribeTable calls are in flight
    together. (How much faster that is, is measured by the benchmarks, not here.)"""
    definitions = [
        TableDefinition(f"sch_many_{i:02d}", KeyAttribute("id", S), owner="tests")
        for i in range(50)
    ]
    for definition in definitions:
        registry.register(definition)
    in_flight = [0]
    peak = [0]
    lock = threading.Lock()

    def slow_send(**kwargs: Any) -> None:
        with lock:
            in_flight[0] += 1
            peak[0] = max(peak[0], in_flight[0])
        time.sleep(0.02)  # a WAN round trip, so calls overlap if they can
        with lock:
            in_flight[0] -= 1

    try:
        schema.migrate()
        hook("before-send.dynamodb.DescribeTable", slow_send)
        with count_requests() as counter, caplog.at_level(logging.WARNING):
            schema.verify()
    finally:
        for definition in definitions:
            registry.unregister(definition.declared_name)
    assert counter["DescribeTable"] == 50 + len(registry.definitions())  # each table once
    assert peak[0] >= 4, peak[0]
    assert not caplog.records  # no "Connection pool is full" for the extra connections


def test_importing_the_app_installs_nothing_on_other_libraries_loggers() -> None:
    """The describe threads stay within the client's pool instead (no urllib3
    "Connection pool is full" to hide): another library's logger is its owner's."""
    import dynamo_app.deploy.schema  # noqa: F401

    for name in ("urllib3", "urllib3.connectionpool", "botocore", "boto3"):
        assert logging.getLogger(name).filters == [], name
