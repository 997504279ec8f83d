"""Shared by the session tests: the session table, registered for one test.

The suite's settings keep Django's default SESSION_ENGINE, so startup does not
register the table; these tests register it before ``dynamo_db`` creates the
tables, and leave the registry as they found it (``registered``, which the
demo's tests use for its tables too).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from dynamo_app.sessions import SESSION_TABLE
from dynamo_app.tables import TableDefinition, registry

ENGINE = "dynamo_app.sessions"


@contextlib.contextmanager
def registered(*definitions: TableDefinition) -> Iterator[None]:
    """Register ``definitions`` for the block; those that were not registered
    before are unregistered after it."""
    added = [d for d in definitions if d.declared_name not in registry]
    for definition in definitions:
        registry.register(definition)
    try:
        yield
    finally:
        for definition in added:
            registry.unregister(definition.declared_name)


@contextlib.contextmanager
def session_tables(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Register the session table, then give fresh tables (``dynamo_db``). The
    fixture that calls it names ``dynamo_server`` (tests/engine_leg.py)."""
    with registered(SESSION_TABLE):
        yield request.getfixturevalue("dynamo_db")


def stored_item(session_key: str) -> dict[str, Any] | None:
    """The raw item as DynamoDB holds it (a test's view, not the store's)."""
    from dynamo_app.client.handle import get_handle

    handle = get_handle()
    response = handle.call(
        "get_item",
        TableName=handle.table_name(SESSION_TABLE.declared_name),
        Key={"session_key": {"S": session_key}},
        ConsistentRead=True,
    )
    return response.get("Item")
