"""Which DynamoDB operations dynamo_app's own code sends, as the suite runs.

tests/conftest.py wraps ``Handle.call`` (every request of the app goes through
it) for each test and fails a test in which the app sent an operation that
``dynamo_app.deploy.iam.OPERATIONS`` - and so the IAM policy - does not list. A
request counts as the app's when the first caller outside ``handle.py`` is a
``dynamo_app`` module other than the test support (``dynamo_app.test*``): a
test's own requests through the handle (DeleteTable, DescribeTimeToLive to
look at a table) and the test store's are not the app's. Every request, the
app's or not, is also recorded for tests/engine_leg.py's guard.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

from dynamo_app.client.handle import Handle
from dynamo_app.client.requests import api_name

Call = Callable[..., dict[str, Any]]


def _asked_by_app(frame: FrameType | None) -> bool:
    while frame is not None and frame.f_globals.get("__name__") == "dynamo_app.client.handle":
        frame = frame.f_back  # paginate() and until_processed() call call()
    module = "" if frame is None else str(frame.f_globals.get("__name__", ""))
    return module.startswith("dynamo_app.") and not module.startswith("dynamo_app.test")


@dataclass
class Recorded:
    """The API names (``get_item`` -> ``GetItem``) of the operations sent in a test."""

    app: set[str] = field(default_factory=set)  # by dynamo_app's own code
    every: set[str] = field(default_factory=set)  # by anyone: the app, the test, the store


def recording(call: Call, recorded: Recorded) -> Call:
    """``Handle.call`` that also records each request's operation in ``recorded``
    (whichever client, DynamoDB or DynamoDB Streams, the handle sends it with)."""

    def recording_call(handle: Handle, operation: str, **params: Any) -> dict[str, Any]:
        name = api_name(operation)
        recorded.every.add(name)
        if _asked_by_app(sys._getframe(1)):
            recorded.app.add(name)
        return call(handle, operation, **params)

    return recording_call
