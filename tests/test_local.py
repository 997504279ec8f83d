"""The local server: serialised requests, the state file, the command."""

import os
import time
from decimal import Decimal

import boto3
import pytest
from botocore.exceptions import ClientError
from django.core.management import CommandError, call_command

from dynamo_app.exceptions import StateFileError
from dynamo_app.local import server as local
from dynamo_app.local import state as local_state
from dynamo_app.testing import moto_only
from tests.thread_support import in_threads

pytestmark = moto_only


def _client(url):
    return boto3.client(
        "dynamodb",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )


def test_concurrent_conditional_claims_have_exactly_one_winner():
    """8 threads, each with its own client, race to claim the same 40 keys."""
    server = local.LocalServer().start()
    try:
        setup = _client(server.url)
        setup.create_table(
            TableName="claims",
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )
        wins = {str(n): [] for n in range(40)}

        def claim(worker):
            client = _client(server.url)
            for key in wins:
                try:
                    client.transact_write_items(
                        TransactItems=[
                            {
                                "Put": {
                                    "TableName": "claims",
                                    "Item": {"pk": {"S": key}, "by": {"N": str(worker)}},
                                    "ConditionExpression": "attribute_not_exists(pk)",
                                }
                            }
                        ]
                    )
                    wins[key].append(worker)
                except ClientError as exc:
                    if exc.response["Error"]["Code"] != "TransactionCanceledException":
                        raise

        assert in_threads(claim, range(8)) == []
        assert all(len(w) == 1 for w in wins.values())
        items = setup.scan(TableName="claims")["Items"]
        assert {i["pk"]["S"]: int(i["by"]["N"]) for i in items} == {
            k: w[0] for k, w in wins.items()
        }
    finally:
        server.stop()


def test_server_binds_loopback_only():
    server = local.LocalServer().start()
    try:
        assert server.url.startswith("http://127.0.0.1:")
    finally:
        server.stop()


def test_dynamo_local_command_help():
    with pytest.raises(SystemExit):
        call_command("dynamo_local", "--help")


def test_dynamo_local_command_rejects_bad_port():
    with pytest.raises(CommandError, match="--port"):
        call_command("dynamo_local", "--port", "70000")


def _table_with_item(client, name="kept"):
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.put_item(TableName=name, Item={"pk": {"S": "a"}, "n": {"N": "1.50"}})


def test_a_state_file_keeps_the_tables_across_a_restart(tmp_path):
    state = tmp_path / "local.pickle"
    _wipe_moto()  # moto's tables are per process: start from none
    first = local.LocalServer(state_file=state).start()
    try:
        _table_with_item(_client(first.url))
    finally:
        first.stop()  # saves what is not saved yet
    assert state.exists()
    _wipe_moto()  # as a new process would start: nothing in memory
    second = local.LocalServer(state_file=state).start()
    try:
        client = _client(second.url)
        assert second.restored == 1
        item = client.get_item(TableName="kept", Key={"pk": {"S": "a"}})["Item"]
        assert Decimal(item["n"]["N"]) == Decimal("1.5")
    finally:
        second.stop()
        _wipe_moto()


def test_writes_are_saved_while_the_server_runs(tmp_path):
    state = tmp_path / "local.pickle"
    server = local.LocalServer(state_file=state).start()
    try:
        _table_with_item(_client(server.url))
        deadline = time.monotonic() + 10
        while not state.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state.exists()  # saved by the background saver, before any stop()
    finally:
        server.stop()
        _wipe_moto()


def test_a_damaged_state_file_is_kept_under_a_new_name_every_time(tmp_path, caplog):
    state = tmp_path / "local.pickle"
    damaged = [local_state.MAGIC + b" moto=0.0\n" + b"one", local_state.MAGIC + b" moto=?\ntwo"]
    for content in damaged:
        state.write_bytes(content)
        _wipe_moto()  # moto's tables are per process: what earlier tests left is not the file's
        server = local.LocalServer(state_file=state).start()
        try:
            assert server.restored == 0
            assert _client(server.url).list_tables()["TableNames"] == []
        finally:
            server.stop()
    kept = sorted(tmp_path.glob("local.pickle.damaged-*"))
    assert len(kept) == 2  # the second never replaced the first
    assert sorted(k.read_bytes() for k in kept) == sorted(damaged)
    assert "could not load" in caplog.text and str(kept[0]) in caplog.text + str(kept[1])


def test_a_second_server_on_the_same_state_file_is_refused(tmp_path):
    state = tmp_path / "local.pickle"
    first = local.LocalServer(state_file=state).start()
    try:
        with pytest.raises(
            StateFileError,
            match=f"in use by another local DynamoDB server .pid {os.getpid()}, {first.url}",
        ):
            local.LocalServer(state_file=state).start()
        with pytest.raises(CommandError, match="dynamo_local --stop"):
            call_command("dynamo_local", "--port", "0", "--state", str(state))
        assert local_state.owner(state)["url"] == first.url  # still the first's
    finally:
        first.stop()
        _wipe_moto()
    assert local_state.owner(state) is None  # let go at stop


def test_a_folder_named_as_the_state_file_is_left_untouched(tmp_path):
    folder = tmp_path / "data"
    folder.mkdir()
    (folder / "keep.txt").write_text("mine")
    with pytest.raises(StateFileError, match=r"DYNAMO\['LOCAL_STATE_FILE'\].*which is a folder"):
        local.LocalServer(state_file=folder).start()
    assert [p.name for p in tmp_path.iterdir()] == ["data"]  # nothing beside it either
    assert [p.name for p in folder.iterdir()] == ["keep.txt"]


def test_a_file_that_is_not_a_state_file_is_never_renamed_or_replaced(tmp_path):
    sqlite = tmp_path / "db.sqlite3"
    content = b"SQLite format 3\x00" + bytes(range(256)) * 4
    sqlite.write_bytes(content)
    with pytest.raises(StateFileError, match=r"DYNAMO\['LOCAL_STATE_FILE'\].*not a dynamo_app"):
        local.LocalServer(state_file=sqlite).start()
    assert sqlite.read_bytes() == content
    assert [p.name for p in tmp_path.iterdir()] == ["db.sqlite3"]


def test_the_state_file_is_checked_again_before_it_is_replaced(tmp_path, caplog):
    """Replaced by something else while the server runs: the next save leaves it alone."""
    state = tmp_path / "local.pickle"
    server = local.LocalServer(state_file=state).start()
    try:
        client = _client(server.url)
        _table_with_item(client)
        state.write_bytes(b"SQLite format 3\x00")
        # A write after the swap, so a save is due whether or not the saver thread
        # already saved the first writes (it may, within its one-second interval).
        client.put_item(TableName="kept", Item={"pk": {"S": "b"}})
    finally:
        server.stop()
        _wipe_moto()
    assert state.read_bytes() == b"SQLite format 3\x00"
    assert "not a dynamo_app local state file" in caplog.text
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []


def _wipe_moto():
    """Forget every table in this process's moto backends (a fresh process)."""
    from moto.dynamodb.models import dynamodb_backends

    for regions in dynamodb_backends.values():
        for backend in regions.values():
            backend.tables = {}
