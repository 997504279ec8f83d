"""1. Codec: an object of the item -> wire form -> an object, for every library compared.

Each row is one small function registered with ``@codec(name)``: from the
item values it builds that library's own objects and says how the library
encodes one and decodes what it wrote. Every row must read back what it
wrote (checked before timing).

The reference is **the floor**: the cheapest honest code for exactly this
item, written by hand - one dict literal per attribute, the datetime as
``isoformat()``, and a plain object (``__dict__`` set in one store) on the
way back. A second reference row writes exactly the app's format (the
datetime in UTC at fixed width, the instance's ``ItemState``), so the price
of those format choices is visible apart from the codec's own cost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from dynamo_app.models.state import ItemState

from .common import SPREAD, Context, Section, load_average, measure
from .models import BenchItem, item, values

PAGE = 25  # the items of a Query page whose decode the issue times


@dataclass(frozen=True)
class Codec:
    """One row: the library's own objects of the items, and its two directions.
    ``decode`` None: the row measures encoding only."""

    objects: list[Any]
    encode: Callable[[Any], Any]
    decode: Callable[[Any], Any] | None = None
    fields: Callable[[Any], dict[str, Any]] | None = None  # decoded object -> values


CODECS: dict[str, Callable[[list[dict[str, Any]]], Codec | str]] = {}


def codec(name: str) -> Callable[[Callable[..., Codec | str]], Callable[..., Codec | str]]:
    """Register a row: ``function(item_values) -> Codec``, or a string saying why
    the row is skipped (a peer not installed)."""

    def register(function: Callable[..., Codec | str]) -> Callable[..., Codec | str]:
        CODECS[name] = function
        return function

    return register


# --- the floor: the cheapest honest code for this item


class Plain:
    """What the floor decodes into: an object whose ``__dict__`` is the values."""


_new = object.__new__


def floor_encode(obj: Any) -> dict[str, dict[str, Any]]:
    v = obj.__dict__
    attrs = v["attrs"]
    return {
        "team_id": {"S": v["team_id"]},
        "item_id": {"S": v["item_id"]},
        "name": {"S": v["name"]},
        "count": {"N": str(v["count"])},
        "price": {"N": str(v["price"])},
        "active": {"BOOL": v["active"]},
        "created": {"S": v["created"].isoformat()},
        "tags": {"L": [{"S": t} for t in v["tags"]]},
        "attrs": {"M": {"color": {"S": attrs["color"]}, "size": {"N": str(attrs["size"])}}},
        "labels": {"SS": list(v["labels"])},
    }


def floor_decode(item: dict[str, dict[str, Any]]) -> Plain:
    attrs = item["attrs"]["M"]
    obj = _new(Plain)
    obj.__dict__ = {
        "team_id": item["team_id"]["S"],
        "item_id": item["item_id"]["S"],
        "name": item["name"]["S"],
        "count": int(item["count"]["N"]),
        "price": Decimal(item["price"]["N"]),
        "active": item["active"]["BOOL"],
        "created": datetime.fromisoformat(item["created"]["S"]),
        "tags": [t["S"] for t in item["tags"]["L"]],
        "attrs": {"color": attrs["color"]["S"], "size": int(attrs["size"]["N"])},
        "labels": set(item["labels"]["SS"]),
    }
    return obj


def _plain(item_values: dict[str, Any]) -> Plain:
    obj = Plain()
    obj.__dict__ = dict(item_values)
    return obj


@codec("floor (hand-written)")
def floor(items: list[dict[str, Any]]) -> Codec:
    return Codec([_plain(v) for v in items], floor_encode, floor_decode)


# --- the floor in the app's own format (fixed-width UTC datetime, ItemState)

ISO = "%Y-%m-%dT%H:%M:%S.%fZ"


def app_format_encode(obj: Any) -> dict[str, dict[str, Any]]:
    item = floor_encode(obj)
    item["created"] = {"S": obj.__dict__["created"].astimezone(UTC).strftime(ISO)}
    return item


def app_format_decode(item: dict[str, dict[str, Any]]) -> BenchItem:
    values = floor_decode(item).__dict__
    obj = BenchItem.__new__(BenchItem)
    values["_state"] = ItemState(item, False, {})
    obj.__dict__ = values
    return obj


@codec("floor in the app's format")
def app_format(items: list[dict[str, Any]]) -> Codec:
    return Codec([BenchItem(**v) for v in items], app_format_encode, app_format_decode)


# --- dynamo_app


@codec("dynamo_app")
def dynamo_app(items: list[dict[str, Any]]) -> Codec:
    meta = BenchItem._meta
    return Codec([BenchItem(**v) for v in items], meta.encode, meta.decode)


@codec("dynamo_app save(): encode + size check")
def dynamo_app_save(items: list[dict[str, Any]]) -> Codec:
    """What save() does to the item: ``encode_checked`` (the 400 KB check included)."""
    return Codec([BenchItem(**v) for v in items], BenchItem._meta.encode_checked)


# --- peers

_serializer = TypeSerializer()
_deserializer = TypeDeserializer()


@codec("boto3 resource layer (TypeSerializer/-Deserializer)")
def boto3_resource(items: list[dict[str, Any]]) -> Codec:
    """What a ``Table`` resource does to ``Item``: ``TypeSerializer`` per attribute.
    It has no datetime: the caller writes an ISO string and parses it back."""
    serialize, deserialize = _serializer.serialize, _deserializer.deserialize

    def encode(obj: Plain) -> dict[str, Any]:
        values = dict(obj.__dict__)
        values["created"] = values["created"].isoformat()
        return {name: serialize(value) for name, value in values.items()}

    def decode(item: dict[str, Any]) -> Plain:
        obj = Plain()
        obj.__dict__ = values = {name: deserialize(value) for name, value in item.items()}
        values["created"] = datetime.fromisoformat(values["created"])
        return obj

    return Codec([_plain(v) for v in items], encode, decode)


@codec("PynamoDB")
def pynamodb(items: list[dict[str, Any]]) -> Codec | str:
    try:
        from pynamodb import attributes as a
        from pynamodb.models import Model
    except ImportError:
        return "pynamodb not installed"

    class PynamoItem(Model):
        class Meta:
            table_name = "bench-item"
            region = "us-east-1"

        team_id = a.UnicodeAttribute(hash_key=True)
        item_id = a.UnicodeAttribute(range_key=True)
        name = a.UnicodeAttribute()
        count = a.NumberAttribute()
        price = a.NumberAttribute()  # a float: PynamoDB has no exact decimal
        active = a.BooleanAttribute()
        created = a.UTCDateTimeAttribute()
        tags = a.ListAttribute(of=a.UnicodeAttribute)
        attrs = a.MapAttribute()
        labels = a.UnicodeSetAttribute()

    objects = [PynamoItem(**{**v, "price": float(v["price"])}) for v in items]

    def fields(obj: Any) -> dict[str, Any]:
        values = obj.attribute_values
        return {**values, "attrs": values["attrs"].as_dict(), "price": Decimal(str(obj.price))}

    return Codec(objects, PynamoItem.serialize, PynamoItem.from_raw_data, fields)


@codec("dyntastic")
def dyntastic(items: list[dict[str, Any]]) -> Codec | str:
    """dyntastic's save(): pydantic's model_dump, its own walk, then the Table
    resource's TypeSerializer; a read: TypeDeserializer, then pydantic validation."""
    try:
        from dyntastic import Dyntastic
        from dyntastic.attr import serialize as prepare
    except ImportError:
        return "dyntastic not installed"

    class DyntasticItem(Dyntastic):
        __table_name__ = "bench-item"
        __hash_key__ = "team_id"
        __range_key__ = "item_id"

        team_id: str
        item_id: str
        name: str
        count: int
        price: Decimal
        active: bool
        created: datetime
        tags: list[str]
        attrs: dict[str, Any]
        labels: set[str]

    serialize, deserialize = _serializer.serialize, _deserializer.deserialize

    def encode(obj: Any) -> dict[str, Any]:
        data = prepare(obj.model_dump(by_alias=True))
        return {name: serialize(value) for name, value in data.items()}

    def decode(item: dict[str, Any]) -> Any:
        data = {name: deserialize(value) for name, value in item.items()}
        return DyntasticItem._dyntastic_load_model(data)

    return Codec([DyntasticItem(**v) for v in items], encode, decode, lambda o: o.model_dump())


# --- the run


def _same(decoded: dict[str, Any], original: dict[str, Any]) -> bool:
    """Values equal, numbers compared as Decimals (a library may return floats)."""

    def norm(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: norm(v) for k, v in value.items()}
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return Decimal(str(value))
        return value

    return all(norm(decoded[name]) == norm(value) for name, value in original.items())


def _each(function: Callable[[Any], Any], inputs: list[Any]) -> Callable[[], list[Any]]:
    return lambda: [function(x) for x in inputs]


def run(ctx: Context) -> Section:
    n = 200 if ctx.quick else 1_000
    rounds = ctx.repeat * (1 if ctx.quick else 5)
    items = [values(i) for i in range(n)]
    rows: dict[str, Codec] = {}
    skipped: dict[str, str] = {}
    for name, make in CODECS.items():
        row = make(items)
        if isinstance(row, str):
            skipped[name] = row
            continue
        rows[name] = row
        if row.decode is not None:
            back = row.decode(row.encode(row.objects[1]))
            found = row.fields(back) if row.fields else back.__dict__
            assert _same(found, items[1]), f"{name} must read back what it wrote"
    meta = BenchItem._meta
    assert meta.decode(meta.encode(item(1))).__dict__.keys() >= items[1].keys()

    reference = "floor (hand-written)"
    encode = measure({name: _each(r.encode, r.objects) for name, r in rows.items()}, rounds=rounds)
    wires = {name: [r.encode(o) for o in r.objects] for name, r in rows.items() if r.decode}
    decode = measure(
        {name: _each(rows[name].decode, wire) for name, wire in wires.items()},  # type: ignore[arg-type]
        rounds=rounds,
    )
    section = Section(
        f"1. Codec: {n:,} items of 10 attributes, object -> wire -> object",
        ["codec", "encode µs/item", "x floor", "decode µs/item", "x floor"],
    )
    for name in rows:
        row = [name, f"{encode.median(name) / n * 1e6:.2f}", encode.ratio(name, reference)]
        if name in wires:
            row += [f"{decode.median(name) / n * 1e6:.2f}", decode.ratio(name, reference)]
        else:
            row += ["-", "-"]
        section.rows.append(row)
    for name, reason in skipped.items():
        section.rows.append([name, "skipped", reason, "", ""])
    per_page = {name: decode.median(name) / n * PAGE * 1e6 for name in ("dynamo_app", reference)}
    section.notes += [
        "Targets: dynamo_app encode and decode <= 1.30x the floor; save()'s item work "
        "(encode + size check) <= 1.50x the floor's encode.",
        f"Decoding a {PAGE}-item Query page: dynamo_app {per_page['dynamo_app']:.0f} µs, "
        f"the floor {per_page[reference]:.0f} µs.",
        f"x floor: the median over {rounds} rounds of the ratio to the floor's time in the "
        f"same round (in brackets: {SPREAD}). CPU time; every chunk of "
        f"{n:,} items starts on a collected heap with the garbage collector off, the order "
        f"rotating each round. Load average (1 min) after the run: {load_average()}.",
    ]
    if skipped:
        section.notes.append("Peers not installed: pip install -r benchmarks/requirements.txt.")
    return section
