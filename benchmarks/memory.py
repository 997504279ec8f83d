"""5. Memory: iterating a query over a growing partition must not grow the client.

The items of one partition are read by iterating a QuerySet (DynamoDB's
1 MB pages, one Query each; the items are padded so that even the smaller
partition spans pages). tracemalloc measures the client's peak
allocation above what it held before; the server runs in another process,
so its memory (moto sorts the whole table per Query) is not counted.
"""

from __future__ import annotations

import gc
import tracemalloc

from dynamo_app.client.handle import get_handle
from dynamo_app.testing import count_requests

from .common import Context, Section
from .models import BenchItem, values

TEAM = "team-m"
BATCH = 25
# Characters added to each name: about 2,700 items per 1 MB page (--quick: 240).
PADDING = 200
QUICK_PADDING = 4_000


def fill(start: int, stop: int, pad: int) -> None:
    """Items ``start`` .. ``stop - 1`` of the partition, 25 per BatchWriteItem."""
    handle = get_handle()
    table = handle.table_name(BenchItem._meta.table_name)
    encode = BenchItem._meta.encode
    for first in range(start, stop, BATCH):
        requests = [
            {"PutRequest": {"Item": encode(BenchItem(**values(i, TEAM, pad=pad)))}}
            for i in range(first, min(first + BATCH, stop))
        ]
        handle.call("batch_write_item", RequestItems={table: requests})


def peak_growth() -> tuple[int, int, int]:
    """(items read, Query requests, peak bytes allocated above the start)."""
    gc.collect()
    tracemalloc.start()
    try:
        start, _ = tracemalloc.get_traced_memory()
        with count_requests() as counter:
            read = sum(1 for _ in BenchItem.objects.filter(team_id=TEAM))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return read, counter["Query"], peak - start


def run(ctx: Context) -> Section:
    sizes = (300, 1_200) if ctx.quick else (5_000, 50_000)
    section = Section(
        "5. Memory: iterating a query over one partition (client peak allocation, tracemalloc)",
        ["items", "Query requests", "peak growth MB", "x smallest"],
    )
    filled = 0
    first_peak = 0
    for n in sizes:
        fill(filled, n, QUICK_PADDING if ctx.quick else PADDING)
        filled = n
        read, pages, peak = peak_growth()
        assert read == n, f"read {read} of {n} items"
        first_peak = first_peak or peak
        section.rows.append(
            [f"{n:,}", str(pages), f"{peak / 2**20:.2f}", f"{peak / first_peak:.2f}x"]
        )
    section.notes.append(
        f"Target: flat ({sizes[1] // sizes[0]}x the items, peak growth about 1x): a page is "
        "decoded item by item and dropped before the next one is fetched."
    )
    return section
