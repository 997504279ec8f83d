"""``manage.py dynamo_plan`` and ``dynamo_migrate`` against the local server."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from dynamo_app.client.handle import get_handle
from dynamo_app.deploy import schema
from dynamo_app.testing import settings_for_tests
from tests.schema_support import EVENT, PLAYER, S, make_table, pretend_status, run


def row_of(output: str, deployed_name: str) -> str:
    [row] = [line for line in output.splitlines() if f" {deployed_name} " in f" {line} "]
    return row


def test_plan_prints_one_row_per_change(declare):
    declare(PLAYER)
    declare(EVENT)
    make_table("test-sch_event", ("event_key", S, "HASH"))
    make_table("test-forgotten", ("id", S, "HASH"))

    output = run("dynamo_plan")

    assert output.splitlines()[0].split() == ["DECLARED", "DEPLOYED", "CHANGE", "DETAIL"]
    assert row_of(output, "test-sch_player").split()[:3] == [
        "sch_player",
        "test-sch_player",
        "create",
    ]
    event = row_of(output, "test-sch_event")
    assert event.split()[:4] == ["sch_event", "test-sch_event", "key", "mismatch"]
    assert "declared partition key event_id (S)" in event
    assert "deployed partition key event_key (S)" in event
    assert row_of(output, "test-forgotten").split()[:3] == ["-", "test-forgotten", "undeclared"]
    assert "1 to apply, 1 mismatched, 1 undeclared" in output
    assert "Undeclared tables are not listed" not in output


def test_plan_json_is_for_machines(declare):
    declare(EVENT)
    document = json.loads(run("dynamo_plan", "--json"))
    [change] = [c for c in document["changes"] if c["declared_name"] == "sch_event"]
    assert change == {
        "kind": "create",
        "declared_name": "sch_event",
        "deployed_name": "test-sch_event",
        "index_name": None,
        "executable": True,
        "desired": "partition key event_id (S), no sort key",
        "observed": None,
        "detail": change["detail"],
        "shared_by": [],
    }
    assert document["undeclared_tables_listed"] is True


def test_plan_check_fails_while_anything_is_pending(declare):
    declare(EVENT)
    with pytest.raises(SystemExit) as exit_:
        run("dynamo_plan", "--check")
    assert exit_.value.code == 1
    schema.migrate()
    make_table("test-forgotten", ("id", S, "HASH"))
    assert "undeclared" in run("dynamo_plan", "--check")  # reported, not a failure


def test_plan_check_fails_on_a_mismatch(declare):
    declare(EVENT)
    make_table("test-sch_event", ("event_id", "N", "HASH"))
    with pytest.raises(SystemExit):
        run("dynamo_plan", "--check", "--json")


def test_plan_says_when_it_cannot_list_undeclared_tables(dynamo_db):
    with override_settings(DYNAMO=settings_for_tests({}, get_handle().endpoint_url)):
        output = run("dynamo_plan")
    assert "Undeclared tables are not listed" in output and "TABLE_PREFIX" in output


def test_commands_use_the_configured_table_names(declare):
    declare(EVENT)
    names = {"TABLE_NAMES": {"sch_event": "events-prod-8f21c"}, "TABLE_PREFIX": "test-"}
    with override_settings(DYNAMO=settings_for_tests(names, get_handle().endpoint_url)):
        assert "events-prod-8f21c" in row_of(run("dynamo_plan"), "events-prod-8f21c")
        assert "created table 'events-prod-8f21c'" in run("dynamo_migrate")
        assert "in sync" in row_of(run("dynamo_plan"), "events-prod-8f21c")


def test_migrate_shows_progress_then_what_it_did_and_what_it_will_not_do(declare):
    declare(PLAYER)
    make_table("test-forgotten", ("id", S, "HASH"))

    output = run("dynamo_migrate")

    assert "  test-sch_player: creating table" in output
    assert "  test-sch_player: TTL enabled on 'expires_at'" in output
    assert "created table 'test-sch_player' (declared 'sch_player')" in output
    assert "Reported, not done by dynamo_migrate:" in output
    assert "'test-forgotten' starts with TABLE_PREFIX 'test-'" in output
    assert "Nothing to apply." in run("dynamo_migrate")


def test_migrate_prints_waiting_and_names_a_table_that_times_out(declare, hook, monkeypatch):
    monkeypatch.setattr(schema, "POLL_FIRST", 0.01)
    declare(EVENT)
    hook("after-call.dynamodb.CreateTable", pretend_status("CREATING", 1, "test-sch_event"))
    hook("after-call.dynamodb.DescribeTable", pretend_status("CREATING", 10**6, "test-sch_event"))
    out = StringIO()
    with pytest.raises(CommandError, match="'sch_event' .deployed as 'test-sch_event'."):
        call_command("dynamo_migrate", "--timeout", "0.1", stdout=out)
    assert "test-sch_event: waiting: table CREATING" in out.getvalue()


def test_migrate_fails_while_a_mismatch_remains(declare):
    declare(EVENT)
    make_table("test-sch_event", ("event_id", "B", "HASH"))
    out = StringIO()
    with pytest.raises(CommandError, match="1 declared table still differs from its deployed"):
        call_command("dynamo_migrate", stdout=out)
    assert "deployed partition key event_id (B)" in out.getvalue()


@pytest.mark.parametrize(
    "command, option", [("dynamo_plan", "--check"), ("dynamo_migrate", "--timeout")]
)
def test_help_explains_the_command(command, option, capsys):
    with pytest.raises(SystemExit):
        call_command(command, "--help")
    text = " ".join(capsys.readouterr().out.split())
    assert "never" in text and option in text


@pytest.mark.parametrize("command", ["dynamo_plan", "dynamo_migrate"])
def test_commands_explain_a_disabled_app(dynamo_server, command):
    with override_settings(DYNAMO={"ENABLED": False}):
        with pytest.raises(CommandError, match="DynamoDB is not enabled"):
            run(command)


# --- dynamo_drop_table: one left-over development table -------------------------------


def test_drop_table_deletes_one_undeclared_table_after_a_confirmation(declare, monkeypatch):
    declare(EVENT)
    make_table("test-sch_event", ("event_id", S, "HASH"))
    make_table("test-sponsor", ("sponsor_id", S, "HASH"))  # its model was removed
    make_table("test-kept", ("id", S, "HASH"))
    answers = iter(["no", "yes"])
    monkeypatch.setattr("builtins.input", lambda prompt: next(answers))
    with override_settings(DEBUG=True):
        assert "Cancelled: nothing was deleted." in run("dynamo_drop_table", "sponsor")
        assert "test-sponsor" in schema.table_names(get_handle())
        assert "Deleted table 'test-sponsor'." in run("dynamo_drop_table", "sponsor")
    left = schema.table_names(get_handle())
    assert "test-sponsor" not in left and {"test-kept", "test-sch_event"} <= set(left)
    assert "dynamo_drop_table kept" in run("dynamo_plan")  # the plan names the command


def test_drop_table_refuses_outside_development_and_declared_tables(declare):
    declare(EVENT)
    make_table("test-sch_event", ("event_id", S, "HASH"))
    with pytest.raises(CommandError, match="only in development: with DEBUG on"):
        run("dynamo_drop_table", "sch_event", "--noinput")
    with override_settings(DEBUG=True):
        with pytest.raises(CommandError, match="'sch_event' is declared"):
            run("dynamo_drop_table", "sch_event", "--noinput")
        with pytest.raises(CommandError, match="There is no table 'test-nothing'"):
            run("dynamo_drop_table", "nothing", "--noinput")
        section = {**settings_for_tests({}, "https://dynamodb.eu-west-1.amazonaws.com")}
        with override_settings(DYNAMO=section), pytest.raises(CommandError, match="local"):
            run("dynamo_drop_table", "kept", "--noinput")
    assert "test-sch_event" in schema.table_names(get_handle())
