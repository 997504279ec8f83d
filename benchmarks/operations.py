"""2. Per-operation client cost: the app, the raw client and the peers, side by side.

Each row is one small function registered with ``@operation(name)``: given
the shared ``Clients``, it returns one callable per contender doing that
operation once. ``"raw"`` (required) is a stock boto3 client (botocore's own
retries off, as the app's) making the identical request with the hand-written
floor codec of benchmark 1; ``"dynamo_app"`` the app; the other keys are
peers (the boto3 ``Table`` resource, PynamoDB, dyntastic), left out where a
peer has no such operation. Every row also runs the app's call through a
handle with ``FAST_CLIENT`` off (``STOCK``): what the fast client path saves.

The primary figure is client CPU per operation with HTTP replaced by a replay
of the server's real responses (see ``replay.py``), measured interleaved
(``common.measure``); live wall times against the local server are printed
for the app and the raw client, and the requests each app call makes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import boto3
from botocore.config import Config

from dynamo_app.client.handle import Handle, get_handle, using
from dynamo_app.testing import count_requests
from dynamo_app.unique import LOCK_TABLE

from . import replay
from .codec import _plain, floor_decode, floor_encode
from .common import SPREAD, Context, Section, Timings, load_average, measure
from .models import BenchItem, BenchPlayer, item, values

TEAM = "team-1"
PAGE = 25
PEERS = ["boto3 Table resource"]
STOCK = "dynamo_app, FAST_CLIENT off"


@dataclass
class Clients:
    """What the rows share: the raw client, the peers' handles, table names, fresh keys."""

    raw: Any  # a stock boto3 client
    table: Any  # a boto3 Table resource of the benchmark table
    table_name: str
    players: str
    locks: str
    serial: Any  # fresh numbers, for creates

    def fresh(self) -> int:
        return next(self.serial)


Contenders = dict[str, Callable[[], Any]]
Row = Callable[[Clients], Contenders]
OPERATIONS: dict[str, Row] = {}  # filled by @operation


def operation(name: str) -> Callable[[Row], Row]:
    """Register a row: ``function(clients) -> {"raw": ..., "dynamo_app": ..., peer: ...}``."""

    def register(function: Row) -> Row:
        OPERATIONS[name] = function
        return function

    return register


def _resource_values(values: dict[str, Any]) -> dict[str, Any]:
    """The Table resource returns plain values: the datetime is the caller's to parse."""
    values["created"] = datetime.fromisoformat(values["created"])
    return values


@operation("get (GetItem)")
def get(c: Clients) -> Contenders:
    key = {"team_id": TEAM, "item_id": item(1).item_id}
    wire_key = {name: {"S": value} for name, value in key.items()}
    return {
        "raw": lambda: floor_decode(
            c.raw.get_item(TableName=c.table_name, Key=wire_key, ConsistentRead=False)["Item"]
        ),
        "dynamo_app": lambda: BenchItem.objects.get(**key),
        "boto3 Table resource": lambda: _resource_values(c.table.get_item(Key=key)["Item"]),
    }


@operation("put: save() (PutItem)")
def put(c: Clients) -> Contenders:
    saved, plain = item(1), _plain(values(1))
    resource_item = {**values(1), "created": values(1)["created"].isoformat()}
    return {
        "raw": lambda: c.raw.put_item(TableName=c.table_name, Item=floor_encode(plain)),
        "dynamo_app": saved.save,
        "boto3 Table resource": lambda: c.table.put_item(Item=resource_item),
    }


@operation("create: objects.create() (conditional PutItem)")
def create(c: Clients) -> Contenders:
    def raw() -> None:
        c.raw.put_item(
            TableName=c.table_name,
            Item=floor_encode(_plain(values(c.fresh(), "team-c"))),
            ConditionExpression="attribute_not_exists(#n0)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
            ExpressionAttributeNames={"#n0": "team_id"},
        )

    return {
        "raw": raw,
        "dynamo_app": lambda: BenchItem.objects.create(**values(c.fresh(), "team-c")),
    }


@operation("create with one unique constraint (TransactWriteItems)")
def create_unique(c: Clients) -> Contenders:
    def raw() -> None:
        number, team, player_id = str(c.fresh()), "team-u", str(uuid.uuid4())
        key = {"team_id": {"S": team}, "player_id": {"S": player_id}}
        canonical = str(Decimal(number).normalize())  # the lock's form of a number
        lock = ["bench_player", "uniform_number", [["S", team]], [["N", canonical]]]
        owner = {"player_id": ["S", player_id], "team_id": ["S", team]}
        player = {**key, "player_name": {"S": "Ann"}, "uniform_number": {"N": number}}
        c.raw.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": c.players,
                        "Item": player,
                        "ConditionExpression": "attribute_not_exists(#n0)",
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                        "ExpressionAttributeNames": {"#n0": "team_id"},
                    }
                },
                {
                    "Put": {
                        "TableName": c.locks,
                        "Item": {
                            "lock_id": {"S": json.dumps(lock, separators=(",", ":"))},
                            "constraint": {"S": "uniform_number"},
                            "model": {"S": BenchPlayer._meta.label},
                            "owner": {"S": json.dumps(owner, separators=(",", ":"))},
                            "owner_key": {"M": key},
                            "value": {"S": number},
                        },
                        "ConditionExpression": "attribute_not_exists(#id)",
                        "ExpressionAttributeNames": {"#id": "lock_id"},
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                    }
                },
            ],
            ClientRequestToken=uuid.uuid4().hex,
        )

    def app() -> None:
        BenchPlayer.objects.create(team_id="team-u", player_name="Ann", uniform_number=c.fresh())

    return {"raw": raw, "dynamo_app": app}


@operation(f"query: one {PAGE}-item page (Query)")
def query(c: Clients) -> Contenders:
    from boto3.dynamodb.conditions import Key

    def raw() -> list[Any]:
        response = c.raw.query(
            TableName=c.table_name,
            KeyConditionExpression="#n0 = :v0",
            ExpressionAttributeNames={"#n0": "team_id"},
            ExpressionAttributeValues={":v0": {"S": TEAM}},
            Limit=PAGE,
        )
        return [floor_decode(i) for i in response["Items"]]

    def resource() -> list[Any]:
        response = c.table.query(KeyConditionExpression=Key("team_id").eq(TEAM), Limit=PAGE)
        return [_resource_values(i) for i in response["Items"]]

    return {
        "raw": raw,
        "dynamo_app": lambda: BenchItem.objects.filter(team_id=TEAM).page(PAGE),
        "boto3 Table resource": resource,
    }


# --- the run


def _cell(cpu: Timings, who: str, n: int) -> str:
    return f"{cpu.median(who) / n * 1e6:.0f}, {cpu.ratio(who, 'raw')}"


def _times(function: Callable[[], Any], loops: int) -> Callable[[], None]:
    def run() -> None:
        for _ in range(loops):
            function()

    return run


def _through(handle: Handle, function: Callable[[], Any]) -> Callable[[], Any]:
    def call() -> Any:
        with using(handle):
            return function()

    return call


def seed() -> None:
    get_handle().call(
        "batch_write_item",
        RequestItems={
            get_handle().table_name(BenchItem._meta.table_name): [
                {"PutRequest": {"Item": BenchItem._meta.encode(item(i))}} for i in range(PAGE + 1)
            ]
        },
    )


def run(ctx: Context) -> Section:
    seed()
    handle = get_handle()
    session = boto3.session.Session(
        aws_access_key_id=handle.settings.access_key_id,
        aws_secret_access_key=handle.settings.secret_access_key.reveal(),
        region_name=handle.settings.region,
    )
    config = Config(retries={"total_max_attempts": 1, "mode": "standard"})
    raw = session.client("dynamodb", endpoint_url=handle.endpoint_url, config=config)
    resource = session.resource("dynamodb", endpoint_url=handle.endpoint_url, config=config)
    table_name = handle.table_name(BenchItem._meta.table_name)
    clients = Clients(
        raw=raw,
        table=resource.Table(table_name),
        table_name=table_name,
        players=handle.table_name(BenchPlayer._meta.table_name),
        locks=handle.table_name(LOCK_TABLE),
        serial=iter(range(10_000_000, 20_000_000)),
    )
    stock = Handle(dataclasses.replace(handle.settings, fast_client=False))
    rows = {name: make(clients) for name, make in OPERATIONS.items()}
    for contenders in rows.values():
        contenders[STOCK] = _through(stock, contenders["dynamo_app"])
    loops = 20 if ctx.quick else 200
    rounds = ctx.repeat

    counts = {}
    with replay.record(handle.client) as responses:
        for name, contenders in rows.items():
            with count_requests() as counter:
                contenders["dynamo_app"]()
            counts[name] = ", ".join(f"{n} {op}" for op, n in counter.items())

    peers = [p for p in PEERS if any(p in contenders for contenders in rows.values())]
    section = Section(
        "2. Per-operation client cost: dynamo_app, the raw boto3 client and the peers",
        [
            "operation",
            "requests (app)",
            "raw client µs",
            "dynamo_app µs, x raw",
            f"{STOCK} µs, x raw",
            *(f"{peer} µs, x raw" for peer in peers),
            "live ms: app",
            "raw",
        ],
    )
    replayed = [handle.client, stock.client, raw, resource.meta.client]
    for name, contenders in rows.items():
        n = max(loops // 4, 5) if name.startswith("query") else loops
        with contextlib.ExitStack() as replays:
            for client in replayed:
                replays.enter_context(replay.replaying(client, responses))
            cpu = measure({who: _times(f, n) for who, f in contenders.items()}, rounds=rounds)
        live_n = max(n // 10, 3)
        live = measure(
            {who: _times(contenders[who], live_n) for who in ("dynamo_app", "raw")},
            rounds=rounds,
            clock=time.perf_counter,
        )

        section.rows.append(
            [
                name,
                counts[name],
                f"{cpu.median('raw') / n * 1e6:.0f}",
                *(
                    _cell(cpu, who, n) if who in contenders else "-"
                    for who in ["dynamo_app", STOCK, *peers]
                ),
                f"{live.median('dynamo_app') / live_n * 1e3:.2f}",
                f"{live.median('raw') / live_n * 1e3:.2f}",
            ]
        )
    section.notes.append(
        "Client CPU per operation: HTTP replaced by a replay of the server's recorded responses; "
        "botocore still serialises, signs and parses. x raw: the median over "
        f"{rounds} interleaved rounds of the ratio to the raw client's time in the same round "
        f"(in brackets: {SPREAD}), each chunk on a collected heap with the garbage "
        "collector off. Target: dynamo_app <= 0.80x raw (a 25-item Query page <= 0.45x). "
        f"Live: wall time against the local server (moto in its own process). Load average "
        f"(1 min) after the run: {load_average()}. {STOCK}: the same calls through a handle "
        "with DYNAMO['FAST_CLIENT'] = False (botocore's own signing, response parsing and "
        "endpoint resolution; the x-amz-crc32 check stays)."
    )
    raw.close()
    stock.close()
    return section
