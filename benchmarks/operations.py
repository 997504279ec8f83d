"""2. Per-operation client cost: the app against the raw boto3 client.

The raw client is a stock boto3 client (botocore's own retries off, as the
app's) making the identical request with the hand-written codec of
benchmark 1. The primary
figure is client CPU per operation with HTTP replaced by a replay of the
server's real responses (see ``replay.py``); live wall times against the
local server are printed beside it, and the requests each app call makes.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from decimal import Decimal
from typing import Any

import boto3
from botocore.config import Config

from dynamo_app.handle import get_handle
from dynamo_app.testing import count_requests
from dynamo_app.unique import LOCK_TABLE

from . import replay
from .codec import floor_decode, floor_encode
from .common import Context, Section, compare, ratio
from .models import BenchItem, BenchPlayer, item, values

TEAM = "team-1"
PAGE = 25


class Operations:
    """Each operation twice - through the app, and by hand on the raw client."""

    def __init__(self, raw_client: Any) -> None:
        self.raw = raw_client
        self.table = get_handle().table_name(BenchItem._meta.table_name)
        self.saved = item(1)
        self.key = {"team_id": TEAM, "item_id": self.saved.item_id}
        self.players = get_handle().table_name(BenchPlayer._meta.table_name)
        self.locks = get_handle().table_name(LOCK_TABLE)
        self.serial = iter(range(10_000_000, 20_000_000))  # fresh keys for creates

    def app_get(self) -> None:
        BenchItem.objects.get(**self.key)

    def raw_get(self) -> None:
        key = {"team_id": {"S": self.key["team_id"]}, "item_id": {"S": self.key["item_id"]}}
        response = self.raw.get_item(TableName=self.table, Key=key, ConsistentRead=False)
        floor_decode(response["Item"])

    def app_put(self) -> None:
        self.saved.save()

    def raw_put(self) -> None:
        self.raw.put_item(TableName=self.table, Item=floor_encode(self.saved.__dict__))

    def app_create(self) -> None:
        BenchItem.objects.create(**values(next(self.serial), "team-c"))

    def raw_create(self) -> None:
        self.raw.put_item(
            TableName=self.table,
            Item=floor_encode(values(next(self.serial), "team-c")),
            ConditionExpression="attribute_not_exists(#n0)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
            ExpressionAttributeNames={"#n0": "team_id"},
        )

    def app_create_unique(self) -> None:
        BenchPlayer.objects.create(
            team_id="team-u", player_name="Ann", uniform_number=next(self.serial)
        )

    def raw_create_unique(self) -> None:
        number, team, player_id = str(next(self.serial)), "team-u", str(uuid.uuid4())
        key = {"team_id": {"S": team}, "player_id": {"S": player_id}}
        canonical = str(Decimal(number).normalize())  # the lock's form of a number
        lock = ["bench_player", "uniform_number", [["S", team]], [["N", canonical]]]
        owner = {"player_id": ["S", player_id], "team_id": ["S", team]}
        player = {**key, "player_name": {"S": "Ann"}, "uniform_number": {"N": number}}
        self.raw.transact_write_items(
            TransactItems=[
                {
                    "Put": {
                        "TableName": self.players,
                        "Item": player,
                        "ConditionExpression": "attribute_not_exists(#n0)",
                        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
                        "ExpressionAttributeNames": {"#n0": "team_id"},
                    }
                },
                {
                    "Put": {
                        "TableName": self.locks,
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

    def app_query(self) -> None:
        BenchItem.objects.filter(team_id=TEAM).page(PAGE)

    def raw_query(self) -> None:
        response = self.raw.query(
            TableName=self.table,
            KeyConditionExpression="#n0 = :v0",
            ExpressionAttributeNames={"#n0": "team_id"},
            ExpressionAttributeValues={":v0": {"S": TEAM}},
            Limit=PAGE,
        )
        [floor_decode(i) for i in response["Items"]]  # noqa: B018 - the decode is the work

    def pairs(self) -> dict[str, tuple[Callable[[], None], Callable[[], None]]]:
        return {
            "get (GetItem)": (self.app_get, self.raw_get),
            "put: save() (PutItem)": (self.app_put, self.raw_put),
            "create: objects.create() (conditional PutItem)": (self.app_create, self.raw_create),
            "create with one unique constraint (TransactWriteItems)": (
                self.app_create_unique,
                self.raw_create_unique,
            ),
            f"query: one {PAGE}-item page (Query)": (self.app_query, self.raw_query),
        }


def _times(function: Callable[[], None], loops: int) -> Callable[[], None]:
    def run() -> None:
        for _ in range(loops):
            function()

    return run


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
    raw = boto3.session.Session(
        aws_access_key_id=handle.settings.access_key_id,
        aws_secret_access_key=handle.settings.secret_access_key.reveal(),
        region_name=handle.settings.region,
    ).client(
        "dynamodb",
        endpoint_url=handle.endpoint_url,
        config=Config(retries={"total_max_attempts": 1, "mode": "standard"}),
    )
    ops = Operations(raw)
    pairs = ops.pairs()
    loops = 20 if ctx.quick else 200

    counts = {}
    with replay.record(handle.client) as responses:
        for name, (app, _) in pairs.items():
            with count_requests() as counter:
                app()
            counts[name] = ", ".join(f"{n} {op}" for op, n in counter.items())

    section = Section(
        "2. Per-operation client cost: dynamo_app vs the raw boto3 client (hand-written codec)",
        [
            "operation",
            "requests (app)",
            "client CPU µs: app",
            "raw",
            "app/raw",
            "live ms: app",
            "raw",
            "app/raw",
        ],
    )
    for name, (app, raw_op) in pairs.items():
        n = max(loops // 4, 5) if name.startswith("query") else loops
        with replay.replaying(handle.client, responses), replay.replaying(raw, responses):
            cpu = compare({"app": _times(app, n), "raw": _times(raw_op, n)}, repeat=ctx.repeat)
        live_n = max(n // 10, 3)
        live = compare(
            {"app": _times(app, live_n), "raw": _times(raw_op, live_n)},
            repeat=ctx.repeat,
            clock=time.perf_counter,
        )
        section.rows.append(
            [
                name,
                counts[name],
                f"{cpu['app'] / n * 1e6:.0f}",
                f"{cpu['raw'] / n * 1e6:.0f}",
                ratio(cpu["app"], cpu["raw"]),
                f"{live['app'] / live_n * 1e3:.2f}",
                f"{live['raw'] / live_n * 1e3:.2f}",
                ratio(live["app"], live["raw"]),
            ]
        )
    section.notes.append(
        "Client CPU: HTTP replaced by a replay of the server's recorded responses; botocore "
        "still validates, serialises, signs and parses. Target: app/raw <= 1.00x. Live: wall "
        f"time against the local server (moto in its own process). Median of {ctx.repeat} runs."
    )
    raw.close()
    return section
