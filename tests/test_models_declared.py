"""Declared queries, class-creation errors and the ``dynamo`` system checks."""

from datetime import datetime
from decimal import Decimal

import pytest
from django.core import checks

from dynamo_app import models
from dynamo_app.exceptions import ModelDefinitionError, QueryError
from dynamo_app.models import DeclaredQuery
from dynamo_app.tables import registry


class Sensor(models.Model):
    sensor = models.StringField(partition_key=True)
    at = models.IntegerField(sort_key=True)
    celsius = models.DecimalField(null=True)
    site = models.StringField(null=True)
    name = models.StringField(null=True)

    class Meta:
        indexes = [models.GlobalIndex("by_site", partition_key="site", sort_key="at")]

    readings_since = DeclaredQuery(
        "sensor = {sensor} AND at >= {since}", params={"sensor": str, "since": int}, order="desc"
    )
    warm_between = DeclaredQuery(
        "sensor = {sensor} AND at BETWEEN {start} AND {end}",
        where="celsius > {min} AND attribute_exists(site)",
        returns="page",
        page_size=2,
    )
    at_site = DeclaredQuery("site = {site}", index="by_site")


@pytest.fixture
def readings(dynamo_db):
    Sensor.objects.bulk_save(
        Sensor(sensor="s1", at=i, celsius=Decimal(i), site="kyoto" if i % 2 else None)
        for i in range(8)
    )


def test_declared_query_returns_a_lazy_queryset(readings, dynamo_requests):
    qs = Sensor.readings_since(sensor="s1", since=5)
    assert dynamo_requests.total == 0
    assert [r.at for r in qs] == [7, 6, 5]
    assert dynamo_requests["Query"] == 1
    assert qs.count() == 3


def test_declared_page_query_with_filter_and_cursor(readings, dynamo_requests):
    page = Sensor.warm_between(sensor="s1", start=1, end=7, min=2)
    assert [r.at for r in page] == [] and page.scanned_count == 2  # 1 and 2 were read, filtered
    seen = []
    while page.next_cursor:
        page = Sensor.warm_between(sensor="s1", start=1, end=7, min=2, cursor=page.next_cursor)
        seen += [r.at for r in page]
    assert seen == [3, 5, 7]
    assert dynamo_requests["Query"] == 4


def test_declared_query_on_an_index(readings):
    assert sorted(r.at for r in Sensor.at_site(site="kyoto")) == [1, 3, 5, 7]


def test_declared_query_arguments_are_checked(dynamo_db, dynamo_requests):
    with pytest.raises(TypeError, match="missing: since"):
        Sensor.readings_since(sensor="s1")
    with pytest.raises(TypeError, match="unexpected: other"):
        Sensor.readings_since(sensor="s1", since=1, other=2)
    with pytest.raises(TypeError, match="no cursor"):
        Sensor.readings_since(sensor="s1", since=1, cursor="x")
    with pytest.raises(models.ValidationError, match="Sensor.at"):
        list(Sensor.readings_since(sensor="s1", since="yesterday"))
    assert dynamo_requests.total == 0


BAD_QUERIES = [
    ({"key": "sensor = {s} AND nope = {x}"}, "dynamo.E202", "'nope = {x}'"),
    ({"key": "sensor = {s} AND celsius = {c}"}, "dynamo.E203", "'celsius = {c}'"),
    ({"key": "sensor >= {s}"}, "dynamo.E204", "'sensor >= {s}'"),
    ({"key": "sensor = {s} AND at > {a} AND at < {b}"}, "dynamo.E205", "'at < {b}'"),
    ({"key": "sensor = {s} AND begins_with(at, {p})"}, "dynamo.E206", "'begins_with(at, {p})'"),
    (
        {"key": "sensor = {s} AND at >= {since}", "params": {"since": str}},
        "dynamo.E207",
        "'at >= {since}'",
    ),
    ({"key": "sensor = {s}", "params": {"s": bool}}, "dynamo.E207", "'sensor = {s}'"),
    ({"key": "sensor == {s}"}, "dynamo.E201", "'sensor == {s}'"),
    ({"key": "sensor = {s} AND at <> {a}"}, "dynamo.E201", "'at <> {a}'"),
    ({"key": "at = {a}"}, "dynamo.E208", "partition key 'sensor'"),
    ({"key": "sensor = {s}", "index": "nope"}, "dynamo.E209", "index 'nope'"),
    ({"key": "sensor = {s}", "where": "at > {a}"}, "dynamo.E210", "'at > {a}'"),
    ({"key": "sensor = {s}", "params": {"zzz": int}}, "dynamo.E212", "'zzz'"),
    ({"key": "site = {s}", "index": "by_site", "where": "at > {a}"}, "dynamo.E210", "'at > {a}'"),
]


@pytest.mark.parametrize("options, error_id, clause", BAD_QUERIES)
def test_each_declared_query_error_fails_class_creation(options, error_id, clause):
    with pytest.raises(ModelDefinitionError) as e:

        class Broken(models.Model):
            sensor = models.StringField(partition_key=True)
            at = models.IntegerField(sort_key=True)
            celsius = models.DecimalField(null=True)
            site = models.StringField(null=True)
            bad = DeclaredQuery(**options)

            class Meta:
                table_name = "broken"
                indexes = [models.GlobalIndex("by_site", partition_key="site", sort_key="at")]

    message = str(e.value)
    assert "Broken.bad" in message and clause in message and error_id in message
    assert "broken" not in registry


@pytest.mark.parametrize("options, error_id, clause", BAD_QUERIES)
def test_each_declared_query_error_is_a_system_check_error(monkeypatch, options, error_id, clause):
    query = DeclaredQuery(**options)
    query.bind(Sensor, "bad")
    monkeypatch.setitem(Sensor._meta.declared_queries, "bad", query)
    errors = [m for m in checks.run_checks(tags=["dynamo"]) if m.obj is Sensor]
    assert error_id in [m.id for m in errors]
    error = next(m for m in errors if m.id == error_id)
    assert "Sensor.bad" in error.msg and clause in error.msg
    assert error.level == checks.ERROR


@pytest.mark.parametrize(
    "lookups, key, error_id",
    [
        ({"sensor__gt": "s"}, "sensor > {s}", "E204"),
        ({"sensor": "s", "celsius": 3}, "sensor = {s} AND celsius = {c}", "E203"),
        ({"sensor": "s", "site": "k"}, "sensor = {s} AND site = {k}", "E203"),
        ({"sensor": "s", "at__begins_with": 1}, "sensor = {s} AND begins_with(at, {p})", "E206"),
        ({"at": 3}, "at = {a}", "E208"),
    ],
)
def test_filter_and_declared_queries_keep_one_set_of_key_rules(dynamo_db, lookups, key, error_id):
    """A mistake reads the same in filter() (raised when run) and in a declared query
    (reported at class creation): one rulebook, one wording."""
    with pytest.raises(QueryError) as raised:
        list(Sensor.objects.filter(**lookups))
    query = DeclaredQuery(key)
    query.bind(Sensor, "bad")
    [problem] = query.problems()
    assert problem.id == f"dynamo.{error_id}"
    rule = problem.message.split(": ")[-1]
    assert f"{rule} {problem.hint}".strip() in str(raised.value)


def test_valid_models_pass_the_system_check():
    assert checks.run_checks(tags=["dynamo"]) == []


def test_the_system_check_judges_the_live_meta_with_the_class_creation_rules(monkeypatch):
    """``manage.py check`` reads each model's ``_meta`` as it is, with the same rules
    (and messages) as class creation."""
    monkeypatch.setattr(Sensor._meta, "ttl_name", "celsius")
    errors = [m for m in checks.run_checks(tags=["dynamo"]) if m.obj is Sensor]
    assert [(m.id, m.msg) for m in errors] == [
        (
            "dynamo.E109",
            "Sensor.Meta.ttl = 'celsius' must name a DateTimeField(epoch=True) of the model.",
        )
    ]
    assert errors[0].hint == "DynamoDB's TTL reads a number of seconds since 1970."


def test_the_system_check_changes_nothing():
    """Checking builds nothing: no table is declared, no model or field is touched."""
    from dynamo_app.app_tables import LOCKS

    class Badge(models.Model):
        holder = models.StringField(partition_key=True)
        code = models.StringField()

        class Meta:
            table_name = "checked_badge"
            unique = [models.Unique("code")]

    meta, fields = Badge._meta, [vars(f).copy() for f in Badge._meta.fields]
    registry.unregister(LOCKS.declared_name)
    try:
        assert checks.run_checks(tags=["dynamo"]) == []
        assert LOCKS.declared_name not in registry
        assert Badge._meta is meta and [vars(f) for f in meta.fields] == fields
    finally:
        registry.register(LOCKS)


@pytest.mark.parametrize(
    "name, clash",
    [("save", "Model.save (a method)"), ("objects", "Model.objects (every model has it)")],
)
def test_query_name_clashing_with_model_api_is_reported(monkeypatch, name, clash):
    query = DeclaredQuery("sensor = {s}")
    query.bind(Sensor, name)
    monkeypatch.setitem(Sensor._meta.declared_queries, name, query)
    errors = [m for m in checks.run_checks(tags=["dynamo"]) if m.id == "dynamo.E211"]
    assert [m.msg for m in errors] == [f"Sensor.{name}: the query name clashes with {clash}."]


def test_bad_declared_query_options_fail_at_once():
    with pytest.raises(ModelDefinitionError, match="order"):
        DeclaredQuery("sensor = {s}", order="down")
    with pytest.raises(ModelDefinitionError, match="returns"):
        DeclaredQuery("sensor = {s}", returns="one")


# --- model declaration errors ----------------------------------------------------------


def define(fields, meta=None):
    attrs = {"__module__": __name__, **fields}
    if meta is not None:
        attrs["Meta"] = type("Meta", (), meta)
    return type("Wrong", (models.Model,), attrs)


@pytest.mark.parametrize(
    "fields, meta, expected",
    [
        ({"a": models.StringField()}, None, "exactly one field with partition_key=True"),
        (
            {
                "a": models.StringField(partition_key=True),
                "b": models.StringField(partition_key=True),
            },
            None,
            "exactly one field with partition_key=True (found: a, b)",
        ),
        (
            {
                "a": models.StringField(partition_key=True),
                "b": models.IntegerField(sort_key=True),
                "c": models.IntegerField(sort_key=True),
            },
            None,
            "more than one sort key: b, c",
        ),
        ({"a": models.BooleanField(partition_key=True)}, None, "Wrong.a is a key"),
        ({"a": models.JSONField(partition_key=True)}, None, "not a DynamoDB key type"),
        ({"a": models.StringField(partition_key=True, null=True)}, None, "cannot be null=True"),
        (
            {"a": models.StringField(partition_key=True), "b": models.StringField(db_name="a")},
            None,
            "both stored as attribute 'a'",
        ),
        ({"a": models.StringField(partition_key=True)}, {"tabel_name": "x"}, "unknown option"),
        ({"a": models.StringField(partition_key=True)}, {"ttl": "a"}, "DateTimeField(epoch=True)"),
        (
            {"a": models.StringField(partition_key=True)},
            {"indexes": [models.GlobalIndex("by_b", partition_key="b")]},
            "'b', which is not a field",
        ),
        (
            {"a": models.StringField(partition_key=True)},
            {"indexes": [models.LocalIndex("by_a", sort_key="a")]},
            "needs a table with a sort key",
        ),
        (
            {"a": models.StringField(partition_key=True), "f": models.FloatField()},
            {"indexes": [models.GlobalIndex("x", partition_key="f")]},
            "index name 'x'",
        ),
    ],
)
def test_class_creation_errors_name_model_and_field(fields, meta, expected):
    with pytest.raises(ModelDefinitionError) as e:
        define(fields, meta)
    assert expected in str(e.value) and "Wrong" in str(e.value)


def test_mutable_default_is_refused():
    with pytest.raises(ModelDefinitionError, match="default=list"):
        models.ListField(of=models.IntegerField, default=[])


@pytest.mark.usefixtures("declared")
def test_abstract_models_share_fields_and_register_nothing():
    class Stamped(models.Model):
        owner = models.StringField(partition_key=True)
        note = models.StringField(null=True)

        class Meta:
            abstract = True
            indexes = [models.GlobalIndex("by_note", partition_key="note")]

    assert "stamped" not in registry

    class StampedThing(Stamped):
        seq = models.IntegerField(sort_key=True)

    definition = registry.get("stamped_thing")
    assert [f.name for f in StampedThing._meta.fields] == ["owner", "note", "seq"]
    assert definition.key_names() == ("owner", "seq")
    assert [i.name for i in definition.indexes] == ["by_note"]
    assert StampedThing._meta.fields_by_name["owner"] is not Stamped._meta.fields_by_name["owner"]
    assert issubclass(StampedThing.DoesNotExist, models.DoesNotExist)


def test_table_definition_of_a_model():
    definition = registry.get("sensor")
    assert definition.owner == f"{__name__}.Sensor"
    assert definition.key_schema() == [
        {"AttributeName": "sensor", "KeyType": "HASH"},
        {"AttributeName": "at", "KeyType": "RANGE"},
    ]
    assert definition.indexes[0].partition_key.name == "site"


class Stamp(models.Field):
    """A custom field of aware datetimes as ISO text: its python_types is Field's own."""

    wire_type = key_type = "S"

    def encode(self, value):
        return {"S": value.isoformat()}

    def decode(self, value):
        return datetime.fromisoformat(value["S"])


def test_a_datetime_parameter_is_refused_by_a_date_field_only(declared):
    """A custom field taking any type takes a datetime parameter, as it did before
    DateField refused one."""

    class Logged(models.Model):
        source = models.StringField(partition_key=True)
        at = Stamp(sort_key=True)
        since = DeclaredQuery("source = {s} AND at >= {t}", params={"t": datetime})

    assert Logged._meta.declared_queries["since"].params == {"t": datetime}
