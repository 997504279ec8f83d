"""The TransactWriteItems builder: many actions, one request, all or nothing.

A ``Transaction`` collects ``Action``s (``actions.py``) across any tables and
sends them as one request; each action knows what its failure *means*, so a
cancelled transaction is reported as the error of the action that caused it
(``UniqueViolation``, ``AlreadyExists``, ``StaleObjectError``,
``AlreadyApplied``), never as a bare list of codes. The model verbs
(``tx.save(obj)`` & co.) and ``dynamo_app.transaction()`` are the model
layer's (``models/writes.py``); this module knows no model.

Every transaction carries one ``ClientRequestToken``, reused by every retry,
so a retry after a lost answer cannot apply it twice (DynamoDB honours the token
for 10 minutes); that is what makes transactions safe to retry.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from botocore.exceptions import ClientError

from .actions import Action
from .app_tables import IDEMPOTENCY, IDEMPOTENCY_EXPIRES, IDEMPOTENCY_KEY
from .client import threads, wire
from .client.handle import get_handle
from .client.retry import cancellation_reasons
from .exceptions import (
    AlreadyApplied,
    OutcomeUnknown,
    TransactionCanceled,
    TransactionLimitExceeded,
)
from .unique import one_action_per_lock

if TYPE_CHECKING:
    from .models.base import Model

__all__ = ["Transaction", "TransactionBlock", "read"]

T = TypeVar("T", bound="Transaction")
M = TypeVar("M", bound="Model")

MAX_ACTIONS = 100
MAX_REQUEST_BYTES = 4 * 1024 * 1024
MAX_GET_ITEMS = 100

IDEMPOTENCY_TABLE = IDEMPOTENCY.declared_name
IDEMPOTENCY_WINDOW = 24 * 3600  # seconds a key is remembered (TTL deletes it later)
IDEMPOTENCY_TOKEN = "token"  # the ClientRequestToken of the transaction that wrote the record


class Transaction:
    """Collects actions; ``commit()`` sends them as one TransactWriteItems.

    Model code uses it through ``dynamo_app.transaction()``, whose transaction
    adds the verbs (``models.writes.ModelTransaction``).
    """

    def __init__(self, *, idempotency_key: str | None = None) -> None:
        self.actions: list[Action] = []
        self.token = os.urandom(16).hex()  # one ClientRequestToken per logical transaction
        self.idempotency_key = idempotency_key
        self.committed = False
        self.idempotency: Action | None = None
        if idempotency_key is not None:
            self.idempotency = idempotency_action(idempotency_key, self.token)
            self.add(self.idempotency)

    def __repr__(self) -> str:
        return f"<Transaction {len(self.actions)} actions, token={self.token}>"

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
            target = action.target
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
        except OutcomeUnknown as exc:
            settled = self.settle(exc)
            if settled is not None:
                raise settled from exc
        self.committed = True
        for action in self.actions:
            if action.on_success is not None:
                action.on_success()

    def settle(self, exc: OutcomeUnknown) -> Exception | None:
        """A lost answer whose repeat the idempotency record refused settles it: the
        record carries the token of the transaction that wrote it. Ours: this
        transaction was applied (all or nothing), so None, done. Another's: the key's
        write was applied before and ours never was, so ``AlreadyApplied``. Without
        such a refusal the outcome stays unknown (``exc``)."""
        cause = exc.__cause__
        applied_before = self.idempotency.on_condition_failed if self.idempotency else None
        if applied_before is None or not isinstance(cause, ClientError):
            return exc
        for action, reason in zip(self.actions, cancellation_reasons(cause), strict=False):
            if action is self.idempotency and reason.get("Code") == "ConditionalCheckFailed":
                stored: dict[str, Any] = dict(reason.get("Item") or {})
                if stored.get(IDEMPOTENCY_TOKEN) == {"S": self.token}:
                    return None
                return applied_before(stored, exc.attempts)
        return exc

    def explain(self, exc: TransactionCanceled) -> Exception:
        """The error of the action that caused the cancellation."""
        failures = []
        for action, reason in zip(self.actions, exc.reasons, strict=False):
            code = reason.get("Code") or "None"
            if code == "ConditionalCheckFailed" and action.on_condition_failed is not None:
                return action.on_condition_failed(reason.get("Item"), exc.attempts)
            if code != "None":
                failures.append(f"{action.describe}: {code} {reason.get('Message', '')}".strip())
        return TransactionCanceled(
            "DynamoDB cancelled the transaction; nothing was written. "
            + ("; ".join(failures) or "No reason was given."),
            reasons=exc.reasons,
            attempts=exc.attempts,
        )


@dataclass(frozen=True)
class AppliedBefore:
    """An idempotency record already stored: the write it guards was applied before."""

    key: str

    def __call__(self, raw_item: dict[str, Any] | None, attempts: int) -> Exception:
        applied = raw_item.get("applied_at", {}).get("N") if raw_item else None
        return AlreadyApplied(
            f"A write with idempotency key {self.key!r} was already applied"
            f"{f' (at {applied}, epoch seconds)' if applied else ''}; nothing was done now.",
            attempts=attempts,
        )


def idempotency_action(key: str, token: str) -> Action:
    """A record that exists once per key: written with the transaction, it turns a
    repeat of the same logical write into ``AlreadyApplied`` instead of a second effect.
    It keeps the transaction's ``token``, so that a lost answer's repeat can tell the
    record its own first attempt wrote from an earlier write's (``Transaction.settle``)."""
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
            IDEMPOTENCY_TOKEN: {"S": token},
            IDEMPOTENCY_EXPIRES: {"N": str(now + IDEMPOTENCY_WINDOW)},
        },
        "ConditionExpression": "attribute_not_exists(#k)",
        "ExpressionAttributeNames": {"#k": IDEMPOTENCY_KEY},
        "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    }

    item_key = {IDEMPOTENCY_KEY: params["Item"][IDEMPOTENCY_KEY]}
    return Action("Put", params, f"idempotency key {key!r}", AppliedBefore(key), key=item_key)


def _fits_a_key(text: str) -> bool:
    try:
        return wire.text_size(text) <= wire.MAX_PARTITION_KEY_BYTES
    except UnicodeEncodeError:
        return False


class TransactionBlock(Generic[T]):
    """The block of ``transaction()``: it commits on a clean exit. Collecting
    writes sends nothing, so only ``async with``'s commit leaves the event loop
    (in a worker thread, as the model's async methods do)."""

    def __init__(self, tx: T) -> None:
        self.tx = tx

    def __enter__(self) -> T:
        return self.tx

    def __exit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is None:
            self.tx.commit()

    async def __aenter__(self) -> T:
        return self.tx

    async def __aexit__(self, exc_type: type[BaseException] | None, *exc: object) -> None:
        if exc_type is None:
            await threads.in_thread(self.tx.commit)()


def read(requests: Iterable[tuple[type[M], Any]], *, consistent: bool = True) -> list[M | None]:
    """Several items read atomically (one TransactGetItems), in the order asked;
    ``None`` for a missing item. Each request is ``(Model, key)``; reading several
    models, ``isinstance`` tells the entries apart (to a type checker too)."""
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
    out: list[M | None] = []
    for (model, _), result in zip(requests, response.get("Responses", []), strict=False):
        item = result.get("Item")
        out.append(model._meta.decode(item) if item else None)  # type: ignore[arg-type]
    return out
