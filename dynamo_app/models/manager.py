"""``Model.objects``: the entry point to reads, creates, queries and batches.

As in Django, subclass ``Manager`` to add table-level methods and assign an
instance to a model attribute; every model gets ``objects`` if it declares none.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, Generic, Self, TypeVar

from .. import signals
from ..client.handle import get_handle
from ..client.retry import same_item
from ..exceptions import AlreadyExists, OutcomeUnknown, QueryError, StaleObjectError
from ..expressions import Condition
from . import batch
from .aio import in_thread
from .habits import orm_method
from .query import QuerySet

if TYPE_CHECKING:
    from ..partiql import Result
    from .base import Model

M = TypeVar("M", bound="Model")
Owner = TypeVar("Owner", bound="Model")


def _resolved(values: dict[str, Any] | None) -> dict[str, Any]:
    """``defaults`` with callables called, as Django's ``get_or_create`` does."""
    return {name: value() if callable(value) else value for name, value in (values or {}).items()}


class Manager(Generic[M]):
    model: type[M]

    def bind(self, model: type[M]) -> Manager[M]:
        manager = copy.copy(self)
        manager.model = model
        return manager

    def __get__(self, instance: None, owner: type[Model]) -> Self:
        if instance is not None:
            raise AttributeError(
                f"Manager isn't accessible via {owner.__name__} instances; use {owner.__name__}."
                "objects."
            )
        return self

    def get_queryset(self) -> QuerySet[M]:
        return QuerySet(self.model)

    if not TYPE_CHECKING:  # hidden from type checkers, which would accept any attribute

        def __getattr__(self, name: str) -> Any:
            """``objects.all()``, ``objects.count()``: refused naming the DynamoDB way."""
            model = self.__dict__.get("model")
            error = orm_method(model, "objects", name, query_has=hasattr(QuerySet, name))
            if error is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            raise error

    # --- single items: one request each

    def get(self, /, *, consistent: bool = False, **key: Any) -> M:
        """One GetItem by the full primary key; raises ``Model.DoesNotExist``.
        Without ``consistent``, DAX answers it when DAX_ENDPOINTS is set."""
        meta = self.model._meta
        names = {f.name for f in meta.key_fields}
        if set(key) != names:
            given = ", ".join(key) or "nothing"
            raise QueryError(
                f"{meta.object_name}.objects.get() takes the primary key "
                f"({', '.join(f.name for f in meta.key_fields)}), got {given}. "
                "To find items by other attributes use filter(...).first() on a query or index."
            )
        item = self._item(key, consistent)
        if item is None:
            raise self.model.DoesNotExist(f"{meta.object_name} matching {key} does not exist.")
        return meta.decode(item)  # type: ignore[return-value]

    def _item(self, key: dict[str, Any], consistent: bool) -> dict[str, Any] | None:
        """The stored item (wire form) with this primary key, or None."""
        meta = self.model._meta
        handle = get_handle()
        response = handle.call(
            "get_item",
            cacheable=True,
            TableName=handle.table_name(meta.table_name),
            Key=meta.key_of(key),
            ConsistentRead=consistent,
        )
        item = response.get("Item")
        return item if item is None or meta.held_under_own_key(item) else None

    def create(self, /, **values: Any) -> M:
        """Insert a new item, conditioned on its key being free (``AlreadyExists``).

        One PutItem; with unique constraints, one TransactWriteItems that also
        claims each unique value (``UniqueViolation`` when one is taken). As in
        Django, it is ``save(force_insert=True)``, so an overridden ``save()``
        applies and the signals are sent.
        """
        obj = self.model(**values)
        obj.save(force_insert=True)
        return obj

    def increment(
        self,
        /,
        *,
        idempotency_key: str | None = None,
        defaults: dict[str, Any] | None = None,
        **values: Any,
    ) -> dict[str, Any]:
        """Add to counters without reading them: ``increment(team_id="t1", views=1)``.

        Key fields name the item (created at 0 if missing), the other keyword
        arguments are amounts to add; returns the new values. An item it
        creates gets ``defaults`` and the fields' own defaults (never written
        over an existing item); a required field missing from both is refused
        before any request, and so is a model whose new item would need a
        unique value (create it with ``create()`` first). One UpdateItem,
        never repeated when its answer is lost (a 5xx, a timeout: it may have
        been applied, so that is ``OutcomeUnknown``) unless an
        ``idempotency_key`` makes it a transaction that applies once per key
        (then the new values are read back with one consistent GetItem).
        """
        meta = self.model._meta
        key_names = [f.name for f in meta.key_fields]
        missing = [name for name in key_names if name not in values]
        amounts = {k: v for k, v in values.items() if k not in key_names}
        if missing or not amounts:
            raise ValueError(
                f"{meta.object_name}.objects.increment() needs the key "
                f"({', '.join(key_names)}) and at least one counter to add to; "
                f"missing: {', '.join(missing) or 'a counter'}."
            )
        for name, amount in amounts.items():
            if isinstance(amount, bool) or not isinstance(amount, (int, Decimal)):
                raise ValueError(
                    f"{meta.object_name}.objects.increment(): {name}={amount!r} is not a number."
                )
        obj = self.model(**{name: values[name] for name in key_names})
        return obj.update(
            add=amounts, upsert=True, defaults=defaults, idempotency_key=idempotency_key
        )

    # --- Django's get_or_create / update_or_create: conditional writes, not read-then-write

    def get_or_create(
        self, /, defaults: dict[str, Any] | None = None, **key: Any
    ) -> tuple[M, bool]:
        """``(obj, created)``: the item with this primary key, created from ``key``
        and ``defaults`` (values, or callables) if it does not exist.

        One request either way: the create is conditioned on the key being free
        (a PutItem, or a TransactWriteItems claiming unique values), and when it
        is not, DynamoDB returns the stored item with the refusal. So two racing
        calls create one item, and the other returns it. A refused conditional
        write is billed as a write.
        """
        self._require_key("get_or_create", key)
        try:
            return self.create(**key, **_resolved(defaults)), True
        except AlreadyExists as exc:
            return self._stored(exc, key), False

    def update_or_create(
        self,
        /,
        defaults: dict[str, Any] | None = None,
        create_defaults: dict[str, Any] | None = None,
        **key: Any,
    ) -> tuple[M, bool]:
        """``(obj, created)``: set ``defaults`` on the item with this primary key,
        or create it from ``key`` and ``create_defaults`` (else ``defaults``).

        Every write is conditional, so a race never loses an update or creates
        twice; the loser of a race tries again (at most ``RETRY.MAX_ATTEMPTS``
        times). Requests: a model without ``VersionField`` or ``Meta.unique``
        updates with one UpdateItem conditioned on the item existing (plus one
        PutItem when it must create); otherwise one consistent GetItem, then
        ``save(update_fields=...)`` conditioned on what was read (or a create).

        An UpdateItem whose answer is lost is never sent again (``OutcomeUnknown``)
        but settled: it only sets values, so one consistent GetItem showing them
        all in place means it is done (``_settled``).
        """
        self._require_key("update_or_create", key)
        changes = _resolved(defaults)
        values = {**key, **(changes if create_defaults is None else _resolved(create_defaults))}
        if not changes:
            return self.get_or_create(defaults=values, **key)
        meta = self.model._meta
        blind = meta.version is None and not meta.unique
        attempts = get_handle().retry.settings.max_attempts
        for _ in range(attempts):
            try:
                # As Django's: the auto_now fields move with the update.
                stamped = [f for f in meta.auto_now if f.name not in changes]
                if blind:
                    obj = self.model(**key)
                    sets = {**changes, **{f.name: f.pre_save(obj, False) for f in stamped}}
                    try:
                        obj.update(set=sets)
                    except OutcomeUnknown as exc:
                        obj = self._settled(key, sets, exc)
                else:
                    obj = self.get(consistent=True, **key)
                    obj.__dict__.update(changes)
                    obj.save(update_fields=[*changes, *(f.name for f in stamped)])
                return obj, False
            except (self.model.DoesNotExist, StaleObjectError):
                pass  # missing (create it), or changed or deleted since read (again)
            try:
                return self.create(**values), True
            except AlreadyExists:
                pass  # created by someone else meanwhile: update that one
        raise StaleObjectError(
            f"{meta.object_name}.objects.update_or_create({key}) lost {attempts} races in a row "
            "to other writers of the item; nothing was written by the last attempt. Try again."
        )

    def _settled(self, key: dict[str, Any], changes: dict[str, Any], lost: OutcomeUnknown) -> M:
        """After the lost answer of an update setting ``changes``: the item as
        stored (one consistent GetItem) when it holds every one of them - our
        update, or the same values set by someone else: the state asked for
        either way. Else (other values, or no item) ``lost`` stands: the update
        may have been applied and changed or deleted since, so it is not sent
        again over a newer write."""
        meta = self.model._meta
        item = self._item(key, consistent=True)
        fields = [meta.fields_by_name[name] for name in changes]
        wanted = {
            f.db_name: None if v is None else f.encode(v)
            for f, v in zip(fields, changes.values(), strict=True)
        }
        if item is None or not same_item(
            {name: v for name, v in wanted.items() if v is not None},
            {name: item[name] for name in wanted if name in item},
        ):
            found = "no item" if item is None else "other values"
            lost.add_note(
                f"A consistent read of the item found {found}: the update was not applied, or "
                "was changed or deleted since. It was not sent again."
            )
            raise lost
        obj: M = meta.decode(item)  # type: ignore[assignment]
        signals.send_after_write(
            [(signals.post_save, obj, {"created": False, "update_fields": frozenset(changes)})]
        )
        return obj

    def _require_key(self, method: str, key: dict[str, Any]) -> None:
        names = [f.name for f in self.model._meta.key_fields]
        if set(key) != set(names):
            raise QueryError(
                f"{self.model.__name__}.objects.{method}() takes the primary key "
                f"({', '.join(names)}) as keyword arguments, got {', '.join(key) or 'nothing'}; "
                "pass the other values in defaults={...}."
            )

    def _stored(self, refused: AlreadyExists, key: dict[str, Any]) -> M:
        """The item a refused create found (returned with the refusal; read if not)."""
        if isinstance(refused.item, self.model):
            return refused.item
        return self.get(consistent=True, **key)

    # --- queries

    def filter(self, **lookups: Any) -> QuerySet[M]:
        return self.get_queryset().filter(**lookups)

    def using_index(self, name: str) -> QuerySet[M]:
        return self.get_queryset().using_index(name)

    def scan(self) -> QuerySet[M]:
        """Read the whole table (or an index, with ``.using_index()``), page by page;
        what ``get_queryset()`` adds (``where()``, an index, ``only()``) applies."""
        return self.get_queryset()._as_scan()

    def partiql(
        self,
        statement: str,
        parameters: Sequence[Any] = (),
        *,
        scan: bool = False,
        consistent: bool = False,
    ) -> Result[M]:
        """One PartiQL ``ExecuteStatement`` on this model's table, ``{table}`` in the
        statement: ``partiql("SELECT * FROM {table} WHERE team_id = ?", [t])``.

        Sent now; the instances it returns are paged in as they are iterated.
        A SELECT needs an equality on the partition key, or ``scan=True``
        (see ``dynamo_app.partiql``).
        """
        from ..partiql import execute

        return execute(statement, parameters, model=self.model, scan=scan, consistent=consistent)

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

    # --- async twins: the same calls, run in a worker thread (see aio.py)

    aget = in_thread(get)
    acreate = in_thread(create)
    aincrement = in_thread(increment)
    aget_or_create = in_thread(get_or_create)
    aupdate_or_create = in_thread(update_or_create)
    abulk_get = in_thread(bulk_get)
    abulk_save = in_thread(bulk_save)
    abulk_delete = in_thread(bulk_delete)

    def where(self, *conditions: Condition, **lookups: Any) -> QuerySet[M]:
        raise QueryError(
            f"where() filters a query or a scan: {self.model.__name__}.objects.filter(<partition "
            "key>=...).where(...), or .scan().where(...)."
        )


if TYPE_CHECKING:

    class ModelManager(Manager[Any]):
        """``Model.objects`` to a type checker: read from a model class, the manager
        of that class (``Player.objects`` is a ``Manager[Player]``). Declared without
        an annotation, so a model's own ``objects = PlayerManager()`` replaces it."""

        def __get__(self, instance: None, owner: type[Owner]) -> Manager[Owner]: ...  # type: ignore[override]
