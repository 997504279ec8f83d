"""The typed JSON form of model instances: ``obj.to_dict()``, ``Model.from_dict()``
and the lines of ``dynamo_dump`` / ``dynamo_load``.

JSON has no bytes, no sets, no datetimes and, in most parsers, no exact
numbers past 2**53, so each value goes through its field's own codec first
(the wire form DynamoDB stores) and then into JSON by the field's type:

* strings, booleans, ``None``: as themselves; UUIDs as their string;
* numbers: a JSON integer when safe in every JSON parser (``|n| < 2**53``),
  else the exact number text as a string (``"1.5"``, 38-digit integers);
* bytes: base64; sets: sorted lists; datetimes: ISO-8601 in UTC with
  microseconds (``"2024-05-01T09:30:00.000000Z"``);
* lists and maps of a declared field type: that type's form per element;
* values with no declared type (``JSONField``, ``MapField`` without ``of=``,
  attributes the model does not declare): DynamoDB JSON, the tagged form
  DynamoDB's own exports use (``{"M": {"n": {"N": "1.5"}}}``, bytes in base64),
  since only a tag says whether ``"1.5"`` was a string or a number.

Reading back takes the same field types, so every value returns exactly.
``JSONEncoder`` is Django's ``DjangoJSONEncoder`` that also writes model
instances (as ``to_dict()``).
"""

from __future__ import annotations

import base64
import binascii
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any, TypeVar

from django.core.serializers.json import DjangoJSONEncoder

from .exceptions import ValidationError
from .models.fields import DateTimeField, Field, JSONField, ListField, MapField
from .models.options import Options

if TYPE_CHECKING:
    from .models.base import Model

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

_SAFE_INTEGER = 2**53  # JavaScript's Number.MAX_SAFE_INTEGER + 1
_CONVERSION_ERRORS = (ValueError, TypeError, KeyError, InvalidOperation, binascii.Error)


# --- DynamoDB JSON: wire values with bytes in base64 ------------------------------------------


def wire_to_json(value: dict[str, Any]) -> dict[str, Any]:
    """A wire value (``{"B": b"..."}``) as DynamoDB JSON (``{"B": "base64"}``)."""
    ((kind, payload),) = value.items()
    if kind == "B":
        return {"B": _b64(payload)}
    if kind == "BS":
        return {"BS": [_b64(v) for v in payload]}
    if kind == "M":
        return {"M": {k: wire_to_json(v) for k, v in payload.items()}}
    if kind == "L":
        return {"L": [wire_to_json(v) for v in payload]}
    return {kind: payload}


def wire_from_json(value: Any) -> dict[str, Any]:
    """The inverse of ``wire_to_json``; ``ValueError`` for anything else."""
    if not isinstance(value, dict) or len(value) != 1:
        raise ValueError(f"expected DynamoDB JSON such as {{'S': 'text'}}, got {value!r}")
    ((kind, payload),) = value.items()
    if kind == "B":
        return {"B": _unb64(payload)}
    if kind == "BS":
        return {"BS": [_unb64(v) for v in payload]}
    if kind == "M":
        return {"M": {str(k): wire_from_json(v) for k, v in payload.items()}}
    if kind == "L":
        return {"L": [wire_from_json(v) for v in payload]}
    if kind in ("S", "N") and isinstance(payload, str):
        return {kind: payload}
    if kind in ("SS", "NS") and all(isinstance(v, str) for v in payload):
        return {kind: list(payload)}
    if (kind == "BOOL" and isinstance(payload, bool)) or (kind == "NULL" and payload is True):
        return {kind: payload}
    raise ValueError(f"{value!r} is not DynamoDB JSON")


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def _unb64(text: Any) -> bytes:
    if not isinstance(text, str):
        raise TypeError(f"expected base64 text, got {text!r}")
    return base64.b64decode(text, validate=True)


def _number_to_json(text: str) -> int | str:
    try:
        number = int(text)
    except ValueError:
        return text
    return number if -_SAFE_INTEGER < number < _SAFE_INTEGER else text


def _number_from_json(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"expected an integer or number text, got {value!r}")
    return str(Decimal(value)) if isinstance(value, str) else str(value)


# --- one field's value ---------------------------------------------------------------------


def _untyped(field: Field) -> bool:
    return isinstance(field, JSONField) or (isinstance(field, MapField) and field.of is None)


def value_to_json(field: Field, value: Any) -> Any:
    """A field's Python value in its typed JSON form (checked by the field's codec)."""
    if value is None:
        return None
    if isinstance(field, DateTimeField):
        field.encode(value)  # the field's own checks (aware, in range)
        return value.astimezone(UTC).replace(tzinfo=None).isoformat("T", "microseconds") + "Z"
    if isinstance(field, ListField):
        field.encode(value)
        return [value_to_json(field.of, v) for v in value]
    if isinstance(field, MapField) and field.of is not None:
        field.encode(value)
        return {k: value_to_json(field.of, v) for k, v in value.items()}
    encoded = field.encode(value)
    if encoded is None:  # an empty set: not stored
        return []
    if _untyped(field):
        return wire_to_json(encoded)
    ((kind, payload),) = encoded.items()
    if kind == "N":
        return _number_to_json(payload)
    if kind == "B":
        return _b64(payload)
    if kind == "SS":
        return sorted(payload)
    if kind == "NS":
        return [_number_to_json(v) for v in sorted(payload, key=Decimal)]
    if kind == "BS":
        return sorted(_b64(v) for v in payload)
    return payload  # S, BOOL


def value_from_json(field: Field, value: Any) -> Any:
    """The Python value of a field from its typed JSON form; ``ValidationError``
    naming model and field when it is not that form."""
    if value is None:
        return None
    try:
        return _from_json(field, value)
    except ValidationError:
        raise
    except _CONVERSION_ERRORS:
        raise field.invalid(value, f"{field.description} in its JSON form") from None


def _from_json(field: Field, value: Any) -> Any:
    if isinstance(field, DateTimeField):
        if not isinstance(value, str):
            raise TypeError(value)
        parsed = datetime.fromisoformat(value)
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)
    if isinstance(field, ListField):
        if not isinstance(value, list):
            raise TypeError(value)
        return [value_from_json(field.of, v) for v in value]
    if isinstance(field, MapField) and field.of is not None:
        if not isinstance(value, dict):
            raise TypeError(value)
        return {str(k): value_from_json(field.of, v) for k, v in value.items()}
    if _untyped(field):
        return field.decode(wire_from_json(value))
    kind = field.wire_type
    if kind in ("SS", "NS", "BS"):
        if not isinstance(value, list):
            raise TypeError(value)
        if not value:
            return set()
        convert = {"SS": _string, "NS": _number_from_json, "BS": _unb64}[kind]
        return field.decode({kind: [convert(v) for v in value]})
    if kind == "N":
        return field.decode_slow({"N": _number_from_json(value)})
    if kind == "B":
        return field.decode({"B": _unb64(value)})
    if kind == "S":
        return field.decode({"S": _string(value)})
    if kind == "BOOL" and isinstance(value, bool):
        return value
    raise TypeError(value)


def _string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(value)
    return value


# --- whole instances -----------------------------------------------------------------------


def to_dict(obj: Model) -> dict[str, Any]:
    """Every field of ``obj`` by name, in its typed JSON form."""
    values = obj.__dict__
    return {f.name: value_to_json(f, values[f.name]) for f in obj._meta.fields}


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
    obj = model(**{name: value_from_json(fields[name], v) for name, v in data.items()})
    model._meta.encode_checked(obj)
    return obj


class JSONEncoder(DjangoJSONEncoder):
    """``DjangoJSONEncoder`` that also writes model instances, as ``to_dict()``:
    ``JsonResponse({"player": player}, encoder=JSONEncoder)``."""

    def default(self, o: Any) -> Any:
        if isinstance(getattr(type(o), "_meta", None), Options):  # a model instance
            return to_dict(o)
        return super().default(o)
