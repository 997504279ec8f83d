"""``CACHES = {"default": {"BACKEND": "dynamo_app.cache.DynamoCache"}}``: Django's
cache framework in DynamoDB, on the process handle (the ``DYNAMO`` section's client).

Every cache of a project shares the app-owned table ``dynamo_cache``::

    cache_name  S  partition key: the cache's LOCATION and a shard, "<LOCATION>#<n>"
    cache_key   S  sort key: the key as make_key() made it (KEY_PREFIX, VERSION)
    number      N  an int value, so incr()/decr() are one atomic UpdateItem ADD
    value       B  any other value, pickled (as Django's database cache stores it)
    expires_at  N  epoch seconds; absent = never. The table's TTL attribute

A cache is one partition per shard (``OPTIONS["SHARDS"]``, default 1): clear()
Queries its own partitions and deletes what it finds, never Scanning the table
nor touching another cache's keys. Caches with the same LOCATION share keys, as
Django's local-memory caches do.

One request per call: get, set, add, delete, touch, has_key, incr are one
GetItem / PutItem / DeleteItem / UpdateItem each; get_many is one BatchGetItem
per 100 keys, set_many / delete_many one BatchWriteItem per 25. Reads are
strongly consistent (a set is seen by the next get, on any process). TTL
deletes days late, so an expired item is never returned nor counted. A value
over DynamoDB's 400 KB item limit is refused (``ItemTooLarge``) before any
request. MAX_ENTRIES and culling do not apply: TTL bounds the table.
"""

from __future__ import annotations

import pickle
import time
import zlib
from collections.abc import Iterable, Iterator
from typing import Any, TypeGuard

from django.conf import settings
from django.core.cache.backends.base import DEFAULT_TIMEOUT, BaseCache
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import ngettext

from .app_tables import CACHE, CACHE_BACKEND, CACHE_EXPIRES, CACHE_KEY, CACHE_NAME
from .client import threads, wire
from .client.handle import Handle, get_handle
from .conf import require_installed
from .exceptions import (
    BatchIncomplete,
    CacheKeyError,
    ConditionFailed,
    ItemTooLarge,
    StoredValueError,
)
from .tables import registry

__all__ = ["DynamoCache", "register_table"]

NUMBER = "number"
VALUE = "value"
MAX_KEY_BYTES = 1024  # DynamoDB's limit for a sort key value
MAX_NAME_BYTES = 2000  # a partition key's limit is 2048; room for "#<shard>"
GET_CHUNK = 100  # BatchGetItem's limit
WRITE_CHUNK = 25  # BatchWriteItem's limit
MAX_NUMBER = 10**38  # DynamoDB numbers keep 38 digits: larger ints are pickled
OPTIONS = frozenset({"SHARDS"})
# Django's culling options: a DynamoDB table has no cheap count to cull by.
CULLING = ("MAX_ENTRIES", "CULL_FREQUENCY", "max_entries", "cull_frequency")
LIVE = "(attribute_not_exists(#e) OR #e > :now)"
_MISSING = object()


def register_table() -> None:
    """Declare the cache table so ``dynamo_migrate`` creates it (TTL on) and
    startup verifies it. Done at startup when a ``CACHES`` entry names
    ``DynamoCache`` (``app_tables``); a project whose backend subclasses it
    calls this from its ``AppConfig.ready()``."""
    registry.register(CACHE)


def _now() -> dict[str, str]:
    return {"N": f"{time.time():.3f}"}


def _live(item: dict[str, Any] | None) -> TypeGuard[dict[str, Any]]:
    """An item exists and has not expired: TTL deletes days late, so check."""
    if item is None:
        return False
    expires = item.get(CACHE_EXPIRES)
    return expires is None or float(expires["N"]) > time.time()


def _chunks(values: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


class DynamoCache(BaseCache):
    """Django's cache contract on one DynamoDB item per key."""

    pickle_protocol = pickle.HIGHEST_PROTOCOL

    def __init__(self, location: str, params: dict[str, Any]) -> None:
        options = params.get("OPTIONS", {})
        culling = [k for k in CULLING if k in params or k in options]
        if culling:
            raise ImproperlyConfigured(
                f"DynamoCache does not cull: remove {', '.join(culling)} from this CACHES "
                "entry. Expired items are deleted by the table's TTL, and the table has no "
                "size limit to keep under."
            )
        unknown = sorted(set(options) - OPTIONS)
        if unknown:
            raise ImproperlyConfigured(
                f"DynamoCache has no OPTIONS {unknown}: its only option is SHARDS "
                "(how many partitions the cache's keys are spread over, default 1)."
            )
        shards = options.get("SHARDS", 1)
        if isinstance(shards, bool) or not isinstance(shards, int) or shards < 1:
            raise ImproperlyConfigured(
                f"DynamoCache OPTIONS['SHARDS'] is {shards!r}: give a whole number, 1 or more."
            )
        if len(location.encode()) > MAX_NAME_BYTES:
            raise ImproperlyConfigured(
                f"DynamoCache LOCATION is {len(location.encode())} bytes: it names the cache "
                f"in the table's partition key, so keep it under {MAX_NAME_BYTES} bytes."
            )
        super().__init__(params)
        self.location = location
        self.shards = shards

    # --- keys and items -----------------------------------------------------------

    def _key(self, key: Any, version: int | None) -> str:
        """make_key() with Django's memcached warnings, then DynamoDB's own limits."""
        made: str = self.make_and_validate_key(key, version=version)
        size = len(made.encode())
        if not 0 < size <= MAX_KEY_BYTES:
            raise CacheKeyError(
                f"The cache key {made[:80]!r}{'...' if len(made) > 80 else ''} is {size} bytes; "
                f"DynamoDB stores keys of 1 to {MAX_KEY_BYTES} bytes (UTF-8). Hash long keys "
                "(e.g. hashlib.sha256) before caching under them."
            )
        return made

    def _partition(self, key: str) -> str:
        return self._shard(zlib.crc32(key.encode()) % self.shards if self.shards > 1 else 0)

    def _shard(self, number: int) -> str:
        """The partition key value of one of this cache's shards."""
        return f"{self.location}#{number}"

    def _wire_key(self, key: str) -> dict[str, Any]:
        return {CACHE_NAME: {"S": self._partition(key)}, CACHE_KEY: {"S": key}}

    def _expiry(self, timeout: Any) -> float | None:
        """Epoch seconds the value expires at; None = never."""
        expires: float | None = self.get_backend_timeout(timeout)
        return expires

    def _item(self, key: str, value: Any, expires: float | None) -> dict[str, Any]:
        item = self._wire_key(key)
        if type(value) is int and -MAX_NUMBER < value < MAX_NUMBER:
            item[NUMBER] = {"N": str(value)}
        else:
            item[VALUE] = {"B": pickle.dumps(value, self.pickle_protocol)}
        if expires is not None:
            item[CACHE_EXPIRES] = {"N": f"{expires:.3f}"}
        size = wire.item_size(item)
        if size > wire.MAX_ITEM_BYTES:  # moto accepts more: check it here
            raise ItemTooLarge(
                f"The value cached under {key!r} is {size} bytes stored, over DynamoDB's "
                "400 KB item limit; nothing was stored. Cache smaller pieces, or keep large "
                "data elsewhere (a file store) and cache its location."
            )
        return item

    def _value(self, item: dict[str, Any] | None) -> Any:
        """The value of a live item; ``_MISSING`` for none or an expired one."""
        if not _live(item):
            return _MISSING
        if NUMBER in item:
            return int(item[NUMBER]["N"])
        if VALUE in item:
            return pickle.loads(item[VALUE]["B"])
        raise StoredValueError(
            f"The item for cache key {item[CACHE_KEY]['S']!r} in table "
            f"{self._table(get_handle())!r} has neither a {NUMBER!r} nor a {VALUE!r} "
            "attribute: it was not written by DynamoCache. Delete it."
        )

    def _table(self, handle: Handle) -> str:
        return handle.table_name(CACHE.declared_name)

    def _call(self, operation: str, key: str, **params: Any) -> dict[str, Any]:
        """One request on the item of ``key`` (a made key)."""
        handle = get_handle()
        return handle.call(
            operation,
            TableName=self._table(handle),
            Key=self._wire_key(key),
            **params,
        )

    # --- single keys ----------------------------------------------------------------

    def get(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        item = self._call("get_item", self._key(key, version), ConsistentRead=True).get("Item")
        value = self._value(item)
        return default if value is _MISSING else value

    def has_key(self, key: Any, version: int | None = None) -> bool:
        made = self._key(key, version)
        response = self._call(
            "get_item",
            made,
            ConsistentRead=True,
            ProjectionExpression="#k, #e",
            ExpressionAttributeNames={"#k": CACHE_KEY, "#e": CACHE_EXPIRES},
        )
        return _live(response.get("Item"))

    def set(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        made = self._key(key, version)
        expires = self._expiry(timeout)
        if expires is not None and expires <= time.time():
            self._call("delete_item", made)  # a timeout of 0 or less: not cached at all
            return
        item = self._item(made, value, expires)
        handle = get_handle()
        handle.call("put_item", TableName=self._table(handle), Item=item)

    def add(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        """One PutItem conditioned on no live item: no read first."""
        item = self._item(self._key(key, version), value, self._expiry(timeout))
        handle = get_handle()
        try:
            handle.call(
                "put_item",
                TableName=self._table(handle),
                Item=item,
                ConditionExpression=f"attribute_not_exists(#k) OR NOT {LIVE}",
                ExpressionAttributeNames={"#k": CACHE_KEY, "#e": CACHE_EXPIRES},
                ExpressionAttributeValues={":now": _now()},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ConditionFailed:
            return False
        return True

    def touch(self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None) -> bool:
        made = self._key(key, version)
        expires = self._expiry(timeout)
        values = {":now": _now()}
        if expires is None:
            update = "REMOVE #e"
        else:
            update = "SET #e = :e"
            values[":e"] = {"N": f"{expires:.3f}"}
        try:
            self._call(
                "update_item",
                made,
                UpdateExpression=update,
                ConditionExpression=f"attribute_exists(#k) AND {LIVE}",
                ExpressionAttributeNames={"#k": CACHE_KEY, "#e": CACHE_EXPIRES},
                ExpressionAttributeValues=values,
            )
        except ConditionFailed:
            return False
        return True

    def delete(self, key: Any, version: int | None = None) -> bool:
        try:
            self._call(
                "delete_item",
                self._key(key, version),
                ConditionExpression="attribute_exists(#k)",
                ExpressionAttributeNames={"#k": CACHE_KEY},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ConditionFailed:
            return False
        return True

    def incr(self, key: Any, delta: int = 1, version: int | None = None) -> Any:
        """One UpdateItem ADD on an int value, atomic across processes. A value
        stored pickled (a float, a bool, an int past 38 digits) is added to as
        Django's base class does, then written only if unchanged meanwhile."""
        if type(delta) is not int:
            raise TypeError(f"DynamoCache.incr() and decr() add whole numbers, not {delta!r}.")
        made = self._key(key, version)
        while True:
            try:
                response = self._call(
                    "update_item",
                    made,
                    UpdateExpression="ADD #n :d",
                    ConditionExpression=f"attribute_exists(#n) AND {LIVE}",
                    ExpressionAttributeNames={"#n": NUMBER, "#e": CACHE_EXPIRES},
                    ExpressionAttributeValues={":d": {"N": str(delta)}, ":now": _now()},
                    ReturnValues="UPDATED_NEW",
                    ReturnValuesOnConditionCheckFailure="ALL_OLD",
                )
                return int(response["Attributes"][NUMBER]["N"])
            except ConditionFailed as exc:
                item = exc.raw_item
            if not _live(item):
                raise ValueError(f"Key {key!r} not found")
            if NUMBER in item:
                continue  # a number again since the ADD was refused: ADD to it
            new = self._value(item) + delta  # a TypeError where Django's raises one (None, a str)
            if self._replace(made, item, new):
                return new

    def _replace(self, key: str, item: dict[str, Any], value: Any) -> bool:
        """Put ``value`` under ``key`` if its pickled value is still ``item``'s,
        keeping its expiry; False if it changed meanwhile."""
        expires = item.get(CACHE_EXPIRES)
        handle = get_handle()
        try:
            handle.call(
                "put_item",
                TableName=self._table(handle),
                Item=self._item(key, value, float(expires["N"]) if expires else None),
                ConditionExpression="#v = :old",
                ExpressionAttributeNames={"#v": VALUE},
                ExpressionAttributeValues={":old": item[VALUE]},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ConditionFailed:
            return False
        return True

    # --- many keys ------------------------------------------------------------------

    def get_many(self, keys: Iterable[Any], version: int | None = None) -> dict[Any, Any]:
        """One strongly consistent BatchGetItem per 100 keys; unprocessed keys again."""
        made = {self._key(key, version): key for key in keys}
        if not made:
            return {}
        handle = get_handle()
        table = self._table(handle)
        found: dict[str, Any] = {}

        def incomplete(remainder: dict[str, Any], rounds: int) -> BatchIncomplete:
            left = [made[k[CACHE_KEY]["S"]] for k in remainder[table]["Keys"]]
            return _stalled("get_many()", table, left, rounds, "nothing is returned. Not read")

        for chunk in _chunks(list(made), GET_CHUNK):
            request = {table: {"Keys": [self._wire_key(k) for k in chunk], "ConsistentRead": True}}
            for response in handle.until_processed("batch_get_item", request, incomplete):
                for item in response.get("Responses", {}).get(table, []):
                    value = self._value(item)
                    if value is not _MISSING:
                        found[item[CACHE_KEY]["S"]] = value
        return {key: found[k] for k, key in made.items() if k in found}

    def set_many(
        self, data: dict[Any, Any], timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> list[Any]:
        """Every value pickled and sized before the first request; one
        BatchWriteItem per 25. Returns the keys DynamoDB kept leaving unprocessed
        (throttling), as Django's contract has it; the rest are written."""
        made = {self._key(key, version): key for key in data}
        expires = self._expiry(timeout)
        if expires is not None and expires <= time.time():
            self._delete_many(made)
            return []
        items = {k: self._item(k, data[key], expires) for k, key in made.items()}
        requests = {k: {"PutRequest": {"Item": item}} for k, item in items.items()}
        return [made[k] for k in self._write(requests, "set_many()", stop=False)]

    def delete_many(self, keys: Iterable[Any], version: int | None = None) -> None:
        self._delete_many({self._key(key, version): key for key in keys})

    def _delete_many(self, made: dict[str, Any]) -> None:
        requests = {k: {"DeleteRequest": {"Key": self._wire_key(k)}} for k in made}
        self._write(requests, "delete_many()", stop=True)

    def _write(self, requests: dict[str, dict[str, Any]], what: str, *, stop: bool) -> list[str]:
        """Send ``requests`` (made key -> PutRequest / DeleteRequest) in
        BatchWriteItems of 25, each one's unprocessed remainder again with backoff.
        Return the keys left unprocessed; with ``stop``, raise for them instead
        (a delete that did not happen must not pass silently)."""
        handle = get_handle()
        table = self._table(handle)
        failed: list[str] = []

        def incomplete(remainder: dict[str, Any], rounds: int) -> BatchIncomplete:
            left = [_request_key(r) for r in remainder[table]]
            done = "the other keys are done. Not done (safe to send again)"
            return _stalled(what, table, left, rounds, done)

        for chunk in _chunks(list(requests), WRITE_CHUNK):
            request = {table: [requests[k] for k in chunk]}
            try:
                for _ in handle.until_processed("batch_write_item", request, incomplete):
                    pass
            except BatchIncomplete as exc:
                if stop:
                    raise
                failed += exc.unprocessed
        return failed

    def clear(self) -> None:
        """Delete this cache's keys: one Query page per MB of its items (per
        shard), one BatchWriteItem per 25 keys. Other caches' keys are not read."""
        handle = get_handle()
        table = self._table(handle)
        for shard in range(self.shards):
            pages = handle.paginate(
                "query",
                TableName=table,
                KeyConditionExpression="#p = :p",
                ProjectionExpression="#k",
                ExpressionAttributeNames={"#p": CACHE_NAME, "#k": CACHE_KEY},
                ExpressionAttributeValues={":p": {"S": self._shard(shard)}},
            )
            for page in pages:
                self._delete_many({item[CACHE_KEY]["S"]: None for item in page.get("Items", [])})

    # --- async: the same requests, in the app's thread pool (dynamo_app.client.threads) -----

    async def aget(self, key: Any, default: Any = None, version: int | None = None) -> Any:
        return await threads.in_thread(self.get)(key, default, version)

    async def ahas_key(self, key: Any, version: int | None = None) -> bool:
        return await threads.in_thread(self.has_key)(key, version)

    async def aset(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> None:
        await threads.in_thread(self.set)(key, value, timeout, version)

    async def aadd(
        self, key: Any, value: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        return await threads.in_thread(self.add)(key, value, timeout, version)

    async def atouch(
        self, key: Any, timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> bool:
        return await threads.in_thread(self.touch)(key, timeout, version)

    async def adelete(self, key: Any, version: int | None = None) -> bool:
        return await threads.in_thread(self.delete)(key, version)

    async def aincr(self, key: Any, delta: int = 1, version: int | None = None) -> Any:
        return await threads.in_thread(self.incr)(key, delta, version)

    async def aget_many(self, keys: Iterable[Any], version: int | None = None) -> dict[Any, Any]:
        return await threads.in_thread(self.get_many)(keys, version)

    async def aset_many(
        self, data: dict[Any, Any], timeout: Any = DEFAULT_TIMEOUT, version: int | None = None
    ) -> list[Any]:
        return await threads.in_thread(self.set_many)(data, timeout, version)

    async def adelete_many(self, keys: Iterable[Any], version: int | None = None) -> None:
        await threads.in_thread(self.delete_many)(keys, version)

    async def aclear(self) -> None:
        await threads.in_thread(self.clear)()


def _stalled(what: str, table: str, left: list[Any], rounds: int, outcome: str) -> BatchIncomplete:
    """A batch whose ``left`` keys DynamoDB kept leaving unprocessed."""
    return BatchIncomplete(
        f"{what} on {table!r}: {len(left)} {ngettext('key', 'keys', len(left))} still "
        f"unprocessed after {rounds} rounds "
        f"without progress (DynamoDB was throttling); {outcome}: {left[:10]}",
        unprocessed=left,
    )


def _request_key(request: dict[str, Any]) -> str:
    """The made key of a BatchWriteItem's PutRequest or DeleteRequest."""
    if "PutRequest" in request:
        return str(request["PutRequest"]["Item"][CACHE_KEY]["S"])
    return str(request["DeleteRequest"]["Key"][CACHE_KEY]["S"])


if settings.configured and any(
    c.get("BACKEND") == CACHE_BACKEND for c in getattr(settings, "CACHES", {}).values()
):
    require_installed(f"CACHES with BACKEND {CACHE_BACKEND!r}")
