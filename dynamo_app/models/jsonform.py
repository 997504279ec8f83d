"""The typed JSON form of wire values: what ``Field.to_json()`` / ``from_json()``
build on (``to_dict()``, the lines of ``dynamo_dump``; see ``dynamo_app.data.serialization``).

JSON has no bytes, no sets and, in most parsers, no exact numbers past 2**53. So a
number is a JSON integer when every parser keeps it (``|n| < 2**53``), else its exact
text as a string; bytes are base64; sets are sorted lists. A value with no declared
type goes as DynamoDB JSON (``{"N": "1.5"}``), since only a tag says whether ``"1.5"``
was a string or a number. Here by wire type; each field type picks what it needs.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

SAFE_INTEGER = 2**53  # JavaScript's Number.MAX_SAFE_INTEGER + 1
# What reading a value that is not in its JSON form raises (the field then names it).
CONVERSION_ERRORS = (ValueError, TypeError, KeyError, InvalidOperation, binascii.Error)


def wire_to_json(value: dict[str, Any]) -> dict[str, Any]:
    """A wire value (``{"B": b"..."}``) as DynamoDB JSON (``{"B": "base64"}``)."""
    ((kind, payload),) = value.items()
    if kind == "B":
        return {"B": b64(payload)}
    if kind == "BS":
        return {"BS": [b64(v) for v in payload]}
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
        return {"B": unb64(payload)}
    if kind == "BS":
        return {"BS": [unb64(v) for v in payload]}
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


def b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def unb64(text: Any) -> bytes:
    if not isinstance(text, str):
        raise TypeError(f"expected base64 text, got {text!r}")
    return base64.b64decode(text, validate=True)


def number_to_json(text: str) -> int | str:
    try:
        number = int(text)
    except ValueError:
        return text
    return number if -SAFE_INTEGER < number < SAFE_INTEGER else text


def number_from_json(value: Any) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise TypeError(f"expected an integer or number text, got {value!r}")
    return str(Decimal(value)) if isinstance(value, str) else str(value)


def string(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(value)
    return value


def boolean(value: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(value)
    return value


def listed(convert: Callable[[Any], Any]) -> Callable[[Any], list[Any]]:
    """A set's members, each read with ``convert``."""

    def members(value: Any) -> list[Any]:
        if not isinstance(value, list):
            raise TypeError(value)
        return [convert(v) for v in value]

    return members


def scalar_to_json(value: dict[str, Any]) -> Any:
    """A wire value of a declared scalar or set type in its typed JSON form."""
    ((kind, payload),) = value.items()
    return _TO_JSON[kind](payload) if kind in _TO_JSON else payload  # S, BOOL as themselves


def scalar_from_json(kind: str, value: Any) -> dict[str, Any]:
    """``scalar_to_json``'s form read back as a wire value of ``kind``."""
    return {kind: _FROM_JSON[kind](value)}


_TO_JSON: dict[str, Callable[[Any], Any]] = {
    "N": number_to_json,
    "B": b64,
    "SS": sorted,
    "NS": lambda numbers: [number_to_json(v) for v in sorted(numbers, key=Decimal)],
    "BS": lambda blobs: sorted(b64(v) for v in blobs),
}
_FROM_JSON: dict[str, Callable[[Any], Any]] = {
    "S": string,
    "N": number_from_json,
    "B": unb64,
    "BOOL": boolean,
    "SS": listed(string),
    "NS": listed(number_from_json),
    "BS": listed(unb64),
}
