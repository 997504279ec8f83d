"""DAX routing, proven without a DAX cluster: the DAX side is a second local server.

``dax.factory`` is pointed at a moto server of the test's own (a boto3 DynamoDB
client speaks the API a DAX client offers), which holds an older copy of the
item - what a cache may hold. Which server answered shows in the value read,
and in the requests counted on each client. The production factory builds the
real amazon-dax-client (installed in the suite's venv).
"""

import contextlib
import socket
import sys
from collections import Counter

import pytest

from dynamo_app import models, partiql, transaction
from dynamo_app.client import dax
from dynamo_app.client.handle import Handle, get_handle
from dynamo_app.conf import parse
from dynamo_app.data import integrity
from dynamo_app.deploy.schema import create_table
from dynamo_app.exceptions import ConnectionFailed, MissingDependency, TableNotFound
from dynamo_app.local.server import LocalServer
from dynamo_app.testing import settings_for_tests

# moto keeps its data per process, shared by every server in it: a region of the
# DAX side's own keeps its tables apart from the suite's.
DAX_REGION = "eu-west-2"
CLUSTER = "daxs://test-cluster.abc123.dax-clusters.us-east-1.amazonaws.com"


class DaxReading(models.Model):
    sensor = models.StringField(partition_key=True)
    at = models.IntegerField(sort_key=True)
    value = models.IntegerField(null=True)

    recent = models.DeclaredQuery("sensor = {sensor}")
    recent_consistent = models.DeclaredQuery("sensor = {sensor}", consistent=True)


class DaxBadge(models.Model):
    badge_id = models.StringField(partition_key=True)
    code = models.StringField()

    class Meta:
        unique = [models.Unique("code")]


@pytest.fixture
def dax_side(dynamo_db, settings, monkeypatch):
    """DAX_ENDPOINTS set, and the DAX client pointed at a second local server whose
    copy of the DaxReading table holds ``sensor="s1", at=1, value=9``."""
    server = LocalServer().start()
    side = Handle(parse({**settings_for_tests(settings.DYNAMO, server.url), "REGION": DAX_REGION}))
    definition = DaxReading._meta.table_definition()
    table = side.table_name(definition.declared_name)
    with contextlib.suppress(TableNotFound):  # left by an earlier test on this process's moto
        side.call("delete_table", TableName=table)
    create_table(definition, handle=side)
    side.call(
        "put_item",
        TableName=table,
        Item={"sensor": {"S": "s1"}, "at": {"N": "1"}, "value": {"N": "9"}},
    )
    built = []

    def second_server(s, session, config):
        built.append(s.dax_endpoints)
        return session.client(
            "dynamodb", endpoint_url=server.url, region_name=DAX_REGION, config=config
        )

    monkeypatch.setattr(dax, "factory", second_server)
    settings.DYNAMO = {**settings.DYNAMO, "DAX_ENDPOINTS": [CLUSTER]}
    try:
        assert get_handle().dax is not None and built == [(CLUSTER,)]
        yield
    finally:
        side.close()
        server.stop()


@contextlib.contextmanager
def counted():
    """Requests counted on DynamoDB's client and on the DAX side's, each by a hook
    of its own client: dynamo_app's counters count a call whichever client serves it."""
    handle = get_handle()
    direct, cache = Counter(), Counter()
    clients = [(handle.client, direct), (handle.dax, cache)]
    for client, counter in clients:
        client.meta.events.register(
            "before-call.dynamodb",
            lambda model, counter=counter, **kwargs: counter.update([model.name]),
            unique_id="test-dax-count",
        )
    try:
        yield direct, cache
    finally:
        for client, _ in clients:
            client.meta.events.unregister("before-call.dynamodb", unique_id="test-dax-count")


def test_eventually_consistent_model_reads_go_to_dax(dax_side):
    DaxReading.objects.create(sensor="s1", at=1, value=10)  # DynamoDB has 10, DAX's copy 9
    with counted() as (direct, cache):
        assert DaxReading.objects.get(sensor="s1", at=1).value == 9
        assert DaxReading.objects.get(sensor="s1", at=1, consistent=True).value == 10
        assert [r.value for r in DaxReading.objects.filter(sensor="s1")] == [9]
        assert [r.value for r in DaxReading.objects.filter(sensor="s1").consistent()] == [10]
        assert [r.value for r in DaxReading.objects.scan()] == [9]
        assert [r.value for r in DaxReading.objects.scan().consistent()] == [10]
        assert [r.value for r in DaxReading.objects.bulk_get([("s1", 1)])] == [9]
        assert [r.value for r in DaxReading.objects.bulk_get([("s1", 1)], consistent=True)] == [10]
        assert [r.value for r in DaxReading.recent(sensor="s1")] == [9]
        assert [r.value for r in DaxReading.recent_consistent(sensor="s1")] == [10]
        reading = DaxReading.objects.get(sensor="s1", at=1)
        reading.refresh_from_db()  # strongly consistent unless told otherwise
        assert reading.value == 10
    assert dict(cache) == {"GetItem": 2, "Query": 2, "Scan": 1, "BatchGetItem": 1}
    assert dict(direct) == {"GetItem": 2, "Query": 2, "Scan": 1, "BatchGetItem": 1}


def test_writes_transactions_partiql_and_the_apps_own_reads_go_to_dynamodb(dax_side, monkeypatch):
    monkeypatch.setattr(integrity, "_constrained_models", lambda: [DaxBadge])  # this test's
    with counted() as (direct, cache):
        reading = DaxReading.objects.create(sensor="s2", at=1, value=1)
        reading.value = 2
        reading.save()
        reading.update(add={"value": 1})
        DaxReading.objects.bulk_save([DaxReading(sensor="s2", at=2)])
        with transaction() as tx:
            tx.create(DaxBadge(badge_id="b1", code="X"))
        got = partiql.execute("SELECT * FROM {DaxReading} WHERE sensor = ?", ["s2"])
        assert sorted(r.at for r in got) == [1, 2]
        # Scans owners and locks: reads that decide repairs.
        assert integrity.check_unique().findings == []
        reading.delete()
    assert cache.total() == 0
    assert direct["ExecuteStatement"] == 1 and direct["TransactWriteItems"] == 1
    assert direct["Scan"] >= 1 and direct.total() >= 8


def test_the_routing_decision():
    get = {"TableName": "t", "Key": {}}
    assert dax.serves("get_item", get, cacheable=True)
    assert not dax.serves("get_item", get, cacheable=False)  # the caller did not allow it
    assert not dax.serves("get_item", {**get, "ConsistentRead": True}, cacheable=True)
    assert dax.serves("query", {"ConsistentRead": False}, cacheable=True)
    assert dax.serves("scan", {}, cacheable=True)
    batch = {"RequestItems": {"a": {"Keys": []}, "b": {"Keys": [], "ConsistentRead": True}}}
    assert not dax.serves("batch_get_item", batch, cacheable=True)
    del batch["RequestItems"]["b"]
    assert dax.serves("batch_get_item", batch, cacheable=True)
    for operation in (
        "put_item",
        "update_item",
        "delete_item",
        "batch_write_item",
        "transact_write_items",
        "transact_get_items",
        "execute_statement",
        "describe_table",
    ):
        assert not dax.serves(operation, {}, cacheable=True), operation


def test_without_dax_endpoints_there_is_no_dax_client(dynamo_db):
    assert get_handle().dax is None
    assert "dax" not in get_handle().settings.summary()


@pytest.mark.parametrize(
    "value", ["dax.example.com", ["http://127.0.0.1:8111"], ["daxs://a/b"], "daxs://a", [1]]
)
def test_dax_endpoints_are_validated(value):
    from django.core.exceptions import ImproperlyConfigured

    with pytest.raises(ImproperlyConfigured, match="DAX_ENDPOINTS"):
        parse({"DAX_ENDPOINTS": value})
    assert parse({"DAX_ENDPOINTS": [CLUSTER, "dax://other:8111"]}).dax_endpoints == (
        CLUSTER,
        "dax://other:8111",
    )


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_production_factory_builds_amazon_dax_client(dynamo_db, settings):
    """The real client, with the handle's credentials and region, connecting to the
    configured endpoint (on 127.0.0.1, where nothing listens): its failure is an
    error naming DAX_ENDPOINTS."""
    pytest.importorskip("amazondax")
    endpoint = f"dax://127.0.0.1:{_closed_port()}"
    settings.DYNAMO = {**settings.DYNAMO, "DAX_ENDPOINTS": [endpoint], "TIMEOUT": "500ms"}
    with pytest.raises(ConnectionFailed, match="DAX_ENDPOINTS") as error:
        get_handle()
    assert endpoint in str(error.value) and "Failed to configure cluster endpoints" in str(
        error.value
    )


def test_without_the_package_the_error_names_the_extra(dynamo_db, settings, monkeypatch):
    monkeypatch.setitem(sys.modules, "amazondax", None)  # import amazondax fails
    settings.DYNAMO = {**settings.DYNAMO, "DAX_ENDPOINTS": [CLUSTER]}
    with pytest.raises(MissingDependency, match=r"django-dynamo-app\[dax\]"):
        get_handle()
