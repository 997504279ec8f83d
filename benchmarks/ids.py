"""10. IDs and hot keys: sequence numbers by cache size, one counter item vs K shards.

A ``Sequence`` reserves a block of ``cache`` numbers with one UpdateItem, so
the requests per 1,000 IDs are 1,000 / cache (rounded up); a ``ShardedCounter``
spends one UpdateItem per increment whatever K, and K items' reads per total.
The local server is one process with no partitions: it shows the request
economy, not DynamoDB's per-partition ceilings, which the notes work out.
"""

from __future__ import annotations

import time

from dynamo_app.counters import ShardedCounter
from dynamo_app.sequences import Sequence
from dynamo_app.testing import count_requests

from .common import Context, Section, load_average

CACHES = (1, 100, 65536)
SHARDS = 8
WCU_PER_PARTITION = 1000  # AWS's documented per-partition limits, per second
RCU_PER_PARTITION = 3000


def _ids(cache: int, count: int) -> tuple[float, int]:
    sequence = Sequence(f"bench_ids_{cache}", cache)
    with count_requests() as requests:
        start = time.perf_counter()
        for _ in range(count):
            sequence.next()
        seconds = time.perf_counter() - start
    return count / seconds, requests.total


def _increments(counter: ShardedCounter, count: int) -> tuple[float, int, int]:
    with count_requests() as requests:
        start = time.perf_counter()
        for _ in range(count):
            counter.add("team-1")
        seconds = time.perf_counter() - start
    with count_requests() as reads:
        assert counter.total("team-1", consistent=True) == count
    return count / seconds, requests.total, reads.total


def run(ctx: Context) -> Section:
    ids = 200 if ctx.quick else 2000
    increments = 100 if ctx.quick else 1000
    section = Section(
        "10. IDs and hot keys: sequence numbers by cache size; one counter item vs shards",
        ["what", "per second", "requests", "requests per 1,000"],
    )
    for cache in CACHES:
        rate, sent = _ids(cache, ids)
        row = [f"{ids:,} IDs, cache={cache}", f"{rate:,.0f}", str(sent)]
        section.rows.append([*row, f"{sent * 1000 / ids:,.1f}"])
    for shards in (1, SHARDS):
        counter = ShardedCounter(f"bench_views_{shards}", shards=shards)
        rate, sent, reads = _increments(counter, increments)
        row = [f"{increments:,} increments, {shards} shard(s)", f"{rate:,.0f}", str(sent)]
        section.rows.append([*row, f"{sent * 1000 / increments:,.0f}"])
        section.rows.append([f"its total ({shards} item(s) read)", "", f"{reads} BatchGetItem", ""])
    k = SHARDS
    section.notes += [
        f"One process, one thread, against the local server; load average {load_average()}.",
        "On DynamoDB: one item lives in one partition, which serves at most "
        f"{WCU_PER_PARTITION:,} write units and {RCU_PER_PARTITION:,} read units a second "
        "(AWS's documented per-partition limits). An increment of an item under 1 KB is one "
        f"write unit, so one counter item (or one sequence at cache=1) tops out near "
        f"{WCU_PER_PARTITION:,} increments (IDs) a second, however the table is provisioned.",
        f"{k} shards are {k} items with {k} partition key values, which DynamoDB places (and "
        f"splits hot partitions) independently: up to {k * WCU_PER_PARTITION:,} increments a "
        f"second. The price is on the read: a total reads {k} items in one BatchGetItem, "
        f"{k} x 0.5 = {k // 2} read units eventually consistent ({k} strongly consistent) "
        "where one item costs 0.5.",
        f"A sequence at cache=100 reserves 100 IDs per write unit: {WCU_PER_PARTITION:,} "
        f"reservations a second are {100 * WCU_PER_PARTITION:,} IDs; at cache=65536, a "
        "request per 65,536 IDs takes the counter item out of the hot path. The price: IDs "
        "not in creation order across processes, and gaps (a stopped process's unused block).",
    ]
    return section
