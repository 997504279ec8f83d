"""Per-model encode/decode functions, generated once when the class is created.

Why generated code: a loop over field objects spends most of its time on
method calls and tuple unpacking, about 3-4x a hand-written dict
comprehension; the codec's budget is 1.3x. So, as ``dataclasses`` and
``attrs`` do for ``__init__``, the metaclass writes the straight-line
function a careful programmer would write for this model: each field's
common case inline (``{"S": v}`` guarded by ``type(v) is str``), and a call
to the field's own ``encode``/``decode`` only for the rest (subclasses,
validation failures, ``NULL``, numbers written as ``1E+2``). Attribute names
enter the source only through ``repr()``; values never do.

A write also needs the item's size (DynamoDB refuses an item over 400 KB),
which a second walk over the item would cost as much as encoding it. So
``encode_checked`` is the same function adding up each attribute's size as it
is built: exact for text, binary and booleans, at least DynamoDB's count for
numbers (by the length of their text). Only when that sum is over the limit,
or a value needs a closer look (a lone surrogate, deep nesting), does the
exact ``check_size`` decide, so the limit is exactly DynamoDB's.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import TYPE_CHECKING, Any

from ..client import wire
from .state import ItemState

if TYPE_CHECKING:
    from .fields import Field
    from .options import Options

DECODE_ERRORS = (KeyError, ValueError, TypeError, InvalidOperation)

# "00" to "99": a datetime's fields as text by lookup (see utc_text).
_TWO_DIGITS = tuple(f"{n:02d}" for n in range(100))


def utc_text(value: datetime) -> str:
    """A datetime in UTC as stored: ``2024-05-01T09:30:00.000000Z``, fixed width
    (years 0001-9999 in four digits), so string order is time order.

    Each field is looked up in ``_TWO_DIGITS`` rather than formatted: per datetime
    7.2 thousand instructions against 11.7 thousand for one ``%`` format of the
    seven fields, and 12.7 thousand for ``isoformat()`` (callgrind, Python 3.11);
    the datetime was the costliest field of a typical item."""
    two, year, us = _TWO_DIGITS, value.year, value.microsecond
    return (
        f"{two[year // 100]}{two[year % 100]}-{two[value.month]}-{two[value.day]}"
        f"T{two[value.hour]}:{two[value.minute]}:{two[value.second]}"
        f".{two[us // 10000]}{two[us // 100 % 100]}{two[us % 100]}Z"
    )


def compile_codec(
    meta: Options, keys: set[str]
) -> tuple[Callable[[Any], dict[str, Any]], Callable[[Any], dict[str, Any]], Callable[..., Any]]:
    """``(encode(obj) -> item, encode_checked(obj) -> item, decode(item, partial=False)
    -> obj)`` for one model; ``encode_checked`` also applies ``meta.check_size``.

    ``keys``: names of the fields that are keys of the table or an index;
    they are checked by DynamoDB's key rules (not empty, ``meta.key_limits``).
    """
    namespace: dict[str, Any] = {
        "Decimal": Decimal,
        "DECODE_ERRORS": DECODE_ERRORS,
        "SIZE_ERRORS": (UnicodeEncodeError, wire.NestingTooDeep, TypeError),
        "MAX_ITEM_BYTES": wire.MAX_ITEM_BYTES,
        "model": meta.model,
        # a shared table's derived attributes (keys, entity type) are no unknown ones
        "names": frozenset(f.db_name for f in meta.fields) | meta.derived,
        "derive": meta.derive,
        "derived": meta.derived,
        "slow": meta.decode_values_slow,
        "check_size": meta.check_size,
        "ItemState": ItemState,
        "new": object.__new__,
        # what field templates use (fields.py)
        "datetime": datetime,
        "UTC": UTC,
        "utc_text": utc_text,
        "fromiso": datetime.fromisoformat,
        "date": date,
        "fromisodate": date.fromisoformat,
        "encode_common": wire.encode_common,
        "decode_json": wire.decode,
        "decode_map": wire.decode_map,
        "value_size": wire.value_size,
        "item_size": wire.item_size,
    }
    encode = ["def encode(obj):", *_encode_start()]
    checked = [
        "def encode_checked(obj):",
        "    try:",
        *("    " + line for line in _encode_start()),
        "        size = item_size(extra) if extra else 0",
    ]
    fetch, build, optional = [], [], []
    for i, field in enumerate(meta.fields):
        namespace[f"f{i}"] = field
        key_limit = meta.key_limits[field.name] if field.name in keys else None
        encode += _encode_lines(i, field, key_limit, sized=False)
        checked += ["    " + line for line in _encode_lines(i, field, key_limit, sized=True)]
        if field.null or field.is_set or field.has_default():
            # Often absent (None and empty sets are not stored): fetch, then test.
            fetch.append(f"    v{i} = get({field.db_name!r})")
            optional.append(i)
            missing = "None" if field.missing_is_none else f"f{i}.missing()"
            expression = field.decode_template(f"v{i}") or f"f{i}.decode(v{i})"
            build.append(f"            {field.name!r}: {expression} if v{i} is not None")
            build.append(f"            else {missing},")
        else:
            # Always stored: index directly; an older item without it takes the slow path.
            value = f"item[{field.db_name!r}]"
            expression = field.decode_template(value) or f"f{i}.decode({value})"
            build.append(f"            {field.name!r}: {expression},")
    if meta.shared is not None:
        encode.append("    derive(d, item)")
        checked.append("        derive(d, item)")
        checked.append("        size += item_size({k: item[k] for k in derived if k in item})")
    encode.append("    return item")
    checked += [
        "    except SIZE_ERRORS:",
        "        # Text DynamoDB cannot store, nesting too deep, or a value a size's",
        "        # check refused (str.join of a list with a non-string in it):",
        "        # encode() and check_size() name the field.",
        "        size = MAX_ITEM_BYTES + 1",
        "        item = encode(obj)",
        "    if size > MAX_ITEM_BYTES:",
        "        check_size(item)  # exact: it refuses only what DynamoDB refuses",
        "    return item",
    ]
    # The attributes the fast decode reads, counted (all distinct): an item with
    # exactly that many has no unknown ones, which a set comparison of its keys
    # would cost a tenth of the whole decode to say.
    stored = {f.db_name for f in meta.fields}
    known = " + ".join(
        [str(len(meta.fields) - len(fetch))]
        + [f"(v{i} is not None)" for i in optional]
        + [f"({name!r} in item)" for name in sorted(meta.derived - stored)]
    )
    decode = [
        "def decode(item, partial=False):",
        "    get = item.get",
        *fetch,
        # object.__new__ and slot stores: a Python __init__ call would cost a third
        # of what the whole decode of a small item does.
        "    state = new(ItemState)",
        "    try:",
        "        values = {",
        "            '_state': state,",
        *build,
        "        }",
        f"        known = {known}",
        "    except DECODE_ERRORS:",
        "        values = slow(item)",
        "        values['_state'] = state",
        "        known = -1",
        "    state.stored = item",
        "    state.partial = partial",
        "    if len(item) == known:",
        "        state.extra = {}",
        "    else:",
        "        state.extra = {k: v for k, v in item.items() if k not in names}",
        "    obj = model.__new__(model)",
        "    obj.__dict__ = values",
        "    return obj",
    ]
    source = "\n\n".join("\n".join(f) for f in (encode, checked, decode)) + "\n"
    exec(compile(source, f"<dynamo codec {meta.label}>", "exec"), namespace)
    return namespace["encode"], namespace["encode_checked"], namespace["decode"]


def _encode_start() -> list[str]:
    return [
        "    d = obj.__dict__",
        "    extra = d['_state'].extra",
        "    item = dict(extra) if extra else {}",
    ]


def _encode_lines(i: int, field: Field, key_limit: int | None, *, sized: bool) -> list[str]:
    """One field's part of ``encode`` (``sized``: of ``encode_checked``, which also
    adds its size, name included, to ``size``)."""
    db_name = repr(field.db_name)
    name_size = len(field.db_name.encode())
    call = f"encode_key(v, {key_limit})" if key_limit else "encode(v)"
    lines = [f"    v = d[{field.name!r}]"]
    template = (
        field.sized_template("v", key_limit) if sized else field.encode_template("v", key_limit)
    )
    if template is not None:
        guard, expression, *size = template
        if sized:
            lines += [f"    if {guard}:", f"        item[{db_name}] = w = {expression}"]
            lines.append(f"        size += {name_size} + {size[0]}")
        else:
            lines += [f"    if {guard}:", f"        item[{db_name}] = {expression}"]
        lines.append("    elif v is None:")
    else:
        lines.append("    if v is None:")
    if field.null:
        lines.append("        pass")
    else:
        lines.append(
            f"        raise f{i}.invalid(v, f{i}.description + ' (the field is not null=True)')"
        )
    lines += [
        "    else:",
        f"        w = f{i}.{call}",
        "        if w is not None:",
        f"            item[{db_name}] = w",
    ]
    if sized:
        lines.append(f"            size += {name_size} + value_size(w)")
    return lines
