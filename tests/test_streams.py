"""Streams: receivers per model, the local consumer (manage.py dynamo_stream) and
the Lambda handler, on the local engine's real stream records."""

from __future__ import annotations

import base64
import copy
import json
from datetime import UTC, datetime
from decimal import Decimal
from io import StringIO
from typing import Any

import pytest
from django.core.management import CommandError, call_command

from dynamo_app import app_tables, models
from dynamo_app.client.handle import get_handle
from dynamo_app.exceptions import MalformedStreamEvent, ModelDefinitionError, ReceiverFailed
from dynamo_app.streams import StreamRecord, lambda_handler, receiver, receivers
from dynamo_app.streams.consumer import Consumer
from dynamo_app.streams.records import from_lambda, parse
from dynamo_app.tables import registry
from dynamo_app.testing import ENGINE
from tests.fault_support import LOSSES, Lost


class Sensor(models.Model):
    site = models.StringField(partition_key=True)
    sensor_id = models.IntegerField(sort_key=True)
    label = models.StringField()
    reading = models.DecimalField(null=True)
    blob = models.BinaryField(null=True)

    class Meta:
        table_name = "st_sensor"
        stream = "new_and_old_images"


class Badge(models.Model):
    badge_id = models.StringField(partition_key=True)
    holder = models.StringField()

    class Meta:
        table_name = "st_badge"
        stream = "keys_only"


@pytest.fixture
def got(dynamo_db: Any):
    """The records the test's receivers were called with, in order."""
    seen: list[StreamRecord[Any]] = []

    def on_sensor(record: StreamRecord[Sensor]) -> None:
        seen.append(record)

    def on_badge(record: StreamRecord[Badge]) -> None:
        seen.append(record)

    receiver(Sensor)(on_sensor)
    receiver(Badge)(on_badge)
    yield seen
    receivers.disconnect(Sensor, on_sensor)
    receivers.disconnect(Badge, on_badge)


@pytest.fixture
def failing(dynamo_db: Any):
    """A second Sensor receiver that raises on the reading 13."""

    def refuse_13(record: StreamRecord[Sensor]) -> None:
        if record.new is not None and record.new.reading == 13:
            raise ValueError("13 is unlucky")

    receiver(Sensor)(refuse_13)
    yield refuse_13
    receivers.disconnect(Sensor, refuse_13)


def consume(*args: str) -> str:
    out = StringIO()
    call_command("dynamo_stream", "--until-caught-up", *args, stdout=out, stderr=StringIO())
    return out.getvalue()


def events(seen: list[StreamRecord[Any]]) -> list[tuple[str, Any, Any]]:
    return [(r.event_name, r.old and r.old.reading, r.new and r.new.reading) for r in seen]


def test_receivers_get_each_change_decoded_by_the_model(got):
    sensor = Sensor.objects.create(site="a", sensor_id=1, label="roof")
    sensor.reading = Decimal("21.5")
    sensor.save()
    sensor.delete()

    out = consume()

    assert events(got) == [
        ("INSERT", None, None),
        ("MODIFY", None, Decimal("21.5")),
        ("REMOVE", Decimal("21.5"), None),
    ]
    insert, modify, remove = got
    assert isinstance(insert.new, Sensor) and insert.new.label == "roof"
    assert insert.model is Sensor
    assert modify.old.reading is None and modify.new.reading == Decimal("21.5")
    assert all(r.keys == {"site": "a", "sensor_id": 1} for r in got)
    assert all(r.table == get_handle().table_name("st_sensor") for r in got)
    sequence = [int(r.sequence_number) for r in got]
    assert sequence == sorted(sequence) and len(set(sequence)) == 3
    assert all(r.approximate_creation_time.tzinfo is not None for r in got)
    assert abs(datetime.now(UTC) - insert.approximate_creation_time).total_seconds() < 120
    assert "3 records delivered (INSERT 1, MODIFY 1, REMOVE 1)" in out
    assert "Caught up: 3 records delivered." in out


@pytest.mark.skipif(
    ENGINE == "moto", reason="moto 5.1 base64-encodes the binary values of stream images twice"
)
def test_binary_values_arrive_as_bytes(got):
    Sensor.objects.create(site="a", sensor_id=1, label="x", blob=b"\x00\xff")

    consume()

    assert got[0].new.blob == b"\x00\xff"


def test_keys_only_records_carry_the_keys_and_no_images(got):
    Badge.objects.create(badge_id="b1", holder="Ann")

    consume()

    [record] = got
    assert (record.event_name, record.keys, record.old, record.new) == (
        "INSERT",
        {"badge_id": "b1"},
        None,
        None,
    )
    assert record.model is Badge


def test_a_restart_goes_on_after_the_checkpoint(got):
    Sensor.objects.create(site="a", sensor_id=1, label="one", reading=1)
    consume()
    Sensor.objects.create(site="a", sensor_id=2, label="two", reading=2)

    out = consume()  # a new consumer: its place comes from the checkpoint table

    assert events(got) == [("INSERT", None, 1), ("INSERT", None, 2)]
    assert "Caught up: 1 record delivered." in out
    handle = get_handle()
    [checkpoint] = handle.call(
        "scan", TableName=handle.table_name(app_tables.STREAM_CHECKPOINTS.declared_name)
    )["Items"]
    assert checkpoint[app_tables.CHECKPOINT_SEQUENCE]["S"] == got[-1].sequence_number
    assert consume().endswith("Caught up: 0 records delivered.\n")


def test_a_failing_receiver_stops_at_its_record_which_comes_again(got, failing):
    for n in (12, 13, 14):
        Sensor.objects.create(site="a", sensor_id=n, label="x", reading=n)

    with pytest.raises(CommandError) as caught:
        consume()

    message = str(caught.value)
    assert "Receiver tests.test_streams.failing.<locals>.refuse_13 failed on INSERT" in message
    assert "Sensor(site='a', sensor_id=13)" in message
    assert "ValueError: 13 is unlucky" in message and "delivers it again" in message
    assert events(got) == [("INSERT", None, 12), ("INSERT", None, 13)]  # on_sensor came first

    receivers.disconnect(Sensor, failing)
    out = consume()

    # 13 again (at least once: on_sensor sees it twice), then 14; 12 is not repeated
    assert events(got)[2:] == [("INSERT", None, 13), ("INSERT", None, 14)]
    assert "Caught up: 2 records delivered." in out


def test_the_same_consumer_goes_on_from_the_failed_record(got, failing):
    for n in (12, 13):
        Sensor.objects.create(site="a", sensor_id=n, label="x", reading=n)
    consumer = Consumer()

    with pytest.raises(ReceiverFailed) as caught:
        consumer.round()

    assert caught.value.record.keys == {"site": "a", "sensor_id": 13}
    assert caught.value.receiver is failing
    assert isinstance(caught.value.__cause__, ValueError)
    receivers.disconnect(Sensor, failing)
    assert consumer.round() == 1
    assert events(got) == [("INSERT", None, 12), ("INSERT", None, 13), ("INSERT", None, 13)]


def test_a_checkpoint_whose_answer_was_lost_is_written_and_nothing_comes_twice(got, no_sleep):
    """A checkpoint is a whole-item put: repeated after a lost answer, applied or not."""
    for n in (1, 2):
        Sensor.objects.create(site="a", sensor_id=n, label="x", reading=n)
    for reaches in (True, False):
        with Lost("PutItem", LOSSES["read timeout"], reaches=reaches) as lost:
            out = consume()
        assert lost.lost == 1 and "Caught up" in out
        Sensor.objects.create(site="a", sensor_id=3 + reaches, label="x", reading=3 + reaches)
    consume()
    assert events(got) == [("INSERT", None, n) for n in (1, 2, 4, 3)]  # each once


def test_a_checkpoint_whose_outcome_stays_unknown_stops_and_its_page_comes_again(got, no_sleep):
    """At least once: the page's records were delivered, its checkpoint may not be
    stored; the consumer stops saying so, and a restart delivers the page again."""
    for n in (1, 2):
        Sensor.objects.create(site="a", sensor_id=n, label="x", reading=n)
    attempts = no_sleep.settings.retry.max_attempts
    with Lost("PutItem", times=attempts, reaches=False), pytest.raises(CommandError) as caught:
        consume()
    assert "may or may not have been applied" in str(caught.value)
    assert events(got) == [("INSERT", None, 1), ("INSERT", None, 2)]
    consume()
    assert events(got)[2:] == [("INSERT", None, 1), ("INSERT", None, 2)]  # the page again


def test_a_receiver_failure_is_reported_with_the_checkpoint_that_failed_after_it(
    got, failing, no_sleep
):
    """The receiver stops the consumer; its checkpoint (of the record before) failing
    too is reported beside it, never instead of it, and never moves past the record."""
    for n in (12, 13, 14):
        Sensor.objects.create(site="a", sensor_id=n, label="x", reading=n)
    attempts = no_sleep.settings.retry.max_attempts
    with Lost("PutItem", times=attempts) as lost, pytest.raises(CommandError) as caught:
        consume()

    message = str(caught.value)
    assert "refuse_13 failed on INSERT" in message and "ValueError: 13 is unlucky" in message
    assert "Saving the checkpoint of table" in message and "OutcomeUnknown" in message
    assert "may come again" in message and "the checkpoint is the record before it" not in message
    assert isinstance(caught.value.__cause__, ReceiverFailed)
    assert lost.applied == attempts  # the checkpoint was stored, its answers lost
    handle = get_handle()
    [checkpoint] = handle.call(
        "scan", TableName=handle.table_name(app_tables.STREAM_CHECKPOINTS.declared_name)
    )["Items"]
    assert checkpoint[app_tables.CHECKPOINT_SEQUENCE]["S"] == got[0].sequence_number  # 12

    receivers.disconnect(Sensor, failing)
    consume()
    assert events(got)[2:] == [("INSERT", None, 13), ("INSERT", None, 14)]


def test_follow_mode_polls_until_interrupted(got, monkeypatch):
    Sensor.objects.create(site="a", sensor_id=1, label="x", reading=1)
    naps: list[float] = []

    def sleep(seconds: float) -> None:  # between polls: a write, then Ctrl-C
        naps.append(seconds)
        if len(naps) == 1:
            Sensor.objects.create(site="a", sensor_id=2, label="x", reading=2)
        else:
            raise KeyboardInterrupt

    monkeypatch.setattr("dynamo_app.streams.consumer.time.sleep", sleep)
    out = StringIO()

    call_command("dynamo_stream", "--interval", "0.5", stdout=out)

    assert naps == [0.5, 0.5]
    assert events(got) == [("INSERT", None, 1), ("INSERT", None, 2)]
    assert "Stopped; the next run goes on from the checkpoints." in out.getvalue()
    assert consume().endswith("Caught up: 0 records delivered.\n")


def test_from_latest_skips_what_was_written_before(got):
    Sensor.objects.create(site="a", sensor_id=1, label="before", reading=1)
    consumer = Consumer(start="latest")
    assert consumer.round() == 0

    Sensor.objects.create(site="a", sensor_id=2, label="after", reading=2)

    assert consumer.round() == 1
    assert events(got) == [("INSERT", None, 2)]


@pytest.mark.usefixtures("declared")
def test_a_model_without_a_stream_cannot_have_receivers():
    class Plain(models.Model):
        plain_id = models.StringField(partition_key=True)

        class Meta:
            table_name = "st_plain"

    with pytest.raises(ModelDefinitionError, match="declares no Meta.stream"):
        receiver(Plain)(lambda record: None)


@pytest.mark.usefixtures("declared")
def test_only_a_streamed_model_declares_the_checkpoint_table():
    class Unstreamed(models.Model):
        unstreamed_id = models.StringField(partition_key=True)

        class Meta:
            table_name = "st_unstreamed"

    assert app_tables.STREAM_CHECKPOINTS in app_tables.needed(Sensor._meta)
    assert app_tables.STREAM_CHECKPOINTS not in app_tables.needed(Unstreamed._meta)
    assert app_tables.STREAM_CHECKPOINTS.declared_name in registry


# --- Lambda


def stream_records(model: type[models.Model]) -> tuple[str, list[dict[str, Any]]]:
    """The stream ARN of the model's table and every record in it, read with GetRecords."""
    handle = get_handle()
    table = handle.call("describe_table", TableName=handle.table_name(model._meta.table_name))
    arn = table["Table"]["LatestStreamArn"]
    [shard] = handle.call("describe_stream", StreamArn=arn)["StreamDescription"]["Shards"]
    iterator = handle.call(
        "get_shard_iterator",
        StreamArn=arn,
        ShardId=shard["ShardId"],
        ShardIteratorType="TRIM_HORIZON",
    )["ShardIterator"]
    return arn, handle.call("get_records", ShardIterator=iterator)["Records"]


def as_lambda_event(arn: str, records: list[dict[str, Any]]) -> dict[str, Any]:
    """What Lambda sends for these records: JSON, with binary values in base64, the
    creation time in epoch seconds, and the stream ARN in each record."""

    def default(value: Any) -> Any:
        if isinstance(value, bytes):
            return base64.b64encode(value).decode()
        if isinstance(value, datetime):
            zoned = value if value.tzinfo else value.replace(tzinfo=UTC)
            return int(zoned.timestamp())
        raise TypeError(value)

    return json.loads(
        json.dumps(
            {"Records": [{**r, "eventVersion": "1.1", "eventSourceARN": arn} for r in records]},
            default=default,
        )
    )


def test_lambda_handler_delivers_a_batch(got):
    sensor = Sensor.objects.create(site="a", sensor_id=1, label="x", blob=b"\x01")
    sensor.reading = 5
    sensor.save()
    event = as_lambda_event(*stream_records(Sensor))
    assert isinstance(event["Records"][0]["dynamodb"]["NewImage"]["blob"]["B"], str)

    assert lambda_handler(event, None) == {"batchItemFailures": []}

    assert events(got) == [("INSERT", None, None), ("MODIFY", None, 5)]
    # base64 in the event, bytes in the model, as GetRecords gives them (b"\x01" on AWS
    # and MiniStack; moto encodes binary values in stream images twice)
    _, records = stream_records(Sensor)
    table = get_handle().table_name("st_sensor")
    assert got[0].new.blob == parse(records[0], Sensor, table).new.blob
    assert isinstance(got[0].new.blob, bytes) and got[0].new.blob
    assert got[0].approximate_creation_time.tzinfo is UTC


def test_lambda_handler_reports_the_failing_record_and_stops_there(got, failing):
    for n in (12, 13, 14):
        Sensor.objects.create(site="a", sensor_id=n, label="x", reading=n)
    arn, records = stream_records(Sensor)

    response = lambda_handler(as_lambda_event(arn, records), None)

    assert response == {
        "batchItemFailures": [{"itemIdentifier": records[1]["dynamodb"]["SequenceNumber"]}]
    }
    assert events(got) == [("INSERT", None, 12), ("INSERT", None, 13)]  # 14 waits for the retry


def test_lambda_handler_refuses_a_record_of_an_undeclared_table(got):
    Sensor.objects.create(site="a", sensor_id=1, label="x")
    arn, records = stream_records(Sensor)
    other = arn.replace("st_sensor", "st_elsewhere")

    response = lambda_handler(as_lambda_event(other, records), None)

    assert response == {
        "batchItemFailures": [{"itemIdentifier": records[0]["dynamodb"]["SequenceNumber"]}]
    }
    assert got == []


def _without(record: dict[str, Any], path: str) -> dict[str, Any]:
    record = copy.deepcopy(record)
    *parents, last = path.split(".")
    inner = record
    for name in parents:
        inner = inner[name]
    del inner[last]
    return record


def test_lambda_handler_refuses_an_event_that_is_not_a_stream_event(got):
    Sensor.objects.create(site="a", sensor_id=1, label="x")
    Sensor.objects.create(site="a", sensor_id=2, label="x")
    good = as_lambda_event(*stream_records(Sensor))["Records"]
    for event, said in [
        ({}, r"got a mapping with keys \[\]"),
        ({"Records": []}, "at least one record"),
        ({"Records": "x"}, "at least one record"),
        (["x"], "got a list"),
        ({"Records": [good[0], "x"]}, "Record 1 .* no 'dynamodb' change"),
        ({"Records": [good[0], _without(good[1], "dynamodb.SequenceNumber")]}, "SequenceNumber"),
        ({"Records": [_without(good[0], "dynamodb.Keys")]}, "'Keys'"),
        ({"Records": [_without(good[0], "eventName")]}, "'eventName'"),
        ({"Records": [_without(good[0], "eventSourceARN")]}, "stream ARN"),
        ({"Records": [{**good[0], "eventSourceARN": "arn:x"}]}, "stream ARN"),
    ]:
        with pytest.raises(MalformedStreamEvent, match=said):
            lambda_handler(event, None)
    assert got == []  # a malformed record anywhere: nothing of the event delivered


def test_a_ttl_deletion_is_marked_expired(got):
    Sensor.objects.create(site="a", sensor_id=1, label="x")
    Sensor.objects.get(site="a", sensor_id=1).delete()
    arn, records = stream_records(Sensor)
    remove = records[-1]
    by_ttl = {
        **remove,
        "userIdentity": {"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"},
    }
    table = get_handle().table_name("st_sensor")

    assert parse(by_ttl, Sensor, table).expired
    assert not parse(remove, Sensor, table).expired
    lambda_form = as_lambda_event(
        arn,
        [{**remove, "userIdentity": {"type": "Service", "principalId": "dynamodb.amazonaws.com"}}],
    )
    assert parse(from_lambda(lambda_form["Records"][0]), Sensor, table).expired
