"""8. Async: 200 concurrent ``aget`` from one event loop against the local server.

Each row gathers N ``aget`` calls at once and times them against the same N
awaited one after another, counting the threads that sent the requests and
the connections urllib3 opened (and closed again because the pool was full).
The local server answers one request at a time, so there concurrency can only
overlap the client's own work; the second pair of columns adds a 10 ms round
trip per request (a ``before-send`` wait, as a client far from its region has),
where the number of requests in flight is what decides the time.
"""

from __future__ import annotations

import asyncio
import logging
import statistics
import threading
import time
from collections.abc import Callable, Coroutine
from typing import Any

from django.conf import settings
from django.test.utils import override_settings

from dynamo_app.client.handle import get_handle

from . import replay
from .common import Context, Section
from .models import BenchItem, item

ROUND_TRIP = 0.010
# (ASYNC_THREADS, MAX_IDLE_CONNS): the defaults, the event loop's executor on 2 cores
# with the old pool, and a larger pool for far regions.
CONFIGS = [(10, 10), (6, 4), (32, 32)]


class _Connections(logging.Handler):
    """urllib3's DEBUG/WARNING lines: connections opened, and closed for a full pool."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.opened = self.discarded = 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if message.startswith("Starting new HTTP"):
            self.opened += 1
        elif message.startswith("Connection pool is full"):
            self.discarded += 1


def _timed(run: Callable[[], Coroutine[Any, Any, Any]], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        asyncio.run(run())
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def run(ctx: Context) -> Section:
    n = 20 if ctx.quick else 200
    BenchItem.objects.bulk_save(item(i, "team-async") for i in range(n))
    keys = [{"team_id": "team-async", "item_id": item(i).item_id} for i in range(n)]

    async def sequential() -> None:
        for key in keys:
            await BenchItem.objects.aget(**key)

    async def gathered() -> None:
        await asyncio.gather(*(BenchItem.objects.aget(**key) for key in keys))

    section = Section(
        f"8. Async: {n} concurrent aget from one event loop vs one after another",
        [
            "ASYNC_THREADS",
            "MAX_IDLE_CONNS",
            "local: sequential ms",
            "gathered ms",
            "x sequential",
            "threads used",
            "connections opened / closed (pool full)",
            f"+{ROUND_TRIP * 1000:.0f} ms round trip: sequential ms",
            "gathered ms",
            "x sequential",
        ],
    )
    senders: set[int] = set()

    def seen(**kwargs: Any) -> None:
        senders.add(threading.get_ident())

    pool_log = logging.getLogger("urllib3.connectionpool")
    connections = _Connections()
    level = pool_log.level
    pool_log.addHandler(connections)
    pool_log.setLevel(logging.DEBUG)
    try:
        for threads, pool in CONFIGS[:2] if ctx.quick else CONFIGS:
            dynamo = {**settings.DYNAMO, "ASYNC_THREADS": threads, "MAX_IDLE_CONNS": pool}
            with override_settings(DYNAMO=dynamo):
                get_handle().client.meta.events.register("before-send.dynamodb", seen)
                asyncio.run(gathered())  # warm: threads started, connections opened
                local_seq = _timed(sequential, ctx.repeat)
                senders.clear()
                connections.opened = connections.discarded = 0
                local_gather = _timed(gathered, ctx.repeat)
                used, opened, discarded = len(senders), connections.opened, connections.discarded
                with replay.round_trip(get_handle().client, ROUND_TRIP):
                    far_seq = _timed(sequential, 1)
                    far_gather = _timed(gathered, ctx.repeat)
            section.rows.append(
                [
                    str(threads),
                    str(pool),
                    f"{local_seq * 1e3:.0f}",
                    f"{local_gather * 1e3:.0f}",
                    f"{local_gather / local_seq:.2f}x",
                    str(used),
                    f"{opened} / {discarded}",
                    f"{far_seq * 1e3:.0f}",
                    f"{far_gather * 1e3:.0f}",
                    f"{far_gather / far_seq:.2f}x",
                ]
            )
    finally:
        pool_log.removeHandler(connections)
        pool_log.setLevel(level)
    section.notes.append(
        "Wall time, median of the runs; threads used and connections counted over the "
        "gathered runs after a warm-up. (6, 4) is what the async API had before "
        "ASYNC_THREADS: the event loop's default executor on 2 cores and the old pool size. "
        f"With the round trip, {n} requests sent ASYNC_THREADS at a time cannot take less "
        f"than {n} / ASYNC_THREADS x {ROUND_TRIP * 1000:.0f} ms (200 ms at 10 threads)."
    )
    return section
