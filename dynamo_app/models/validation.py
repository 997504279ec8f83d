"""Django's model validation: ``full_clean()``, ``clean_fields()``, ``validate_unique()``.

As in Django, ``save()`` does not call it: ``save()`` checks what DynamoDB
needs (types, sizes, keys) before any request, always; ``full_clean()`` adds
what the project declares (``blank``, ``choices``, ``validators``, its own
``clean()``) and reports every bad field at once, for forms and APIs.

``validate_unique()`` reads the locks of the values the instance does not
hold yet (a strongly consistent GetItem for one, one BatchGetItem for
several; none when every value is as read, or empty). It tells a form early
that a value is taken, but only the transaction at save time guarantees it: a
value free now can be claimed before the save, which then raises
``UniqueViolation``.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from django.utils.text import capfirst, get_text_list
from django.utils.translation import ngettext

from ..app_tables import LOCK_ID
from ..client.handle import get_handle
from ..exceptions import BatchIncomplete, QueryError, ValidationError
from ..unique import LOCK_TABLE, Unique, owner_id
from .fields import Field
from .writes import stored_values, unique_fields

if TYPE_CHECKING:
    from .base import Model

ErrorDict = dict[str, list[DjangoValidationError]]


def clean_fields(obj: Model, exclude: Collection[str] | None = None) -> None:
    """Each field's ``clean()`` (empty, storable, choices, validators), keeping the
    cleaned value; one ``ValidationError`` naming every bad field."""
    meta = obj._meta
    skip = set(exclude or ())
    keys = {f.name for f in meta.key_fields}
    keys.update(f.name for schema in meta.indexes.values() for f in schema.fields)
    errors: ErrorDict = {}
    for field in meta.fields:
        if field.name in skip:
            continue
        limit = meta.key_limits[field.name] if field.name in keys else None
        try:
            obj.__dict__[field.name] = field.clean(obj.__dict__[field.name], limit)
        except DjangoValidationError as exc:
            errors[field.name] = exc.error_list
    if errors:
        raise ValidationError(errors, model=meta.object_name)


def full_clean(
    obj: Model, exclude: Collection[str] | None = None, validate_unique: bool = True
) -> None:
    """``clean_fields()``, ``clean()`` and ``validate_unique()`` (for the fields that
    passed), as Django's ``Model.full_clean``: every error in one ``error_dict``."""
    skip = set(exclude or ())
    errors: dict[str, Any] = {}
    try:
        obj.clean_fields(skip)
    except DjangoValidationError as exc:
        errors = exc.update_error_dict(errors)
    try:
        obj.clean()
    except DjangoValidationError as exc:
        errors = exc.update_error_dict(errors)
    if validate_unique:
        try:
            obj.validate_unique(skip | (set(errors) - {NON_FIELD_ERRORS}))
        except DjangoValidationError as exc:
            errors = exc.update_error_dict(errors)
    if errors:
        raise ValidationError(errors, model=obj._meta.object_name)


def validate_unique(obj: Model, exclude: Collection[str] | None = None) -> None:
    """Whether another item holds one of this instance's unique values (see the
    module docstring for what it costs and what it cannot promise)."""
    taken = taken_constraints(obj, exclude)
    if taken:
        errors: ErrorDict = {}
        for constraint in taken:
            target = constraint.fields[0] if len(constraint.fields) == 1 else NON_FIELD_ERRORS
            errors.setdefault(target, []).append(unique_error(obj, constraint))
        raise ValidationError(errors, model=obj._meta.object_name)


def taken_constraints(obj: Model, exclude: Collection[str] | None = None) -> list[Unique]:
    """The constraints whose value, as the instance holds it now, another item
    holds: the locks of the values it was not read with, read strongly consistent."""
    meta = obj._meta
    skip = set(exclude or ())
    held = stored_values(obj, unique_fields(obj)) or {}
    locks: dict[str, Unique] = {}
    for constraint in meta.unique:
        if skip.isdisjoint(constraint.all_fields):
            try:
                lock = constraint.lock_id(obj.__dict__)
            except ValidationError:
                continue  # a value that cannot be stored: clean_fields() says so
            if lock is not None and (not held or lock != constraint.lock_id(held)):
                locks[lock] = constraint  # not the value it was read with: ask
    if not locks:
        return []
    try:
        mine: str | None = owner_id(meta.key_of(obj.__dict__))
    except (QueryError, ValidationError):
        mine = None  # no valid key yet: no lock can be this item's
    return [
        locks[item[LOCK_ID]["S"]]
        for item in _read(list(locks))
        if item.get("owner", {}).get("S") != mine
    ]


def unique_error(obj: Model, constraint: Unique) -> DjangoValidationError:
    """Django's message for a taken value ("Player with this Email already exists.")."""
    fields: list[Field] = [obj._meta.fields_by_name[n] for n in constraint.fields]
    labels = [capfirst(f.verbose_name) for f in fields]
    params = {
        "model": obj,
        "model_name": obj._meta.object_name,
        "field_label": get_text_list(labels, "and"),
        "value": constraint.value(obj.__dict__),
    }
    code = "unique" if len(fields) == 1 else "unique_together"
    message = "%(model_name)s with this %(field_label)s already exists."
    if len(fields) == 1:
        message = fields[0].error_messages["unique"]
    return DjangoValidationError(message, code=code, params=params)


def _read(locks: list[str]) -> list[dict[str, Any]]:
    """The lock items that exist, read strongly consistent: one GetItem, or one
    BatchGetItem for several."""
    handle = get_handle()
    table = handle.table_name(LOCK_TABLE)
    keys = [{LOCK_ID: {"S": lock}} for lock in locks]
    if len(keys) == 1:
        item = handle.call("get_item", TableName=table, Key=keys[0], ConsistentRead=True)
        return [item["Item"]] if "Item" in item else []
    request = {table: {"Keys": keys, "ConsistentRead": True}}
    responses = handle.until_processed("batch_get_item", request, _incomplete)
    return [item for r in responses for item in r.get("Responses", {}).get(table, [])]


def _incomplete(request: dict[str, Any], rounds: int) -> Exception:
    keys = [key for entry in request.values() for key in entry["Keys"]]
    return BatchIncomplete(
        ngettext(
            "validate_unique(): DynamoDB left %(n)d lock unread after %(rounds)d rounds.",
            "validate_unique(): DynamoDB left %(n)d locks unread after %(rounds)d rounds.",
            len(keys),
        )
        % {"n": len(keys), "rounds": rounds},
        unprocessed=keys,
    )
