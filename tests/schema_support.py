"""Shared by the schema and deployment tests (plan, migrate, verify, startup,
IaC, IAM): table definitions to declare, tables made "wrong" by hand through the
raw client, and what a management command prints. (Registering definitions for
one test, and botocore hooks for one test, are fixtures: tests/conftest.py.)"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from io import StringIO
from typing import Any

from django.core.management import call_command

from dynamo_app.client.handle import get_handle
from dynamo_app.deploy import schema
from dynamo_app.deploy.schema import TableChange
from dynamo_app.tables import IndexDefinition, KeyAttribute, TableDefinition

S, N = "S", "N"
PLAYER = TableDefinition(
    "sch_player",
    KeyAttribute("team_id", S),
    KeyAttribute("player_id", S),
    indexes=(
        IndexDefinition("by_number", "global", KeyAttribute("uniform_number", N)),
        IndexDefinition(
            "by_name", "local", KeyAttribute("team_id", S), KeyAttribute("player_name", S)
        ),
    ),
    ttl_attribute="expires_at",
    owner="tests.Player",
)
# PLAYER without its local index: tables made by hand with or without the global one.
PLAYER_GLOBAL_INDEX_ONLY = TableDefinition(
    "sch_player", PLAYER.partition_key, PLAYER.sort_key, indexes=PLAYER.indexes[:1]
)
EVENT = TableDefinition("sch_event", KeyAttribute("event_id", S), owner="tests.Event")


def make_table(
    name: str,
    *keys: tuple[str, str, str],
    indexes: dict[str, list[tuple[str, str, str]]] | None = None,
    projection: str = "ALL",
    **params: Any,
) -> None:
    """Create a table by hand: keys are (attribute, type, HASH|RANGE); ``indexes``
    are its global indexes by name, keyed the same way, each projecting ``projection``."""
    indexes = indexes or {}
    attributes = {a: t for a, t, _ in keys} | {a: t for ks in indexes.values() for a, t, _ in ks}
    if indexes:
        params["GlobalSecondaryIndexes"] = [
            {
                "IndexName": index,
                "KeySchema": key_schema(index_keys),
                "Projection": {"ProjectionType": projection},
            }
            for index, index_keys in indexes.items()
        ]
    get_handle().client.create_table(
        TableName=name,
        KeySchema=key_schema(keys),
        AttributeDefinitions=[
            {"AttributeName": a, "AttributeType": t} for a, t in attributes.items()
        ],
        **({"BillingMode": "PAY_PER_REQUEST"} | params),
    )


def make_player_table(**params: Any) -> None:
    """PLAYER's table by hand, with its keys only (and ``make_table``'s ``params``)."""
    make_table("test-sch_player", ("team_id", S, "HASH"), ("player_id", S, "RANGE"), **params)


def key_schema(keys: Iterable[tuple[str, str, str]]) -> list[dict[str, str]]:
    return [{"AttributeName": a, "KeyType": role} for a, _, role in keys]


def changes_of(declared_name: str) -> list[TableChange]:
    return [c for c in schema.plan() if c.declared_name == declared_name]


def pretend_status(status: str, polls: int, table_name: str = "") -> Callable[..., None]:
    """An after-call hook reporting ``status`` for the next ``polls`` answers
    (about ``table_name`` only, when given)."""
    left = {"n": polls}

    def hook(parsed: dict[str, Any], **kwargs: Any) -> None:
        table = parsed.get("Table") or parsed.get("TableDescription")
        if table and left["n"] > 0 and table_name in ("", table["TableName"]):
            left["n"] -= 1
            table["TableStatus"] = status

    return hook


def run(*args: str) -> str:
    """What ``manage.py ARGS`` prints."""
    out = StringIO()
    call_command(*args, stdout=out, no_color=True)
    return out.getvalue()
