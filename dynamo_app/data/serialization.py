"""The typed JSON form of model instances: ``obj.to_dict()``, ``Model.from_dict()``
and the lines of ``dynamo_dump`` / ``dynamo_load``.

JSON has no bytes, no sets, no datetimes and, in most parsers, no exact
numbers past 2**53, so each value goes through its field's own codec first
(the wire form DynamoDB stores) and then into JSON by the field's type:

* strings, booleans, ``None``: as themselves; UUIDs as their string;
* numbers: a JSON integer when safe in every JSON parser (``|n| < 2**53``),
  else the exact number text as a string (``"1.5"``, 38-digit integers);
* bytes: base64; sets: sorted lists; datetimes: ISO-8601 in UTC with
  microseconds (``"2024-05-01T09:30:00.000000Z"``); dates: ``"2024-05-01"``;
* lists and maps of a declared field type: that type's form per element;
* values with no declared type (``JSONField``, ``MapField`` without ``of=``,
  attributes the model does not declare): DynamoDB JSON, the tagged form
  DynamoDB's own exports use (``{"M": {"n": {"N": "1.5"}}}``, bytes in base64),
  since only a tag says whether ``"1.5"`` was a string or a number.

Each field type owns its form (``Field.to_json()`` / ``from_json()``, built on
``dynamo_app.models.jsonform``); reading back takes the same field types, so
every value returns exactly. ``JSONEncoder`` is Django's ``DjangoJSONEncoder``
that also writes model instances (as ``to_dict()``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from django.core.serializers.json import DjangoJSONEncoder

from ..exceptions import ValidationError
from ..models.fields import Field
from ..models.jsonform import wire_from_json, wire_to_json
from ..models.options import Options

if TYPE_CHECKING:
    from ..models.base import Model

__all__ = [
    "JSONEncoder",
    "from_dict",
    "to_dict",
    "value_from_json",
    "value_to_json",
    "wire_from_json",
    "wire_to_json",
]

M = TypeVar("M", bound="Model")


def value_to_json(field: Field, value: Any) -> Any:
    """A field's Python value in its typed JSON form: the field's own ``to_json()``."""
    return field.to_json(value)


def value_from_json(field: Field, value: Any) -> Any:
    """The Python value of a field from its typed JSON form (the field's own
    ``from_json()``); ``ValidationError`` naming model and field when it is not that form."""
    return field.from_json(value)


# --- whole instances -----------------------------------------------------------------------


def to_dict(obj: Model) -> dict[str, Any]:
    """Every field of ``obj`` by name, in its typed JSON form."""
    values = obj.__dict__
    return {f.name: f.to_json(values[f.name]) for f in obj._meta.fields}


def from_dict(model: type[M], data: dict[str, Any]) -> M:
    """A new (unsaved) instance from ``to_dict()``'s form; a field left out takes
    its default. Refuses unknown names and values the model cannot store
    (``ValidationError`` naming the field), as a save would, before any request."""
    if not isinstance(data, dict):
        raise ValidationError(
            f"{model.__name__}.from_dict() takes a dict of field values, got {data!r}.",
            model=model.__name__,
        )
    fields = model._meta.fields_by_name
    unknown = [name for name in data if name not in fields]
    if unknown:
        raise ValidationError(
            f"{model.__name__}.from_dict(): {', '.join(map(repr, unknown))} "
            f"{'is not a field' if len(unknown) == 1 else 'are not fields'} "
            f"(fields: {', '.join(fields)}).",
            model=model.__name__,
            field=unknown[0],
        )
    obj = model(**{name: fields[name].from_json(v) for name, v in data.items()})
    model._meta.encode_checked(obj)
    return obj


class JSONEncoder(DjangoJSONEncoder):
    """``DjangoJSONEncoder`` that also writes model instances, as ``to_dict()``:
    ``JsonResponse({"player": player}, encoder=JSONEncoder)``."""

    def default(self, o: Any) -> Any:
        if isinstance(getattr(type(o), "_meta", None), Options):  # a model instance
            return to_dict(o)
        return super().default(o)
