"""The local server: serialised requests, reuse across runserver reloads, the command."""

import threading
import time
from decimal import Decimal

import boto3
import pytest
from botocore.exceptions import ClientError
from django.core.management import call_command

from dynamo_app import local
from dynamo_app.testing import moto_only

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
        errors = []

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
                        errors.append(exc)

        threads = [threading.Thread(target=claim, args=(w,)) for w in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors
        assert all(len(w) == 1 for w in wins.values())
        items = setup.scan(TableName="claims")["Items"]
        assert {i["pk"]["S"]: int(i["by"]["N"]) for i in items} == {
            k: w[0] for k, w in wins.items()
        }
    finally:
        server.stop()


def test_autoreloaded_child_reuses_the_parents_server(monkeypatch):
    parent = local.LocalServer().start()
    try:
        monkeypatch.setattr(local, "_embedded", None)
        monkeypatch.setenv(local.ENDPOINT_ENV, parent.url)
        monkeypatch.setenv("RUN_MAIN", "true")
        assert local.embedded_endpoint() == parent.url
        assert local.embedded_server() is None  # nothing new was started
    finally:
        parent.stop()


def test_a_dead_inherited_server_is_replaced(monkeypatch):
    dead = local.LocalServer().start()
    url = dead.url
    dead.stop()
    monkeypatch.setattr(local, "_embedded", None)
    monkeypatch.setenv(local.ENDPOINT_ENV, url)
    monkeypatch.setenv("RUN_MAIN", "true")
    fresh = local.embedded_endpoint()
    try:
        assert fresh != url and local.answers(fresh)
    finally:
        local.embedded_server().stop()


def test_without_run_main_a_process_starts_its_own(monkeypatch):
    other = local.LocalServer().start()
    try:
        monkeypatch.setattr(local, "_embedded", None)
        monkeypatch.setenv(local.ENDPOINT_ENV, other.url)
        monkeypatch.delenv("RUN_MAIN", raising=False)  # e.g. a pytest-xdist worker
        mine = local.embedded_endpoint()
        assert mine != other.url
        local.embedded_server().stop()
    finally:
        other.stop()


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
    from django.core.management import CommandError

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


def test_an_unreadable_state_file_is_moved_aside_and_the_server_starts_empty(tmp_path, caplog):
    state = tmp_path / "local.pickle"
    state.write_bytes(b"not a pickle")
    server = local.LocalServer(state_file=state).start()
    try:
        assert server.restored == 0
        assert _client(server.url).list_tables()["TableNames"] == []
    finally:
        server.stop()
    assert (tmp_path / "local.pickle.unreadable").read_bytes() == b"not a pickle"
    assert "could not load" in caplog.text


def _wipe_moto():
    """Forget every table in this process's moto backends (a fresh process)."""
    from moto.dynamodb.models import dynamodb_backends

    for regions in dynamodb_backends.values():
        for backend in regions.values():
            backend.tables = {}
