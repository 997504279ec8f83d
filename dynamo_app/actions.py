"""A write action: one ``Put`` / ``Update`` / ``Delete`` / ``ConditionCheck``
with the meaning of its outcome.

Model writes (``models/writes.py``) and unique locks (``unique.py``) produce
actions; the single-request sender and the transaction builder
(``transactions.py``) consume them. An action carries what its failed
condition *means* (a ``FailureMapper``) and what the instance learns when it
succeeds, as small named objects whose repr says so, so that a cancelled
transaction is reported as the error of the action that caused it.

A leaf: it imports only ``wire``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from functools import cached_property
from typing import Any, Protocol

from .client import wire

__all__ = ["Action", "FailureMapper", "canonical"]


class FailureMapper(Protocol):
    """The app's error for a failed condition, from the item as stored (the wire
    item DynamoDB returned, or None) and the requests sent (0: refused before any)."""

    def __call__(self, raw_item: dict[str, Any] | None, attempts: int) -> Exception: ...


def canonical(wire_value: dict[str, Any]) -> tuple[str, Any]:
    """A hashable, JSON-able form of a scalar wire value in which equal values
    are equal: numbers normalised (DynamoDB stores 18 and 18.0 as one number)."""
    ((kind, raw),) = wire_value.items()
    if kind == "N":
        return ("N", str(Decimal(raw).normalize()))
    return (kind, raw)


@dataclass
class Action:
    """One entry of a TransactWriteItems (or one request): its kind, parameters and meaning."""

    kind: str  # "Put", "Update", "Delete" or "ConditionCheck"
    params: dict[str, Any]
    describe: str  # for messages: "create Player {...}", "claim uniform_number=18"
    on_condition_failed: FailureMapper | None = None
    on_success: Callable[[], None] | None = None
    key: dict[str, Any] | None = None  # a Put's key (other kinds carry params["Key"])

    def __repr__(self) -> str:
        parts = [f"{self.kind}: {self.describe}"]
        if self.on_condition_failed is not None:
            parts.append(f"failing: {self.on_condition_failed!r}")
        if self.on_success is not None:
            parts.append(f"then: {self.on_success!r}")
        return f"<Action {'; '.join(parts)}>"

    @cached_property
    def target(self) -> tuple[str, tuple[tuple[str, Any], ...]]:
        """(table, key) of the item this action touches, numbers compared by value.
        Kept: a transaction asks twice (merging lock hand-overs, then its limits)."""
        key = self.params.get("Key") or self.key
        assert key is not None, "a Put action is built with its key"
        return self.params["TableName"], tuple(sorted((k, canonical(v)) for k, v in key.items()))

    def size(self, item_bound: int | None = None) -> int:
        """Bytes this action adds to the request: its item or key, expression text,
        attribute names and values (update and condition values alike). With
        ``item_bound``, a Put's item counts as that many bytes, unmeasured."""
        params = self.params
        item = params.get("Item")
        if item is None:
            size = wire.item_size(params["Key"])
        else:
            size = wire.item_size(item) if item_bound is None else item_bound
        size += wire.item_size(params.get("ExpressionAttributeValues", {}))
        for name, attribute in params.get("ExpressionAttributeNames", {}).items():
            size += len(name) + wire.text_size(attribute)
        for name, value in params.items():
            if name.endswith("Expression"):
                size += len(value)
        return size + len(params["TableName"])
