"""The write path's pieces: actions that print their meaning, the errors a failed
condition means (the item as stored in both forms, the requests really sent)."""

import pytest

import dynamo_app
from dynamo_app import exceptions, models
from dynamo_app.client.handle import get_handle
from dynamo_app.models import Attr, writes
from tests.fault_support import Faults, client_error

THROTTLED = client_error("ThrottlingException")


class Badge(models.Model):
    team_id = models.StringField(partition_key=True)
    badge_id = models.StringField(sort_key=True)
    number = models.IntegerField(null=True)
    label = models.StringField(default="")
    version = models.VersionField()

    class Meta:
        table_name = "wp_badge"
        unique = [models.Unique("number", within="team_id")]


def test_each_action_prints_what_its_outcomes_mean(dynamo_db):
    badge = Badge.objects.create(team_id="t", badge_id="b", number=7)
    badge.number = 8
    entity, release, claim = writes.save_actions(badge)
    assert repr(entity) == (
        "<Action Put: save Badge {'team_id': 't', 'badge_id': 'b'}; "
        "failing: EntityFailure(save <Badge: team_id='t', badge_id='b'> expecting {'team_id': "
        "'t', 'number': 7}); then: Written(<Badge: team_id='t', badge_id='b'> stored with 5 "
        "attributes, version 2)>"
    )
    assert "LockStale({team_id='t', badge_id='b'} releasing Badge.number=7 within team_id='t'" in (
        repr(release)
    )
    assert "LockTaken(Badge.number=8 within team_id='t': UniqueViolation)" in repr(claim)
    update, *_ = writes.update_actions(badge, set={"number": 9})
    assert "Follow(<Badge: team_id='t', badge_id='b'> setting ['number'])" in repr(update)
    (delete, _) = writes.delete_actions(badge)
    assert "Written(<Badge: team_id='t', badge_id='b'> deleted)" in repr(delete)
    (insert, _) = writes.create_actions(Badge(team_id="t", badge_id="c", number=1))
    assert "KeyTaken(<Badge: team_id='t', badge_id='c'>: AlreadyExists)" in repr(insert)


def test_a_failed_condition_carries_the_stored_item_decoded_and_as_sent(dynamo_db):
    badge = Badge.objects.create(team_id="t", badge_id="b", label="old")
    with pytest.raises(exceptions.ConditionFailed) as failed:
        badge.update(set={"label": "new"}, condition=Attr("label") == "other")
    assert isinstance(failed.value.item, Badge) and failed.value.item.label == "old"
    assert failed.value.raw_item["label"] == {"S": "old"}
    handle = get_handle()
    with pytest.raises(exceptions.ConditionFailed) as raw:
        handle.call(
            "put_item",
            TableName=handle.table_name("wp_badge"),
            Item={"team_id": {"S": "t"}, "badge_id": {"S": "b"}},
            ConditionExpression="attribute_not_exists(team_id)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
    assert raw.value.item is None and raw.value.raw_item["label"] == {"S": "old"}


def test_an_error_a_failed_condition_means_counts_the_requests_sent(no_sleep):
    badge = Badge.objects.create(team_id="t", badge_id="b", number=7)
    with Faults(no_sleep.client, THROTTLED), pytest.raises(exceptions.AlreadyExists) as exists:
        Badge.objects.create(team_id="t", badge_id="b")  # no unique value: one PutItem
    assert exists.value.attempts == 2 and exists.value.item == badge
    with Faults(no_sleep.client, THROTTLED), pytest.raises(Badge.DoesNotExist) as missing:
        Badge(team_id="t", badge_id="nobody").update(set={"label": "x"})
    assert missing.value.attempts == 2
    with Faults(no_sleep.client, THROTTLED), pytest.raises(exceptions.UniqueViolation) as taken:
        Badge.objects.create(team_id="t", badge_id="c", number=7)  # a transaction
    assert taken.value.attempts == 2
    with pytest.raises(exceptions.UniqueViolation) as twice:
        with dynamo_app.transaction() as tx:
            tx.create(Badge(team_id="t", badge_id="d", number=3))
            tx.create(Badge(team_id="t", badge_id="e", number=3))
    assert twice.value.attempts == 0  # refused before sending
    stale = Badge.objects.get(team_id="t", badge_id="b")
    badge.save()
    with Faults(no_sleep.client, THROTTLED), pytest.raises(exceptions.StaleObjectError) as late:
        stale.update(set={"label": "late"})
    assert late.value.attempts == 2 and late.value.item.version == 2
