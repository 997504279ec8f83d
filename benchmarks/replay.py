"""Answer a botocore client's requests from recorded real responses.

``record(client)`` keeps the last response the server gave for each
operation; ``replaying(client, responses)`` then answers every request of
that client with it, from botocore's ``before-send`` event. No socket, no
server: what remains is exactly the client's own work - parameter
validation, serialisation, endpoint resolution, signing, response parsing,
and whatever the caller does around the call.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from botocore.awsrequest import AWSResponse

_ID = "benchmarks.replay"


@dataclass(frozen=True)
class Recorded:
    status: int
    headers: dict[str, str]
    body: bytes


class _Body:
    """The ``raw`` of an ``AWSResponse``: botocore reads it through ``stream()``."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **kwargs: Any) -> Iterator[bytes]:
        yield self.data


def _operation(event_name: str) -> str:
    return event_name.rsplit(".", 1)[1]


@contextlib.contextmanager
def record(client: Any) -> Iterator[dict[str, Recorded]]:
    """Inside the block, keep the last real response of each operation."""
    responses: dict[str, Recorded] = {}

    def keep(event_name: str, response_dict: dict[str, Any] | None, **kwargs: Any) -> None:
        if response_dict is not None:
            responses[_operation(event_name)] = Recorded(
                response_dict["status_code"], dict(response_dict["headers"]), response_dict["body"]
            )

    events = client.meta.events
    events.register("response-received.dynamodb", keep, unique_id=_ID)
    try:
        yield responses
    finally:
        events.unregister("response-received.dynamodb", unique_id=_ID)


@contextlib.contextmanager
def replaying(client: Any, responses: dict[str, Recorded]) -> Iterator[None]:
    """Inside the block, every request of ``client`` gets its recorded answer."""

    def answer(event_name: str, request: Any, **kwargs: Any) -> AWSResponse:
        recorded = responses[_operation(event_name)]
        return AWSResponse(request.url, recorded.status, recorded.headers, _Body(recorded.body))

    events = client.meta.events
    events.register("before-send.dynamodb", answer, unique_id=_ID)
    try:
        yield
    finally:
        events.unregister("before-send.dynamodb", unique_id=_ID)


@contextlib.contextmanager
def round_trip(client: Any, seconds: float) -> Iterator[None]:
    """Inside the block, every request of ``client`` waits ``seconds`` before it is
    sent: a network round trip, as to a DynamoDB region (the wait holds no lock)."""

    def wait(**kwargs: Any) -> None:
        time.sleep(seconds)

    events = client.meta.events
    events.register("before-send.dynamodb", wait, unique_id=_ID + ".round_trip")
    try:
        yield
    finally:
        events.unregister("before-send.dynamodb", unique_id=_ID + ".round_trip")
