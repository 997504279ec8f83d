"""The async API: each method runs its sync twin in a worker thread, so the same
requests and the same errors. Plain tests drive the coroutines with asyncio.run."""

import asyncio
import inspect
import threading
from decimal import Decimal

import pytest

from dynamo_app import models
from dynamo_app.exceptions import AlreadyExists, QueryError, UniqueViolation
from dynamo_app.models import Attr, ConditionFailed


class AsyncReading(models.Model):
    sensor = models.StringField(partition_key=True)
    at = models.IntegerField(sort_key=True)
    celsius = models.DecimalField(null=True)
    views = models.IntegerField(default=0)


class AsyncMember(models.Model):
    club = models.StringField(partition_key=True)
    member_id = models.StringField(sort_key=True, default=models.new_uuid)
    email = models.StringField(null=True)

    class Meta:
        unique = [models.Unique("email")]


class AsyncAudited(models.Model):
    """Overrides save(), as Django users do: asave() must run the override."""

    pk_value = models.StringField(partition_key=True)
    saved_in: list[threading.Thread] = []

    def save(self, **options):
        self.saved_in.append(threading.current_thread())
        super().save(**options)


TWINS = [
    (models.Manager, ["get", "create", "increment", "bulk_get", "bulk_save", "bulk_delete"]),
    (models.Model, ["save", "update", "delete", "refresh_from_db"]),
    (models.QuerySet, ["page", "count", "first", "exists"]),
]


@pytest.mark.parametrize("cls, names", TWINS)
def test_each_async_method_has_its_sync_twins_signature(cls, names):
    for name in names:
        sync, twin = getattr(cls, name), getattr(cls, f"a{name}")
        assert inspect.iscoroutinefunction(twin), name
        assert inspect.signature(twin) == inspect.signature(sync), name
        assert twin.__name__ == f"a{name}"


def test_item_operations_make_the_sync_requests(dynamo_db, dynamo_requests):
    async def scenario():
        r = await AsyncReading.objects.acreate(sensor="s1", at=1, celsius=Decimal("21.5"))
        got = await AsyncReading.objects.aget(sensor="s1", at=1, consistent=True)
        assert got.celsius == Decimal("21.5")
        got.celsius = Decimal("22")
        await got.asave()
        await got.asave(update_fields=["celsius"])
        assert await got.aupdate(add={"views": 2}) == {"views": 2}
        await r.arefresh_from_db()
        assert (r.celsius, r.views) == (Decimal("22"), 2)
        with pytest.raises(ConditionFailed):
            await r.adelete(condition=Attr("views") > 5)
        await r.adelete()

    asyncio.run(scenario())
    assert dict(dynamo_requests) == {
        "PutItem": 2,
        "GetItem": 2,
        "UpdateItem": 2,
        "DeleteItem": 2,
    }


def test_errors_are_the_sync_ones(dynamo_db, dynamo_requests):
    async def scenario():
        await AsyncReading.objects.acreate(sensor="s1", at=1, views=7)
        with pytest.raises(AlreadyExists) as error:
            await AsyncReading.objects.acreate(sensor="s1", at=1)
        assert error.value.item.views == 7
        with pytest.raises(AsyncReading.DoesNotExist):
            await AsyncReading.objects.aget(sensor="s1", at=2)
        with pytest.raises(AsyncReading.DoesNotExist):
            await AsyncReading(sensor="s1", at=3).arefresh_from_db()
        before = dynamo_requests.total
        with pytest.raises(QueryError):  # refused before any request
            await AsyncReading.objects.aget(sensor="s1")
        assert dynamo_requests.total == before

    asyncio.run(scenario())


def test_unique_violation_from_acreate_and_asave(dynamo_db, dynamo_requests):
    async def scenario():
        await AsyncMember.objects.acreate(club="c", email="a@example.com")
        with pytest.raises(UniqueViolation) as error:
            await AsyncMember.objects.acreate(club="c", email="a@example.com")
        assert error.value.constraint == "email" and error.value.value == "a@example.com"
        bob = await AsyncMember.objects.acreate(club="c", email="b@example.com")
        bob.email = "a@example.com"
        with pytest.raises(UniqueViolation):
            await bob.asave()

    asyncio.run(scenario())
    assert dict(dynamo_requests) == {"TransactWriteItems": 4}


def test_aincrement_is_one_update(dynamo_db, dynamo_requests):
    async def scenario():
        await AsyncReading.objects.aincrement(sensor="s1", at=1, views=1)
        return await AsyncReading.objects.aincrement(sensor="s1", at=1, views=2)

    assert asyncio.run(scenario()) == {"views": 3}
    assert dict(dynamo_requests) == {"UpdateItem": 2}


def test_batches(dynamo_db, dynamo_requests):
    async def scenario():
        await AsyncReading.objects.abulk_save(AsyncReading(sensor="s1", at=i) for i in range(30))
        got = await AsyncReading.objects.abulk_get([("s1", 3), ("s1", 99)])
        await AsyncReading.objects.abulk_delete([("s1", i) for i in range(30)])
        return got

    got = asyncio.run(scenario())
    assert [r and r.at for r in got] == [3, None]
    assert dict(dynamo_requests) == {"BatchWriteItem": 4, "BatchGetItem": 1}


def test_query_methods(dynamo_db, dynamo_requests):
    AsyncReading.objects.bulk_save(AsyncReading(sensor="s1", at=i) for i in range(5))
    qs = AsyncReading.objects.filter(sensor="s1")

    async def scenario():
        page = await qs.apage(size=3)
        rest = await qs.apage(size=3, cursor=page.next_cursor)
        assert [r.at for r in page] + [r.at for r in rest] == [0, 1, 2, 3, 4]
        assert await qs.acount() == 5
        assert (await qs.order_by("-at").afirst()).at == 4
        assert await qs.aexists()
        assert not await AsyncReading.objects.filter(sensor="s2").aexists()
        assert await AsyncReading.objects.filter(sensor="s2").afirst() is None

    asyncio.run(scenario())
    assert dynamo_requests["Query"] == 7


def test_async_for_fetches_page_by_page(dynamo_db, dynamo_requests, monkeypatch):
    AsyncReading.objects.bulk_save(AsyncReading(sensor="s1", at=i) for i in range(10))
    qs = AsyncReading.objects.filter(sensor="s1")
    params_fn = qs._params

    def pages_of_three():
        params, query = params_fn()
        params["Limit"] = 3
        return params, query

    monkeypatch.setattr(qs, "_params", pages_of_three)
    queries_seen = []

    async def scenario():
        async for r in qs:
            queries_seen.append((r.at, dynamo_requests["Query"]))

    asyncio.run(scenario())
    # The second page is fetched only when the first one is used up.
    assert queries_seen == [(i, i // 3 + 1) for i in range(10)]
    assert dynamo_requests["Query"] == 4  # pages of 3, 3, 3, 1


def test_async_for_raises_query_errors(dynamo_db, dynamo_requests):
    async def scenario():
        return [r async for r in AsyncReading.objects.filter(at=1)]

    with pytest.raises(QueryError, match="partition key"):
        asyncio.run(scenario())
    assert dynamo_requests.total == 0


def test_sync_code_runs_in_a_worker_thread_and_overrides_apply(dynamo_db):
    AsyncAudited.saved_in.clear()

    async def scenario():
        await asyncio.gather(*(AsyncAudited(pk_value=f"k{i}").asave() for i in range(3)))

    asyncio.run(scenario())
    assert len(AsyncAudited.saved_in) == 3
    assert threading.main_thread() not in AsyncAudited.saved_in
    assert len(list(AsyncAudited.objects.scan())) == 3


def test_concurrent_async_calls_run_on_the_apps_pool_of_async_threads(dynamo_db):
    """200 concurrent aget would otherwise share the event loop's default executor
    (sized by CPU count, shared with the project); DYNAMO['ASYNC_THREADS'] sizes ours."""
    from django.conf import settings
    from django.test import override_settings

    from dynamo_app.client.handle import get_handle

    AsyncReading.objects.bulk_save(AsyncReading(sensor="pool", at=i) for i in range(8))
    with override_settings(DYNAMO={**settings.DYNAMO, "ASYNC_THREADS": 3}):
        names: set[str] = set()

        def sending(**kwargs):
            names.add(threading.current_thread().name)

        get_handle().client.meta.events.register("before-send.dynamodb", sending)

        async def burst():
            gets = (AsyncReading.objects.aget(sensor="pool", at=i % 8) for i in range(24))
            return await asyncio.gather(*gets)

        assert [r.at for r in asyncio.run(burst())] == [i % 8 for i in range(24)]
    assert 1 <= len(names) <= 3 and all(n.startswith("dynamo-async") for n in names)
