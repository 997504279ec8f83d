"""Django ORM habits that carry over: get_or_create / update_or_create (race-safe,
one conditional write), query mistakes raised where they are made, bool() of a
queryset, and ``async with dynamo_app.transaction()``."""

import asyncio

import pytest

import dynamo_app
from dynamo_app import models
from dynamo_app.exceptions import QueryError, UniqueViolation
from dynamo_app.tables import registry
from project.roster.models import Player
from tests.sessions_support import registered
from tests.thread_support import in_threads


class Tally(models.Model):
    board = models.StringField(partition_key=True)
    name = models.StringField(sort_key=True)
    title = models.StringField(default="untitled")
    score = models.IntegerField(default=0)
    region = models.StringField(null=True)
    created = models.IntegerField(null=True)

    class Meta:
        table_name = "habits_tally"
        indexes = [models.GlobalIndex("by_region", partition_key="region", sort_key="created")]


TABLES = [Tally._meta.table_definition()]
for _definition in TABLES:  # created only for the tests below that ask for them
    registry.unregister(_definition.declared_name)


@pytest.fixture
def tables(request, dynamo_server):
    with registered(*TABLES):
        yield request.getfixturevalue("dynamo_db")


# --- get_or_create / update_or_create


def test_get_or_create_is_one_conditional_write_either_way(tables, dynamo_requests):
    tally, created = Tally.objects.get_or_create(board="b", name="n", defaults={"score": 3})
    assert created and tally.score == 3 and tally.title == "untitled"
    assert dict(dynamo_requests) == {"PutItem": 1}
    assert "attribute_not_exists" in dynamo_requests.calls[0][1]["ConditionExpression"]

    again, created = Tally.objects.get_or_create(board="b", name="n", defaults={"score": 9})
    assert not created and again.score == 3  # the stored item, returned with the refusal
    assert dict(dynamo_requests) == {"PutItem": 2}


def test_get_or_create_calls_callable_defaults_and_wants_the_whole_key(tables):
    tally, _ = Tally.objects.get_or_create(board="b", name="c", defaults={"title": lambda: "x"})
    assert tally.title == "x"
    with pytest.raises(QueryError, match=r"primary key \(board, name\).*defaults="):
        Tally.objects.get_or_create(board="b", title="x")


def test_a_race_of_get_or_create_creates_exactly_one(tables):
    results = []

    def race(worker):
        results.append(
            Tally.objects.get_or_create(board="race", name="one", defaults={"title": f"w{worker}"})
        )

    assert in_threads(race, range(8)) == []
    assert sorted(created for _, created in results) == [False] * 7 + [True]
    (winner,) = [obj.title for obj, created in results if created]
    assert {obj.title for obj, _ in results} == {winner}  # every loser got the winner's item
    assert [t.title for t in Tally.objects.filter(board="race")] == [winner]


def test_update_or_create_of_a_plain_model(tables, dynamo_requests):
    tally, created = Tally.objects.update_or_create(
        board="b", name="n", defaults={"score": 1}, create_defaults={"score": 5, "title": "new"}
    )
    assert created and (tally.score, tally.title) == (5, "new")
    assert dict(dynamo_requests) == {"UpdateItem": 1, "PutItem": 1}  # refused update, create

    tally, created = Tally.objects.update_or_create(board="b", name="n", defaults={"score": 2})
    assert not created and (tally.score, tally.title) == (2, "new")  # the whole item, as stored
    assert dynamo_requests["UpdateItem"] == 2 and dynamo_requests.total == 3


def test_update_or_create_of_a_versioned_model_with_unique_values(dynamo_db, dynamo_requests):
    key = {"team_id": "t1", "player_id": "p1"}
    player, created = Player.objects.update_or_create(
        **key, defaults={"player_name": "Ann", "uniform_number": 7}
    )
    assert created and player.version == 1
    Player.objects.create(team_id="t1", player_id="p2", player_name="Bo", uniform_number=8)
    dynamo_requests.clear()

    player, created = Player.objects.update_or_create(**key, defaults={"uniform_number": 9})
    assert not created and (player.uniform_number, player.version) == (9, 2)
    assert dynamo_requests["GetItem"] == 1  # read, then a write conditioned on what was read
    with pytest.raises(UniqueViolation):
        Player.objects.update_or_create(**key, defaults={"uniform_number": 8})
    assert Player.objects.get(**key).uniform_number == 9


def test_a_race_of_update_or_create_loses_no_update(dynamo_db):
    """Four writers each set a different name under one key: every update lands on
    the one item in turn (the version refuses a stale one, which tries again)."""

    def race(worker):
        Player.objects.update_or_create(
            team_id="race",
            player_id="p",
            defaults={"player_name": f"w{worker}"},
            create_defaults={"player_name": f"w{worker}", "uniform_number": 1},
        )

    assert in_threads(race, range(4)) == []
    stored = Player.objects.get(team_id="race", player_id="p")
    assert stored.version == 4  # one create and three updates, none lost


# --- query mistakes raised where they are made


@pytest.mark.parametrize(
    "build, message",
    [
        (
            lambda: Tally.objects.filter(board="b", title__icontains="x"),
            "title__icontains: the lookup 'icontains' is not supported by filter\\(\\); it takes "
            "exact, lt, lte, gt, gte, between, begins_with",
        ),
        (
            lambda: Tally.objects.filter(board="b").where(title__icontains="x"),
            "'icontains' is not supported by where\\(\\); it takes exact, ne, lt, .*, exists",
        ),
        (lambda: Tally.objects.filter(board="b", title__contains="x"), "with where\\(\\)"),
        (
            lambda: Tally.objects.filter(board="b").order_by("-created", "title"),
            "order_by\\(\\) takes one field, the sort key of the table \\(name\\).*sort key only",
        ),
        (lambda: Tally.objects.filter(board="b").order_by("title"), "sort key of the table"),
        (lambda: Tally.objects.filter(board="b", score=3), "where\\(score=...\\)"),
        (lambda: Tally.objects.filter(board__gt="b"), "only an exact value"),
        (lambda: Tally.objects.filter(board="b").where(nope=1), "no field 'nope'"),
        (lambda: Tally.objects.filter(board="b").where(score__between=(5, 1)), "BETWEEN"),
    ],
)
def test_a_query_mistake_is_raised_where_it_is_made(build, message):
    with pytest.raises(QueryError, match=message):
        build()  # not iterated: nothing to send, and no table is needed


def test_checks_that_depend_on_a_later_choice_wait_for_it(tables, dynamo_requests):
    """An index key may be named before using_index(); a partition key may come in
    a second filter(). What cannot be judged yet is judged when the query is sent."""
    by_region = Tally.objects.filter(region="eu").order_by("-created")
    assert list(by_region.using_index("by_region")) == []
    assert list(Tally.objects.filter(name__gt="a").filter(board="b")) == []
    with pytest.raises(QueryError, match="using_index"):
        list(by_region)
    assert dynamo_requests["Query"] == 2


def test_a_queryset_has_no_truth_value():
    with pytest.raises(TypeError, match="exists\\(\\)"):
        bool(Tally.objects.filter(board="b"))


# --- async transactions


def test_async_with_transaction_commits_in_a_worker_thread(tables, dynamo_requests):
    async def view():
        async with dynamo_app.transaction() as tx:
            tx.create(Tally(board="a", name="one"))
            tx.create(Tally(board="a", name="two"))
        with pytest.raises(RuntimeError):
            async with dynamo_app.transaction() as tx:
                tx.create(Tally(board="a", name="three"))
                raise RuntimeError("the block fails: nothing is sent")

    asyncio.run(view())
    assert dict(dynamo_requests) == {"TransactWriteItems": 1}
    assert [t.name for t in Tally.objects.filter(board="a")] == ["one", "two"]


def test_async_get_or_create(tables):
    async def view():
        return await Tally.objects.aget_or_create(board="a", name="x", defaults={"score": 2})

    tally, created = asyncio.run(view())
    assert created and tally.score == 2
