"""Which tests the engine leg runs: those that use the run's store.

bin/test runs the whole suite on moto twice (Python 3.11 and 3.13), then on a
second engine (MiniStack, through ``DYNAMO_TEST_ENDPOINT``) to try what only an
engine decides. A test that never uses the run's store (settings, codecs,
declaration checks, whole projects in processes and on servers of their own)
would only repeat the moto legs there, so that leg deselects it.

The rule reads what pytest knows before a test runs: a test uses the store when
it names ``dynamo_db`` or ``dynamo_server`` (itself or through its fixtures),
has the ``dynamo_db`` mark, or is a Django ``TransactionTestCase`` (the plugin
gives those tables). A fixture that asks for ``dynamo_db`` late
(``request.getfixturevalue``, after registering tables) names ``dynamo_server``
too. The guard: on every leg, a test the rule leaves out that sends a request
through the handle fails (``check_sent``, from tests/conftest.py's recorder), so
the rule cannot drift from what the tests do.
"""

from __future__ import annotations

from collections.abc import Collection

import pytest
from django.test import TransactionTestCase

from dynamo_app.testing import ENGINE


def uses_store(item: pytest.Item) -> bool:
    """Whether ``item`` uses the run's store, by what it names before it runs."""
    if item.get_closest_marker("dynamo_db") is not None:
        return True
    if "dynamo_server" in getattr(item, "fixturenames", ()):  # dynamo_db's closure has it
        return True
    cls = getattr(item, "cls", None)
    return isinstance(cls, type) and issubclass(cls, TransactionTestCase)


def select(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On another engine than moto, deselect the tests that do not use the store."""
    if ENGINE == "moto":
        return
    left_out = [item for item in items if not uses_store(item)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = [item for item in items if uses_store(item)]


def check_sent(item: pytest.Item, operations: Collection[str]) -> None:
    """Fail ``item`` if it sent ``operations`` while the rule leaves it off the engine leg."""
    assert uses_store(item) or not operations, (
        f"{item.nodeid} sent {sorted(operations)} to the run's store, but names neither "
        "dynamo_db nor dynamo_server, so the engine leg of bin/test would not run it "
        "(tests/engine_leg.py): name dynamo_server in the fixture that asks for dynamo_db."
    )
