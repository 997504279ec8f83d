"""Shared by the session tests: the session table, registered for one test.

The suite's settings keep Django's default SESSION_ENGINE, so startup does not
register the table; these tests register it before ``dynamo_db`` creates the
tables, and leave the registry as they found it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import pytest

from dynamo_app.sessions import SESSION_TABLE
from dynamo_app.tables import registry

ENGINE = "dynamo_app.sessions"


@contextlib.contextmanager
def session_tables(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Register the session table, then give fresh tables (``dynamo_db``)."""
    was_registered = SESSION_TABLE.declared_name in registry
    registry.register(SESSION_TABLE)
    try:
        yield request.getfixturevalue("dynamo_db")
    finally:
        if not was_registered:
            registry.unregister(SESSION_TABLE.declared_name)


def stored_item(session_key: str) -> dict[str, Any] | None:
    """The raw item as DynamoDB holds it (a test's view, not the store's)."""
    from dynamo_app.handle import get_handle

    handle = get_handle()
    response = handle.call(
        "get_item",
        TableName=handle.table_name(SESSION_TABLE.declared_name),
        Key={"session_key": {"S": session_key}},
        ConsistentRead=True,
    )
    return response.get("Item")
