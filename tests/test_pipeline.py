"""The handle's leaner botocore client (dynamo_app.client.pipeline): the endpoint resolved
once per operation and tables, botocore's retry machinery gone, requests otherwise
as botocore makes them."""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from typing import Any

import pytest

import dynamo_app
from dynamo_app import models
from dynamo_app.client.handle import get_handle

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("botocore.context") is None,
    reason="before botocore 1.38 (no botocore.context) botocore resolves every request itself",
)


class PipeNote(models.Model):
    topic = models.StringField(partition_key=True)
    body = models.StringField(null=True)


class PipeOther(models.Model):
    topic = models.StringField(partition_key=True)


class Watch:
    """What the handle's client resolves and sends, from botocore's own events."""

    def __init__(self, client: Any) -> None:
        self.client = client
        self.resolutions: list[str] = []
        self.sent: list[Any] = []

    def resolving(self, model: Any, **kwargs: Any) -> None:
        self.resolutions.append(model.name)

    def sending(self, request: Any, **kwargs: Any) -> None:
        self.sent.append(request)


@pytest.fixture
def watch(dynamo_db: Any) -> Iterator[Watch]:
    events = get_handle().client.meta.events
    seen = Watch(get_handle().client)
    events.register("before-endpoint-resolution.dynamodb", seen.resolving, unique_id="pipe-r")
    events.register("before-send.dynamodb", seen.sending, unique_id="pipe-s")
    try:
        yield seen
    finally:
        events.unregister("before-endpoint-resolution.dynamodb", unique_id="pipe-r")
        events.unregister("before-send.dynamodb", unique_id="pipe-s")


def test_endpoint_resolved_once_per_operation_and_table(watch):
    PipeNote.objects.create(topic="a")
    PipeNote.objects.create(topic="b")
    PipeNote(topic="a", body="x").save()
    PipeNote.objects.get(topic="a")
    PipeNote.objects.get(topic="b")
    PipeOther.objects.create(topic="a")
    assert watch.resolutions == ["PutItem", "GetItem", "PutItem"]  # the 2nd PutItem: PipeOther
    assert len({r.url for r in watch.sent}) == 1


def test_transactions_resolve_once_per_set_of_tables(watch):
    with dynamo_app.transaction() as tx:
        tx.create(PipeNote(topic="t1"))
        tx.create(PipeOther(topic="t1"))
    with dynamo_app.transaction() as tx:
        tx.create(PipeNote(topic="t2"))
        tx.create(PipeOther(topic="t2"))
    with dynamo_app.transaction() as tx:
        tx.create(PipeOther(topic="t3"))
        tx.create(PipeNote(topic="t3"))
    assert watch.resolutions == ["TransactWriteItems", "TransactWriteItems"]
    assert PipeNote.objects.get(topic="t3") and PipeOther.objects.get(topic="t3")


def test_requests_carry_no_botocore_retry_headers_and_the_same_user_agent(watch):
    PipeNote.objects.create(topic="h")
    PipeNote.objects.create(topic="i")
    first, second = (dict(r.headers.items()) for r in watch.sent)
    for headers in (first, second):
        assert "amz-sdk-request" not in headers and "amz-sdk-invocation-id" not in headers
        assert headers["Authorization"].startswith(b"AWS4-HMAC-SHA256 Credential=")
    assert first["User-Agent"] == second["User-Agent"]  # the feature ids reported on reuse too
