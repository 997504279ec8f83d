"""4. Startup ``verify()`` of many tables against describing them one by one."""

from __future__ import annotations

import time

from dynamo_app.client.handle import get_handle
from dynamo_app.deploy import schema
from dynamo_app.tables import IndexDefinition, KeyAttribute, TableDefinition, registry
from dynamo_app.testing import create_tables

from . import replay
from .common import Context, Section, compare, ratio

ROUND_TRIP = 0.010  # seconds: a client outside the table's region


def definition(i: int) -> TableDefinition:
    return TableDefinition(
        declared_name=f"verify_{i:02d}",
        partition_key=KeyAttribute("pk", "S"),
        sort_key=KeyAttribute("sk", "N"),
        indexes=(IndexDefinition("by_owner", "global", KeyAttribute("owner", "S")),),
        owner="benchmarks.startup",
    )


def run(ctx: Context) -> Section:
    n = 10 if ctx.quick else 50
    handle = get_handle()
    others = registry.definitions()
    ours = [definition(i) for i in range(n)]
    for d in others:
        registry.unregister(d.declared_name)
    try:
        for d in ours:
            registry.register(d)
        create_tables()
        names = [handle.table_name(d.declared_name) for d in ours]

        def serial() -> None:
            for name in names:
                handle.call("describe_table", TableName=name)

        runs = {"verify()": schema.verify, "serial": serial}
        seconds = compare(runs, repeat=ctx.repeat, clock=time.perf_counter)
        with replay.round_trip(handle.client, ROUND_TRIP):
            far = compare(runs, repeat=ctx.repeat, clock=time.perf_counter)
    finally:
        for d in ours:
            registry.unregister(d.declared_name)
        for d in others:
            registry.register(d)
    section = Section(
        f"4. Startup: verify() of {n} registered tables vs {n} serial DescribeTable calls",
        [
            "",
            "local server: wall ms",
            "x serial",
            f"+{ROUND_TRIP * 1e3:.0f} ms round trip",
            "x serial",
        ],
    )
    for name in runs:
        section.rows.append(
            [
                name,
                f"{seconds[name] * 1e3:.1f}",
                ratio(seconds[name], seconds["serial"]),
                f"{far[name] * 1e3:.1f}",
                ratio(far[name], far["serial"]),
            ]
        )
    section.notes.append(
        f"Target <= 0.30x. verify() describes the tables on up to {schema.MAX_WORKERS} "
        "threads, and no more than DYNAMO['MAX_IDLE_CONNS']. The local server answers one "
        "request at a time and its own CPU dominates a DescribeTable, so on it threads can "
        "only overlap the client's work; with a network round trip "
        f"(simulated: each request waits {ROUND_TRIP * 1e3:.0f} ms before it is "
        "sent, as a client far from its region does) the overlap is what the target measures. "
        f"Median of {ctx.repeat} runs."
    )
    return section
