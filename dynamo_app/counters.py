"""``ShardedCounter``: a hot counter spread over K items, so no one partition takes every write.

DynamoDB serves one partition at up to 1,000 write units and 3,000 read units
a second; a counter kept in one item (a page's views) is one partition's worth
however large the table. A ``ShardedCounter`` keeps each counted thing in
``shards`` items of the app table ``dynamo_counters``::

    counter_id  S  partition key: "<counter name>#<key>#<shard>"
    value       N  the shard's part of the count

``add()`` is one UpdateItem ADD on a shard picked at random (K items, so K
times the write ceiling), never a read; ``total()`` reads the K items with one
BatchGetItem and sums them (K items' read units: the price of the spread).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from typing import Any

from django.utils.translation import ngettext

from . import app_tables
from .app_tables import COUNTER_ID, COUNTER_VALUE, COUNTERS
from .client.handle import get_handle
from .exceptions import BatchIncomplete
from .tables import registry

__all__ = ["ShardedCounter"]

MAX_SHARDS = 100  # BatchGetItem's limit: one total is one request
MAX_ID_BYTES = 2048  # DynamoDB's limit for a partition key value


class ShardedCounter:
    """``PAGE_VIEWS = ShardedCounter("page_views", shards=8)`` in ``models.py``;
    ``PAGE_VIEWS.add(team_id)``, ``PAGE_VIEWS.total(team_id)``."""

    def __init__(self, name: str, *, shards: int = 8) -> None:
        if not name or "#" in name:
            raise ValueError(f"ShardedCounter name {name!r}: give a non-empty name without '#'.")
        if isinstance(shards, bool) or not isinstance(shards, int) or not 1 <= shards <= MAX_SHARDS:
            raise ValueError(
                f"ShardedCounter {name!r}: shards={shards!r}; give a whole number from 1 to "
                f"{MAX_SHARDS} (a total reads every shard with one BatchGetItem of at most 100)."
            )
        self.name = name
        self.shards = shards
        app_tables.counters_declared.add(name)
        if COUNTERS.declared_name not in registry:
            registry.register(COUNTERS)

    def __repr__(self) -> str:
        return f"<ShardedCounter {self.name!r} shards={self.shards}>"

    def _id(self, key: Any, shard: int) -> dict[str, dict[str, str]]:
        counter_id = f"{self.name}#{key}#{shard}"
        if len(counter_id.encode()) > MAX_ID_BYTES:
            raise ValueError(
                f"ShardedCounter {self.name!r}: the key {str(key)[:80]!r} is too long; "
                f"'<name>#<key>#<shard>' must fit DynamoDB's {MAX_ID_BYTES}-byte key."
            )
        return {COUNTER_ID: {"S": counter_id}}

    def add(self, key: Any, amount: int = 1) -> None:
        """Add ``amount`` to ``key``'s count: one UpdateItem ADD on a random shard.
        Not repeated when its answer is lost (``OutcomeUnknown``): it may have counted."""
        if isinstance(amount, bool) or not isinstance(amount, int):
            raise TypeError(f"ShardedCounter {self.name!r} adds whole numbers, not {amount!r}.")
        shard = self._id(key, random.randrange(self.shards))
        handle = get_handle()
        handle.call(
            "update_item",
            TableName=handle.table_name(COUNTERS.declared_name),
            Key=shard,
            UpdateExpression="ADD #v :n",
            ExpressionAttributeNames={"#v": COUNTER_VALUE},
            ExpressionAttributeValues={":n": {"N": str(amount)}},
        )

    def total(self, key: Any, *, consistent: bool = False) -> int:
        """``key``'s count: its shards read with one BatchGetItem, summed."""
        return self.totals([key], consistent=consistent)[key]

    def totals(self, keys: Iterable[Any], *, consistent: bool = False) -> dict[Any, int]:
        """Each key's count (0 if never added to): one BatchGetItem per 100 shards,
        so a page of ``100 // shards`` keys is one request."""
        wanted = {
            self._id(key, n)[COUNTER_ID]["S"]: key for key in keys for n in range(self.shards)
        }
        found = dict.fromkeys(wanted.values(), 0)
        handle = get_handle()
        table = handle.table_name(COUNTERS.declared_name)
        ids = list(wanted)

        def incomplete(remainder: dict[str, Any], rounds: int) -> BatchIncomplete:
            left = [k[COUNTER_ID]["S"] for k in remainder[table]["Keys"]]
            return BatchIncomplete(
                f"ShardedCounter {self.name!r} on {table!r}: {len(left)} "
                f"{ngettext('shard', 'shards', len(left))} still "
                f"unread after {rounds} rounds (DynamoDB was throttling); no total is "
                f"returned: {left[:10]}",
                unprocessed=left,
            )

        for start in range(0, len(ids), MAX_SHARDS):
            batch = [{COUNTER_ID: {"S": i}} for i in ids[start : start + MAX_SHARDS]]
            request = {table: {"Keys": batch, "ConsistentRead": consistent}}
            for response in handle.until_processed("batch_get_item", request, incomplete):
                for item in response.get("Responses", {}).get(table, []):
                    found[wanted[item[COUNTER_ID]["S"]]] += int(item[COUNTER_VALUE]["N"])
        return found
