"""dynamo_app.cache.DynamoCache against the local server: Django's own cache
backend tests (``BaseCacheTests`` from the installed Django's test suite,
tests/django_suite.py), then what DynamoDB adds: one request per method,
batches, expiry that TTL has not applied yet, limits, clear() of one cache.

Of Django's tests, these do not run, each for its reason:

* ``test_cache_read_for_model_instance``, ``test_cache_write_for_model_instance_with_deferred``,
  ``test_cache_read_for_model_instance_with_deferred``: they save ``Poll``, a model of
  Django's own test app, in SQL; caching it is pickling it, as in ``test_data_types``.
* ``test_cull``, ``test_zero_cull``, ``test_cull_delete_when_store_empty``: DynamoCache
  does not cull (MAX_ENTRIES is refused; TTL bounds the table), so the ``cull`` caches
  are left out of the settings and Django's tests skip themselves ("Culling isn't
  implemented."), as they do for memcached.
"""

from __future__ import annotations

import json
import pickle
import time
import types
import unittest
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from asgiref.sync import async_to_sync
from django.core.cache import caches
from django.core.exceptions import ImproperlyConfigured
from django.test import TestCase, override_settings

from dynamo_app import app_tables, exceptions
from dynamo_app.app_tables import CACHE, CACHE_BACKEND
from dynamo_app.cache import DynamoCache
from dynamo_app.client.handle import get_handle
from dynamo_app.testing import count_requests
from tests.django_suite import load
from tests.schema_support import run
from tests.sessions_support import registered

# Django's test app's models need its SQL tables: the three tests that use them are skipped.
_models = types.ModuleType("cache.models")
_models.Poll = None  # type: ignore[attr-defined]
_models.expensive_calculation = None  # type: ignore[attr-defined]
django_tests = load("cache", stubs={"models": _models})

LOCATION = "django-tests"
CACHES = django_tests.caches_setting_for_tests(
    BACKEND=CACHE_BACKEND, LOCATION=LOCATION, exclude={"cull", "zero_cull"}
)
POLL = "needs Django's test app `cache` and its SQL table for Poll; pickled as any value"


@pytest.fixture(autouse=True, scope="module")
def cache_table(dynamo_server: Any) -> Iterator[None]:
    """The suite's settings name no DynamoCache, so startup did not register its
    table: registered here, before ``dynamo_db`` creates the tables. The run's
    server is started first, so that the settings the test class overrides
    already point at it."""
    with registered(CACHE):
        yield


@override_settings(CACHES=CACHES)
class DynamoCacheTests(django_tests.BaseCacheTests, TestCase):  # type: ignore[misc]
    @unittest.skip(POLL)
    def test_cache_read_for_model_instance(self) -> None: ...

    @unittest.skip(POLL)
    def test_cache_write_for_model_instance_with_deferred(self) -> None: ...

    @unittest.skip(POLL)
    def test_cache_read_for_model_instance_with_deferred(self) -> None: ...


# --- what DynamoDB adds ----------------------------------------------------------------


@pytest.fixture
def cache(dynamo_server: Any, request: pytest.FixtureRequest) -> Iterator[DynamoCache]:
    with override_settings(CACHES=CACHES):
        request.getfixturevalue("dynamo_db")
        yield caches["default"]


def sent(counter: Any) -> list[str]:
    return [r.operation for r in counter.requests]


def raw_item(key: str) -> dict[str, Any] | None:
    handle = get_handle()
    backend: DynamoCache = caches["default"]
    return handle.call(
        "get_item",
        TableName=handle.table_name(CACHE.declared_name),
        Key=backend._wire_key(backend.make_key(key)),
        ConsistentRead=True,
    ).get("Item")


def test_each_method_sends_one_request(cache: DynamoCache) -> None:
    def keys(n: int) -> list[str]:
        return [f"m{i}" for i in range(n)]

    def values(n: int) -> dict[str, int]:
        return {key: i for i, key in enumerate(keys(n))}

    run_async = async_to_sync
    get, batch_get, batch_write = ["GetItem"], ["BatchGetItem"], ["BatchWriteItem"]
    calls = [
        ("set", lambda: cache.set("k", "v"), ["PutItem"]),
        ("get", lambda: cache.get("k"), get),
        ("add", lambda: cache.add("k", "w"), ["PutItem"]),
        ("has_key", lambda: cache.has_key("k"), get),
        ("touch", lambda: cache.touch("k", 60), ["UpdateItem"]),
        ("set 0", lambda: cache.set("k", "v", 0), ["DeleteItem"]),
        ("set int", lambda: cache.set("n", 1), ["PutItem"]),
        ("incr", lambda: cache.incr("n"), ["UpdateItem"]),
        ("decr", lambda: cache.decr("n"), ["UpdateItem"]),
        ("incr missing", lambda: pytest.raises(ValueError, cache.incr, "nope"), ["UpdateItem"]),
        ("delete", lambda: cache.delete("n"), ["DeleteItem"]),
        ("get_many 100", lambda: cache.get_many(keys(100)), batch_get),
        ("get_many 101", lambda: cache.get_many(keys(101)), batch_get * 2),
        ("set_many 25", lambda: cache.set_many(values(25)), batch_write),
        ("set_many 26", lambda: cache.set_many(values(26)), batch_write * 2),
        ("delete_many", lambda: cache.delete_many(keys(25)), batch_write),
        ("get_many []", lambda: cache.get_many([]), []),
        ("set_many {}", lambda: cache.set_many({}), []),
        ("clear", cache.clear, ["Query", "BatchWriteItem"]),  # m25 was left
        ("aget", lambda: run_async(cache.aget)("k"), get),
        ("aincr", lambda: pytest.raises(ValueError, run_async(cache.aincr), "k"), ["UpdateItem"]),
        ("aget_many", lambda: run_async(cache.aget_many)(["a", "b"]), batch_get),
    ]
    for name, call, expected in calls:
        with count_requests() as counter:
            call()
        assert sent(counter) == expected, name


def test_ints_are_numbers_so_incr_is_one_atomic_add(cache: DynamoCache) -> None:
    cache.set("n", 41, 60)
    expires = raw_item("n")["expires_at"]  # type: ignore[index]
    assert raw_item("n")["number"] == {"N": "41"}  # type: ignore[index]
    assert cache.incr("n", 2) == 43 and cache.decr("n", 3) == 40
    assert raw_item("n")["expires_at"] == expires  # type: ignore[index]  # incr keeps it
    cache.set("b", True)
    cache.set("big", 10**40)
    assert "value" in raw_item("b") and "value" in raw_item("big")  # type: ignore[operator]
    assert cache.get("b") is True


def test_incr_adds_to_a_pickled_number_as_django_does(cache: DynamoCache) -> None:
    cache.set("f", 1.5)
    cache.set("big", 10**40)
    with count_requests() as counter:
        assert cache.incr("f") == 2.5
    assert sent(counter) == ["UpdateItem", "PutItem"]  # the ADD refused, then a conditional put
    assert cache.get("f") == 2.5
    assert cache.incr("big") == 10**40 + 1
    assert cache.get("big") == 10**40 + 1
    with pytest.raises(TypeError, match="whole numbers"):
        cache.incr("f", 0.5)  # type: ignore[arg-type]


def test_an_expired_item_ttl_has_not_deleted_is_never_returned(cache: DynamoCache) -> None:
    cache.set_many({"a": 1, "b": "x"})
    handle = get_handle()
    past = {"N": str(int(time.time()) - 10)}
    for key in ("a", "b"):  # as TTL leaves them, for days
        handle.call(
            "update_item",
            TableName=handle.table_name(CACHE.declared_name),
            Key=cache._wire_key(cache.make_key(key)),
            UpdateExpression="SET expires_at = :p",
            ExpressionAttributeValues={":p": past},
        )
    assert raw_item("a") is not None
    assert cache.get("a") is None and cache.get("b", "default") == "default"
    assert cache.get_many(["a", "b"]) == {}
    assert cache.has_key("a") is False and cache.touch("a") is False
    with pytest.raises(ValueError):
        cache.incr("a")
    with pytest.raises(ValueError):
        cache.incr("b")
    assert cache.add("a", 5) is True and cache.get("a") == 5


def test_clear_deletes_this_caches_keys_only(cache: DynamoCache) -> None:
    other = DynamoCache("other", {})
    sharded = DynamoCache(LOCATION + "-sharded", {"OPTIONS": {"SHARDS": 3}})
    cache.set_many({f"k{i}": i for i in range(30)})
    other.set("k1", "kept")
    sharded.set_many({f"s{i}": i for i in range(10)})
    partitions = {sharded._partition(sharded.make_key(f"s{i}")) for i in range(10)}
    assert len(partitions) == 3
    with count_requests() as counter:
        cache.clear()
    assert sent(counter) == ["Query", "BatchWriteItem", "BatchWriteItem"]
    assert cache.get_many([f"k{i}" for i in range(30)]) == {}
    assert other.get("k1") == "kept"
    with count_requests() as counter:
        sharded.clear()
    assert sent(counter).count("Query") == 3
    assert sharded.get_many([f"s{i}" for i in range(10)]) == {}


def test_values_are_pickled_in_binary(cache: DynamoCache) -> None:
    cache.set("d", {"a": [1, 2]})
    assert pickle.loads(raw_item("d")["value"]["B"]) == {"a": [1, 2]}  # type: ignore[index]


def test_a_value_over_the_item_limit_is_refused_before_any_request(cache: DynamoCache) -> None:
    cache.set("big", "old")
    with count_requests() as counter:
        with pytest.raises(exceptions.ItemTooLarge, match="'.*big' is .* bytes stored"):
            cache.set("big", "x" * 420_000)
        with pytest.raises(exceptions.ItemTooLarge):
            cache.set_many({"small": 1, "big": "x" * 420_000})
        with pytest.raises(exceptions.ItemTooLarge):
            cache.add("other", b"x" * 500_000)
    assert counter.total == 0
    assert cache.get("big") == "old" and cache.get("small") is None


def test_a_key_dynamodb_cannot_store_is_refused(cache: DynamoCache) -> None:
    with count_requests() as counter:
        with pytest.raises(exceptions.CacheKeyError, match="1 to 1024 bytes"):
            with pytest.warns(Warning):
                cache.get("k" * 1100)
    assert counter.total == 0
    with pytest.warns(Warning):  # Django's warning for memcached: over 250 characters
        cache.set("k" * 1000, 1)  # under the limit once made (":1:" + key)
        assert cache.get("k" * 1000) == 1


def test_set_many_returns_the_keys_dynamodb_kept_unprocessed(
    cache: DynamoCache, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Throttling is never produced locally: the handle's answers are altered."""
    handle = get_handle()
    real = handle.call
    table = handle.table_name(CACHE.declared_name)
    monkeypatch.setattr(handle.retry, "sleep", lambda seconds: None)

    def throttled(operation: str, **params: Any) -> dict[str, Any]:
        response = real(operation, **params)
        if operation == "batch_write_item":
            left = [r for r in params["RequestItems"][table] if "':1:b'" in str(r)]
            response["UnprocessedItems"] = {table: left} if left else {}
        return response

    monkeypatch.setattr(handle, "call", throttled)
    assert cache.set_many({"a": 1, "b": 2, "c": 3}) == ["b"]
    with pytest.raises(exceptions.BatchIncomplete, match="delete_many"):
        cache.delete_many(["a", "b"])


def test_options_are_checked() -> None:
    with pytest.raises(ImproperlyConfigured, match="MAX_ENTRIES"):
        DynamoCache("", {"OPTIONS": {"MAX_ENTRIES": 10}})
    with pytest.raises(ImproperlyConfigured, match="only option is SHARDS"):
        DynamoCache("", {"OPTIONS": {"SHARD": 2}})
    with pytest.raises(ImproperlyConfigured, match="SHARDS'] is 0"):
        DynamoCache("", {"OPTIONS": {"SHARDS": 0}})


def test_the_cache_table_is_needed_when_caches_name_the_backend() -> None:
    with override_settings(CACHES={"default": {"BACKEND": CACHE_BACKEND}}):
        assert CACHE in app_tables.needed()  # beside any other the process declared
    assert CACHE not in app_tables.needed()
    assert CACHE.ttl_attribute == "expires_at"


def test_the_cache_table_is_in_the_iac_output_and_the_iam_policy() -> None:
    template = yaml.safe_load(run("dynamo_plan", "--format", "cloudformation"))
    tables = {r["Properties"]["TableName"]: r["Properties"] for r in template["Resources"].values()}
    table = tables["test-dynamo_cache"]
    assert table["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert [k["AttributeName"] for k in table["KeySchema"]] == ["cache_name", "cache_key"]
    policy = json.loads(run("dynamo_plan", "--iam-policy"))
    items = next(s for s in policy["Statement"] if s["Sid"] == "DynamoAppItems")
    assert any(arn.endswith("table/test-dynamo_cache") for arn in items["Resource"])
