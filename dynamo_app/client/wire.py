"""DynamoDB's low-level wire form (``{"S": ...}``, ``{"N": ...}``) for plain Python values.

Typed model fields encode their own values (they know their wire type); this
module covers what has no declared type: JSON-like values (``JSONField``,
``MapField``), operands of conditions on undeclared attributes, and the
numbers every numeric field shares. It also computes DynamoDB's item size, so
an oversize item is refused before a request is sent, and orders values the
way DynamoDB does, so a ``BETWEEN`` it would refuse is refused here.

Numbers never pass through ``float``: DynamoDB keeps 38 significant digits
and a magnitude from 1E-130 to below 1E+126, and so does this module.
"""

from __future__ import annotations

from collections.abc import Callable
from decimal import Decimal
from typing import Any

MAX_ITEM_BYTES = 400 * 1024
MAX_PARTITION_KEY_BYTES = 2048  # key values, in UTF-8 bytes
MAX_SORT_KEY_BYTES = 1024
MAX_DIGITS = 38
MAX_NUMBER_SIZE = (MAX_DIGITS + 1) // 2 + 1  # DynamoDB's size of the longest number
MAX_EXPONENT = 125  # adjusted exponent: 9.99..E+125 is the largest magnitude
MIN_EXPONENT = -130
_INT_FAST_LIMIT = 10**MAX_DIGITS
_INT_FAST_FLOOR = -_INT_FAST_LIMIT  # a constant: ``-_INT_FAST_LIMIT`` builds the number anew
_INT_BITS = (10 ** (MAX_EXPONENT + 1)).bit_length()  # no integer this wide is in range


class WireError(ValueError):
    """A value has no DynamoDB representation; the caller names model and field."""


def number_text(value: int | Decimal | float) -> str:
    """The exact ``N`` text of a number, or ``WireError`` if DynamoDB cannot hold it."""
    if type(value) is int:
        if _INT_FAST_FLOOR < value < _INT_FAST_LIMIT:
            return str(value)
        if value.bit_length() > _INT_BITS:  # before any text of it (Python caps that, too)
            raise WireError(
                f"an integer of about {int(value.bit_length() * 0.30103)} digits is outside "
                "DynamoDB's range (1E-130 to 9.9E+125)"
            )
        return _decimal_text(Decimal(value))
    if isinstance(value, bool):
        raise WireError("a boolean is not a number")
    if isinstance(value, Decimal):
        return _decimal_text(value)
    if isinstance(value, int):
        return number_text(int(value))
    if isinstance(value, float):
        return _decimal_text(Decimal(repr(value)))
    raise WireError(f"expected a number, got {type(value).__name__}")


def _decimal_text(value: Decimal) -> str:
    if not value.is_finite():
        raise WireError(f"{value} is not a finite number")
    if not value:
        return "0"
    _, digits, _ = value.as_tuple()
    significant = len(digits)
    while significant > 1 and digits[significant - 1] == 0:
        significant -= 1
    if significant > MAX_DIGITS:
        raise WireError(
            f"{value} has {significant} significant digits; DynamoDB keeps at most {MAX_DIGITS}"
        )
    exponent = value.adjusted()
    if exponent > MAX_EXPONENT or exponent < MIN_EXPONENT:
        raise WireError(f"{value} is outside DynamoDB's range (1E-130 to 9.9E+125)")
    return str(value)


def shown(value: Any) -> str:
    """``repr(value)`` for a message; a value holding an integer too long for Python
    to write as text (over 4,300 digits by default) is described instead."""
    try:
        return repr(value)
    except ValueError:
        return f"<a {type(value).__name__} holding an integer too long to write out>"


def parse_number(text: str) -> int | Decimal:
    """``N`` text -> ``int`` when it is written as an integer, else an exact ``Decimal``."""
    try:
        return int(text)
    except ValueError:
        return Decimal(text)


def encode(value: Any) -> dict[str, Any]:
    """A JSON-like Python value -> wire form (maps, lists, strings, numbers, ...)."""
    try:
        encoder = _ENCODERS[type(value)]
    except KeyError:
        return _encode_subclass(value)
    return encoder(value)


def _encode_subclass(value: Any) -> dict[str, Any]:
    for kind, encoder in _ENCODERS.items():
        if isinstance(value, kind):  # a bool is never here: bool has no subclasses
            return encoder(value)
    raise WireError(
        f"{type(value).__name__} cannot be stored in a JSON-like attribute: use str, int, "
        "Decimal, float, bool, None, bytes, list, tuple, dict with str keys or a set"
    )


def _encode_map(value: dict[Any, Any]) -> dict[str, Any]:
    out = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise WireError(f"map keys must be strings, got {type(key).__name__} {key!r}")
        out[key] = encode(item)
    return {"M": out}


def _encode_set(value: set[Any] | frozenset[Any]) -> dict[str, Any]:
    if not value:
        raise WireError("an empty set cannot be stored inside a map or list (DynamoDB forbids it)")
    kinds = {bool if isinstance(v, bool) else type(v) for v in value}
    if kinds <= {str}:
        return {"SS": list(value)}
    if kinds <= {int, Decimal, float}:
        return {"NS": [number_text(v) for v in value]}
    if kinds <= {bytes}:
        return {"BS": list(value)}
    raise WireError("a set must hold only strings, only numbers or only bytes")


_ENCODERS: dict[type, Callable[[Any], dict[str, Any]]] = {
    str: lambda v: {"S": v},
    bool: lambda v: {"BOOL": v},
    int: lambda v: {"N": number_text(v)},
    Decimal: lambda v: {"N": number_text(v)},
    float: lambda v: {"N": number_text(v)},
    type(None): lambda v: {"NULL": True},
    bytes: lambda v: {"B": v},
    bytearray: lambda v: {"B": bytes(v)},
    dict: _encode_map,
    list: lambda v: {"L": [encode(x) for x in v]},
    tuple: lambda v: {"L": [encode(x) for x in v]},
    set: _encode_set,
    frozenset: _encode_set,
}


def encode_common(value: Any, sized: bool, depth: int = 1) -> tuple[dict[str, Any], int] | None:
    """The wire form of a JSON-like value made only of the common kinds (str keys;
    str, int, Decimal, bool, None, dict, list), and with ``sized`` its size: None
    for anything else, for ``encode()`` to take or refuse with its reason. The
    size is DynamoDB's, except that a number counts as the longest one
    (``MAX_NUMBER_SIZE``: never less than DynamoDB counts it); with ``sized``, a map or list deeper
    than DynamoDB stores is ``NestingTooDeep`` and text with a lone surrogate
    ``UnicodeEncodeError``. One walk, so a write need not walk the value again
    to size it."""
    kind = type(value)
    if kind is dict:
        return _common_map(value, sized, depth)
    if kind is str:
        if not sized:
            return {"S": value}, 0
        return {"S": value}, len(value) if value.isascii() else len(value.encode())
    if kind is int:
        if _INT_FAST_FLOOR < value < _INT_FAST_LIMIT:
            return {"N": str(value)}, MAX_NUMBER_SIZE
        return None
    if kind is list:
        return _common_list(value, sized, depth)
    if kind is Decimal:  # finite, plain notation within 38 characters: within DynamoDB's limits
        if value.is_finite() and len(text := str(value)) <= MAX_DIGITS and "E" not in text:
            return {"N": text if value else "0"}, MAX_NUMBER_SIZE  # a zero as number_text()
        return None
    if kind is bool:
        return {"BOOL": value}, 1
    if value is None:
        return {"NULL": True}, 1
    return None


def _common_map(
    value: dict[Any, Any], sized: bool, depth: int
) -> tuple[dict[str, Any], int] | None:
    """``encode_common`` of a dict: its str and small int entries inline, the rest
    by recursion."""
    if sized and depth > MAX_NESTING:
        raise NestingTooDeep(f"maps and lists nest more than {MAX_NESTING} levels deep")
    entries = {}
    size = 3 + len(value)  # the map, and a byte per entry
    for key, item in value.items():
        if type(key) is not str:
            return None
        if sized:
            size += len(key) if key.isascii() else len(key.encode())
        kind = type(item)
        if kind is str:  # the common leaves, without a call
            entries[key] = {"S": item}
            if sized:
                size += len(item) if item.isascii() else len(item.encode())
        elif kind is int and _INT_FAST_FLOOR < item < _INT_FAST_LIMIT:
            entries[key] = {"N": str(item)}
            size += MAX_NUMBER_SIZE
        elif (common := encode_common(item, sized, depth + 1)) is not None:
            entries[key], item_size = common
            size += item_size
        else:
            return None
    return {"M": entries}, size


def _common_list(value: list[Any], sized: bool, depth: int) -> tuple[dict[str, Any], int] | None:
    """``encode_common`` of a list: each element by recursion."""
    if sized and depth > MAX_NESTING:
        raise NestingTooDeep(f"maps and lists nest more than {MAX_NESTING} levels deep")
    elements = []
    size = 3 + len(value)  # the list, and a byte per element
    for item in value:
        if (common := encode_common(item, sized, depth + 1)) is None:
            return None
        elements.append(common[0])
        size += common[1]
    return {"L": elements}, size


def decode(wire: dict[str, Any]) -> Any:
    """Wire form -> Python: numbers become ``int`` or exact ``Decimal``, never float."""
    ((kind, value),) = wire.items()
    return _DECODERS[kind](value)


def decode_map(value: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The Python dict of a map's entries (the ``M`` of its wire form)."""
    out = {}
    for key, wire in value.items():
        if "S" in wire:  # the common leaves, without a call
            out[key] = wire["S"]
        elif "N" in wire:
            try:
                out[key] = int(wire["N"])
            except ValueError:
                out[key] = Decimal(wire["N"])
        else:
            out[key] = decode(wire)
    return out


_DECODERS: dict[str, Callable[[Any], Any]] = {
    "S": lambda v: v,
    "N": parse_number,
    "B": bytes,
    "BOOL": lambda v: v,
    "NULL": lambda v: None,
    "M": decode_map,
    "L": lambda v: [decode(x) for x in v],
    "SS": set,
    "NS": lambda v: {parse_number(x) for x in v},
    "BS": lambda v: {bytes(x) for x in v},
}


# --- item size -----------------------------------------------------------------


def item_size(item: dict[str, dict[str, Any]]) -> int:
    """DynamoDB's size of an item: attribute name bytes plus value bytes.

    Follows "DynamoDB item sizes and formats" in the developer guide; numbers
    are counted at their upper bound so the estimate never undercounts.
    """
    total = 0
    for name, value in item.items():
        try:
            total += len(name.encode()) + value_size(value)
        except NestingTooDeep as exc:
            exc.attribute = name
            raise
    return total


# DynamoDB counts a top-level attribute as level 1 of at most 32: 31 maps or
# lists may nest inside it (measured against DynamoDB: 31 wraps pass, 32 fail).
MAX_NESTING = 31


class NestingTooDeep(WireError):
    """A map or list nests deeper than DynamoDB stores; ``attribute`` names it."""

    attribute = ""


def _number_size(text: str) -> int:
    if text.isdigit():  # a plain integer: no sign, point or exponent
        return (len(text.strip("0")) + 1) // 2 + 1
    digits = text.lstrip("-").split("e")[0].split("E")[0].replace(".", "").strip("0")
    return (len(digits) + 1) // 2 + 1


def text_size(value: str) -> int:
    """UTF-8 bytes of a string (``UnicodeEncodeError`` for a lone surrogate)."""
    return len(value) if value.isascii() else len(value.encode())


def value_size(wire: dict[str, Any], depth: int = 1) -> int:
    ((kind, value),) = wire.items()
    if kind == "S":
        return text_size(value)
    if kind == "N":
        return _number_size(value)
    if kind == "B":
        return len(value)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(text_size(v) for v in value)
    if kind == "NS":
        return sum(_number_size(v) for v in value)
    if kind == "BS":
        return sum(len(v) for v in value)
    if kind in ("L", "M") and depth > MAX_NESTING:
        raise NestingTooDeep(f"maps and lists nest more than {MAX_NESTING} levels deep")
    if kind == "L":
        return 3 + sum(1 + value_size(v, depth + 1) for v in value)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + value_size(v, depth + 1) for k, v in value.items())
    raise WireError(f"unknown DynamoDB type {kind!r}")


# --- order ----------------------------------------------------------------------


def check_range(low: dict[str, Any], high: dict[str, Any]) -> None:
    """DynamoDB's rule for ``BETWEEN low AND high``, or ``WireError``: two strings,
    two numbers or two binary values, and ``low <= high`` - numbers by value,
    strings by UTF-8 bytes (the order of code points, which is how Python compares
    ``str``), binary by unsigned bytes (how Python compares ``bytes``)."""
    ((kind, a),) = low.items()
    ((other, b),) = high.items()
    if kind != other or kind not in ("S", "N", "B"):
        raise WireError(
            f"both bounds must be strings, numbers or binary, and of one type; got {kind} "
            f"and {other}"
        )
    if kind == "N":
        a, b = Decimal(a), Decimal(b)
    if a > b:
        raise WireError("the low bound is greater than the high bound")
