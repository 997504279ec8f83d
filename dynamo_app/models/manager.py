"""``Model.objects``: the entry point to reads, creates, queries and batches.

As in Django, subclass ``Manager`` to add table-level methods and assign an
instance to a model attribute; every model gets ``objects`` if it declares none.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from ..exceptions import AlreadyExists, ConditionFailed, QueryError
from ..expressions import Condition
from ..handle import get_handle
from . import batch, writes
from .query import QuerySet

if TYPE_CHECKING:
    from .base import Model

M = TypeVar("M", bound="Model")


class Manager(Generic[M]):
    model: type[M]

    def bind(self, model: type[M]) -> Manager[M]:
        manager = copy.copy(self)
        manager.model = model
        return manager

    def __get__(self, instance: Any, owner: type[M]) -> Manager[M]:
        if instance is not None:
            raise AttributeError(
                f"Manager isn't accessible via {owner.__name__} instances; use {owner.__name__}."
                "objects."
            )
        return self

    def get_queryset(self) -> QuerySet[M]:
        return QuerySet(self.model)

    # --- single items: one request each

    def get(self, *, consistent: bool = False, **key: Any) -> M:
        """One GetItem by the full primary key; raises ``Model.DoesNotExist``."""
        meta = self.model._meta
        names = {f.name for f in meta.key_fields}
        if set(key) != names:
            given = ", ".join(key) or "nothing"
            raise QueryError(
                f"{meta.object_name}.objects.get() takes the primary key "
                f"({', '.join(f.name for f in meta.key_fields)}), got {given}. "
                "To find items by other attributes use filter(...).first() on a query or index."
            )
        handle = get_handle()
        response = handle.call(
            "get_item",
            TableName=handle.table_name(meta.table_name),
            Key=meta.key_of(key),
            ConsistentRead=consistent,
        )
        item = response.get("Item")
        if item is None:
            raise self.model.DoesNotExist(f"{meta.object_name} matching {key} does not exist.")
        return meta.decode(item)  # type: ignore[return-value]

    def create(self, **values: Any) -> M:
        """Insert a new item (one conditional PutItem); ``AlreadyExists`` if its key is taken."""
        obj = self.model(**values)
        params = obj.build_put(condition=writes.not_exists(obj))
        try:
            get_handle().call("put_item", idempotent=True, **params)
        except ConditionFailed as exc:
            existing = obj._meta_failed(exc).item
            retried = getattr(exc.__cause__, "attempts", 1) > 1
            if retried and existing is not None and existing.__dict__ == obj.__dict__:
                return obj  # our own write, applied before a timeout and retried
            raise AlreadyExists(
                f"{type(obj).__name__} {obj.key} already exists; nothing was written. Use "
                "save() to overwrite it.",
                item=existing,
            ) from exc
        return obj

    # --- queries

    def filter(self, **lookups: Any) -> QuerySet[M]:
        return self.get_queryset().filter(**lookups)

    def using_index(self, name: str) -> QuerySet[M]:
        return self.get_queryset().using_index(name)

    def scan(self) -> QuerySet[M]:
        """Read the whole table (or an index, with ``.using_index()``), page by page."""
        return QuerySet(self.model, scan=True)

    # --- batches

    def bulk_get(self, keys: Iterable[Any], *, consistent: bool = False) -> list[M | None]:
        """Items by key, in the order given (``None`` for a missing item).

        A key is a dict of key fields, a ``(partition, sort)`` tuple, or a
        partition value for a table without a sort key.
        """
        return batch.bulk_get(self.model, keys, consistent=consistent)

    def bulk_save(self, objs: Iterable[M]) -> None:
        batch.bulk_save(self.model, objs)

    def bulk_delete(self, objs_or_keys: Iterable[Any]) -> None:
        batch.bulk_delete(self.model, objs_or_keys)

    def where(self, *conditions: Condition, **lookups: Any) -> QuerySet[M]:
        raise QueryError(
            f"where() filters a query or a scan: {self.model.__name__}.objects.filter(<partition "
            "key>=...).where(...), or .scan().where(...)."
        )
