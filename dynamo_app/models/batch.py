"""Batches: BatchGetItem in chunks of 100, BatchWriteItem in chunks of 25.

Every item is validated (and sized) before the first request, so a bad
object never leaves a batch half written. Keys or items DynamoDB leaves
unprocessed (throttling, size limits) are sent again with backoff; when a
chunk stops making progress for the retry budget, ``BatchIncomplete`` says
exactly what was not read or written. Results never depend on the order
DynamoDB answers in.

BatchWriteItem takes no conditions, so it cannot keep a unique constraint or a
``VersionField``: models with either are written as the same actions
``save()`` / ``delete()`` use, packed into as few TransactWriteItems as the
limits allow (each object atomic with its locks).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from ..actions import Action
from ..exceptions import BatchIncomplete, DynamoError, WriteError
from ..handle import get_handle
from ..transactions import MAX_ACTIONS, MAX_REQUEST_BYTES, Transaction

if TYPE_CHECKING:
    from .base import Model

M = TypeVar("M", bound="Model")
Plan = tuple["Model", list[Action]]  # an object and the actions that write it
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


def _until_done(
    model: type[Model],
    operation: str,
    request: dict[str, Any],
    on_response: Callable[[dict[str, Any]], None],
    *,
    cacheable: bool = False,
) -> None:
    """Send ``request`` and its unprocessed remainder until nothing is left; give up
    (``BatchIncomplete``) only after ``RETRY.MAX_ATTEMPTS`` rounds without progress.
    ``cacheable``: a read DAX may answer (see dax.py)."""

    def incomplete(remainder: dict[str, Any], rounds: int) -> BatchIncomplete:
        meta = model._meta
        entries = _entries(remainder)
        keys = [meta.key_values(e) for e in entries]
        return BatchIncomplete(
            f"{operation} on {meta.object_name}: {len(keys)} item(s) still unprocessed after "
            f"{rounds} rounds without progress (DynamoDB was throttling); everything else "
            f"was done. Not done: {keys[:10]}{' ...' if len(keys) > 10 else ''}",
            unprocessed=keys,
        )

    for response in get_handle().until_processed(
        operation, request, incomplete, cacheable=cacheable
    ):
        on_response(response)


def bulk_get(model: type[M], keys: Iterable[Any], *, consistent: bool = False) -> list[M | None]:
    """Items for ``keys`` in the caller's order; ``None`` where no item exists."""
    meta = model._meta
    wire_keys = [meta.key_from_any(k) for k in keys]
    ids = [meta.key_id(k) for k in wire_keys]
    unique = list(dict(zip(ids, wire_keys, strict=True)).values())
    table = get_handle().table_name(meta.table_name)
    found: dict[tuple[Any, ...], dict[str, Any]] = {}

    def collect(response: dict[str, Any]) -> None:
        for item in response.get("Responses", {}).get(table, []):
            found[meta.key_id(item)] = item

    for chunk in _chunks(unique, GET_CHUNK):
        request = {table: {"Keys": chunk, "ConsistentRead": consistent}}
        _until_done(model, "batch_get_item", request, collect, cacheable=True)
    decoded = {key_id: meta.decode(item) for key_id, item in found.items()}
    return [decoded.get(key_id) for key_id in ids]  # type: ignore[misc]


def _write(model: type[Model], requests: dict[tuple[Any, ...], dict[str, Any]]) -> None:
    table = get_handle().table_name(model._meta.table_name)
    for chunk in _chunks(list(requests.values()), WRITE_CHUNK):
        _until_done(model, "batch_write_item", {table: chunk}, lambda r: None)


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
            j = first.setdefault(action.target(), i)
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
    batch. Nothing written yet: its own error. Some written: ``BatchIncomplete``
    naming the objects not written, with the failure as its cause."""
    transactions = _transactions(plans)
    done = 0
    for n, (tx, objs) in enumerate(transactions):
        try:
            tx.commit()
        except DynamoError as exc:
            if not done:
                raise
            left = [obj.key for _, rest in transactions[n:] for obj in rest]
            known = isinstance(exc, WriteError)  # a refusal; other errors leave it unknown
            outcome = "wrote nothing" if known else f"may have written its {len(objs)} objects"
            raise BatchIncomplete(
                f"{model.__name__}.objects.{verb}(): {done} of {len(plans)} objects were done "
                f"({n} transaction(s)); the next transaction failed and {outcome} "
                f"({type(exc).__name__}: {exc}); the ones after it were not sent. "
                f"{'Not done' if known else 'Not known to be done'}: {left[:10]}"
                f"{' ...' if len(left) > 10 else ''} (all in .unprocessed).",
                unprocessed=left,
            ) from exc
        done += len(objs)


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
    _write(model, {k: {"PutRequest": {"Item": a[0].params["Item"]}} for k, (_, a) in plans.items()})


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
    requests: dict[tuple[Any, ...], dict[str, Any]] = {}
    for value in objs_or_keys:
        key = meta.key_from_any(value)
        requests[meta.key_id(key)] = {"DeleteRequest": {"Key": key}}
    _write(model, requests)
