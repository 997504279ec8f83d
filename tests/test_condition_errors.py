"""A failed write names what is true: the caller's own condition is ConditionFailed
(with the item as stored), StaleObjectError only for an instance that was read,
DoesNotExist only when a condition of the app's needs the item."""

import pytest

import dynamo_app
from dynamo_app import models
from dynamo_app.exceptions import (
    AlreadyExists,
    ConditionFailed,
    DoesNotExist,
    StaleObjectError,
)
from dynamo_app.models import Attr


class Tally(models.Model):
    name = models.StringField(partition_key=True)
    hits = models.IntegerField(default=0)
    label = models.StringField(null=True)
    version = models.VersionField()


class Plain(models.Model):
    name = models.StringField(partition_key=True)
    hits = models.IntegerField(default=0)


class Badge(models.Model):
    name = models.StringField(partition_key=True)
    code = models.StringField()

    class Meta:
        unique = [models.Unique("code")]


def exactly(exc_type, raised):
    """Not a subclass: ConditionFailed means the caller's condition, not a stale read."""
    return type(raised.value) is exc_type


def test_an_upsert_whose_own_condition_fails_on_a_missing_item_is_condition_failed(dynamo_db):
    with pytest.raises(ConditionFailed) as raised:
        Tally(name="a").update(add={"hits": 1}, upsert=True, condition=Attr("label") == "x")
    assert exactly(ConditionFailed, raised) and raised.value.item is None
    assert "upsert=True" not in str(raised.value)
    assert list(Tally.objects.scan()) == []


def test_an_upsert_whose_own_condition_fails_on_a_stored_item_carries_it(dynamo_db):
    Tally.objects.create(name="a", hits=3, label="y")
    with pytest.raises(ConditionFailed) as raised:  # blind: no version was asked for
        Tally(name="a").update(add={"hits": 1}, upsert=True, condition=Attr("label") == "x")
    assert exactly(ConditionFailed, raised) and raised.value.item.hits == 3


def test_a_delete_or_save_of_a_never_read_instance_is_never_stale(dynamo_db):
    with pytest.raises(ConditionFailed) as raised:
        Tally(name="never").delete(condition=Attr("hits") > 0)
    assert exactly(ConditionFailed, raised) and "since it was read" not in str(raised.value)
    with pytest.raises(ConditionFailed) as raised:
        Tally(name="new", hits=1).save(condition=Attr("hits").exists())
    assert exactly(ConditionFailed, raised) and "since it was read" not in str(raised.value)
    with pytest.raises(ConditionFailed) as raised:
        Plain(name="new").save(condition=Attr("hits").exists())
    assert exactly(ConditionFailed, raised)
    with pytest.raises(ConditionFailed) as raised:  # insert-only (a unique model)
        Badge(name="new", code="c").save(condition=Attr("code").exists())
    assert exactly(ConditionFailed, raised)


def test_saving_a_never_read_versioned_instance_over_a_stored_one_already_exists(dynamo_db):
    Tally.objects.create(name="a", hits=3)
    with pytest.raises(AlreadyExists) as raised:
        Tally(name="a", hits=9).save()
    assert raised.value.item.hits == 3
    assert Tally.objects.get(name="a").hits == 3


def test_a_read_instance_is_stale_when_changed_or_deleted_since(dynamo_db):
    Tally.objects.create(name="a")
    stale = Tally.objects.get(name="a")
    Tally.objects.get(name="a").save()
    with pytest.raises(StaleObjectError, match="changed since it was read"):
        stale.save(condition=Attr("hits") == 0)
    fresh = Tally.objects.get(name="a")
    Tally.objects.get(name="a").delete()
    with pytest.raises(StaleObjectError, match="deleted since it was read"):
        fresh.save()


def test_the_callers_condition_on_a_read_instance_is_condition_failed(dynamo_db):
    Tally.objects.create(name="a", hits=2)
    obj = Tally.objects.get(name="a")
    for write in (
        lambda: obj.save(condition=Attr("hits") > 5),
        lambda: obj.update(add={"hits": 1}, condition=Attr("hits") > 5),
        lambda: obj.delete(condition=Attr("hits") > 5),
    ):
        with pytest.raises(ConditionFailed) as raised:
            write()
        assert exactly(ConditionFailed, raised) and raised.value.item.hits == 2


def test_an_update_of_a_missing_item_without_upsert_does_not_exist(dynamo_db):
    with pytest.raises(DoesNotExist, match="upsert=True"):
        Plain(name="ghost").update(add={"hits": 1}, condition=Attr("hits") > 0)


def test_in_a_transaction_too(dynamo_db):
    with pytest.raises(ConditionFailed) as raised:
        with dynamo_app.transaction() as tx:
            tx.update(Tally(name="a"), add={"hits": 1}, upsert=True, condition=Attr("hits") > 1)
            tx.create(Plain(name="p"))
    assert exactly(ConditionFailed, raised)
    assert list(Plain.objects.scan()) == []
