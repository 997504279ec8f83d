"""Which DynamoDB operations dynamo_app's own code sends, as the suite runs.

tests/conftest.py wraps ``Handle.call`` (every request of the app goes through
it) for each test and fails a test in which the app sent an operation that
``dynamo_app.iam.OPERATIONS`` - and so the IAM policy - does not list. A
request counts as the app's when the first caller outside ``handle.py`` is a
``dynamo_app`` module other than the test support (``dynamo_app.test*``): a
test's own requests through the handle (DeleteTable, DescribeTimeToLive to
look at a table) and the test store's are not the app's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType
from typing import Any

from dynamo_app.handle import Handle

Call = Callable[..., dict[str, Any]]


def _asked_by_app(frame: FrameType | None) -> bool:
    while frame is not None and frame.f_globals.get("__name__") == "dynamo_app.handle":
        frame = frame.f_back  # paginate() and until_processed() call call()
    module = "" if frame is None else str(frame.f_globals.get("__name__", ""))
    return module.startswith("dynamo_app.") and not module.startswith("dynamo_app.test")


def recording(call: Call, sent: set[str]) -> Call:
    """``Handle.call`` that also adds the API name of each app request to ``sent``
    (``get_item`` -> ``GetItem``; the rule holds for every DynamoDB and DynamoDB
    Streams operation, whichever client the handle sends it with)."""

    def recording_call(handle: Handle, operation: str, **params: Any) -> dict[str, Any]:
        if _asked_by_app(sys._getframe(1)):
            sent.add("".join(word.capitalize() for word in operation.split("_")))
        return call(handle, operation, **params)

    return recording_call
