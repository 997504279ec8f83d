"""Single-table design: several models in one models.Table, keys built by templates."""

import pytest

from dynamo_app import models
from dynamo_app.exceptions import ModelDefinitionError, QueryError, ValidationError
from dynamo_app.tables import registry
from dynamo_app.testing import count_requests
from tests.test_models_operations import sent


class StLeague(models.Table):
    class Meta:
        table_name = "st_league"
        indexes = [models.GlobalIndex("gsi1", partition_key="gsi1pk", sort_key="gsi1sk")]


class StTeam(models.Model):
    team_id = models.StringField()
    name = models.StringField()

    class Meta:
        table = StLeague
        keys = {"pk": "TEAM#{team_id}", "sk": "#TEAM"}


class StPlayer(models.Model):
    team_id = models.StringField()
    player_id = models.StringField(default=models.new_uuid)
    player_name = models.StringField()
    number = models.IntegerField()
    position = models.StringField(null=True)

    class Meta:
        table = StLeague
        keys = {
            "pk": "TEAM#{team_id}",
            "sk": "PLAYER#{player_id}",
            "gsi1pk": "POSITION#{position}",
            "gsi1sk": "NUMBER#{number:03d}",
        }


class StGame(models.Model):
    team_id = models.StringField()
    season = models.IntegerField()
    round = models.IntegerField()
    opponent = models.StringField()

    rounds_from = models.DeclaredQuery(
        "team_id = {team} AND season = {season} AND round >= {first}", returns="page"
    )

    class Meta:
        table = StLeague
        keys = {"pk": "TEAM#{team_id}", "sk": "GAME#{season:04d}#{round:03d}"}


def stored(handle, **key):
    table = handle.table_name("st_league")
    return handle.client.get_item(TableName=table, Key={k: {"S": v} for k, v in key.items()})[
        "Item"
    ]


def test_one_table_definition_lists_the_models_sharing_it():
    definition = registry.get("st_league")
    assert definition.key_names() == ("pk", "sk")
    assert {a["AttributeType"] for a in definition.attribute_definitions()} == {"S"}
    assert [i.name for i in definition.indexes] == ["gsi1"]
    assert definition.owner == "tests.test_single_table.StLeague"
    assert set(definition.shared_by) >= {
        "tests.test_single_table.StTeam",
        "tests.test_single_table.StPlayer",
        "tests.test_single_table.StGame",
    }
    assert StPlayer._meta.table_definition() == definition


def test_create_writes_templates_and_entity_type_and_get_is_one_getitem(dynamo_db, dynamo_requests):
    StPlayer.objects.create(team_id="t1", player_id="p1", player_name="Ann", number=7)
    assert dynamo_requests["PutItem"] == 1
    assert sent(dynamo_requests)["ConditionExpression"] == "attribute_not_exists(#n0)"
    item = stored(dynamo_db, pk="TEAM#t1", sk="PLAYER#p1")
    assert item["_type"] == {"S": "StPlayer"}
    assert item["gsi1sk"] == {"S": "NUMBER#007"}
    assert "gsi1pk" not in item  # position is None: the item stays out of the sparse index
    with count_requests() as n:
        got = StPlayer.objects.get(team_id="t1", player_id="p1")
    assert n.total == 1 and n["GetItem"] == 1
    assert (got.player_name, got.number, got.extra_attributes) == ("Ann", 7, {})
    assert got.key == {"team_id": "t1", "player_id": "p1"}


def test_filter_by_partition_reads_only_the_models_items(dynamo_db, dynamo_requests):
    StTeam.objects.create(team_id="t1", name="Owls")
    for i in range(3):
        StPlayer.objects.create(team_id="t1", player_id=f"p{i}", player_name=f"n{i}", number=i)
    StGame.objects.create(team_id="t1", season=2024, round=1, opponent="Bats")
    with count_requests() as n:
        players = list(StPlayer.objects.filter(team_id="t1"))
    assert [p.player_id for p in players] == ["p0", "p1", "p2"]
    assert n.total == 1 and n["Query"] == 1
    params = sent(n)
    assert params["ExpressionAttributeValues"][":v1"] == {"S": "PLAYER#"}
    assert "begins_with" in params["KeyConditionExpression"]
    assert [t.name for t in StTeam.objects.filter(team_id="t1")] == ["Owls"]
    assert StPlayer.objects.filter(team_id="t1").count() == 3


def test_sort_lookups_stay_inside_the_models_prefix(dynamo_db, dynamo_requests):
    StTeam.objects.create(team_id="t1", name="Owls")  # "#TEAM" sorts before every GAME#
    StPlayer.objects.create(team_id="t1", player_id="p1", player_name="n", number=1)
    for season in (2023, 2024):
        for rnd in (1, 2, 10):
            StGame.objects.create(team_id="t1", season=season, round=rnd, opponent="x")
    games = StGame.objects.filter(team_id="t1", season=2024)
    assert [g.round for g in games] == [1, 2, 10]  # zero-padded: numeric order
    with count_requests() as n:
        assert [g.round for g in games.filter(round__gte=2)] == [2, 10]
        assert [g.round for g in games.filter(round__gt=2)] == [10]
        assert [g.round for g in games.filter(round__lt=10)] == [1, 2]
        assert [g.round for g in games.filter(round__lte=1)] == [1]
        assert [g.round for g in games.filter(round__between=(2, 10))] == [2, 10]
    assert n["Query"] == 5 and n.total == 5
    desc = StGame.objects.filter(team_id="t1").order_by("-season")
    assert [(g.season, g.round) for g in desc][:2] == [(2024, 10), (2024, 2)]
    everything = list(StGame.objects.filter(team_id="t1"))
    assert len(everything) == 6  # never the team's or the player's item


def test_overloaded_index_and_pages_with_cursors(dynamo_db, dynamo_requests):
    for i in range(5):
        StPlayer.objects.create(
            team_id=f"t{i % 2}",
            player_id=f"p{i}",
            player_name="n",
            number=10 - i,
            position="Pitcher",
        )
    by_number = StPlayer.objects.using_index("gsi1").filter(position="Pitcher")
    with count_requests() as n:
        first = by_number.page(size=3)
        second = by_number.page(size=3, cursor=first.next_cursor)
    assert [p.number for p in first] == [6, 7, 8]
    assert [p.number for p in second] == [9, 10]
    assert n["Query"] == 2 and n.total == 2
    assert [p.number for p in by_number.filter(number__gte=9)] == [9, 10]
    # cursor_after (keyset paging with no request): the stored key attributes, rendered
    assert first.next_cursor == by_number.cursor_after(first.items[-1])
    after = by_number.page(size=3, cursor=by_number.cursor_after(first.items[0]))
    assert [p.number for p in after] == [7, 8, 9]
    back = by_number.order_by("-number")
    assert [p.number for p in back.page(cursor=back.cursor_after(second.items[0]))] == [8, 7, 6]
    roster = StPlayer.objects.filter(team_id="t0")
    assert [p.player_id for p in roster.page(cursor=roster.cursor_after(first.items[2]))] == ["p4"]


def test_save_update_delete_only_and_batches(dynamo_db, dynamo_requests):
    team = StTeam.objects.create(team_id="t9", name="Old")
    team.name = "New"
    team.save()
    assert StTeam.objects.get(team_id="t9").name == "New"
    team.update(set={"name": "Newer"})
    assert stored(dynamo_db, pk="TEAM#t9", sk="#TEAM")["name"] == {"S": "Newer"}
    StPlayer.objects.bulk_save(
        [StPlayer(team_id="t9", player_id=f"p{i}", player_name="n", number=i) for i in range(3)]
    )
    got = StPlayer.objects.bulk_get([("t9", "p2"), {"team_id": "t9", "player_id": "nope"}])
    assert got[0].number == 2 and got[1] is None
    partial = StPlayer.objects.filter(team_id="t9").only("number").first()
    assert partial.number == 0 and partial.key == {"team_id": "t9", "player_id": "p0"}
    StPlayer.objects.bulk_delete([("t9", "p0"), ("t9", "p1")])
    team.delete()
    assert [p.player_id for p in StPlayer.objects.filter(team_id="t9")] == ["p2"]
    with pytest.raises(StTeam.DoesNotExist):
        StTeam.objects.get(team_id="t9")


def test_a_number_that_breaks_the_width_is_refused_before_sending(dynamo_db, dynamo_requests):
    with pytest.raises(ValidationError, match="does not fit the key format '03d'"):
        StGame.objects.create(team_id="t1", season=2024, round=1000, opponent="x")
    with pytest.raises(ValidationError, match="does not fit"):
        StGame.objects.create(team_id="t1", season=2024, round=-1, opponent="x")
    assert dynamo_requests.total == 0


def test_key_rules_are_said_in_fields(dynamo_db):
    with pytest.raises(QueryError, match="needs 'team_id'"):
        list(StPlayer.objects.filter(player_id="p1"))
    with pytest.raises(QueryError, match="leading run"):
        StGame.objects.filter(team_id="t", round=3)
    with pytest.raises(QueryError, match="'opponent' is not in a key template"):
        StGame.objects.filter(team_id="t", opponent="x")
    with pytest.raises(QueryError, match="order_by"):
        StGame.objects.filter(team_id="t").order_by("opponent")


def _declare(keys, table=StLeague, **fields):
    attrs = {
        "__module__": __name__,
        "a": models.StringField(),
        "n": models.IntegerField(),
        "d": models.DecimalField(),
        **fields,
        "Meta": type("Meta", (), {"table": table, "keys": keys}),
    }
    return type("StBad", (models.Model,), attrs)


@pytest.mark.parametrize(
    "keys, message",
    [
        ({"pk": "X#{nope}", "sk": "Y#"}, "'nope', which is not a field.*E116"),
        ({"pk": "X#{a}"}, "no template fills sk.*E116"),
        ({"pk": "X#{a}", "sk": "Y#", "other": "Z"}, "'other', which is not a key attribute"),
        ({"pk": "X#{a}", "sk": "Y#", "gsi1pk": "G#{a}"}, "index 'gsi1'.*no template fills"),
        ({"pk": "X#{a}", "sk": "Y#{n}"}, "zero-padded width.*E118"),
        ({"pk": "X#{a}", "sk": "Y#{d:05d}"}, "DecimalField.*E118"),
        ({"pk": "X#{a}", "sk": "{a}"}, "starts with a field"),
        ({"pk": "X#{a!r}", "sk": "Y"}, "E116"),
        ({"pk": "TEAM#{a}", "sk": "PLAYER#{a}#x"}, "could write the same key.*E117"),
        ({"pk": "TEAM#{a}", "sk": "PLAYER{a}"}, "E117"),
    ],
)
def test_templates_are_checked_at_class_creation(keys, message):
    with pytest.raises(ModelDefinitionError, match=f"(?s){message}"):
        _declare(keys)


def test_other_options_are_refused_in_a_shared_table():
    with pytest.raises(ModelDefinitionError, match="(?s)Meta.stream.*E119.*no key fields.*E119"):
        type(
            "StBad",
            (models.Model,),
            {
                "__module__": __name__,
                "a": models.StringField(partition_key=True),
                "Meta": type(
                    "Meta",
                    (),
                    {"table": StLeague, "keys": {"pk": "A#{a}", "sk": "B#"}, "stream": "keys_only"},
                ),
            },
        )
    with pytest.raises(ModelDefinitionError, match="Meta.table.*E116"):
        _declare({"pk": "A#{a}", "sk": "B"}, table=object)
    assert "StBad" not in StLeague._table.models


class StCoach(models.Model):
    """Unique constraints and a VersionField in a shared table."""

    team_id = models.StringField()
    coach_id = models.StringField()
    email = models.StringField()
    version = models.VersionField()

    class Meta:
        table = StLeague
        keys = {"pk": "TEAM#{team_id}", "sk": "COACH#{coach_id}"}
        unique = [models.Unique("email")]


def test_unique_version_idempotency_transactions_and_signals(dynamo_db):
    import dynamo_app
    from dynamo_app.exceptions import AlreadyApplied, StaleObjectError, UniqueViolation
    from dynamo_app.signals import post_save

    saved = []

    def receiver(sender, instance, created, **kwargs):
        saved.append((sender.__name__, created))

    post_save.connect(receiver, sender=StCoach)
    try:
        with count_requests() as n:
            coach = StCoach.objects.create(team_id="t1", coach_id="c1", email="a@x")
        assert n["TransactWriteItems"] == 1 and n.total == 1  # the coach and its lock
        assert saved == [("StCoach", True)]
    finally:
        post_save.disconnect(receiver, sender=StCoach)
    with pytest.raises(UniqueViolation):
        StCoach.objects.create(team_id="t2", coach_id="c2", email="a@x")
    stale = StCoach.objects.get(team_id="t1", coach_id="c1")
    coach.email = "b@x"
    coach.save()
    assert (coach.version, StCoach.objects.get(team_id="t1", coach_id="c1").email) == (2, "b@x")
    StCoach.objects.create(team_id="t2", coach_id="c2", email="a@x")  # its lock was released
    stale.email = "c@x"
    with pytest.raises(StaleObjectError):
        stale.save()
    with dynamo_app.transaction() as tx:
        tx.create(StTeam(team_id="t3", name="Owls"))
        tx.create(StPlayer(team_id="t3", player_id="p1", player_name="n", number=1))
        tx.delete(coach)
    assert StPlayer.objects.get(team_id="t3", player_id="p1").number == 1
    assert not StCoach.objects.filter(team_id="t1").exists()
    team = StTeam.objects.get(team_id="t3")
    team.update(set={"name": "Hawks"}, idempotency_key="rename-1")
    with pytest.raises(AlreadyApplied):
        team.update(set={"name": "Hawks"}, idempotency_key="rename-1")


TeamPage = StLeague.collection("team", StTeam, StPlayer, StGame)


def test_a_collection_page_is_one_query_decoded_per_model_in_sort_order(dynamo_db, caplog):
    StTeam.objects.create(team_id="t1", name="Owls")
    for i in range(3):
        StPlayer.objects.create(team_id="t1", player_id=f"p{i}", player_name="n", number=i)
    for rnd in (1, 2):
        StGame.objects.create(team_id="t1", season=2024, round=rnd, opponent="x")
    StCoach.objects.create(team_id="t1", coach_id="c1", email="z@x")  # not a member
    StTeam.objects.create(team_id="t2", name="Other")
    with count_requests() as n:
        page = TeamPage.page(team_id="t1")
    assert n.total == 1 and n["Query"] == 1
    kinds = [type(i).__name__ for i in page]
    assert kinds == ["StTeam", "StGame", "StGame", "StPlayer", "StPlayer", "StPlayer"]
    assert page.of(StTeam)[0].name == "Owls" and [p.number for p in page.of(StPlayer)] == [0, 1, 2]
    assert page.next_cursor is None
    # The coach (not a member) sorts between #TEAM and PLAYER#: kept and reported, not dropped.
    assert [u["sk"]["S"] for u in page.unknown] == ["COACH#c1"]
    assert "entity types: StCoach" in caplog.text
    assert "t1" not in caplog.text  # a key value: logged only with LOG_VALUES


def test_collection_pages_with_cursors_and_reverse_and_keeps_unknown_items(dynamo_db, caplog):
    StTeam.objects.create(team_id="t1", name="Owls")
    for i in range(4):
        StPlayer.objects.create(team_id="t1", player_id=f"p{i}", player_name="n", number=i)
    table = dynamo_db.table_name("st_league")
    ghost = {"pk": {"S": "TEAM#t1"}, "sk": {"S": "GHOST#1"}, "_type": {"S": "Ghost"}}
    dynamo_db.client.put_item(TableName=table, Item=ghost)
    seen, cursor, pages = [], None, 0
    with count_requests() as n:
        while True:
            page = TeamPage.page(team_id="t1", size=2, cursor=cursor, reverse=True)
            pages += 1
            seen += [getattr(i, "player_id", "team") for i in page] + [
                u["sk"]["S"] for u in page.unknown
            ]
            cursor = page.next_cursor
            if cursor is None:
                break
    assert n["Query"] == pages == n.total
    assert seen == ["p3", "p2", "p1", "p0", "team", "GHOST#1"]  # the last page: team, ghost
    assert "read 1 item of no member model (entity types: Ghost)" in caplog.text
    from dynamo_app.exceptions import InvalidCursor

    first = TeamPage.page(team_id="t1", size=1)
    with pytest.raises(InvalidCursor):
        TeamPage.page(team_id="t2", size=1, cursor=first.next_cursor)


def test_a_collection_needs_one_partition_template():
    with pytest.raises(ModelDefinitionError, match="differently"):
        StLeague.collection("bad", StTeam, StPlayer, StBadPartition)
    with pytest.raises(ModelDefinitionError, match="not a model of"):
        StLeague.collection("bad", StTeam, StOutside)
    with pytest.raises(QueryError, match="give team_id"):
        TeamPage.page(season=1)


class StBadPartition(models.Model):
    league = models.StringField()
    n = models.StringField()

    class Meta:
        table = StLeague
        keys = {"pk": "LEAGUE#{league}", "sk": "X#{n}"}


class StOutside(models.Model):
    oid = models.StringField(partition_key=True)


def test_an_update_moves_the_index_keys_its_fields_build(dynamo_db):
    player = StPlayer.objects.create(
        team_id="t1", player_id="p1", player_name="n", number=5, position="Pitcher"
    )
    player.update(set={"number": 12})
    assert stored(dynamo_db, pk="TEAM#t1", sk="PLAYER#p1")["gsi1sk"] == {"S": "NUMBER#012"}
    player.number = 13
    player.save(update_fields=["number"])
    pitchers = StPlayer.objects.using_index("gsi1").filter(position="Pitcher")
    assert [p.number for p in pitchers] == [13]
    player.update(set={"position": None})
    assert "gsi1pk" not in stored(dynamo_db, pk="TEAM#t1", sk="PLAYER#p1")
    assert not pitchers.exists()
    blind = StPlayer(team_id="t1", player_id="p1")  # the update names every field of the key
    blind.update(set={"position": "Catcher"})
    assert [p.number for p in StPlayer.objects.using_index("gsi1").filter(position="Catcher")] == [
        13
    ]
    with pytest.raises(ValidationError, match="index key 'gsi1sk'"):
        player.update(add={"number": 1})


def test_plan_json_and_iac_say_which_models_share_the_table(dynamo_db):
    import json
    from io import StringIO

    from django.core.management import call_command

    def run(*args):
        out = StringIO()
        call_command(*args, stdout=out, no_color=True)
        return out.getvalue()

    members = "tests.test_single_table.StTeam, tests.test_single_table.StPlayer"
    [row] = [line for line in run("dynamo_plan").splitlines() if line.startswith("st_league ")]
    assert "in sync" in row and f"shared by {members}" in row
    changes = json.loads(run("dynamo_plan", "--json"))["changes"]
    [change] = [c for c in changes if c["declared_name"] == "st_league"]
    assert change["shared_by"][:2] == members.split(", ")
    assert all(c["shared_by"] == [] for c in changes if c["declared_name"] == "dynamo_unique")
    cloudformation = run("dynamo_plan", "--format", "cloudformation")
    assert f"declared by tests.test_single_table.StLeague, shared by {members}" in cloudformation
    assert 'AttributeName: "gsi1pk"' in cloudformation
    terraform = run("dynamo_plan", "--format", "terraform")
    assert f"shared by {members}" in terraform and '"gsi1pk"' in terraform
    policy = run("dynamo_plan", "--iam-policy", "app")
    assert dynamo_db.table_name("st_league") in policy


def test_a_scan_returns_the_models_items_only(dynamo_db):
    StTeam.objects.create(team_id="t1", name="Owls")
    StPlayer.objects.create(team_id="t1", player_id="p1", player_name="n", number=1)
    with count_requests() as n:
        assert [p.player_id for p in StPlayer.objects.scan()] == ["p1"]
    assert n.total == 1 and "FilterExpression" in sent(n)
    assert StTeam.objects.scan().count() == 1


def test_declared_queries_are_checked_and_run_in_fields(dynamo_db):
    for rnd in (1, 2, 3):
        StGame.objects.create(team_id="t1", season=2024, round=rnd, opponent="x")
    with count_requests() as n:
        page = StGame.rounds_from(team="t1", season=2024, first=2)
    assert [g.round for g in page] == [2, 3] and n.total == 1
    with pytest.raises(ModelDefinitionError, match="leading run"):
        type(
            "StBadQuery",
            (StGame,),
            {
                "__module__": __name__,
                "bad": models.DeclaredQuery("team_id = {t} AND round = {r}"),
                "Meta": type(
                    "Meta",
                    (),
                    {
                        "table": StLeague,
                        "entity": "StBadQuery",
                        "keys": {"pk": "TEAM#{team_id}", "sk": "BADQ#{season:04d}#{round:03d}"},
                    },
                ),
            },
        )


class StVenue(models.Model):
    venue_id = models.StringField()
    name = models.StringField()
    city = models.StringField()

    class Meta:
        table = StLeague
        keys = {
            "pk": "VENUE#{venue_id}",
            "sk": "VENUE",
            "gsi1pk": "CITY#{city}",
            "gsi1sk": "VENUE#{name}#{city}",
        }


def test_an_index_key_of_several_fields_needs_them_all_known(dynamo_db):
    StVenue.objects.create(venue_id="v1", name="Dome", city="Kyoto")
    with pytest.raises(ValidationError, match="index key 'gsi1sk'"):
        StVenue(venue_id="v1").update(set={"name": "Arena"})  # city: unknown to a blind instance
    StVenue(venue_id="v1").update(set={"name": "Arena", "city": "Kyoto"})
    read = StVenue.objects.get(venue_id="v1")
    read.update(set={"city": "Osaka"})
    [venue] = StVenue.objects.using_index("gsi1").filter(city="Osaka")
    assert (venue.name, stored(dynamo_db, pk="VENUE#v1", sk="VENUE")["gsi1sk"]) == (
        "Arena",
        {"S": "VENUE#Arena#Osaka"},
    )


def test_a_collection_over_an_index(dynamo_db):
    by_position = StLeague.collection("position", StPlayer, index="gsi1")
    for i in range(3):
        StPlayer.objects.create(
            team_id=f"t{i}", player_id="p", player_name="n", number=9 - i, position="Pitcher"
        )
    with count_requests() as n:
        page = by_position.page(position="Pitcher")
    assert [p.number for p in page] == [7, 8, 9] and n.total == 1
    assert sent(n)["IndexName"] == "gsi1"
    with pytest.raises(QueryError, match="global"):
        by_position.page(position="Pitcher", consistent=True)


def test_a_backfill_changes_the_models_items_only(dynamo_db):
    from dynamo_app.data import backfill

    StTeam.objects.create(team_id="t1", name="Hawks")
    StPlayer.objects.create(team_id="t1", player_id="p1", player_name="ann", number=1)
    StPlayer.objects.create(team_id="t1", player_id="p2", player_name="bo", number=2)

    def shout(player):
        player.player_name = player.player_name.upper()

    result = backfill.run(StPlayer, shout)
    assert (result.seen, result.changed) == (2, 2)  # the team's item is not a player
    assert [p.player_name for p in StPlayer.objects.filter(team_id="t1")] == ["ANN", "BO"]
    team = stored(dynamo_db, pk="TEAM#t1", sk="#TEAM")
    assert team["_type"] == {"S": "StTeam"} and "player_name" not in team


def test_a_partiql_select_returns_only_its_models_items_as_filter_and_scan_do(dynamo_db):
    StTeam.objects.create(team_id="t1", name="Hawks")
    StPlayer.objects.create(team_id="t1", player_id="p1", player_name="Ann", number=7)
    StGame.objects.create(team_id="t1", season=2024, round=1, opponent="Owls")
    by_key = "SELECT * FROM {table} WHERE pk = ?"
    assert [p.player_name for p in StPlayer.objects.partiql(by_key, ["TEAM#t1"])] == ["Ann"]
    assert [t.name for t in StTeam.objects.partiql(by_key, ["TEAM#t1"])] == ["Hawks"]
    names = StPlayer.objects.partiql("SELECT player_name FROM {table} WHERE pk = ?", ["TEAM#t1"])
    assert [p.player_name for p in names] == ["Ann"]  # the entity type is projected too
    scanned = StGame.objects.partiql("SELECT * FROM {table}", scan=True)
    assert [g.opponent for g in scanned] == ["Owls"]
    assert [p.player_name for p in StPlayer.objects.filter(team_id="t1")] == ["Ann"]
    assert [p.player_name for p in StPlayer.objects.scan()] == ["Ann"]
