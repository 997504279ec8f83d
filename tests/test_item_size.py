"""The 400 KB item limit, exactly: ``encode_checked`` sizes the item while encoding it
(numbers by the length of their text, an upper bound) and lets the exact ``check_size``
decide only over the limit, so an item of exactly 409,600 bytes as DynamoDB counts it is
accepted and one byte more is refused, whatever the kind of value that fills it.

DynamoDB's rules ("DynamoDB item sizes and formats" in the developer guide): attribute
names and strings count their UTF-8 bytes; binary its raw bytes; a number 1 byte per two
significant digits (leading and trailing zeros trimmed) plus 1; a boolean or null 1; a list
or map 3, plus 1 and the size of each element (a map's also its key's UTF-8 bytes); a set
the sum of its members. Each case below writes its expected size out by those rules.
"""

from decimal import Decimal

import pytest

from dynamo_app import models
from dynamo_app.client import wire
from dynamo_app.exceptions import ItemTooLarge, ValidationError
from dynamo_app.testing import count_requests

LIMIT = 400 * 1024


class SizeEdgeItem(models.Model):
    """Every kind of value, under attribute names that are not ASCII."""

    ident = models.StringField(partition_key=True, db_name="clé")  # 4 bytes
    text = models.StringField(null=True, db_name="名前")  # 6 bytes
    blob = models.BinaryField(null=True, db_name="b")
    number = models.IntegerField(null=True, db_name="n")
    amount = models.DecimalField(null=True, db_name="d")
    flag = models.BooleanField(null=True, db_name="f")
    doc = models.MapField(null=True, db_name="m")
    tags = models.ListField(of=models.StringField(), null=True, db_name="l")
    words = models.StringSetField(db_name="ss")
    numbers = models.NumberSetField(db_name="ns")
    blobs = models.BinarySetField(db_name="bs")


KEY = len("clé".encode()) + len("k")  # 4 + 1 = 5 bytes: every item below has this key


def _text(n: int) -> str:
    """``n`` UTF-8 bytes of text, mostly two-byte characters."""
    return "é" * (n // 2) + "x" * (n % 2)


def _padded(n: int) -> dict:
    """Field values of an item whose size is ``KEY + n`` bytes, by kind of value."""
    return {
        # 名前 (6) + the text
        "string": {"text": _text(n - 6)},
        # b (1) + raw bytes
        "binary": {"blob": b"\0" * (n - 1)},
        # n (1) + 10**37: one significant digit (trailing zeros trimmed) -> 2 bytes, though its
        # text is 38 characters long; d (1) + 12.5: 3 digits -> 3 bytes; the rest is text.
        "numbers": {"number": 10**37, "amount": Decimal("12.50"), "text": _text(n - 3 - 4 - 6)},
        # m (1) + map 3 + entry 1 + key "a" 1 + [map 3 + entry 1 + key "b" 1 + [list 3 +
        # element 1 + text]] + f (1) + bool 1
        "nested": {"doc": {"a": {"b": [_text(n - 1 - 3 - 2 - 3 - 2 - 3 - 1 - 2)]}}, "flag": True},
        # l (1) + list 3 + 1 per element + its text (two elements)
        "list": {"tags": ["x", _text(n - 1 - 3 - 2 - 1)]},
        # ss (2) + members; ns (2) + 7: 2 bytes; bs (2) + 3 raw bytes
        "sets": {
            "words": {"a", _text(n - 2 - 1 - 4 - 5)},
            "numbers": {7},
            "blobs": {b"abc"},
        },
    }


CASES = list(_padded(100))


def _item(case: str, size: int) -> SizeEdgeItem:
    return SizeEdgeItem(ident="k", **_padded(size - KEY)[case])


@pytest.mark.parametrize("case", CASES)
def test_the_documented_rules_are_what_check_size_counts(case):
    obj = _item(case, 1000)
    assert wire.item_size(SizeEdgeItem._meta.encode(obj)) == 1000


@pytest.mark.parametrize("case", CASES)
def test_exactly_400_kb_is_accepted_and_one_byte_more_refused(case):
    meta = SizeEdgeItem._meta
    at_limit = _item(case, LIMIT)
    assert meta.encode_checked(at_limit) == meta.encode(at_limit)
    with pytest.raises(ItemTooLarge, match="409601 bytes"):
        meta.encode_checked(_item(case, LIMIT + 1))


def test_one_byte_over_is_never_sent(dynamo_db):
    # (The accepted side is not sent: moto counts sizes its own way and refuses an item
    # DynamoDB's rules put at exactly 400 KB.)
    with count_requests() as requests, pytest.raises(ItemTooLarge):
        SizeEdgeItem(ident="k", text=_text(LIMIT - KEY - 5)).save()
    assert requests.total == 0


@pytest.mark.parametrize(
    "values",
    [
        {"text": "bad \ud800"},
        {"tags": ["ok", "bad \udfff"]},
        {"words": {"bad \ud800"}},
        {"doc": {"k": "bad \ud800"}},
        {"doc": {"bad \ud800": 1}},
    ],
)
def test_a_lone_surrogate_anywhere_is_still_refused(values):
    with pytest.raises(ValidationError, match="lone surrogate"):
        SizeEdgeItem._meta.encode_checked(SizeEdgeItem(ident="k", **values))


def test_nesting_deeper_than_dynamodb_stores_is_still_refused():
    deep: object = "leaf"
    for _ in range(32):
        deep = {"n": deep}
    with pytest.raises(ValidationError, match="32 levels"):
        SizeEdgeItem._meta.encode_checked(SizeEdgeItem(ident="k", doc=deep))


@pytest.mark.parametrize(
    "values",
    [
        {"tags": ["x", 1]},  # not a string: the slow path names the element
        {"words": {"x", 1}},
        {"doc": {1: "x"}},
    ],
)
def test_values_off_the_fast_path_are_refused_as_before(values):
    with pytest.raises(ValidationError):
        SizeEdgeItem._meta.encode_checked(SizeEdgeItem(ident="k", **values))


class VersionedEdgeItem(models.Model):
    ident = models.StringField(partition_key=True)
    text = models.StringField()
    version = models.VersionField()


def test_the_version_a_save_writes_counts_toward_the_limit(dynamo_db):
    from dynamo_app.models.writes import _put_params

    # ident (5) + k (1), text (4) + the text, version (7) + 1: one digit -> 2 bytes
    fixed = 5 + 1 + 4 + 7 + 2
    at_limit = VersionedEdgeItem(ident="k", text="x" * (LIMIT - fixed))
    assert _put_params(at_limit, version=1)["Item"]["version"] == {"N": "1"}
    assert at_limit.version is None  # the instance keeps its own until the write succeeds
    over = VersionedEdgeItem(ident="k", text="x" * (LIMIT - fixed + 1))
    with pytest.raises(ItemTooLarge, match="409601 bytes"):
        _put_params(over, version=1)
    with count_requests() as requests, pytest.raises(ItemTooLarge):
        over.save()
    assert requests.total == 0
