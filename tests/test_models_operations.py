"""Item operations and batches: one request each, conditions that always raise."""

import copy
import pickle
from decimal import Decimal

import pytest

import dynamo_app
from dynamo_app import models
from dynamo_app.client.handle import get_handle
from dynamo_app.exceptions import BatchIncomplete, ConditionFailed, WriteError
from dynamo_app.models import Attr
from dynamo_app.models.state import ItemState
from dynamo_app.testing import count_requests


def sent(counter, index=-1):
    """The API parameters of a counted request, as sent."""
    return counter.calls[index][1]


class Account(models.Model):
    """Reserved words as attribute names: name, status, size, data, count."""

    owner = models.StringField(partition_key=True)
    name = models.StringField(sort_key=True)
    status = models.StringField(default="open")
    size = models.IntegerField(default=0)
    data = models.JSONField(null=True)
    count = models.IntegerField(default=0, db_name="count")
    tags = models.StringSetField()
    history = models.ListField(of=models.StringField, null=True)
    balance = models.DecimalField(null=True)


def test_create_get_save_delete_each_make_one_request(dynamo_db, dynamo_requests):
    Account.objects.create(owner="o", name="a", data={"k": 1})
    assert dict(dynamo_requests) == {"PutItem": 1}
    obj = Account.objects.get(owner="o", name="a")
    assert dynamo_requests["GetItem"] == 1 and obj.data == {"k": 1}
    obj.status = "closed"
    obj.save()
    obj.refresh_from_db()
    obj.delete()
    assert dict(dynamo_requests) == {"PutItem": 2, "GetItem": 2, "DeleteItem": 1}
    with pytest.raises(Account.DoesNotExist):
        Account.objects.get(owner="o", name="a", consistent=True)
    assert sent(dynamo_requests)["ConsistentRead"] is True


def test_every_attribute_name_is_aliased(dynamo_db, dynamo_requests):
    obj = Account.objects.create(owner="o", name="a")
    obj.update(set={"status": "x", "data": {"size": 1}}, add={"size": 2, "count": 1})
    list(Account.objects.filter(owner="o", name="a").where(status="x", size__gte=1).only("data"))
    for index in range(len(dynamo_requests.calls)):
        params = sent(dynamo_requests, index)
        text = " ".join(
            str(params.get(k, ""))
            for k in (
                "ConditionExpression",
                "UpdateExpression",
                "KeyConditionExpression",
                "FilterExpression",
                "ProjectionExpression",
            )
        )
        for word in ("name", "status", "size", "data", "count", "owner"):
            assert word not in text.replace("#", " # ").split(), text


def test_create_is_insert_only(dynamo_db, dynamo_requests):
    Account.objects.create(owner="o", name="a", size=7)
    with pytest.raises(models.AlreadyExists) as e:
        Account.objects.create(owner="o", name="a", size=1)
    assert e.value.item.size == 7  # the current item, decoded
    assert dynamo_requests["PutItem"] == 2
    assert Account.objects.get(owner="o", name="a").size == 7


def test_save_with_condition_raises_with_current_values(dynamo_db, dynamo_requests):
    obj = Account.objects.create(owner="o", name="a", status="open")
    obj.status = "closed"
    obj.save(condition=Attr("status") == "open")
    obj.status = "reopened"
    with pytest.raises(ConditionFailed) as e:
        obj.save(condition=Attr("status") == "open")
    assert e.value.item.status == "closed"
    assert dynamo_requests["PutItem"] == 3


def test_save_update_fields_is_one_update_of_those_attributes(dynamo_db, dynamo_requests):
    Account.objects.create(owner="o", name="a", size=1, status="open")
    stale = Account(owner="o", name="a", size=99, status="stale")
    stale.save(update_fields=["size"])
    got = Account.objects.get(owner="o", name="a")
    assert (got.size, got.status) == (99, "open")
    assert dynamo_requests["UpdateItem"] == 1


def test_save_update_fields_of_a_missing_item_is_does_not_exist(dynamo_db):
    with pytest.raises(Account.DoesNotExist, match="upsert=True"):
        Account(owner="o", name="ghost", size=3).save(update_fields=["size"])
    with pytest.raises(ValueError, match="update_fields"):
        Account(owner="o", name="a").save(update_fields=["nope"])


def test_atomic_update_returns_new_values(dynamo_db, dynamo_requests):
    obj = Account.objects.create(owner="o", name="a", tags={"a", "b"})
    new = obj.update(
        add={"count": 5, "tags": {"c"}, "balance": Decimal("0.10")},
        append={"history": ["created"]},
        set={"data": {"n": 1}},
    )
    assert new == {
        "count": 5,
        "tags": {"a", "b", "c"},
        "balance": Decimal("0.10"),
        "history": ["created"],
        "data": {"n": 1},
    }
    obj.update(
        append={"history": ["more"]}, set={"data.n": 2}, remove=["balance"], discard={"tags": {"a"}}
    )
    assert obj.history == ["created", "more"] and obj.data == {"n": 2} and obj.balance is None
    assert obj.tags == {"b", "c"}
    assert dynamo_requests["UpdateItem"] == 2


def test_update_with_failed_condition_raises_never_a_silent_no_op(dynamo_db):
    obj = Account.objects.create(owner="o", name="a", size=1)
    with pytest.raises(ConditionFailed) as e:
        obj.update(add={"size": 1}, condition=Attr("size") > 5)
    assert e.value.item.size == 1
    assert Account.objects.get(owner="o", name="a").size == 1


def test_update_upsert_creates_a_counter(dynamo_db):
    counter = Account(owner="o", name="hits")
    assert counter.update(add={"count": 1}, upsert=True) == {"count": 1}
    assert counter.update(add={"count": 1}, upsert=True) == {"count": 2}


def test_keys_cannot_be_updated_and_none_removes(dynamo_db, dynamo_requests):
    obj = Account(owner="o", name="a")
    with pytest.raises(models.ValidationError, match="part of the key"):
        obj.update(set={"name": "b"})
    with pytest.raises(models.ValidationError, match="not null=True"):
        obj.update(set={"size": None})
    assert dynamo_requests.total == 0


def test_delete_with_condition(dynamo_db, dynamo_requests):
    obj = Account.objects.create(owner="o", name="a", status="open")
    with pytest.raises(ConditionFailed):
        obj.delete(condition=Attr("status") == "closed")
    obj.delete(condition=Attr("status").is_in(["open", "closed"]))
    Account(owner="o", name="never").delete()  # deleting nothing is not an error
    assert dynamo_requests["DeleteItem"] == 3


def test_conditions_combine(dynamo_db):
    obj = Account.objects.create(owner="o", name="a", size=3, tags={"x"})
    ok = (Attr("size").between(1, 5) & Attr("tags").contains("x")) | ~Attr("status").exists()
    obj.save(condition=ok & (Attr("tags").size() == 1) & Attr("name").begins_with("a"))
    with pytest.raises(ConditionFailed):
        obj.save(condition=Attr("data").exists())
    with pytest.raises(TypeError, match="truth value"):
        bool(Attr("size") == 1)


def test_transactions_collect_the_same_writes_without_sending(dynamo_db, dynamo_requests):
    obj = Account(owner="o", name="a")
    counter = Account(owner="o", name="counter")
    with dynamo_app.transaction() as tx:
        tx.save(obj, condition=Attr("status").not_exists())
        tx.update(counter, add={"count": 1}, upsert=True)
        assert dynamo_requests.total == 0
        put, update = (next(iter(action.values())) for action in map(_entry, tx.actions))
        assert put["TableName"] == get_handle().table_name("account")
        assert put["ConditionExpression"] == "attribute_not_exists(#n0)"
        assert update["UpdateExpression"].endswith("ADD #n0 :v0")  # after the upsert's defaults
    assert dict(dynamo_requests) == {"TransactWriteItems": 1}
    assert Account.objects.get(owner="o", name="counter").count == 1
    assert Account.objects.get(owner="o", name="a").status == "open"


def _entry(action):
    return {action.kind: action.params}


def test_partial_instances_refuse_a_whole_item_save(dynamo_db):
    Account.objects.create(owner="o", name="a", status="open", size=5)
    obj = Account.objects.filter(owner="o").only("size").first()
    assert obj.status == "open"  # not read: the default, not the stored value
    with pytest.raises(WriteError, match="only some attributes"):
        obj.save()
    obj.size = 6
    obj.save(update_fields=["size"])
    assert Account.objects.get(owner="o", name="a").status == "open"


def test_a_copied_or_pickled_instance_keeps_its_own_item_state(dynamo_db):
    """What an instance read (partial, extra attributes) travels with a copy, but a
    write through the copy does not change what the original knows."""
    Account.objects.create(owner="o", name="a", status="open", size=5)
    obj = Account.objects.filter(owner="o").only("size").first()
    for clone in (copy.copy(obj), pickle.loads(pickle.dumps(obj))):
        with pytest.raises(WriteError, match="only some attributes"):
            clone.save()
    full = Account.objects.get(owner="o", name="a")
    clone = copy.copy(full)
    clone.size = 6
    clone.save()
    assert clone._state.stored["size"] == {"N": "6"}
    assert full._state.stored["size"] == {"N": "5"}  # what the original read


# --- batches -----------------------------------------------------------------------


def test_bulk_save_chunks_25_and_bulk_get_keeps_callers_order(dynamo_db, dynamo_requests):
    Account.objects.bulk_save(Account(owner="o", name=f"n{i:03}", size=i) for i in range(60))
    assert dynamo_requests["BatchWriteItem"] == 3
    keys = [("o", f"n{i:03}") for i in range(149, -1, -1)] + [{"owner": "o", "name": "n005"}]
    got = Account.objects.bulk_get(keys)
    assert dynamo_requests["BatchGetItem"] == 2  # 150 distinct keys: 100 + 50
    assert [g.size if g else None for g in got] == [None] * 90 + list(range(59, -1, -1)) + [5]


def test_bulk_save_validates_everything_first(dynamo_db, dynamo_requests):
    objs = [Account(owner="o", name="good"), Account(owner="o", name="bad", size="x")]
    with pytest.raises(models.ValidationError):
        Account.objects.bulk_save(objs)
    assert dynamo_requests.total == 0


def test_bulk_save_same_key_twice_last_wins_and_bulk_delete(dynamo_db, dynamo_requests):
    Account.objects.bulk_save(
        [Account(owner="o", name="a", size=1), Account(owner="o", name="a", size=2)]
    )
    assert Account.objects.get(owner="o", name="a").size == 2
    Account.objects.bulk_delete([("o", "a"), Account(owner="o", name="b")])
    assert Account.objects.bulk_get([("o", "a")]) == [None]


def _throttle_batches(monkeypatch, rounds):
    """Make DynamoDB leave half of every batch unprocessed for ``rounds`` calls."""
    handle = get_handle()
    real_call = handle.call
    state = {"left": rounds, "sleeps": []}

    def call(operation, **params):
        if operation in ("batch_write_item", "batch_get_item") and state["left"] > 0:
            state["left"] -= 1
            ((table, entries),) = params["RequestItems"].items()
            if operation == "batch_write_item":
                half, rest = entries[: len(entries) // 2], entries[len(entries) // 2 :]
                real_call(operation, RequestItems={table: half})
                return {"UnprocessedItems": {table: rest}}
            keys = entries["Keys"]
            response = real_call(
                operation, RequestItems={table: {**entries, "Keys": keys[: len(keys) // 2]}}
            )
            response["UnprocessedKeys"] = {table: {**entries, "Keys": keys[len(keys) // 2 :]}}
            return response
        return real_call(operation, **params)

    monkeypatch.setattr(handle, "call", call)
    monkeypatch.setattr(handle.retry, "sleep", state["sleeps"].append)
    return state


def test_unprocessed_items_and_keys_are_retried_with_backoff(dynamo_db, monkeypatch):
    state = _throttle_batches(monkeypatch, rounds=3)
    Account.objects.bulk_save(Account(owner="o", name=f"n{i}") for i in range(8))
    got = Account.objects.bulk_get(("o", f"n{i}") for i in range(8))
    assert all(got)
    assert len(state["sleeps"]) == 3


def test_batch_gives_up_with_what_was_not_written(dynamo_db, monkeypatch):
    handle = get_handle()
    monkeypatch.setattr(handle.retry, "sleep", lambda s: None)
    real_call = handle.call

    def never(operation, **params):
        if operation == "batch_write_item":
            return {"UnprocessedItems": params["RequestItems"]}
        return real_call(operation, **params)

    monkeypatch.setattr(handle, "call", never)
    with pytest.raises(BatchIncomplete) as e:
        Account.objects.bulk_save([Account(owner="o", name="a")])
    assert e.value.unprocessed == [{"owner": "o", "name": "a"}]


def test_paginate_follows_every_page_one_request_each(dynamo_db):
    Account.objects.bulk_save(Account(owner="o", name=f"p{i}") for i in range(5))
    table = dynamo_db.table_name(Account._meta.table_name)
    with count_requests() as counter:
        pages = list(dynamo_db.paginate("scan", TableName=table, Limit=2))
    names = sorted(item["name"]["S"] for page in pages for item in page["Items"])
    assert names == [f"p{i}" for i in range(5)]
    assert len(pages) >= 3 and counter["Scan"] == len(pages) and counter.total == len(pages)


def test_paginate_follows_list_tables_pages(dynamo_db):
    everything, start = [], {}  # by hand: a worker's server may hold over 100 (one page)
    while True:
        page = dynamo_db.call("list_tables", **start)
        everything += page["TableNames"]
        if "LastEvaluatedTableName" not in page:
            break
        start = {"ExclusiveStartTableName": page["LastEvaluatedTableName"]}
    assert len(everything) >= 2
    with count_requests() as counter:
        pages = list(dynamo_db.paginate("list_tables", Limit=1))
    assert [name for page in pages for name in page["TableNames"]] == everything
    assert counter["ListTables"] == len(pages) >= len(everything)


def new_item_state():
    return ItemState.__new__(ItemState)


class OldItemState:
    """Pickles as an item state of 0.1.0 did: its three slots, no ``raw``."""

    def __init__(self, state):
        self.state = state

    def __reduce_ex__(self, protocol):
        slots = {name: getattr(self.state, name) for name in ("stored", "partial", "extra")}
        return new_item_state, (), (None, slots)


def test_an_instance_pickled_before_raw_existed_still_saves(dynamo_db):
    """A cached instance from an earlier release carries no ``_state.raw``: it
    unpickles as not raw, and its save writes, rather than an AttributeError."""
    Account.objects.create(owner="o", name="a", status="open", size=5)
    obj = Account.objects.get(owner="o", name="a")
    old = pickle.loads(pickle.dumps(obj))
    old._state = pickle.loads(pickle.dumps(OldItemState(obj._state)))
    assert old._state.raw is False
    old.size = 6
    old.save()
    assert Account.objects.get(owner="o", name="a").size == 6
