"""7. Data in and out: dynamo_dump / dynamo_load throughput and request economy.

A table of the typical item (plain: batches) and one of players with a unique
constraint (each item with its lock in transactions) are filled, dumped to
memory (one Scan segment, then four in threads), emptied and loaded back; the
items must come back the same. Wall time on the local server, whose one lock
serialises requests: the figures are the client's pace against moto, not
DynamoDB's.
"""

from __future__ import annotations

import io
import json
import time

from dynamo_app.client.handle import get_handle
from dynamo_app.data.dumpload import dump, load, record
from dynamo_app.deploy.schema import create_table
from dynamo_app.models import Model
from dynamo_app.tables import registry
from dynamo_app.testing import count_requests
from dynamo_app.unique import LOCK_TABLE

from .common import Context, Section
from .models import BenchItem, BenchPlayer, item


def _recreate(*declared: str) -> None:
    """Drop and create tables again: an empty table, whatever its size."""
    handle = get_handle()
    for name in declared:
        handle.call("delete_table", TableName=handle.table_name(name))
        definition = registry.get(name)
        assert definition is not None
        create_table(definition, handle=handle)


def _contents(model: type[Model]) -> list[str]:
    return sorted(json.dumps(record(obj), sort_keys=True) for obj in model.objects.scan())


def _per_thousand(counter: dict[str, int], items: int) -> str:
    return ", ".join(f"{n * 1000 / items:.0f} {op}" for op, n in sorted(counter.items()))


def run(ctx: Context) -> Section:
    items, players = (100, 50) if ctx.quick else (2_000, 500)
    section = Section(
        "7. Data in and out: dynamo_dump / dynamo_load on the local server",
        ["model", "items", "dump items/s (1 / 4 segments)", "load items/s", "requests per 1,000"],
    )
    BenchItem.objects.bulk_save(item(i, team=f"team-{i % 50}") for i in range(items))
    BenchPlayer.objects.bulk_save(
        BenchPlayer(team_id=f"team-{i % 50}", player_name="P", uniform_number=i)
        for i in range(players)
    )
    for model, tables in ((BenchItem, ()), (BenchPlayer, (LOCK_TABLE,))):
        before = _contents(model)  # with what earlier sections left in the table
        count = len(before)
        rates, counters = [], []
        for segments in (1, 4):
            out = io.StringIO()
            with count_requests() as counter:
                started = time.perf_counter()
                dump([model], out, segments=segments)
                rates.append(count / (time.perf_counter() - started))
            counters.append(counter)
        lines = out.getvalue().splitlines()
        _recreate(model._meta.table_name, *tables)
        with count_requests() as loaded:
            started = time.perf_counter()
            result = load(lines)
            load_rate = count / (time.perf_counter() - started)
        assert result.loaded + result.present == count, "the load left items out"
        assert _contents(model) == before, "the round trip changed items"
        section.rows.append(
            [
                model.__name__ + (" (unique)" if tables else ""),
                f"{count:,}",
                " / ".join(f"{r:,.0f}" for r in rates),
                f"{load_rate:,.0f}",
                f"dump: {_per_thousand(counters[0], count)}; load: {_per_thousand(loaded, count)}",
            ]
        )
    section.notes.append(
        "Dump: one Scan per 1,000 items (or per 1 MB), plus one DescribeTable only when "
        "progress is shown (not here). Load: one BatchWriteItem per 25 plain items; one "
        "TransactWriteItems per 50 items with a unique value (item + lock = 2 of 100 actions). "
        "Fewer players than items: moto copies a table for every transaction on it, so its "
        "transactions slow down as the table grows, which DynamoDB's do not."
    )
    return section
