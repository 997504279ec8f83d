"""Queries, scans, indexes, pagination and cursors, with request counts."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest

from dynamo_app import models
from dynamo_app.exceptions import InvalidCursor, QueryError, ValidationError, WriteError
from dynamo_app.models import Attr
from dynamo_app.testing import count_requests
from tests.test_models_operations import sent


class Reading(models.Model):
    sensor = models.StringField(partition_key=True)
    at = models.IntegerField(sort_key=True)
    celsius = models.DecimalField(null=True)
    site = models.StringField(null=True)
    label = models.StringField(null=True)
    expires = models.DateTimeField(epoch=True, null=True)

    class Meta:
        indexes = [
            models.GlobalIndex("by_site", partition_key="site", sort_key="at"),
            models.LocalIndex("by_label", sort_key="label", projection="KEYS_ONLY"),
        ]
        ttl = "expires"


class Chunk(models.Model):
    owner = models.BinaryField(partition_key=True)
    seq = models.IntegerField(sort_key=True)
    data = models.JSONField(null=True)


def fill(n=10, sensor="s1"):
    Reading.objects.bulk_save(
        Reading(sensor=sensor, at=i, celsius=i, site="kyoto" if i % 2 else "osaka", label=f"l{i}")
        for i in range(n)
    )


def test_filter_is_one_query_with_key_condition(dynamo_db, dynamo_requests):
    fill()
    got = list(Reading.objects.filter(sensor="s1", at__gte=7))
    assert [r.at for r in got] == [7, 8, 9]
    assert dynamo_requests["Query"] == 1
    params = sent(dynamo_requests)
    assert params["KeyConditionExpression"] == "(#n0 = :v0 AND #n1 >= :v1)"
    assert "FilterExpression" not in params


@pytest.mark.parametrize(
    "lookup, expected",
    [
        ({"at": 3}, [3]),
        ({"at__lt": 2}, [0, 1]),
        ({"at__lte": 1}, [0, 1]),
        ({"at__gt": 8}, [9]),
        ({"at__between": (2, 4)}, [2, 3, 4]),
    ],
)
def test_sort_key_lookups(dynamo_db, lookup, expected):
    fill()
    assert [r.at for r in Reading.objects.filter(sensor="s1", **lookup)] == expected


def test_order_limit_only_consistent(dynamo_db, dynamo_requests):
    fill()
    qs = Reading.objects.filter(sensor="s1").order_by("-at").limit(3).only("celsius").consistent()
    got = list(qs)
    assert [r.at for r in got] == [9, 8, 7] and got[0].celsius == 9 and got[0].site is None
    params = sent(dynamo_requests)
    assert params["ScanIndexForward"] is False and params["Limit"] == 3
    assert params["ConsistentRead"] is True and "ProjectionExpression" in params
    assert dynamo_requests["Query"] == 1


def test_where_filters_after_the_read(dynamo_db, dynamo_requests):
    fill()
    qs = Reading.objects.filter(sensor="s1").where(Attr("celsius") > 5, site="kyoto")
    assert [r.at for r in qs] == [7, 9]
    page = qs.page(size=10)
    assert page.count == 2 and page.scanned_count == 10


def test_iteration_is_lazy_one_request_per_page(dynamo_db, dynamo_requests, monkeypatch):
    fill(10)
    qs = Reading.objects.filter(sensor="s1")
    monkeypatch.setattr(qs, "_params", _with_limit(qs._params, 3))
    it = iter(qs)
    assert dynamo_requests["Query"] == 0
    assert [next(it).at for _ in range(3)] == [0, 1, 2] and dynamo_requests["Query"] == 1
    assert [r.at for r in it] == list(range(3, 10))
    assert dynamo_requests["Query"] == 4  # pages of 3, 3, 3, 1


def _with_limit(params_fn, limit):
    def params():
        params, query = params_fn()
        params["Limit"] = limit
        return params, query

    return params


def test_count_uses_select_count_across_pages(dynamo_db, dynamo_requests):
    fill(10)
    assert Reading.objects.filter(sensor="s1").where(site="osaka").count() == 5
    assert sent(dynamo_requests)["Select"] == "COUNT"
    assert Reading.objects.filter(sensor="nobody").count() == 0


def test_first_and_exists(dynamo_db):
    fill(3)
    assert Reading.objects.filter(sensor="s1").order_by("-at").first().at == 2
    assert Reading.objects.filter(sensor="s2").first() is None
    assert Reading.objects.filter(sensor="s1", at=1).exists()


def test_pages_with_cursors_walk_everything_once(dynamo_db, dynamo_requests):
    fill(10)
    qs = Reading.objects.filter(sensor="s1").order_by("-at")
    seen, cursor, pages = [], None, 0
    while True:
        page = qs.page(size=4, cursor=cursor)
        pages += 1
        seen += [r.at for r in page]
        cursor = page.next_cursor
        if cursor is None:
            break
        assert all(c.isalnum() or c in "-_." for c in cursor)  # URL-safe
    assert seen == list(range(9, -1, -1))
    assert dynamo_requests["Query"] == pages


def test_tampered_malformed_and_foreign_cursors_are_rejected(dynamo_db, dynamo_requests):
    fill(5)
    cursor = Reading.objects.filter(sensor="s1").page(size=2).next_cursor
    before = dynamo_requests["Query"]
    flipped = cursor[:5] + ("A" if cursor[5] != "A" else "B") + cursor[6:]
    for bad in (flipped, cursor[:-3], "garbage", "x.y", ""):
        with pytest.raises(InvalidCursor):
            Reading.objects.filter(sensor="s1").page(size=2, cursor=bad)
    with pytest.raises(InvalidCursor):  # another partition
        Reading.objects.filter(sensor="s2").page(size=2, cursor=cursor)
    with pytest.raises(InvalidCursor):  # another direction
        Reading.objects.filter(sensor="s1").order_by("-at").page(size=2, cursor=cursor)
    with pytest.raises(InvalidCursor):  # another table
        Chunk.objects.filter(owner=b"s1").page(size=2, cursor=cursor)
    assert dynamo_requests["Query"] == before  # none of them reached DynamoDB
    assert len(Reading.objects.filter(sensor="s1").page(size=10, cursor=cursor).items) == 3


def test_binary_keys_page_through_cursors(dynamo_db):
    Chunk.objects.bulk_save(Chunk(owner=b"\x00\xff", seq=i) for i in range(5))
    first = Chunk.objects.filter(owner=b"\x00\xff").page(size=3)
    rest = Chunk.objects.filter(owner=b"\x00\xff").page(size=3, cursor=first.next_cursor)
    assert [c.seq for c in first] + [c.seq for c in rest] == [0, 1, 2, 3, 4]


def test_global_and_local_indexes(dynamo_db, dynamo_requests):
    fill(6)
    fill(2, sensor="s2")
    kyoto = list(Reading.objects.using_index("by_site").filter(site="kyoto", at__gte=1))
    assert sorted((r.sensor, r.at) for r in kyoto) == [("s1", 1), ("s1", 3), ("s1", 5), ("s2", 1)]
    assert sent(dynamo_requests)["IndexName"] == "by_site"
    local = Reading.objects.using_index("by_label").filter(sensor="s1", label__begins_with="l")
    got = list(local.consistent())
    assert [r.label for r in got] == [f"l{i}" for i in range(6)]
    with pytest.raises(WriteError, match="only some attributes"):
        got[0].save()  # KEYS_ONLY projection: a partial item


def test_scan_is_explicit(dynamo_db, dynamo_requests):
    fill(4)
    assert sorted(r.at for r in Reading.objects.scan().where(site="osaka")) == [0, 2]
    assert dynamo_requests["Scan"] == 1 and dynamo_requests["Query"] == 0
    assert Reading.objects.scan().count() == 4


class OsakaOnly(models.Manager):
    def get_queryset(self):
        return super().get_queryset().where(site="osaka")


def test_scan_goes_through_get_queryset_as_filter_does(dynamo_db, dynamo_requests):
    fill(4)
    osaka = OsakaOnly().bind(Reading)
    assert sorted(r.at for r in osaka.scan()) == [0, 2]
    assert sorted(r.at for r in osaka.filter(sensor="s1")) == [0, 2]
    assert dict(dynamo_requests) == {"BatchWriteItem": 1, "Scan": 1, "Query": 1}


def test_a_get_queryset_with_key_conditions_cannot_be_scanned(dynamo_db, dynamo_requests):
    class OneSensor(models.Manager):
        def get_queryset(self):
            return super().get_queryset().filter(sensor="s1")

    with pytest.raises(QueryError, match="key conditions"):
        OneSensor().bind(Reading).scan()
    assert dynamo_requests.total == 0


def test_epoch_ttl_field_filters_expired_items(dynamo_db):
    now = datetime(2030, 1, 1, tzinfo=UTC)
    Reading(sensor="s", at=1, expires=datetime(2020, 1, 1, tzinfo=UTC)).save()
    Reading(sensor="s", at=2, expires=datetime(2040, 1, 1, tzinfo=UTC)).save()
    live = Reading.objects.filter(sensor="s").where(Attr("expires") > now)
    assert [r.at for r in live] == [2]


@pytest.mark.parametrize(
    "build, message",
    [
        (lambda: Reading.objects.filter(at=3), "needs the partition key 'sensor'.*scan()"),
        (lambda: Reading.objects.filter(sensor="s", site="kyoto"), "using_index\\('by_site'\\)"),
        (lambda: Reading.objects.filter(sensor="s", celsius=3), "where\\(celsius=...\\)"),
        (lambda: Reading.objects.filter(sensor__gt="s"), "only an exact value"),
        (lambda: Reading.objects.filter(sensor="s", at__gt=1, at__lt=5), "one condition"),
        (lambda: Reading.objects.filter(sensor="s", at__begins_with=1), "string sort key"),
        (lambda: Reading.objects.filter(sensor="s").order_by("celsius"), "sort key"),
        (lambda: Reading.objects.using_index("by_site").filter(site="k").consistent(), "global"),
        (lambda: Reading.objects.using_index("nope"), "no index 'nope'"),
        (lambda: Reading.objects.filter(sensor="s", nope=1), "no field 'nope'"),
        (lambda: Reading.objects.scan().filter(sensor="s"), "where"),
        (lambda: Reading.objects.where(site="x"), "where\\(\\) filters a query or a scan"),
        (lambda: Reading.objects.get(sensor="s"), "primary key"),
    ],
)
def test_queries_that_cannot_run_say_what_to_do(dynamo_db, dynamo_requests, build, message):
    with pytest.raises(QueryError, match=message):
        list(build())
    assert dynamo_requests.total == 0


def test_empty_string_in_an_index_key_is_rejected_before_sending(dynamo_db, dynamo_requests):
    with pytest.raises(ValidationError, match="Reading.label"):
        Reading(sensor="s", at=1, label="").save()
    assert dynamo_requests.total == 0


def test_where_on_a_key_of_the_query_is_refused_before_sending(dynamo_db, dynamo_requests):
    query = Reading.objects.filter(sensor="s1").where(Attr("at") > 3)
    with pytest.raises(QueryError, match="filter\\(\\)"):
        list(query)
    assert dynamo_requests.total == 0


@pytest.mark.parametrize(
    "build",
    [
        lambda: Reading.objects.filter(sensor="s1", at__between=(5, 1)),
        lambda: Reading.objects.filter(sensor="s1").where(celsius__between=(Decimal("2.5"), 2)),
        lambda: Reading.objects.filter(sensor="s1").where(Attr("site").between("b", "a")),
        # strings compare by UTF-8 bytes: U+1F600 sorts after U+FF5E (UTF-16 says before)
        lambda: Reading.objects.filter(sensor="s1").where(Attr("site").between("😀", "～")),
        # binary compares unsigned: 0x80 sorts after 0x7f
        lambda: Chunk.objects.filter(owner=b"o").where(Attr("data").between(b"\x80", b"\x7f")),
        lambda: Chunk.objects.filter(owner=b"o").where(Attr("data").between(1, "a")),
        lambda: Chunk.objects.filter(owner=b"o").where(Attr("data").between(True, False)),
    ],
)
def test_a_between_dynamodb_refuses_is_refused_before_sending(dynamo_db, dynamo_requests, build):
    with pytest.raises(QueryError, match="BETWEEN"):
        list(build())
    assert dynamo_requests.total == 0


def test_a_between_in_a_write_condition_is_checked_too(dynamo_db, dynamo_requests):
    reading = Reading(sensor="s1", at=1)
    with pytest.raises(QueryError, match="BETWEEN"):
        reading.save(condition=Attr("at").between(5, 1))
    assert dynamo_requests.total == 0
    reading.save(condition=Attr("site").between("～", "😀") | Attr("site").not_exists())
    assert dynamo_requests["PutItem"] == 1


def test_page_sizes_dynamodb_cannot_take_are_refused_and_limit_fits_each_request(dynamo_db):
    fill(3)
    qs = Reading.objects.filter(sensor="s1")
    with count_requests() as requests:
        for size in (2**31, 10**12, 0):
            with pytest.raises(QueryError, match="page"):
                qs.page(size=size)
        assert requests.total == 0
        assert len(qs.page(size=2**31 - 1)) == 3  # Limit is a 32-bit integer
        assert [r.at for r in qs.limit(10**12)] == [0, 1, 2]  # a total: a request asks its share
    assert [params["Limit"] for _, params in requests.calls] == [2**31 - 1, 2**31 - 1]
