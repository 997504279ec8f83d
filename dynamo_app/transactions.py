"""Transactions: many writes, one ``TransactWriteItems``, all or nothing.

``with dynamo_app.transaction() as tx:`` collects writes on model instances
across any tables and sends them as one request when the block exits; an
exception inside the block sends nothing. Each collected action knows what
its failure *means*, so a cancelled transaction is reported as the error of
the action that caused it (``UniqueViolation``, ``AlreadyExists``,
``StaleObjectError``, ``AlreadyApplied``), never as a bare list of codes.

Every transaction carries one ``ClientRequestToken``, reused by every retry,
so a retry after a lost answer cannot apply it twice (DynamoDB honours the token
for 10 minutes); that is what makes transactions safe to retry.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from asgiref.sync import sync_to_async

from . import wire
from .app_tables import IDEMPOTENCY, IDEMPOTENCY_EXPIRES, IDEMPOTENCY_KEY
from .exceptions import AlreadyApplied, TransactionCanceled, TransactionLimitExceeded
from .handle import get_handle
from .unique import canonical, one_action_per_lock

if TYPE_CHECKING:
    from .expressions import Condition
    from .models.base import Model

__all__ = ["Transaction", "TransactionBlock", "read", "transaction"]

MAX_ACTIONS = 100
MAX_REQUEST_BYTES = 4 * 1024 * 1024
MAX_GET_ITEMS = 100

IDEMPOTENCY_TABLE = IDEMPOTENCY.declared_name
IDEMPOTENCY_WINDOW = 24 * 3600  # seconds a key is remembered (TTL deletes it later)


FailureMapper = Callable[[dict[str, Any] | None], Exception]


@dataclass
class Action:
    """One entry of a TransactWriteItems: its kind, parameters and meaning."""

    kind: str  # "Put", "Update", "Delete" or "ConditionCheck"
    params: dict[str, Any]
    describe: str  # for messages: "create Player {...}", "claim uniform_number=18"
    on_condition_failed: FailureMapper | None = None
    on_success: Callable[[], None] | None = None
    key: dict[str, Any] | None = None  # a Put's key (other kinds carry params["Key"])

    def target(self) -> tuple[str, tuple[tuple[str, Any], ...]]:
        """(table, key) of the item this action touches, numbers compared by value."""
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


class Transaction:
    """Collects writes; ``commit()`` sends them as one TransactWriteItems.

    Use it through ``dynamo_app.transaction()``. The model-level verbs
    (``create``, ``save``, ``update``, ``delete``, ``condition_check``) add
    the same unique-lock and version actions the single-item methods use.
    """

    def __init__(self, *, idempotency_key: str | None = None) -> None:
        self.actions: list[Action] = []
        self.token = os.urandom(16).hex()  # one ClientRequestToken per logical transaction
        self.idempotency_key = idempotency_key
        self.committed = False
        if idempotency_key is not None:
            self.add(idempotency_action(idempotency_key))

    def __repr__(self) -> str:
        return f"<Transaction {len(self.actions)} actions, token={self.token}>"

    # --- model-level verbs

    def create(self, obj: Model) -> Model:
        from .models import writes

        self.extend(writes.create_actions(obj))
        return obj

    def save(self, obj: Model, *, condition: Condition | None = None) -> Model:
        from .models import writes

        self.extend(writes.save_actions(obj, condition=condition))
        return obj

    def update(self, obj: Model, *, condition: Condition | None = None, **actions: Any) -> Model:
        from .models import writes

        self.extend(writes.update_actions(obj, condition=condition, **actions))
        return obj

    def delete(self, obj: Model, *, condition: Condition | None = None) -> None:
        from .models import writes

        self.extend(writes.delete_actions(obj, condition=condition))

    def condition_check(self, obj: Model, condition: Condition) -> None:
        """Require ``condition`` to hold on ``obj``'s stored item, writing nothing to it."""
        from .models import writes

        self.add(writes.condition_check_action(obj, condition))

    # --- low level

    def add(self, action: Action) -> None:
        if self.committed:
            raise TransactionLimitExceeded("This transaction was already sent; start a new one.")
        self.actions.append(action)

    def extend(self, actions: Iterable[Action]) -> None:
        for action in actions:
            self.add(action)

    def check_limits(self) -> None:
        """DynamoDB's limits, checked before anything is sent."""
        if len(self.actions) > MAX_ACTIONS:
            raise TransactionLimitExceeded(
                f"The transaction has {len(self.actions)} actions; DynamoDB allows at most "
                f"{MAX_ACTIONS}. Split it into smaller transactions (keep transactions small)."
            )
        seen: dict[Any, Action] = {}
        for action in self.actions:
            target = action.target()
            if target in seen:
                raise TransactionLimitExceeded(
                    f"The transaction touches one item twice ({seen[target].describe}; "
                    f"{action.describe}); DynamoDB allows one action per item. Make one "
                    "write of it: change the instance and tx.save() it once, or pass every "
                    "change to one tx.update()."
                )
            seen[target] = action
        # A Put's item is at most 400 KB (a model's is refused over that when built,
        # the app's own records are small): items are measured only when that bound
        # could pass 4 MB; what else an action carries is always measured.
        if sum(a.size(item_bound=wire.MAX_ITEM_BYTES) for a in self.actions) <= MAX_REQUEST_BYTES:
            return
        size = sum(action.size() for action in self.actions)
        if size > MAX_REQUEST_BYTES:
            raise TransactionLimitExceeded(
                f"The transaction's actions total about {size} bytes (items, keys, update and "
                f"condition values); DynamoDB allows at most {MAX_REQUEST_BYTES} (4 MB). Split it."
            )

    def prepare(self) -> None:
        """The actions as they will be sent: a unique value handed from one item to
        another in one action (see ``unique.one_action_per_lock``), every limit checked."""
        self.actions = one_action_per_lock(self.actions)
        self.check_limits()

    def commit(self) -> None:
        """Send every action as one TransactWriteItems (nothing if there is none)."""
        if self.committed:
            raise TransactionLimitExceeded("This transaction was already sent.")
        if not self.actions:
            self.committed = True
            return
        self.prepare()
        request = [{a.kind: a.params} for a in self.actions]
        try:
            get_handle().call(
                "transact_write_items",
                TransactItems=request,
                ClientRequestToken=self.token,
            )
        except TransactionCanceled as exc:
            raise self.explain(exc) from exc
        self.committed = True
        for action in self.actions:
            if action.on_success is not None:
                action.on_success()

    def explain(self, exc: TransactionCanceled) -> Exception:
        """The error of the action that caused the cancellation."""
        failures = []
        for action, reason in zip(self.actions, exc.reasons, strict=False):
            code = reason.get("Code") or "None"
            if code == "ConditionalCheckFailed" and action.on_condition_failed is not None:
                return action.on_condition_failed(reason.get("Item"))
            if code != "None":
                failures.append(f"{action.describe}: {code} {reason.get('Message', '')}".strip())
        return TransactionCanceled(
            "DynamoDB cancelled the transaction; nothing was written. "
            + ("; ".join(failures) or "No reason was given."),
            reasons=exc.reasons,
            attempts=exc.attempts,
        )


def idempotency_action(key: str) -> Action:
    """A record that exists once per key: written with the transaction, it turns a
    repeat of the same logical write into ``AlreadyApplied`` instead of a second effect."""
    if not isinstance(key, str) or not 0 < len(key) <= 1024 or not _fits_a_key(key):
        shown = repr(key) if len(repr(key)) <= 80 else repr(key)[:77] + "..."
        raise TransactionLimitExceeded(
            "An idempotency key must be a non-empty string of at most 1024 characters, "
            f"valid Unicode (no lone surrogate) of at most {wire.MAX_PARTITION_KEY_BYTES} "
            f"UTF-8 bytes (it is the record's partition key), got {shown}. Nothing was sent."
        )
    handle = get_handle()
    now = int(time.time())
    params: dict[str, Any] = {
        "TableName": handle.table_name(IDEMPOTENCY_TABLE),
        "Item": {
            IDEMPOTENCY_KEY: {"S": key},
            "applied_at": {"N": str(now)},
            IDEMPOTENCY_EXPIRES: {"N": str(now + IDEMPOTENCY_WINDOW)},
        },
        "ConditionExpression": "attribute_not_exists(#k)",
        "ExpressionAttributeNames": {"#k": IDEMPOTENCY_KEY},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }

    def already(item: dict[str, Any] | None) -> Exception:
        applied = item.get("applied_at", {}).get("N") if item else None
        return AlreadyApplied(
            f"A write with idempotency key {key!r} was already applied"
            f"{f' (at {applied}, epoch seconds)' if applied else ''}; nothing was done now.",
        )

    item_key = {IDEMPOTENCY_KEY: params["Item"][IDEMPOTENCY_KEY]}
    return Action("Put", params, f"idempotency key {key!r}", already, key=item_key)


def _fits_a_key(text: str) -> bool:
    try:
        return wire.text_size(text) <= wire.MAX_PARTITION_KEY_BYTES
    except UnicodeEncodeError:
        return False


def transaction(*, idempotency_key: str | None = None) -> TransactionBlock:
    """Collect writes in the block; send them as ONE TransactWriteItems at its end.

    ``with`` or, in async code, ``async with``. An exception inside the block
    sends nothing. With ``idempotency_key``, a repeat of the same transaction
    raises ``AlreadyApplied`` and changes nothing.
    """
    return TransactionBlock(Transaction(idempotency_key=idempotency_key))


class TransactionBlock:
    """The block of ``transaction()``: it commits on a clean exit. Collecting
    writes sends nothing, so only ``async with``'s commit leaves the event loop
    (in a worker thread, as the model's async methods do)."""

    def __init__(self, tx: Transaction) -> None:
        self.tx = tx

    def __enter__(self) -> Transaction:
        return self.tx

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is None:
            self.tx.commit()

    async def __aenter__(self) -> Transaction:
        return self.tx

    async def __aexit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is None:
            await sync_to_async(self.tx.commit, thread_sensitive=False)()


def read(requests: Iterable[tuple[type[Model], Any]], *, consistent: bool = True) -> list[Any]:
    """Several items read atomically (one TransactGetItems), in the order asked;
    ``None`` for a missing item. Each request is ``(Model, key)``."""
    requests = list(requests)
    if len(requests) > MAX_GET_ITEMS:
        raise TransactionLimitExceeded(
            f"A transactional read takes at most {MAX_GET_ITEMS} items, got {len(requests)}."
        )
    if not requests:
        return []
    handle = get_handle()
    items = [
        {
            "Get": {
                "TableName": handle.table_name(model._meta.table_name),
                "Key": model._meta.key_from_any(key),
            }
        }
        for model, key in requests
    ]
    response = handle.call("transact_get_items", TransactItems=items)
    out = []
    for (model, _), result in zip(requests, response.get("Responses", []), strict=False):
        item = result.get("Item")
        out.append(model._meta.decode(item) if item else None)
    return out
