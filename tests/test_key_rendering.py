"""Key templates render injectively: no two different field values give one stored key."""

import pytest

from dynamo_app import models
from dynamo_app.exceptions import ModelDefinitionError, ValidationError
from dynamo_app.testing import count_requests


class KrRoster(models.Table):
    class Meta:
        table_name = "kr_roster"
        indexes = [
            models.GlobalIndex("gsi1", partition_key="gsi1pk", sort_key="gsi1sk"),
            models.GlobalIndex(
                "gsi2", partition_key="gsi2pk", sort_key="gsi2sk", projection="KEYS_ONLY"
            ),
        ]


class KrShift(models.Model):
    team_id = models.StringField()
    day = models.StringField()
    slot = models.StringField()
    worker = models.StringField(default="")

    class Meta:
        table = KrRoster
        keys = {
            "pk": "TEAM#{team_id}",
            "sk": "SHIFT#{day}#{slot}",
            "gsi1pk": "WORKER#{worker}",
            "gsi1sk": "DAY#{day}#{slot}",
            "gsi2pk": "WORKER#{worker}",
            "gsi2sk": "DAY#{day}#{slot}",
        }


class KrMatch(models.Model):
    league = models.StringField()
    season = models.StringField()
    round = models.IntegerField()

    class Meta:
        table = KrRoster
        keys = {"pk": "MATCH#{league}#{season}", "sk": "ROUND#{round:02d}"}


Matches = KrRoster.collection("matches", KrMatch)


def _keys(handle):
    table = handle.table_name("kr_roster")
    items = handle.client.scan(TableName=table)["Items"]
    return sorted((i["pk"]["S"], i["sk"]["S"]) for i in items)


def _put_raw(handle, **item):
    """An item as the old rendering wrote it (fields joined by '#' unescaped)."""
    table = handle.table_name("kr_roster")
    handle.client.put_item(TableName=table, Item={k: {"S": v} for k, v in item.items()})


def test_values_holding_the_separator_are_two_items_not_one(dynamo_db):
    KrShift(team_id="t1", day="mon#am", slot="x").save()
    KrShift(team_id="t1", day="mon", slot="am#x").save()
    assert _keys(dynamo_db) == [("TEAM#t1", "SHIFT#mon#am#x"), ("TEAM#t1", "SHIFT#mon\\#am#x")]
    got = KrShift.objects.get(team_id="t1", day="mon", slot="am#x")
    assert (got.day, got.slot) == ("mon", "am#x")
    got = KrShift.objects.get(team_id="t1", day="mon#am", slot="x")
    assert (got.day, got.slot) == ("mon#am", "x")
    assert [s.slot for s in KrShift.objects.filter(team_id="t1", day="mon")] == ["am#x"]
    assert [s.slot for s in KrShift.objects.filter(team_id="t1", day="mon#am")] == ["x"]
    assert len(list(KrShift.objects.filter(team_id="t1"))) == 2


def test_the_escape_character_is_escaped_too(dynamo_db):
    KrShift(team_id="t1", day="a\\", slot="#b").save()
    KrShift(team_id="t1", day="a\\#", slot="b").save()
    KrShift(team_id="t1", day="a", slot="\\#b").save()
    assert len(_keys(dynamo_db)) == 3
    for day, slot in (("a\\", "#b"), ("a\\#", "b"), ("a", "\\#b")):
        got = KrShift.objects.get(team_id="t1", day=day, slot=slot)
        assert (got.day, got.slot) == (day, slot)
        assert [s.slot for s in KrShift.objects.filter(team_id="t1", day=day)] == [slot]


def test_a_partition_of_two_fields_and_index_keys_follow_the_same_rule(dynamo_db):
    KrMatch(league="a#b", season="c", round=1).save()
    KrMatch(league="a", season="b#c", round=1).save()
    assert len(_keys(dynamo_db)) == 2
    assert [m.league for m in KrMatch.objects.filter(league="a", season="b#c")] == ["a"]
    assert [m.league for m in Matches.page(league="a#b", season="c")] == ["a#b"]
    KrShift(team_id="t1", day="mon#am", slot="x", worker="w").save()
    KrShift(team_id="t2", day="mon", slot="am#x", worker="w").save()
    by_worker = KrShift.objects.using_index("gsi1").filter(worker="w", day="mon")
    assert [s.team_id for s in by_worker] == ["t2"]
    # An index that does not project the field: no filter on it (it would drop every item).
    keys_only = KrShift.objects.using_index("gsi2").filter(worker="w", day="mon")
    assert [s._state.stored["sk"]["S"] for s in keys_only] == ["SHIFT#mon#am#x"]


def test_values_without_those_characters_keep_their_stored_keys(dynamo_db):
    KrShift(team_id="t#1", day="mon", slot="a#m").save()  # a template's last field: as it is
    assert _keys(dynamo_db) == [("TEAM#t#1", "SHIFT#mon#a#m")]


def test_an_item_stored_under_another_values_key_is_never_taken_for_it(dynamo_db):
    """Written by the rendering before escaping: its key text is what day="mon",
    slot="am#x" renders today, its fields say day="mon#am"."""
    _put_raw(
        dynamo_db,
        pk="TEAM#t1",
        sk="SHIFT#mon#am#x",
        _type="KrShift",
        team_id="t1",
        day="mon#am",
        slot="x",
        worker="",
    )
    _put_raw(dynamo_db, pk="MATCH#a#b#c", sk="ROUND#01", _type="KrMatch", league="a#b", season="c")
    with pytest.raises(KrShift.DoesNotExist):
        KrShift.objects.get(team_id="t1", day="mon", slot="am#x")
    assert KrShift.objects.bulk_get([("t1", "mon", "am#x")]) == [None]
    with count_requests() as n:
        assert list(KrShift.objects.filter(team_id="t1", day="mon")) == []
        assert KrShift.objects.filter(team_id="t1", day="mon").count() == 0
        assert list(KrMatch.objects.filter(league="a", season="b#c")) == []
        assert list(Matches.page(league="a", season="b#c")) == []
    assert n.total == 4  # filtered by DynamoDB: no request more
    # Read by what it holds (its partition), it is the item it always was.
    assert [s.day for s in KrShift.objects.filter(team_id="t1")] == ["mon#am"]


@pytest.mark.parametrize(
    "sort, message",
    [
        ("S#{a}{b}", "followed by {b} directly"),
        ("S#{a}\\x{b}", "starts with '\\\\\\\\'"),
    ],
)
def test_a_template_that_could_not_be_read_back_is_refused(sort, message):
    attrs = {
        "__module__": __name__,
        "a": models.StringField(),
        "b": models.StringField(),
        "Meta": type("Meta", (), {"table": KrRoster, "keys": {"pk": "K#{a}", "sk": sort}}),
    }
    with pytest.raises(ModelDefinitionError, match=f"(?s){message}.*E116"):
        type("KrBad", (models.Model,), attrs)


def test_a_padded_number_may_run_into_the_next_field():
    class KrPadded(models.Model):
        n = models.IntegerField()
        a = models.StringField()

        class Meta:
            table = KrRoster
            keys = {"pk": "PADDED", "sk": "P#{n:03d}{a}"}

    assert KrPadded._meta.key_of({"n": 7, "a": "x#y"})["sk"] == {"S": "P#007x#y"}


def test_a_format_that_loses_part_of_a_value_is_refused_before_sending():
    class KrLossy(models.Model):
        a = models.StringField()

        class Meta:
            table = KrRoster
            keys = {"pk": "LOSSY#{a:.2}", "sk": "L"}

    assert KrLossy._meta.key_of({"a": "ab"})["pk"] == {"S": "LOSSY#ab"}
    with pytest.raises(ValidationError, match="loses part of it"):
        KrLossy._meta.key_of({"a": "abc"})


def test_the_documented_scan_finds_the_items_stored_under_an_old_key(dynamo_db):
    KrShift(team_id="t1", day="mon#am", slot="y").save()
    _put_raw(dynamo_db, pk="TEAM#t1", sk="SHIFT#mon#am#x", _type="KrShift", team_id="t1")
    dynamo_db.client.update_item(
        TableName=dynamo_db.table_name("kr_roster"),
        Key={"pk": {"S": "TEAM#t1"}, "sk": {"S": "SHIFT#mon#am#x"}},
        UpdateExpression="SET #d = :d, #s = :s",
        ExpressionAttributeNames={"#d": "day", "#s": "slot"},
        ExpressionAttributeValues={":d": {"S": "mon#am"}, ":s": {"S": "x"}},
    )
    meta = KrShift._meta
    stale = [
        item["sk"]["S"]
        for page in dynamo_db.paginate("scan", TableName=dynamo_db.table_name(meta.table_name))
        for item in page["Items"]
        if item.get("_type") == {"S": meta.entity} and not meta.held_under_own_key(item)
    ]
    assert stale == ["SHIFT#mon#am#x"]
