"""DecimalField(max_digits=, decimal_places=): Django's limits, checked before any request."""

from decimal import Decimal

import pytest

from dynamo_app import models
from dynamo_app.exceptions import ModelDefinitionError, ValidationError


class Price(models.Model):
    sku = models.StringField(partition_key=True)
    amount = models.DecimalField(max_digits=5, decimal_places=2, null=True)
    total = models.DecimalField(max_digits=4, null=True)
    rate = models.DecimalField(decimal_places=3, null=True)
    history = models.ListField(of=models.DecimalField(decimal_places=2), null=True)
    free = models.DecimalField(null=True)


@pytest.mark.parametrize(
    "value, stored",
    [
        (Decimal("999.99"), Decimal("999.99")),
        (Decimal("-999.99"), Decimal("-999.99")),
        (Decimal("1.50"), Decimal("1.5")),  # the number has one decimal place
        (Decimal("0.00"), Decimal("0")),
        (Decimal("0.01"), Decimal("0.01")),
        (12, Decimal("12")),
        (0.1, Decimal("0.1")),  # a float at its shortest repr
        (Decimal("1E+2"), Decimal("100")),
    ],
)
def test_values_within_the_limits_round_trip(dynamo_db, value, stored):
    Price.objects.create(sku="a", amount=value)
    assert Price.objects.get(sku="a").amount == stored


@pytest.mark.parametrize(
    "field, value, expected",
    [
        ("amount", Decimal("1000"), "at most 3 digits before the decimal point"),
        ("amount", Decimal("1E+3"), "at most 3 digits before the decimal point"),
        ("amount", Decimal("0.001"), "at most 2 decimal places"),
        ("amount", Decimal("1.005"), "at most 2 decimal places"),
        ("amount", 0.125, "at most 2 decimal places"),
        ("amount", 123456, "at most 5 digits"),
        ("total", Decimal("12.345"), "at most 4 digits"),
        ("total", 10_000, "at most 4 digits"),
        ("rate", Decimal("0.0001"), "at most 3 decimal places"),
        ("history", [Decimal("1.5"), Decimal("1.555")], "at most 2 decimal places"),
    ],
)
def test_values_beyond_the_limits_are_refused_before_any_request(
    dynamo_db, dynamo_requests, field, value, expected
):
    with pytest.raises(ValidationError) as e:
        Price(sku="a", **{field: value}).save()
    assert (e.value.model, e.value.field.rstrip("[]")) == ("Price", field)
    assert f"Price.{field}" in str(e.value) and expected in str(e.value)
    assert dynamo_requests.total == 0


def test_every_write_path_checks_the_limits(dynamo_db, dynamo_requests):
    obj = Price.objects.create(sku="a", amount=Decimal("1"))
    for write in (
        lambda: Price.objects.create(sku="b", amount=Decimal("0.001")),
        lambda: obj.update(set={"amount": Decimal("0.001")}),
        lambda: obj.update(add={"amount": Decimal("0.001")}),
        lambda: Price.objects.bulk_save([Price(sku="c", amount=Decimal("1000"))]),
    ):
        with pytest.raises(ValidationError, match="Price.amount"):
            write()
    assert dynamo_requests.total == 1
    assert Price.objects.get(sku="a").amount == 1


def test_the_codec_keeps_its_fast_path_only_without_limits():
    fields = Price._meta.fields_by_name
    assert fields["free"].encode_template("v", None) is not None
    for name in ("amount", "total", "rate"):
        assert fields[name].encode_template("v", None) is None
    with pytest.raises(ValidationError, match="decimal places"):
        Price._meta.encode(Price(sku="a", amount=Decimal("0.001")))


@pytest.mark.parametrize(
    "options, expected",
    [
        ({"max_digits": 0}, "max_digits=0 must be an integer of at least 1"),
        ({"max_digits": -3}, "max_digits=-3 must be an integer of at least 1"),
        ({"max_digits": "5"}, "max_digits='5' must be an integer"),
        ({"max_digits": True}, "max_digits=True must be an integer"),
        ({"decimal_places": -1}, "decimal_places=-1 must be an integer of at least 0"),
        ({"decimal_places": 1.5}, "decimal_places=1.5 must be an integer"),
        ({"max_digits": 39}, "max_digits=39 is over the 38 significant digits"),
        ({"max_digits": 2, "decimal_places": 3}, "decimal_places=3 is over max_digits=2"),
    ],
)
def test_nonsensical_options_are_declaration_errors(options, expected):
    with pytest.raises(ModelDefinitionError) as e:

        class BadPrice(models.Model):
            sku = models.StringField(partition_key=True)
            amount = models.DecimalField(**options)

    assert f"BadPrice.amount: {expected}" in str(e.value) and "dynamo.E113" in str(e.value)


def test_options_of_an_inner_field_are_checked():
    with pytest.raises(ModelDefinitionError, match=r"BadList.amounts: decimal_places=-1"):

        class BadList(models.Model):
            sku = models.StringField(partition_key=True)
            amounts = models.ListField(of=models.DecimalField(decimal_places=-1))


def test_limits_that_are_equal_are_fine():
    field = models.DecimalField(max_digits=38, decimal_places=38)
    assert field.option_problems() == []
