"""DateField: a calendar date stored as ``YYYY-MM-DD`` text, so a sort key orders by
date; a datetime is refused rather than cut to its date; ``auto_now`` and
``auto_now_add`` as Django's; the same value through a form, the REST framework,
the JSON form and a key template."""

import json
from datetime import UTC, date, datetime

import pytest
from rest_framework import serializers

from dynamo_app import forms, models
from dynamo_app.contrib.rest_framework import ModelSerializer
from dynamo_app.exceptions import ModelDefinitionError, StoredValueError, ValidationError
from dynamo_app.models import DeclaredQuery
from dynamo_app.testing import count_requests


class Shift(models.Model):
    worker = models.StringField(partition_key=True)
    day = models.DateField(sort_key=True)
    note = models.StringField(default="")
    booked = models.DateField(auto_now_add=True)
    touched = models.DateField(auto_now=True)
    paid_on = models.DateField(null=True, blank=True)

    since = DeclaredQuery("worker = {w} AND day >= {since}", params={"since": date})

    class Meta:
        table_name = "date_shift"


class DfRoster(models.Table):
    class Meta:
        table_name = "date_roster"


class DfVisit(models.Model):
    """A date inside a key template of a shared table."""

    site = models.StringField()
    on = models.DateField()
    visitor = models.StringField()

    class Meta:
        table = DfRoster
        keys = {"pk": "SITE#{site}", "sk": "VISIT#{visitor}#{on}"}


DAYS = [date(999, 12, 31), date(2023, 12, 31), date(2024, 1, 1), date(2024, 2, 29)]


def raw(handle, table, key):
    answer = handle.call(
        "get_item", TableName=handle.table_name(table), Key=key, ConsistentRead=True
    )
    return answer["Item"]


def test_a_date_is_stored_as_fixed_width_text_and_read_back_as_a_date(dynamo_db):
    Shift.objects.create(worker="w", day=date(999, 1, 2), paid_on=date(2024, 5, 1))
    item = raw(dynamo_db, "date_shift", {"worker": {"S": "w"}, "day": {"S": "0999-01-02"}})
    assert item["day"] == {"S": "0999-01-02"} and item["paid_on"] == {"S": "2024-05-01"}
    got = Shift.objects.get(worker="w", day=date(999, 1, 2))
    assert type(got.day) is date and got.paid_on == date(2024, 5, 1)


def test_a_stored_time_is_not_read_as_a_date(dynamo_db):
    """Text a DateTimeField wrote is a clear error, not a date quietly cut from it."""
    dynamo_db.call(
        "put_item",
        TableName=dynamo_db.table_name("date_shift"),
        Item={
            "worker": {"S": "t"},
            "day": {"S": "2024-05-01"},
            "paid_on": {"S": "2024-05-01T09:30:00.000000Z"},
        },
    )
    with pytest.raises(StoredValueError, match="Shift.paid_on: the stored attribute 'paid_on'"):
        Shift.objects.get(worker="t", day=date(2024, 5, 1))


def test_a_sort_key_of_dates_queries_in_date_order_with_ranges(dynamo_db):
    Shift.objects.bulk_save([Shift(worker="w", day=d) for d in reversed(DAYS)])
    every = Shift.objects.filter(worker="w")
    assert [s.day for s in every] == DAYS  # text order is date order, year 999 included
    assert [s.day for s in every.order_by("-day")] == DAYS[::-1]
    assert [s.day for s in Shift.objects.filter(worker="w", day__gte=date(2024, 1, 1))] == DAYS[2:]
    assert [s.day for s in Shift.objects.filter(worker="w", day__lt=date(2024, 1, 1))] == DAYS[:2]
    between = Shift.objects.filter(worker="w", day__between=(date(2023, 6, 1), date(2024, 1, 31)))
    assert [s.day for s in between] == DAYS[1:3]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (datetime(2024, 5, 1, 9, 30, tzinfo=UTC), "a date, not a datetime"),
        (datetime(2024, 5, 1), "pass value.date()"),
        ("2024-05-01", "expected a date (datetime.date), got str"),
        (20240501, "expected a date (datetime.date), got int"),
    ],
)
def test_a_datetime_or_text_is_refused_naming_the_field_before_any_request(
    dynamo_db, value, expected
):
    with count_requests() as requests:
        with pytest.raises(ValidationError, match="Shift.paid_on") as refused:
            Shift(worker="w", day=date(2024, 5, 1), paid_on=value).save()
        with pytest.raises(ValidationError, match="Shift.day"):
            list(Shift.objects.filter(worker="w", day__gte=value))
    assert expected in str(refused.value)
    assert requests.total == 0


def test_auto_now_add_fills_once_and_auto_now_at_every_save(dynamo_db):
    before = date.today()
    shift = Shift(worker="a", day=date(2024, 5, 1))
    assert (shift.booked, shift.touched) == (None, None)  # filled by the write, as Django
    shift.save()
    after = date.today()
    assert before <= shift.booked <= after and before <= shift.touched <= after
    assert Shift.objects.get(worker="a", day=date(2024, 5, 1)).booked == shift.booked

    shift.booked = shift.touched = date(2001, 2, 3)
    shift.save()  # not an add: auto_now_add keeps what the instance holds
    got = Shift.objects.get(worker="a", day=date(2024, 5, 1))
    assert got.booked == date(2001, 2, 3) and before <= got.touched <= date.today()


def test_an_upsert_that_creates_the_item_stamps_the_dates(dynamo_db):
    before = date.today()
    Shift(worker="u", day=date(2024, 5, 1)).update(set={"note": "n"}, upsert=True)
    got = Shift.objects.get(worker="u", day=date(2024, 5, 1))
    assert before <= got.booked <= date.today() and got.touched == got.booked


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"auto_now": True, "default": date.today}, r"DateField\(auto_now=True\) fills itself"),
        ({"auto_now_add": True, "choices": [(date(2024, 1, 1), "then")]}, "takes no choices="),
        ({"auto_now": True, "auto_now_add": True}, "the date of every save"),
    ],
)
def test_conflicting_auto_options_are_refused(options, problem):
    with pytest.raises(ModelDefinitionError, match=problem):
        models.DateField(**options)


def test_a_model_form_reads_and_shows_the_date(dynamo_db):
    form_class = forms.modelform_factory(Shift, fields="__all__")
    assert set(form_class.base_fields) == {"worker", "day", "note", "paid_on"}  # auto: left out
    form = form_class({"worker": "f", "day": "2024-02-29", "note": "n", "paid_on": ""})
    assert form.is_valid(), form.errors
    form.save()
    got = Shift.objects.get(worker="f", day=date(2024, 2, 29))
    assert got.paid_on is None
    shown = form_class(instance=got)
    assert 'value="2024-02-29"' in str(shown["day"])
    assert not form_class({"worker": "f", "day": "2024-02-30"}).is_valid()


def test_the_rest_framework_reads_and_writes_iso_dates(dynamo_db):
    class ShiftSerializer(ModelSerializer):
        class Meta:
            model = Shift
            fields = "__all__"

    serializer = ShiftSerializer(data={"worker": "r", "day": "2024-05-01", "note": "x"})
    assert serializer.is_valid(), serializer.errors
    assert isinstance(serializer.fields["day"], serializers.DateField)
    assert serializer.fields["booked"].read_only and serializer.fields["touched"].read_only
    saved = serializer.save()
    data = ShiftSerializer(Shift.objects.get(worker="r", day=date(2024, 5, 1))).data
    assert data["day"] == "2024-05-01" and data["booked"] == saved.booked.isoformat()
    refused = ShiftSerializer(data={"worker": "r", "day": "2024-05-01T09:30:00Z"})
    assert not refused.is_valid() and "day" in refused.errors


def test_the_json_form_is_the_stored_text():
    field = Shift._meta.fields_by_name["paid_on"]
    assert field.to_json(date(2024, 5, 1)) == "2024-05-01"
    assert field.from_json(json.loads('"2024-05-01"')) == date(2024, 5, 1)
    with pytest.raises(ValidationError, match="Shift.paid_on"):
        field.from_json("2024-05-01T09:30:00")
    with pytest.raises(ValidationError, match="not a datetime"):
        field.to_json(datetime(2024, 5, 1, tzinfo=UTC))


def test_a_date_in_a_key_template_renders_as_its_text_and_queries_by_range(dynamo_db):
    for day in (date(2024, 5, 2), date(2024, 4, 30), date(2024, 5, 1)):
        DfVisit(site="s", on=day, visitor="v").save()
    item = raw(dynamo_db, "date_roster", {"pk": {"S": "SITE#s"}, "sk": {"S": "VISIT#v#2024-05-01"}})
    assert item["on"] == {"S": "2024-05-01"}
    since = DfVisit.objects.filter(site="s", visitor="v", on__gte=date(2024, 5, 1))
    assert [v.on for v in since] == [date(2024, 5, 1), date(2024, 5, 2)]


def test_a_declared_query_takes_a_date_parameter_and_refuses_a_datetime_one(dynamo_db):
    Shift.objects.bulk_save([Shift(worker="d", day=d) for d in DAYS])
    assert [s.day for s in Shift.since(w="d", since=date(2024, 1, 1))] == DAYS[2:]
    with pytest.raises(
        ModelDefinitionError, match=r"DateField \(stored as S\) that takes date\. \[dynamo\.E207\]"
    ):

        class Wrong(models.Model):
            worker = models.StringField(partition_key=True)
            day = models.DateField(sort_key=True)
            since = DeclaredQuery("worker = {w} AND day >= {since}", params={"since": datetime})
