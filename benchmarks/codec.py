"""1. Codec: model instance -> wire form and back, against the floor and the peers.

The floor is a hand-written dict comprehension for exactly this item shape:
no library can do less. boto3's ``TypeSerializer``/``TypeDeserializer`` need
the datetime turned into a string by hand and return every number as
``Decimal``; PynamoDB (if installed) serialises its own model of the same
attributes (its numbers go through ``float``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from boto3.dynamodb.types import TypeDeserializer, TypeSerializer

from dynamo_app.models.state import ItemState

from .common import Context, Section, compare, ratio
from .models import BenchItem, item, values

ISO = "%Y-%m-%dT%H:%M:%S.%fZ"


def instance(values: dict[str, Any], item: dict[str, Any]) -> BenchItem:
    """A model instance from decoded values, the cheapest way there is (with the
    state the app's instances keep: unknown attributes, partial flag, item read)."""
    obj = BenchItem.__new__(BenchItem)
    values["_state"] = ItemState(item, False, {})
    obj.__dict__ = values
    return obj


def floor_encode(v: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Field values (an instance's ``__dict__``) -> wire form."""
    attrs = v["attrs"]
    return {
        "team_id": {"S": v["team_id"]},
        "item_id": {"S": v["item_id"]},
        "name": {"S": v["name"]},
        "count": {"N": str(v["count"])},
        "price": {"N": str(v["price"])},
        "active": {"BOOL": v["active"]},
        "created": {"S": v["created"].astimezone(UTC).strftime(ISO)},
        "tags": {"L": [{"S": t} for t in v["tags"]]},
        "attrs": {"M": {"color": {"S": attrs["color"]}, "size": {"N": str(attrs["size"])}}},
        "labels": {"SS": list(v["labels"])},
    }


def floor_decode(item: dict[str, dict[str, Any]]) -> BenchItem:
    attrs = item["attrs"]["M"]
    return instance(
        {
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
        },
        item,
    )


_serializer = TypeSerializer()
_deserializer = TypeDeserializer()
NAMES = [f.name for f in BenchItem._meta.fields]


def boto3_encode(obj: BenchItem) -> dict[str, dict[str, Any]]:
    values = {name: obj.__dict__[name] for name in NAMES}
    values["created"] = values["created"].astimezone(UTC).strftime(ISO)
    serialize = _serializer.serialize
    return {name: serialize(value) for name, value in values.items()}


def boto3_decode(item: dict[str, dict[str, Any]]) -> BenchItem:
    deserialize = _deserializer.deserialize
    values = {name: deserialize(value) for name, value in item.items()}
    values["created"] = datetime.fromisoformat(values["created"])
    return instance(values, item)


def pynamodb_model() -> Any:
    """PynamoDB's model of the same item, or None when PynamoDB is not installed."""
    try:
        from pynamodb import attributes as a
        from pynamodb.models import Model
    except ImportError:
        return None

    class PynamoItem(Model):
        class Meta:
            table_name = "bench-item"
            region = "us-east-1"

        team_id = a.UnicodeAttribute(hash_key=True)
        item_id = a.UnicodeAttribute(range_key=True)
        name = a.UnicodeAttribute()
        count = a.NumberAttribute()
        price = a.NumberAttribute()
        active = a.BooleanAttribute()
        created = a.UTCDateTimeAttribute()
        tags = a.ListAttribute(of=a.UnicodeAttribute)
        attrs = a.MapAttribute()
        labels = a.UnicodeSetAttribute()

    return PynamoItem


def _normal(item: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return {k: sorted(v["SS"]) if "SS" in v else v for k, v in item.items()}


def run(ctx: Context) -> Section:
    n = 500 if ctx.quick else 10_000
    objs = [item(i) for i in range(n)]
    meta = BenchItem._meta
    wires = [meta.encode(o) for o in objs]
    sample = floor_encode(objs[1].__dict__)
    assert _normal(sample) == _normal(wires[1]), "the floor must write what the app writes"
    fields = [f.name for f in meta.fields]
    assert [getattr(floor_decode(sample), n) for n in fields] == [
        getattr(meta.decode(sample), n) for n in fields
    ], "the floor must read what the app reads"

    def each(function: Any, inputs: list[Any]) -> Any:
        return lambda: [function(x) for x in inputs]

    encoders = {
        "floor": each(lambda o: floor_encode(o.__dict__), objs),
        "dynamo_app": each(meta.encode, objs),
        "boto3 TypeSerializer/-Deserializer": each(boto3_encode, objs),
    }
    decoders = {
        "floor": each(floor_decode, wires),
        "dynamo_app": each(meta.decode, wires),
        "boto3 TypeSerializer/-Deserializer": each(boto3_decode, wires),
    }
    pynamo = pynamodb_model()
    if pynamo is not None:
        pynamo_objs = [pynamo(**{**values(i), "price": float(o.price)}) for i, o in enumerate(objs)]
        pynamo_wires = [o.serialize() for o in pynamo_objs]
        encoders["PynamoDB"] = each(lambda o: o.serialize(), pynamo_objs)
        decoders["PynamoDB"] = each(pynamo.from_raw_data, pynamo_wires)

    encode = compare(encoders, repeat=ctx.repeat)
    decode = compare(decoders, repeat=ctx.repeat)
    section = Section(
        f"1. Codec: {n:,} items of 10 attributes, model instance -> wire -> model instance",
        ["codec", "encode µs/item", "x floor", "decode µs/item", "x floor"],
    )
    for name in encoders:
        section.rows.append(
            [
                name,
                f"{encode[name] / n * 1e6:.2f}",
                ratio(encode[name], encode["floor"]),
                f"{decode[name] / n * 1e6:.2f}",
                ratio(decode[name], decode["floor"]),
            ]
        )
    if pynamo is None:
        section.notes.append(
            "PynamoDB: skipped: pynamodb not installed "
            "(pip install -r benchmarks/requirements.txt)."
        )
    section.notes.append(
        f"Target: dynamo_app within 1.5x of the floor both ways: encode "
        f"{ratio(encode['dynamo_app'], encode['floor'])}, decode "
        f"{ratio(decode['dynamo_app'], decode['floor'])}. CPU time, median of {ctx.repeat} runs."
    )
    return section
