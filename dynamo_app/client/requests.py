"""Every request the app sends, seen in one place: the ``dynamo_app.requests``
log and the request counters.

``Handle.call`` reports each call here once, when it is over (``sent``), if
anyone may listen (``counting``, or the log at DEBUG): one ``Request`` with the
operation, the deployed table and index, the time, the attempts the retry policy
made, the consumed capacity when DynamoDB returned it
(``DYNAMO["RETURN_CONSUMED_CAPACITY"]``) and how many items came back. It goes
to every ``RequestCounter`` open in the caller's context and, at DEBUG, to the
``dynamo_app.requests`` logger as one line, the way ``django.db.backends``
logs SQL. The counters live in a ``contextvars`` variable: each thread and each
asyncio task sees only the counters opened in its own context (a worker thread
of ``sync_to_async`` runs in a copy of its caller's), so concurrent requests
never mix.

Item values (keys, items, expression values) never reach the log or a panel
unless ``DYNAMO["LOG_VALUES"]`` is on: each is shown as its type and a mask.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import threading
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from django.utils.translation import ngettext

from ..conf import MASK

__all__ = ["Request", "RequestCounter", "count_requests", "counting", "logger", "masked"]

logger = logging.getLogger("dynamo_app.requests")

# The operations that take ReturnConsumedCapacity.
TAKES_CAPACITY = frozenset(
    {
        "get_item",
        "put_item",
        "update_item",
        "delete_item",
        "query",
        "scan",
        "batch_get_item",
        "batch_write_item",
        "transact_get_items",
        "transact_write_items",
        "execute_statement",
        "batch_execute_statement",
        "execute_transaction",
    }
)

# Parameters whose value maps attribute names to attribute values, and those
# that list such maps or values.
_VALUE_MAPS = frozenset({"Key", "Item", "ExclusiveStartKey", "ExpressionAttributeValues"})
_VALUE_MAP_LISTS = frozenset({"Keys"})
_VALUE_LISTS = frozenset({"Parameters"})


def api_name(operation: str) -> str:
    """The API's name of a client method: ``batch_get_item`` -> ``BatchGetItem``."""
    return "".join(part.title() for part in operation.split("_"))


def masked(params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` with every attribute value replaced by its type and a mask:
    ``{"Key": {"pk": {"S": "********"}}}``. Names, expressions, tables and
    options stay as they are."""
    return {key: _masked(value, key) for key, value in params.items()}


def _masked(value: Any, key: str | None = None) -> Any:
    if key in _VALUE_MAPS and isinstance(value, dict):
        return {name: _masked_value(v) for name, v in value.items()}
    if key in _VALUE_MAP_LISTS and isinstance(value, list):
        return [_masked(v, "Key") for v in value]
    if key in _VALUE_LISTS and isinstance(value, list):
        return [_masked_value(v) for v in value]
    if isinstance(value, dict):
        return {k: _masked(v, k) for k, v in value.items()}
    if isinstance(value, list):
        return [_masked(v) for v in value]
    return value


def _masked_value(value: Any) -> Any:
    return {kind: MASK for kind in value} if isinstance(value, dict) else MASK


@dataclass(frozen=True)
class Request:
    """One call as the app made it: its last attempt's outcome, all attempts' time."""

    operation: str  # the API's name: "GetItem"
    params: dict[str, Any]  # as sent, values included: for tests, never shown as such
    seconds: float  # from the first attempt's start to the last one's answer, backoff included
    attempts: int  # requests sent for this call (1 unless the retry policy sent it again)
    capacity: float | None = None  # capacity units consumed, when DynamoDB said
    items: int = 0  # items in the answer
    error: str = ""  # the app's exception class, when the call failed
    show_values: bool = field(default=False, repr=False)  # DYNAMO["LOG_VALUES"]

    @property
    def table(self) -> str:
        """The deployed table (tables, comma-separated, for batches and transactions)."""
        return ", ".join(_tables(self.params))

    @property
    def index(self) -> str:
        return str(self.params.get("IndexName", ""))

    @property
    def milliseconds(self) -> float:
        return self.seconds * 1000

    def for_log(self) -> Request:
        """This request as a log record may carry it: its values masked unless
        LOG_VALUES is on (a JSON formatter or an error tracker ships a record's
        attributes and arguments, not only its line)."""
        return self if self.show_values else replace(self, params=masked(self.params))

    def shown_params(self) -> dict[str, Any]:
        """The parameters as the log and the panel show them."""
        return self.params if self.show_values else masked(self.params)

    def __str__(self) -> str:
        where = f" {self.table}" if self.table else ""
        index = f" index={self.index}" if self.index else ""
        capacity = f" capacity={self.capacity:g}" if self.capacity is not None else ""
        outcome = f" failed={self.error}" if self.error else f" items={self.items}"
        params = json.dumps(self.shown_params(), default=str, separators=(",", ":"))
        return (
            f"({self.milliseconds:.1f} ms) {self.operation}{where}{index} "
            f"attempts={self.attempts}{capacity}{outcome}; params={params}"
        )


def _tables(params: Mapping[str, Any]) -> list[str]:
    if "TableName" in params:
        return [str(params["TableName"])]
    if "RequestItems" in params:  # batches
        return sorted(params["RequestItems"])
    names = {  # transactions: {"Put": {"TableName": ...}}, ...
        str(action["TableName"])
        for item in params.get("TransactItems", ())
        for action in item.values()
        if isinstance(action, dict) and "TableName" in action
    }
    return sorted(names)


def _capacity(response: Mapping[str, Any]) -> float | None:
    consumed = response.get("ConsumedCapacity")
    entries = consumed if isinstance(consumed, list) else [consumed] if consumed else []
    if not entries:  # not asked for; or an engine that answers [] (moto, for transactions)
        return None
    return sum(float(entry.get("CapacityUnits", 0)) for entry in entries)


def _items(response: Mapping[str, Any]) -> int:
    if "Items" in response:
        return len(response["Items"])
    responses = response.get("Responses")
    if isinstance(responses, dict):  # BatchGetItem: by table
        return sum(len(items) for items in responses.values())
    if isinstance(responses, list):  # TransactGetItems, BatchExecuteStatement
        return sum(1 for answer in responses if answer.get("Item"))
    return int("Item" in response or "Attributes" in response)


class RequestCounter(Counter[str]):
    """The requests sent inside a ``count_requests()`` block, counted by
    operation (``counter["GetItem"]``; a call the retry policy sent again counts
    each attempt). ``requests`` lists each call as a ``Request``; ``calls`` each
    request sent as ``(operation, parameters as sent)``."""

    def __init__(self) -> None:
        super().__init__()
        self.requests: list[Request] = []
        self._lock = threading.Lock()  # threads running in a copy of the block's context

    def add(self, request: Request) -> None:
        with self._lock:
            self[request.operation] += request.attempts
            self.requests.append(request)

    @property
    def total(self) -> int:  # type: ignore[override]  # a property, where Counter's is a method
        return sum(self.values())

    @property
    def calls(self) -> list[tuple[str, dict[str, Any]]]:
        return [(r.operation, r.params) for r in self.requests for _ in range(r.attempts)]

    @property
    def seconds(self) -> float:
        return sum(r.seconds for r in self.requests)

    @property
    def capacity(self) -> float | None:
        """Capacity units consumed, where DynamoDB said (None: it never did)."""
        known = [r.capacity for r in self.requests if r.capacity is not None]
        return sum(known) if known else None

    def for_log(self) -> RequestCounter:
        """A copy whose requests are ``Request.for_log()``: for a log record."""
        copy = RequestCounter()
        copy.update(self)
        copy.requests = [r.for_log() for r in self.requests]
        return copy

    def summary(self) -> str:
        """ "3 DynamoDB requests, 4.2 ms, 1.5 capacity units" """
        requests = ngettext("%(n)d DynamoDB request", "%(n)d DynamoDB requests", self.total)
        text = f"{requests % {'n': self.total}}, {self.seconds * 1000:.1f} ms"
        if self.capacity is not None:
            units = ngettext(  # a fraction reads as plural: ngettext counts in integers
                "%(n)s capacity unit", "%(n)s capacity units", 1 if self.capacity == 1 else 2
            )
            text += f", {units % {'n': f'{self.capacity:g}'}}"
        return text


_counters: contextvars.ContextVar[tuple[RequestCounter, ...]] = contextvars.ContextVar(
    "dynamo_app_request_counters", default=()
)
# How many count_requests() blocks are open, in every context. With none, and
# the log below DEBUG, nobody listens: Handle.call then reports nothing and
# calls nothing here, so an unobserved request costs no call into this module.
counting = 0
_counting_lock = threading.Lock()


def _count_blocks(step: int) -> None:
    global counting
    with _counting_lock:
        counting += step


@contextlib.contextmanager
def count_requests() -> Iterator[RequestCounter]:
    """Count the requests this thread (or asyncio task) sends inside the block,
    through any handle. Blocks nest: each counts what was sent inside it. A
    thread started inside the block counts when it runs in a copy of this
    context (``contextvars.copy_context().run``), as ``sync_to_async`` does."""
    counter = RequestCounter()
    token = _counters.set((*_counters.get(), counter))
    _count_blocks(+1)
    try:
        yield counter
    finally:
        _count_blocks(-1)
        _counters.reset(token)


def sent(
    operation: str,
    params: dict[str, Any],
    seconds: float,
    attempts: int,
    response: Mapping[str, Any] | None,
    error: Exception | None,
    *,
    show_values: bool,
) -> None:
    """Report one call (``Handle.call`` does, while ``counting`` or the log is at
    DEBUG): nothing is built unless this context has a counter open or the log is
    at DEBUG."""
    counters = _counters.get()
    if not counters and not logger.isEnabledFor(logging.DEBUG):
        return
    request = Request(
        operation=operation,
        params=params,
        seconds=seconds,
        attempts=attempts,
        capacity=_capacity(response) if response is not None else None,
        items=_items(response) if response is not None else 0,
        error=type(error).__name__ if error is not None else "",
        show_values=show_values,
    )
    for counter in counters:
        counter.add(request)
    if logger.isEnabledFor(logging.DEBUG):
        logged = request.for_log()
        logger.debug("%s", logged, extra={"dynamo_request": logged})
