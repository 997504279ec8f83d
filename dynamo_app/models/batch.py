"""Batches: BatchGetItem in chunks of 100, BatchWriteItem in chunks of 25.

Every item is validated (and sized) before the first request, so a bad
object never leaves a batch half written. Keys or items DynamoDB leaves
unprocessed (throttling, size limits) are sent again with backoff. A batch
write that stops says what it did: ``BatchIncomplete`` when the items left are
known not written, ``BatchOutcomeUnknown`` when the request it stopped at may
have written its items; either lists the keys written, not written and
unknown. Results never depend on the order DynamoDB answers in.

BatchWriteItem takes no conditions, so it cannot keep a unique constraint or a
``VersionField``: models with either are written as the same actions
``save()`` / ``delete()`` use, packed into as few TransactWriteItems as the
limits allow (each object atomic with its locks).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from django.utils.translation import ngettext

from ..actions import Action
from ..client.handle import get_handle
from ..exceptions import (
    BatchIncomplete,
    BatchOutcomeUnknown,
    DynamoError,
    OutcomeUnknown,
    WriteError,
)
from ..transactions import MAX_ACTIONS, MAX_REQUEST_BYTES, Transaction

if TYPE_CHECKING:
    from .base import Model

M = TypeVar("M", bound="Model")
Plan = tuple["Model", list[Action]]  # an object and the actions that write it
Key = tuple[Any, ...]  # an item's key identity (Options.key_id)
GET_CHUNK = 100
WRITE_CHUNK = 25


def _chunks(values: list[Any], size: int) -> Iterator[list[Any]]:
    for start in range(0, len(values), size):
        yield values[start : start + size]


def _entries(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The wire keys (or items) of a batch request, whatever its operation."""
    out = []
    for value in request.values():
        for entry in value["Keys"] if isinstance(value, dict) else value:
            if "PutRequest" in entry:
                out.append(entry["PutRequest"]["Item"])
            elif "DeleteRequest" in entry:
                out.append(entry["DeleteRequest"]["Key"])
            else:
                out.append(entry)
    return out


def _listed(keys: list[dict[str, Any]]) -> str:
    return f"{keys[:10]}{' ...' if len(keys) > 10 else ''}"


class _Progress:
    """Where a batch write is: the keys known written, the keys of the request
    being sent, and the keys not sent yet; when a request fails, the batch's
    error says which are which."""

    def __init__(self, model: type[Model], verb: str, keys: dict[Key, dict[str, Any]]) -> None:
        self.label = f"{model.__name__}.objects.{verb}()"
        self.keys = keys  # key identity -> {field name: value}, in the batch's order
        self.written: list[Key] = []
        self.sending: list[Key] = []

    def left(self, unprocessed: Iterable[Key]) -> None:
        """The request was answered: all but ``unprocessed`` are written."""
        rest = set(unprocessed)
        self.written += [k for k in self.sending if k not in rest]
        self.sending = [k for k in self.sending if k in rest]

    @contextmanager
    def sends(self, keys: list[Key], what: str) -> Iterator[None]:
        """A request (``what``) carrying ``keys`` is sent, and its remainder
        until done. A failure with nothing written yet is its own error (the
        one a single write would raise); after some, ``BatchIncomplete``; a lost
        answer, ``BatchOutcomeUnknown``."""
        self.sending = keys
        try:
            yield
        except OutcomeUnknown as exc:
            raise self.unknown(exc, what) from exc
        except BatchIncomplete:
            raise
        except DynamoError as exc:
            if not self.written:
                raise
            raise self.incomplete(
                f"the next {what} failed and wrote nothing ({type(exc).__name__}: {exc})"
            ) from exc
        self.left(())

    def _not_sent(self) -> list[Key]:
        done = set(self.written) | set(self.sending)
        return [k for k in self.keys if k not in done]

    def _done(self) -> str:
        return f"{self.label}: {len(self.written)} of {len(self.keys)} items were written"

    def incomplete(self, why: str) -> BatchIncomplete:
        """The items not written are known not written: ``why`` says what stopped it."""
        left = [self.keys[k] for k in self.sending + self._not_sent()]
        return BatchIncomplete(
            f"{self._done()}; {why}; nothing after it was sent. Not written (safe to send "
            f"again): {_listed(left)} (all in .unprocessed).",
            unprocessed=left,
        )

    def unknown(self, exc: OutcomeUnknown, what: str) -> BatchOutcomeUnknown:
        """The request being sent may or may not have written its items."""
        unknown = [self.keys[k] for k in self.sending]
        unprocessed = [self.keys[k] for k in self._not_sent()]
        attempts = ngettext("%(n)d attempt", "%(n)d attempts", exc.attempts) % {"n": exc.attempts}
        return BatchOutcomeUnknown(
            f"{self._done()}; the next {what} may or may not have written its {len(unknown)} "
            f"(its answer was lost: {exc.operation} after {attempts}, see "
            f"__cause__); the {len(unprocessed)} after it were not sent. Unknown (in .unknown): "
            f"{_listed(unknown)}; not written (in .unprocessed): {_listed(unprocessed)}. Read "
            "the unknown ones (consistent=True) before writing them again.",
            written=[self.keys[k] for k in self.written],
            unknown=unknown,
            unprocessed=unprocessed,
            operation=exc.operation,
            attempts=exc.attempts,
        )


def bulk_get(model: type[M], keys: Iterable[Any], *, consistent: bool = False) -> list[M | None]:
    """Items for ``keys`` in the caller's order; ``None`` where no item exists.
    Keys DynamoDB keeps leaving unprocessed are ``BatchIncomplete``."""
    meta = model._meta
    wire_keys = [meta.key_from_any(k) for k in keys]
    ids = [meta.key_id(k) for k in wire_keys]
    unique = list(dict(zip(ids, wire_keys, strict=True)).values())
    handle = get_handle()
    table = handle.table_name(meta.table_name)
    found: dict[tuple[Any, ...], dict[str, Any]] = {}

    def incomplete(remainder: dict[str, Any], rounds: int) -> BatchIncomplete:
        keys = [meta.key_values(e) for e in _entries(remainder)]
        left = ngettext("%(n)d key", "%(n)d keys", len(keys)) % {"n": len(keys)}
        return BatchIncomplete(
            f"batch_get_item on {meta.object_name}: {left} still unprocessed after "
            f"{rounds} rounds without progress (DynamoDB was throttling); nothing is returned. "
            f"Not read: {_listed(keys)}",
            unprocessed=keys,
        )

    for chunk in _chunks(unique, GET_CHUNK):
        request = {table: {"Keys": chunk, "ConsistentRead": consistent}}
        for response in handle.until_processed(
            "batch_get_item", request, incomplete, cacheable=True
        ):
            for item in response.get("Responses", {}).get(table, []):
                if meta.held_under_own_key(item):
                    found[meta.key_id(item)] = item
    decoded = {key_id: meta.decode(item) for key_id, item in found.items()}
    return [decoded.get(key_id) for key_id in ids]  # type: ignore[misc]


def _write(
    model: type[Model], verb: str, requests: dict[Key, tuple[dict[str, Any], dict[str, Any]]]
) -> None:
    """Send ``requests`` (key identity -> (key, PutRequest or DeleteRequest)) in
    BatchWriteItems of 25, each one's unprocessed remainder again until done."""
    meta = model._meta
    handle = get_handle()
    table = handle.table_name(meta.table_name)
    progress = _Progress(model, verb, {k: key for k, (key, _) in requests.items()})

    def throttled(remainder: dict[str, Any], rounds: int) -> BatchIncomplete:
        return progress.incomplete(
            f"a request's last {len(progress.sending)} items were still unprocessed after "
            f"{rounds} rounds without progress (DynamoDB was throttling)"
        )

    for chunk in _chunks(list(requests), WRITE_CHUNK):
        request = {table: [requests[k][1] for k in chunk]}
        with progress.sends(chunk, "BatchWriteItem"):
            for response in handle.until_processed("batch_write_item", request, throttled):
                unprocessed = _entries(response.get("UnprocessedItems") or {})
                progress.left(meta.key_id(e) for e in unprocessed)


def _guarded(model: type[Model]) -> bool:
    """Whether a write of this model carries conditions (locks, versions)."""
    return bool(model._meta.unique) or model._meta.version is not None


def _linked(plans: list[Plan]) -> list[list[Plan]]:
    """Plans grouped so that two touching one item (one object hands a unique
    value to another) share a transaction, where the hand-over is one action."""
    parent = list(range(len(plans)))

    def root(i: int) -> int:
        while parent[i] != i:
            i = parent[i]
        return i

    first: dict[Any, int] = {}
    for i, (_, actions) in enumerate(plans):
        for action in actions:
            j = first.setdefault(action.target, i)
            parent[root(i)] = root(j)
    groups: dict[int, list[Plan]] = {}
    for i, plan in enumerate(plans):
        groups.setdefault(root(i), []).append(plan)
    return list(groups.values())


def _transactions(plans: list[Plan]) -> list[tuple[Transaction, list[Model]]]:
    """Groups packed in order into transactions within DynamoDB's limits, each
    prepared (merged and checked) before the first is sent."""
    out: list[tuple[Transaction, list[Model]]] = []
    objs: list[Model]
    tx, objs, size = Transaction(), [], 0
    for group in _linked(plans):
        actions = [a for _, plan in group for a in plan]
        weight = sum(a.size() for a in actions)
        full = len(tx.actions) + len(actions) > MAX_ACTIONS or size + weight > MAX_REQUEST_BYTES
        if tx.actions and full:
            out.append((tx, objs))
            tx, objs, size = Transaction(), [], 0
        tx.extend(actions)
        objs.extend(obj for obj, _ in group)
        size += weight
    if tx.actions:
        out.append((tx, objs))
    for tx, _ in out:
        tx.prepare()
    return out


def _transact(model: type[Model], verb: str, plans: list[Plan]) -> None:
    """Send the plans' transactions in order; the first that fails stops the
    batch (``_Progress.sends`` says how)."""
    meta = model._meta
    transactions = _transactions(plans)
    keys = {meta.key_id(meta.key_of(obj.__dict__)): obj.key for obj, _ in plans}
    progress = _Progress(model, verb, keys)
    for tx, objs in transactions:
        with progress.sends([meta.key_id(meta.key_of(o.__dict__)) for o in objs], "transaction"):
            tx.commit()


def _check_model(model: type[Model], obj: Any) -> None:
    if not isinstance(obj, model):
        raise TypeError(f"{model.__name__}.objects takes {model.__name__} instances, got {obj!r}")


def bulk_save(model: type[Model], objs: Iterable[Model]) -> None:
    """Put every object: whole items in BatchWriteItem (which takes no conditions),
    or, for a model with unique constraints or a ``VersionField``, each object
    as ``save()`` would write it, packed into TransactWriteItems.

    Several objects with one key are written once, the last one winning, as
    a sequence of ``save()`` calls would.
    """
    from .writes import save_actions

    meta = model._meta
    plans: dict[tuple[Any, ...], Plan] = {}
    for obj in objs:
        _check_model(model, obj)
        actions = save_actions(obj)
        key_id = meta.key_id(actions[0].params["Item"])
        plans.pop(key_id, None)
        plans[key_id] = (obj, actions)
    if _guarded(model):
        _transact(model, "bulk_save", list(plans.values()))
        return
    _write(
        model,
        "bulk_save",
        {
            k: (obj.key, {"PutRequest": {"Item": a[0].params["Item"]}})
            for k, (obj, a) in plans.items()
        },
    )


def bulk_delete(model: type[Model], objs_or_keys: Iterable[Any]) -> None:
    """Delete items given as instances or keys (dict, tuple or partition value);
    a model with unique constraints or a ``VersionField`` takes instances, each
    deleted as ``delete()`` would, with its locks."""
    meta = model._meta
    if _guarded(model):
        from .writes import delete_actions

        plans: dict[tuple[Any, ...], Plan] = {}
        for obj in objs_or_keys:
            if not isinstance(obj, model):
                raise WriteError(
                    f"{model.__name__}.objects.bulk_delete() takes {model.__name__} instances "
                    f"(read with objects.get() or bulk_get()), got {obj!r}: a model with unique "
                    "constraints or a VersionField deletes on the values it read, to release "
                    "their locks and check the version. Nothing was deleted."
                )
            plans[meta.key_id(meta.key_of(obj.__dict__))] = (obj, delete_actions(obj))
        _transact(model, "bulk_delete", list(plans.values()))
        return
    requests: dict[Key, tuple[dict[str, Any], dict[str, Any]]] = {}
    for value in objs_or_keys:
        key = meta.key_from_any(value)
        requests[meta.key_id(key)] = (meta.key_values(key), {"DeleteRequest": {"Key": key}})
    _write(model, "bulk_delete", requests)
