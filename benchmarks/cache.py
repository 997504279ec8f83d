"""11. Django's cache framework: get, set and get_many(100), client CPU per call and
requests per call.

``dynamo_app.cache.DynamoCache`` against the DynamoDB cache backend on PyPI
(``django-dynamodb-cache``, a peer: installed by benchmarks/requirements.txt, its
row says "skipped" without it) on the same local server, and Django's database
cache on SQLite in memory. CPU time of this process (the server runs in its own);
every contender reads and writes the same small value.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import boto3
from django.core.cache.backends.base import BaseCache
from django.core.cache.backends.db import DatabaseCache
from django.core.management import call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext

from dynamo_app.cache import DynamoCache
from dynamo_app.client.handle import get_handle
from dynamo_app.testing import count_requests

from .common import SPREAD, Context, Section, load_average, measure

PEER = "django-dynamodb-cache"
SQL_TABLE = "bench_cache"
MANY = 100
VALUE = {"user": 42, "name": "Ann", "roles": ["staff", "editor"]}


class _PeerCalls:
    """Counts the peer's requests: botocore's event for each one sent."""

    def __init__(self, client: Any) -> None:
        self.total = 0
        client.meta.events.register("before-send.dynamodb", self._sent)

    def _sent(self, **kwargs: Any) -> None:
        self.total += 1


def _peer(url: str) -> tuple[BaseCache, _PeerCalls] | str:
    """django-dynamodb-cache's backend, its Table resource pointed at the local
    server (it otherwise picks AWS, or localhost:8000 under pytest)."""
    try:
        from django_dynamodb_cache.backend import DjangoCacheBackend
        from django_dynamodb_cache.dynamodb import create_table
    except ImportError:
        return f"{PEER} not installed"
    handle = get_handle()
    credentials = {"aws_access_key_id": "testing", "aws_secret_access_key": "testing"}
    options = {**credentials, "aws_region_name": handle.settings.region}
    peer = DjangoCacheBackend(f"bench-peer-{PEER}", {"OPTIONS": options})
    resource = boto3.resource(
        "dynamodb", endpoint_url=url, region_name=handle.settings.region, **credentials
    )
    peer.dynamodb = resource  # type: ignore[attr-defined]
    peer.table = create_table(peer.settings, resource)  # type: ignore[attr-defined]
    return peer, _PeerCalls(resource.meta.client)


def _database_cache() -> DatabaseCache:
    call_command("createcachetable", SQL_TABLE, verbosity=0)
    return DatabaseCache(SQL_TABLE, {})


def _work(cache: BaseCache, calls: int) -> dict[str, Callable[[], Any]]:
    keys = [f"k{i}" for i in range(MANY)]
    for key in keys:  # not set_many(): the peer's fails on keys that exist (see run())
        cache.set(key, VALUE, 3600)

    def get() -> None:
        for _ in range(calls):
            cache.get("k1")

    def set_() -> None:
        for _ in range(calls):
            cache.set("k1", VALUE, 3600)

    def get_many() -> None:
        for _ in range(max(1, calls // 10)):
            assert len(cache.get_many(keys)) == MANY

    return {"get": get, "set": set_, f"get_many({MANY})": get_many}


def _requests(cache: BaseCache, counted: Callable[[], int]) -> dict[str, int]:
    """Requests (or SQL queries) one call of each operation sends."""
    out = {}
    for name, work in _work(cache, 10).items():
        before = counted()
        work()
        out[name] = (counted() - before) // (1 if name.startswith("get_many") else 10)
    return out


def run(ctx: Context) -> Section:
    calls = 5 if ctx.quick else 50
    ours = DynamoCache("bench", {})
    contenders: dict[str, BaseCache] = {"DynamoCache": ours}
    peer = _peer(ctx.url)
    if not isinstance(peer, str):
        contenders[PEER] = peer[0]
    contenders["DatabaseCache (SQLite)"] = _database_cache()

    with count_requests() as counter:
        requests = {"DynamoCache": _requests(ours, lambda: counter.total)}
    if not isinstance(peer, str):
        calls_seen = peer[1]
        requests[PEER] = _requests(peer[0], lambda: calls_seen.total)
    with CaptureQueriesContext(connection) as queries:
        requests["DatabaseCache (SQLite)"] = _requests(
            contenders["DatabaseCache (SQLite)"], lambda: len(queries.captured_queries)
        )

    work = {name: _work(cache, calls) for name, cache in contenders.items()}
    names = list(contenders)
    others = names[1:]
    section = Section(
        "11. Cache: Django's cache API, client CPU per call and requests per call",
        [
            "operation",
            "DynamoCache: requests",
            "µs",
            *(f"{n}: {column}" for n in others for column in ("requests", "µs", "x DynamoCache")),
        ],
    )
    for operation in work["DynamoCache"]:
        timings = measure({n: work[n][operation] for n in names}, rounds=ctx.repeat)
        per_call = calls if operation in ("get", "set") else max(1, calls // 10)
        cpu = {n: f"{timings.median(n) / per_call * 1e6:.0f}" for n in names}
        section.rows.append(
            [
                operation,
                str(requests["DynamoCache"][operation]),
                cpu["DynamoCache"],
                *(
                    cell
                    for n in others
                    for cell in (
                        str(requests[n][operation]),
                        cpu[n],
                        timings.ratio(n, "DynamoCache"),
                    )
                ),
            ]
        )
    if isinstance(peer, str):
        install = "pip install -r benchmarks/requirements.txt"
        section.notes.append(f"{PEER}: skipped ({peer}; {install}).")
    section.notes += [
        f"CPU time of the client process per call, HTTP to the local server included (benchmark "
        f"2 replays responses instead), median of {ctx.repeat} interleaved rounds; in brackets "
        f"{SPREAD}. Load average {load_average()}.",
        "Requests: DynamoDB requests per call (DatabaseCache: SQL queries). DynamoCache's set is "
        f"one PutItem and get_many one BatchGetItem per 100 keys; {PEER}'s set reads first "
        "(GetItem, then PutItem or UpdateItem), its get_many is one GetItem per key, and it reads "
        "eventually consistently (DynamoCache: strongly). "
        f"{PEER}'s set_many() raises AttributeError ('BatchWriter' object has no attribute "
        "'update_item') when a key already exists, so every contender's keys are set one by one.",
    ]
    return section
