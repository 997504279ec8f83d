"""Receivers per model, and the delivery of a record to those of its model.

A record names its table, not its model: ``route`` finds the model that owns
the item among the streamed models deployed on that table. Today a table has
one such model; a table several models share (single-table design) is routed
here, by the attribute that says which entity an item is, once models declare
one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ..client.handle import Handle, get_handle
from ..exceptions import ModelDefinitionError, ReceiverFailed, StreamError
from .records import StreamRecord, parse

if TYPE_CHECKING:
    from ..models.base import Model

M = TypeVar("M", bound="Model")
Receiver = Callable[[StreamRecord[Any]], object]


def receiver_name(func: Callable[..., object]) -> str:
    return f"{func.__module__}.{func.__qualname__}"


class Receivers:
    """The receivers of each model, in the order they were connected.

    A receiver is known by its module and qualified name, so connecting it
    again (a module reloaded by the autoreloader) replaces it, never doubles it.
    """

    def __init__(self) -> None:
        self._by_model: dict[str, dict[str, Receiver]] = {}
        self._lock = threading.Lock()

    def connect(self, model: type[Model], func: Receiver) -> None:
        meta = model._meta
        if meta.abstract or meta.stream is None:
            why = "is abstract" if meta.abstract else "declares no Meta.stream"
            raise ModelDefinitionError(
                f"{receiver_name(func)} cannot receive {meta.object_name}'s changes: the model "
                f"{why}, so its table has no stream. Give it Meta.stream (e.g. "
                '"new_and_old_images").'
            )
        with self._lock:
            self._by_model.setdefault(meta.label, {})[receiver_name(func)] = func

    def disconnect(self, model: type[Model], func: Receiver) -> None:
        with self._lock:
            self._by_model.get(model._meta.label, {}).pop(receiver_name(func), None)

    def of(self, model: type[Model]) -> list[Receiver]:
        with self._lock:
            return list(self._by_model.get(model._meta.label, {}).values())


receivers = Receivers()


def receiver(
    model: type[M],
) -> Callable[[Callable[[StreamRecord[M]], object]], Callable[[StreamRecord[M]], object]]:
    """Decorator: call the function with each change record of ``model``'s items.

    Import the module that declares receivers in your ``AppConfig.ready()``
    (as for Django's signals), so every process that delivers records has them.
    """

    def connect(func: Callable[[StreamRecord[M]], object]) -> Callable[[StreamRecord[M]], object]:
        receivers.connect(model, func)
        return func

    return connect


def streamed_models(handle: Handle) -> dict[str, list[type[Model]]]:
    """The models declaring ``Meta.stream``, by their table's deployed name."""
    from ..models.registry import registered_models

    tables: dict[str, list[type[Model]]] = {}
    for model in registered_models():
        if model._meta.stream is not None:
            tables.setdefault(handle.table_name(model._meta.table_name), []).append(model)
    return tables


def route(table: str, models: list[type[Model]], raw: Mapping[str, Any]) -> type[Model]:
    """The model whose item the record is about."""
    if len(models) == 1:
        return models[0]
    if not models:
        raise StreamError(
            f"A stream record came from table {table!r}, which no model declaring Meta.stream "
            "is deployed as: check the event source (and DYNAMO['TABLE_PREFIX'] / TABLE_NAMES)."
        )
    names = ", ".join(m._meta.label for m in models)
    raise StreamError(
        f"Table {table!r} holds the items of {names}, and nothing in an item says which "
        "model it belongs to, so its stream records cannot be routed: give each model a "
        "table of its own."
    )


class Dispatcher:
    """Delivers records to the receivers of their model (the streamed models
    looked up once, when it is made)."""

    def __init__(self, handle: Handle | None = None) -> None:
        self.tables = streamed_models(handle or get_handle())

    def deliver(self, raw: Mapping[str, Any], table: str) -> StreamRecord[Any]:
        """Decode a record (``GetRecords`` form) of ``table`` by its model and call
        that model's receivers in order; ``ReceiverFailed`` at the first that raises."""
        model = route(table, self.tables.get(table, []), raw)
        try:
            record = parse(raw, model, table)
        except Exception as exc:
            sequence = raw.get("dynamodb", {}).get("SequenceNumber", "?")
            raise StreamError(
                f"Stream record #{sequence} of table {table!r} could not be decoded as "
                f"{model._meta.object_name}: {type(exc).__name__}: {exc}"
            ) from exc
        for func in receivers.of(model):
            try:
                func(record)
            except Exception as exc:
                raise ReceiverFailed(
                    f"Receiver {receiver_name(func)} failed on {record} of table {table!r}: "
                    f"{type(exc).__name__}: {exc}",
                    record=record,
                    receiver=func,
                ) from exc
        return record
