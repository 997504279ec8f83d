"""Every form of a field's value agrees (hypothesis, no server): the field's own
``encode``, the model's compiled codec (whose inline templates repeat each field's
fast path), the value an update expression sends, and the typed JSON form; and each
reads back as the value it was given (``Decimal("0.000")`` and ``-0`` included)."""

import json
from datetime import UTC, datetime
from decimal import Decimal

from hypothesis import given, settings
from hypothesis import strategies as st

from dynamo_app import models
from tests.test_models_fields import Everything
from tests.test_properties import VALID, decimals, instants, text

TWINS = settings(max_examples=150, deadline=None)


class Limited(models.Model):
    """Fields whose options send the compiled codec to ``encode()``, and key fields,
    whose templates carry the key rules."""

    name = models.StringField(partition_key=True)
    at = models.DateTimeField(sort_key=True)
    short = models.StringField(max_length=8, null=True)
    money = models.DecimalField(max_digits=12, decimal_places=4, null=True)
    words = models.ListField(of=models.StringField, null=True)
    counts = models.MapField(of=models.IntegerField, null=True)

    class Meta:
        table_name = "twins_limited"


ZEROS = st.sampled_from([Decimal("0.000"), Decimal("-0"), Decimal("0E+5"), Decimal("-0.0")])
LIMITED = {
    "name": text.filter(bool),
    "at": instants,
    "short": st.text(max_size=8),
    "money": st.decimals(-(10**8) + 1, 10**8 - 1, places=4) | ZEROS,
    "words": st.lists(text, max_size=4),
    "counts": st.dictionaries(text, st.integers(-(10**20), 10**20), max_size=3),
}
EVERYTHING = {**VALID, "amount": decimals | ZEROS, "size": VALID["size"] | st.just(0)}


def canonical(wire):
    """Sets in wire form, at any depth, compare without their order."""
    ((kind, payload),) = wire.items()
    if kind in ("SS", "NS", "BS"):
        return {kind: sorted(payload)}
    if kind == "L":
        return {kind: [canonical(v) for v in payload]}
    if kind == "M":
        return {kind: {k: canonical(v) for k, v in payload.items()}}
    return wire


def check_every_form(model, values):
    meta = model._meta
    obj = model(**values)
    item = meta.encode(obj)
    assert meta.encode_checked(obj) == item
    back = meta.decode(item)
    for field in meta.fields:
        value = obj.__dict__[field.name]
        if value is None:
            assert field.db_name not in item
            continue
        encoded = field.encode(value)
        if encoded is None:  # an empty set: not stored
            assert field.db_name not in item and back.__dict__[field.name] == set()
            continue
        assert canonical(item[field.db_name]) == canonical(encoded), field.name
        if not field.is_key:
            operand = meta.encode_operand(field.name, value, "value")
            assert canonical(operand) == canonical(encoded), field.name
        assert field.decode(encoded) == value, field.name
        assert back.__dict__[field.name] == value, field.name
        typed = json.loads(json.dumps(field.to_json(value)))
        assert field.from_json(typed) == value, field.name


@TWINS
@given(values=st.fixed_dictionaries({}, optional=EVERYTHING))
def test_every_field_type_agrees_in_every_form(values):
    check_every_form(Everything, values)


@TWINS
@given(values=st.fixed_dictionaries(LIMITED))
def test_keys_and_limited_fields_agree_in_every_form(values):
    check_every_form(Limited, values)


def test_a_zero_is_sent_alike_by_save_and_update():
    """DynamoDB keeps a zero as 0, whatever its spelling: every path sends "0"."""
    field = Everything._meta.fields_by_name["amount"]
    for zero in (Decimal("0.000"), Decimal("-0"), Decimal("0E-3")):
        obj = Everything(id="z", amount=zero, data={"n": zero})
        item = Everything._meta.encode(obj)
        assert item["amount"] == field.encode(zero) == {"N": "0"}
        assert item["data"] == Everything._meta.fields_by_name["data"].encode({"n": zero})
        assert Everything._meta.encode_operand("amount", zero, "value") == {"N": "0"}
    assert Limited._meta.encode(Limited(name="n", at=datetime(2024, 1, 1, tzinfo=UTC)))
