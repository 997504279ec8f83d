"""Emptying the test store between tests recreates only the tables a test changed,
as the run's own server saw them changed (dynamo_app/test/written.py), whoever sent
the request; anything it cannot pin to a table means a full reset.

On another engine (DYNAMO_TEST_ENDPOINT) the run sees what this process sends
instead (dynamo_app/test/sent.py): every botocore client's requests, pinned the
same way; a process it starts, or a connection to the engine by another client,
means a full reset.
"""

import socket
import subprocess
import sys
from urllib.parse import urlsplit

import boto3
import pytest
from django.conf import settings

from dynamo_app import models
from dynamo_app.client.handle import get_handle
from dynamo_app.local.server import LocalServer
from dynamo_app.tables import registry
from dynamo_app.test import count_requests
from dynamo_app.testing import ENGINE, TEST_CREDENTIALS, moto_only

external_only = pytest.mark.skipif(
    ENGINE == "moto", reason="the run's moto server sees every request itself"
)


class EmptiedNote(models.Model):
    note_id = models.StringField(partition_key=True)
    text = models.StringField(default="")

    class Meta:
        table_name = "emptied_note"


class EmptiedOther(models.Model):
    other_id = models.StringField(partition_key=True)

    class Meta:
        table_name = "emptied_other"


def empty_and_count(store):
    with count_requests() as counter:
        store.empty()
    return counter


def raw_client(store, region=None, key="testing"):
    """A boto3 client of its own: not the app's handle, the store still sees it."""
    return boto3.client(
        "dynamodb",
        endpoint_url=store.url,
        region_name=region or settings.DYNAMO["REGION"],
        aws_access_key_id=key,
        aws_secret_access_key="testing",
    )


def another_server():
    """A second moto server of this process: it serves the same data (moto's is per process)."""
    server = LocalServer().start()
    STARTED.append(server)
    return server


STARTED = []


@pytest.fixture(autouse=True)
def stop_started():
    yield
    while STARTED:
        STARTED.pop().stop()


def note_table():
    return get_handle().table_name("emptied_note")


def test_only_the_table_a_test_wrote_is_recreated(dynamo_server):
    dynamo_server.empty()
    EmptiedNote.objects.create(note_id="n1")
    EmptiedOther.objects.create(other_id="o1")
    empty_and_count(dynamo_server)  # the two tables, now empty again
    EmptiedNote(note_id="n2").save()
    counter = empty_and_count(dynamo_server)
    assert (counter["DeleteTable"], counter["CreateTable"]) == (1, 1)
    assert list(EmptiedNote.objects.scan()) == [] and list(EmptiedOther.objects.scan()) == []


def test_a_read_changes_nothing_and_costs_nothing(dynamo_server):
    dynamo_server.empty()
    list(EmptiedNote.objects.scan())
    EmptiedNote.objects.filter(note_id="n1").first()
    assert empty_and_count(dynamo_server).total == 0


@pytest.mark.parametrize(
    "write",
    [
        lambda c, t: c.put_item(TableName=t, Item={"note_id": {"S": "raw"}}),
        lambda c, t: c.batch_write_item(
            RequestItems={t: [{"PutRequest": {"Item": {"note_id": {"S": "raw"}}}}]}
        ),
        lambda c, t: c.transact_write_items(
            TransactItems=[{"Put": {"TableName": t, "Item": {"note_id": {"S": "raw"}}}}]
        ),
    ],
    ids=["PutItem", "BatchWriteItem", "TransactWriteItems"],
)
def test_a_write_from_any_client_is_seen(dynamo_server, write):
    dynamo_server.empty()
    client = raw_client(dynamo_server)
    write(client, note_table())
    counter = empty_and_count(dynamo_server)
    assert counter["CreateTable"] == 1
    assert list(EmptiedNote.objects.scan()) == []


def test_a_table_a_test_created_is_dropped_and_a_dropped_one_comes_back(dynamo_server):
    dynamo_server.empty()
    client = raw_client(dynamo_server)
    client.create_table(
        TableName="undeclared-by-a-test",
        KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    client.delete_table(TableName=note_table())
    empty_and_count(dynamo_server)
    names = client.list_tables()["TableNames"]
    assert "undeclared-by-a-test" not in names and note_table() in names


def test_a_table_declared_or_redeclared_since_is_created_as_now_declared(dynamo_server):
    dynamo_server.empty()

    class EmptiedLate(models.Model):
        late_id = models.StringField(partition_key=True)
        at = models.IntegerField(sort_key=True)

        class Meta:
            table_name = "emptied_late"

    try:
        counter = empty_and_count(dynamo_server)
        assert counter["CreateTable"] == 1
        EmptiedLate.objects.create(late_id="a", at=1)
        assert [x.at for x in EmptiedLate.objects.filter(late_id="a")] == [1]
    finally:
        registry.unregister("emptied_late")
    empty_and_count(dynamo_server)
    assert get_handle().table_name("emptied_late") not in raw_client(dynamo_server).list_tables()[
        "TableNames"
    ]


@pytest.mark.parametrize(
    "unattributable",
    [
        lambda s: raw_client(s).execute_statement(
            Statement=f"INSERT INTO \"{note_table()}\" VALUE {{'note_id': 'p'}}"
        ),
        lambda s: raw_client(s, region="eu-west-1").list_tables(),
        lambda s: raw_client(s, key="another-key").list_tables(),
        pytest.param(lambda s: s.server.reset(), marks=moto_only),
        pytest.param(lambda s: another_server().reset(), marks=moto_only),
        pytest.param(lambda s: subprocess.run([sys.executable, "-c", ""]), marks=external_only),
        pytest.param(lambda s: connect(s.url), marks=external_only),
    ],
    ids=[
        "PartiQL",
        "another region",
        "another key",
        "moto's reset",
        "another server's reset",
        "a process started",
        "another client's connection",
    ],
)
def test_what_cannot_be_pinned_to_a_table_resets_everything(dynamo_server, unattributable):
    dynamo_server.empty()
    unattributable(dynamo_server)
    counter = empty_and_count(dynamo_server)
    assert counter["CreateTable"] == len(registry.definitions())
    assert list(EmptiedNote.objects.scan()) == []


def connect(url):
    """A connection to the store's server that is not botocore's."""
    parts = urlsplit(url)
    socket.create_connection((parts.hostname, parts.port), timeout=10).close()


PUT_FROM_A_PROCESS = """
import sys, boto3
boto3.client("dynamodb", endpoint_url=sys.argv[1], region_name=sys.argv[2],
             aws_access_key_id=sys.argv[3], aws_secret_access_key="testing",
             ).put_item(TableName=sys.argv[4], Item={"note_id": {"S": "from a process"}})
"""


def test_a_write_from_another_process_is_never_left_behind(dynamo_server):
    dynamo_server.empty()
    subprocess.run(
        [sys.executable, "-c", PUT_FROM_A_PROCESS, dynamo_server.url, settings.DYNAMO["REGION"]]
        + [TEST_CREDENTIALS["ACCESS_KEY_ID"], note_table()],
        check=True,
    )
    assert [n.note_id for n in EmptiedNote.objects.scan()] == ["from a process"]
    empty_and_count(dynamo_server)
    assert list(EmptiedNote.objects.scan()) == []
