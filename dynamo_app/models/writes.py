"""Write requests built as parameter dicts, separately from sending them.

Each builder returns exactly the parameters of one ``Put`` / ``Update`` /
``Delete`` / ``ConditionCheck`` action - the shape ``PutItem`` & co. take
and the shape a ``TransactWriteItems`` entry takes - so single-item writes
and transactions share one validated path. Senders add only what a
transaction cannot carry (``ReturnValues``).
"""

from __future__ import annotations

import builtins
from typing import TYPE_CHECKING, Any

from ..exceptions import ValidationError, WriteError
from ..expressions import Attr, Compiler, Condition, Update, all_of
from ..handle import get_handle

if TYPE_CHECKING:
    from .base import Model


def _table(obj: Model) -> str:
    return get_handle().table_name(obj._meta.table_name)


def _with_condition(params: dict[str, Any], c: Compiler, condition: Condition | None) -> None:
    if condition is not None:
        params["ConditionExpression"] = condition.compile(c)
        params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"


def exists(obj: Model) -> Condition:
    return Attr(obj._meta.partition_key.name).exists()


def not_exists(obj: Model) -> Condition:
    return Attr(obj._meta.partition_key.name).not_exists()


def both(first: Condition | None, second: Condition | None) -> Condition | None:
    return all_of(c for c in (first, second) if c is not None)


def put_params(obj: Model, condition: Condition | None = None) -> dict[str, Any]:
    """The whole item as a Put; refuses an instance read with ``only()``."""
    meta = obj._meta
    if obj._partial:
        raise WriteError(
            f"{meta.object_name} {obj.key} was read with only some attributes (only() or an "
            "index projection); a whole-item save would erase the others. Use "
            "save(update_fields=[...]), or refresh_from_db() first."
        )
    item = meta.encode(obj)
    meta.check_size(item)
    params: dict[str, Any] = {"TableName": _table(obj), "Item": item}
    c = meta.compiler()
    _with_condition(params, c, condition)
    params.update(c.params())
    return params


def update_params(obj: Model, update: Update, condition: Condition | None = None) -> dict[str, Any]:
    meta = obj._meta
    keys = {f.name for f in meta.key_fields}
    for path in update.paths():
        field, _ = meta.field_for_path(path)
        if field.name in keys:
            raise ValidationError(
                f"{meta.object_name}.{field.name} is part of the key and cannot be updated; "
                "delete the item and save it under the new key.",
                model=meta.object_name,
                field=field.name,
            )
    if not update:
        raise ValueError(f"{meta.object_name}: an update needs at least one action.")
    c = meta.compiler()
    params: dict[str, Any] = {
        "TableName": _table(obj),
        "Key": meta.key_of(obj.__dict__),
        "UpdateExpression": update.compile(c),
    }
    _with_condition(params, c, condition)
    params.update(c.params())
    return params


def delete_params(obj: Model, condition: Condition | None = None) -> dict[str, Any]:
    meta = obj._meta
    c = meta.compiler()
    params: dict[str, Any] = {"TableName": _table(obj), "Key": meta.key_of(obj.__dict__)}
    _with_condition(params, c, condition)
    params.update(c.params())
    return params


def condition_check_params(obj: Model, condition: Condition) -> dict[str, Any]:
    meta = obj._meta
    c = meta.compiler()
    params: dict[str, Any] = {"TableName": _table(obj), "Key": meta.key_of(obj.__dict__)}
    _with_condition(params, c, condition)
    params.update(c.params())
    return params


def build_update(
    obj: Model,
    *,
    set: dict[str, Any] | None = None,
    add: dict[str, Any] | None = None,
    remove: tuple[str, ...] | list[str] = (),
    append: dict[str, list[Any]] | None = None,
    discard: dict[str, Any] | None = None,
) -> Update:
    """An ``Update`` from keyword actions; ``None`` or an empty set in ``set`` removes."""
    update = Update()
    removals = list(remove)
    for path, value in (set or {}).items():
        if value is None or (isinstance(value, (frozenset, builtins.set)) and not value):
            removals.append(path)
        else:
            update.set(path, value)
    for path in removals:
        field, parts = obj._meta.field_for_path(path)
        if len(parts) == 1 and not field.null and not field.is_set:
            raise field.invalid(None, f"{field.description} (the field is not null=True)")
        update.remove(path)
    for path, value in (add or {}).items():
        update.add(path, value)
    for path, values in (append or {}).items():
        update.append(path, list(values))
    for path, members in (discard or {}).items():
        update.discard(path, members)
    return update
