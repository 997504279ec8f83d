"""Meta.stream in the schema workflow: declared, created, compared, enabled."""

from __future__ import annotations

from typing import Any

import pytest

from dynamo_app import models
from dynamo_app.client.handle import get_handle
from dynamo_app.deploy import schema
from dynamo_app.deploy.schema import ChangeKind
from dynamo_app.exceptions import ModelDefinitionError, SchemaMismatch
from dynamo_app.tables import KeyAttribute, TableDefinition
from dynamo_app.testing import count_requests
from tests.schema_support import changes_of, make_table

FEED = TableDefinition(
    "sch_feed", KeyAttribute("feed_id", "S"), stream="NEW_AND_OLD_IMAGES", owner="tests.Feed"
)


def stream_of(name: str) -> dict[str, Any] | None:
    table = get_handle().client.describe_table(TableName=name)["Table"]
    return table.get("StreamSpecification")


def test_meta_stream_is_the_tables_stream_view_type():
    class Ticker(models.Model):
        ticker_id = models.StringField(partition_key=True)

        class Meta:
            stream = "new_image"

    assert Ticker._meta.stream == "new_image"
    assert Ticker._meta.table_definition().stream == "NEW_IMAGE"
    request = Ticker._meta.table_definition().create_request("t-ticker")
    assert request["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}


@pytest.mark.usefixtures("declared")
def test_a_model_without_meta_stream_has_none():
    class Quiet(models.Model):
        quiet_id = models.StringField(partition_key=True)

    assert Quiet._meta.stream is None
    assert "StreamSpecification" not in Quiet._meta.table_definition().create_request("t-quiet")


@pytest.mark.parametrize("value", ["NEW_AND_OLD_IMAGES", "both", True])
def test_an_unknown_view_type_is_refused_at_class_creation(value):
    with pytest.raises(ModelDefinitionError) as caught:

        class Wrong(models.Model):
            wrong_id = models.StringField(partition_key=True)

            class Meta:
                stream = value

    message = str(caught.value)
    assert "Wrong.Meta.stream" in message and "[dynamo.E115]" in message
    assert "'keys_only', 'new_image', 'old_image', 'new_and_old_images'" in message


def test_a_missing_table_is_created_with_its_stream(declare):
    declare(FEED)
    [change] = changes_of("sch_feed")
    assert change.kind is ChangeKind.CREATE and "stream NEW_AND_OLD_IMAGES" in change.detail

    schema.migrate()

    assert stream_of("test-sch_feed") == {
        "StreamEnabled": True,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    assert [c.kind for c in changes_of("sch_feed")] == [ChangeKind.IN_SYNC]


def test_migrate_enables_a_declared_stream_on_an_existing_table(declare):
    make_table("test-sch_feed", ("feed_id", "S", "HASH"))
    declare(FEED)
    [change] = changes_of("sch_feed")
    assert change.kind is ChangeKind.ENABLE_STREAM and change.executable
    assert (change.desired, change.observed) == ("stream NEW_AND_OLD_IMAGES", "no stream")
    with pytest.raises(SchemaMismatch, match="has no stream"):
        schema.verify()

    with count_requests() as requests:
        result = schema.migrate()

    assert [c.kind for c in result.applied] == [ChangeKind.ENABLE_STREAM]
    assert requests["UpdateTable"] == 1
    assert stream_of("test-sch_feed")["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    schema.verify()
    with count_requests() as again:
        schema.migrate()
    assert again["UpdateTable"] == 0


def test_another_view_type_is_reported_never_changed(declare):
    make_table(
        "test-sch_feed",
        ("feed_id", "S", "HASH"),
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
    )
    declare(FEED)
    [change] = changes_of("sch_feed")
    assert change.kind is ChangeKind.STREAM_MISMATCH and change.mismatch
    assert (change.desired, change.observed) == ("stream NEW_AND_OLD_IMAGES", "stream KEYS_ONLY")
    assert "new ARN" in change.detail

    with count_requests() as requests:
        result = schema.migrate()

    assert requests["UpdateTable"] == 0 and result.mismatches == [change]
    assert stream_of("test-sch_feed")["StreamViewType"] == "KEYS_ONLY"


def test_a_stream_no_model_declares_is_left_alone(declare):
    make_table(
        "test-sch_feed",
        ("feed_id", "S", "HASH"),
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
    )
    declare(TableDefinition("sch_feed", KeyAttribute("feed_id", "S"), owner="tests.Feed"))
    assert [c.kind for c in changes_of("sch_feed")] == [ChangeKind.IN_SYNC]
