"""Batches: BatchGetItem in chunks of 100, BatchWriteItem in chunks of 25.

Every item is validated (and sized) before the first request, so a bad
object never leaves a batch half written. Keys or items DynamoDB leaves
unprocessed (throttling, size limits) are sent again with backoff; when a
chunk stops making progress for the retry budget, ``BatchIncomplete`` says
exactly what was not read or written. Results never depend on the order
DynamoDB answers in.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from ..exceptions import BatchIncomplete
from ..handle import get_handle

if TYPE_CHECKING:
    from .base import Model

M = TypeVar("M", bound="Model")
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
    unprocessed_key: str,
    on_response: Callable[[dict[str, Any]], None],
) -> None:
    """Send ``request`` and its unprocessed remainder until nothing is left; give up
    (``BatchIncomplete``) only after ``RETRY.MAX_ATTEMPTS`` rounds without progress."""
    handle = get_handle()
    attempt = 0
    left: int | None = None
    while True:
        response = handle.call(operation, RequestItems=request)
        on_response(response)
        request = response.get(unprocessed_key) or {}
        if not request:
            return
        entries = _entries(request)
        attempt = attempt + 1 if left is not None and len(entries) >= left else 1
        left = len(entries)
        if attempt >= handle.retry.settings.max_attempts:
            meta = model._meta
            keys = [{f.name: f.decode(e[f.db_name]) for f in meta.key_fields} for e in entries]
            raise BatchIncomplete(
                f"{operation} on {meta.object_name}: {len(keys)} item(s) still unprocessed after "
                f"{attempt} rounds without progress (DynamoDB was throttling); everything else "
                f"was done. Not done: {keys[:10]}{' ...' if len(keys) > 10 else ''}",
                unprocessed=keys,
            )
        handle.retry.sleep(handle.retry.delay(attempt))


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
        _until_done(model, "batch_get_item", request, "UnprocessedKeys", collect)
    decoded = {key_id: meta.decode(item) for key_id, item in found.items()}
    return [decoded.get(key_id) for key_id in ids]  # type: ignore[misc]


def _write(model: type[Model], requests: dict[tuple[Any, ...], dict[str, Any]]) -> None:
    table = get_handle().table_name(model._meta.table_name)
    for chunk in _chunks(list(requests.values()), WRITE_CHUNK):
        _until_done(model, "batch_write_item", {table: chunk}, "UnprocessedItems", lambda r: None)


def _check_model(model: type[Model], obj: Any) -> None:
    if not isinstance(obj, model):
        raise TypeError(f"{model.__name__}.objects takes {model.__name__} instances, got {obj!r}")


def bulk_save(model: type[Model], objs: Iterable[Model]) -> None:
    """Put every object (whole items; BatchWriteItem takes no conditions).

    Several objects with one key are written once, the last one winning, as
    a sequence of ``save()`` calls would.
    """
    from .writes import put_params

    meta = model._meta
    requests: dict[tuple[Any, ...], dict[str, Any]] = {}
    for obj in objs:
        _check_model(model, obj)
        item = put_params(obj)["Item"]
        key_id = meta.key_id(item)
        requests.pop(key_id, None)
        requests[key_id] = {"PutRequest": {"Item": item}}
    _write(model, requests)


def bulk_delete(model: type[Model], objs_or_keys: Iterable[Any]) -> None:
    """Delete items given as instances or keys (dict, tuple or partition value)."""
    meta = model._meta
    requests: dict[tuple[Any, ...], dict[str, Any]] = {}
    for value in objs_or_keys:
        key = meta.key_from_any(value)
        requests[meta.key_id(key)] = {"DeleteRequest": {"Key": key}}
    _write(model, requests)
