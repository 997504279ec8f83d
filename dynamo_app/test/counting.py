"""Counting the DynamoDB API calls a block of code makes (the one-request economy, in tests)."""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Iterator
from typing import Any


class RequestCounter(Counter[str]):
    """Counts DynamoDB API calls by operation name (``GetItem``, ``Query``, ...);
    ``calls`` lists each as ``(operation, parameters as sent)``."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple[str, dict[str, Any]]] = []

    def __call__(self, model: Any, params: dict[str, Any], **kwargs: Any) -> None:
        self[model.name] += 1
        self.calls.append((model.name, json.loads(params["body"])))  # DynamoDB speaks JSON

    @property
    def total(self) -> int:  # type: ignore[override]  # a property, where Counter's is a method
        return sum(self.values())


@contextlib.contextmanager
def count_requests() -> Iterator[RequestCounter]:
    """Count the API calls made through the process handle inside the block."""
    from ..handle import get_handle

    counter = RequestCounter()
    events = get_handle().client.meta.events
    events.register("before-call.dynamodb", counter, unique_id="dynamo_app.count_requests")
    try:
        yield counter
    finally:
        events.unregister("before-call.dynamodb", unique_id="dynamo_app.count_requests")
