"""to_dict() / from_dict(): the typed JSON form, exact through json.dumps/loads."""

import json
import uuid
from datetime import UTC, date, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from django.core.serializers.json import DjangoJSONEncoder
from django.http import JsonResponse

from dynamo_app import models
from dynamo_app.data.serialization import JSONEncoder, wire_from_json, wire_to_json
from dynamo_app.exceptions import ValidationError


class Everything(models.Model):
    pk_id = models.StringField(partition_key=True)
    count = models.IntegerField()
    big = models.IntegerField(null=True)
    price = models.DecimalField(null=True)
    ratio = models.FloatField(null=True)
    flag = models.BooleanField(default=False)
    blob = models.BinaryField(null=True)
    at = models.DateTimeField(null=True)
    expires = models.DateTimeField(epoch=True, null=True)
    born = models.DateField(null=True)
    uid = models.UUIDField(null=True)
    doc = models.JSONField(null=True)
    tags = models.StringSetField()
    scores = models.NumberSetField()
    keys = models.BinarySetField()
    times = models.ListField(of=models.DateTimeField(), null=True)
    days = models.ListField(of=models.DateField(), null=True)
    amounts = models.MapField(of=models.DecimalField(), null=True)

    class Meta:
        table_name = "ser_everything"


def full():
    return Everything(
        pk_id="p1",
        count=7,
        big=12345678901234567890123456789012345678,
        price=Decimal("12345678901234567890.123456789012345678"),
        ratio=0.1,
        flag=True,
        blob=b"\x00\xffbytes",
        at=datetime(2024, 5, 1, 9, 30, 0, 123456, tzinfo=timezone(timedelta(hours=2))),
        expires=datetime(2030, 1, 1, tzinfo=UTC),
        born=date(999, 12, 31),
        uid=uuid.UUID("12345678-1234-5678-1234-567812345678"),
        doc={"n": Decimal("1.5"), "s": "1.5", "deep": [None, True, b"\x01", {"x", "y"}]},
        tags={"b", "a"},
        scores={1, Decimal("2.5"), 10**30},
        keys={b"\x02", b"\x01"},
        times=[datetime(2001, 1, 1, tzinfo=UTC)],
        days=[date(2024, 2, 29)],
        amounts={"eur": Decimal("0.10")},
    )


def test_every_field_type_round_trips_exactly_through_json_text():
    obj = full()
    text = json.dumps(obj.to_dict())
    back = Everything.from_dict(json.loads(text))
    for field in Everything._meta.fields:
        assert getattr(back, field.name) == getattr(obj, field.name), field.name
    assert back.price.as_tuple() == obj.price.as_tuple()  # every digit, not a float's
    assert type(back.scores.pop()) in (int, Decimal)


def test_the_json_form_is_readable_where_json_can_be_exact():
    data = full().to_dict()
    assert data["count"] == 7 and data["flag"] is True
    assert data["big"] == "12345678901234567890123456789012345678"  # past 2**53: text
    assert data["price"] == "12345678901234567890.123456789012345678"
    assert data["at"] == "2024-05-01T07:30:00.123456Z"  # UTC, microseconds
    assert data["born"] == "0999-12-31" and data["days"] == ["2024-02-29"]  # as stored
    assert data["blob"] == "AP9ieXRlcw=="
    assert data["tags"] == ["a", "b"] and data["keys"] == ["AQ==", "Ag=="]  # sorted
    assert data["scores"] == [1, "2.5", "1000000000000000000000000000000"]
    assert data["uid"] == "12345678-1234-5678-1234-567812345678"
    assert data["doc"]["M"]["n"] == {"N": "1.5"} and data["doc"]["M"]["s"] == {"S": "1.5"}
    assert data["amounts"] == {"eur": "0.10"}


def test_missing_and_empty_values():
    obj = Everything(pk_id="p2", count=0)
    data = obj.to_dict()
    assert data["tags"] == [] and data["price"] is None
    back = Everything.from_dict({"pk_id": "p2", "count": 0})  # left out: defaults
    assert back.tags == set() and back.flag is False and back.price is None


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"pk_id": "p", "count": "seven"}, "count"),
        ({"pk_id": "p", "count": 1.5}, "count"),
        ({"pk_id": "p", "count": True}, "count"),
        ({"pk_id": "p", "count": 1, "blob": "not base64!"}, "blob"),
        ({"pk_id": "p", "count": 1, "at": "yesterday"}, "at"),
        ({"pk_id": "p", "count": 1, "born": "2024-05-01T09:30:00Z"}, "born"),
        ({"pk_id": "p", "count": 1, "doc": {"X": 1}}, "doc"),
        ({"pk_id": "p", "count": 1, "tags": "a"}, "tags"),
        ({"pk_id": 5, "count": 1}, "pk_id"),
        ({"pk_id": "p"}, "count"),  # required, no default
        ({"pk_id": "p", "count": 1, "nope": 1}, "nope"),
    ],
)
def test_from_dict_refuses_what_the_model_cannot_store(data, field):
    with pytest.raises(ValidationError) as error:
        Everything.from_dict(data)
    assert error.value.field == field
    assert "Everything" in str(error.value)


def test_dynamodb_json_round_trip():
    wire = {"M": {"b": {"B": b"\x00"}, "l": {"L": [{"BS": [b"1"]}, {"NULL": True}]}}}
    assert wire_from_json(json.loads(json.dumps(wire_to_json(wire)))) == wire
    with pytest.raises(ValueError):
        wire_from_json({"S": 1})


def test_django_json_encoder_path():
    obj = full()
    text = json.dumps({"item": obj}, cls=JSONEncoder)
    assert json.loads(text)["item"] == obj.to_dict()
    # to_dict() holds only JSON types, so Django's own encoder (JsonResponse's) takes it as is
    assert json.loads(json.dumps(obj.to_dict(), cls=DjangoJSONEncoder)) == obj.to_dict()
    response = JsonResponse({"item": obj}, encoder=JSONEncoder)
    assert json.loads(response.content)["item"]["count"] == 7
