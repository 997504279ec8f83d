"""Unique constraints on non-key attributes: the seed's baseball roster, done rigorously."""

import pytest
from django.conf import settings
from django.core.management import call_command
from django.test import override_settings

import dynamo_app
from dynamo_app import models
from dynamo_app.client.handle import Handle, get_handle, using
from dynamo_app.conf import get_settings
from dynamo_app.data.integrity import check_unique
from dynamo_app.exceptions import (
    AlreadyExists,
    BatchIncomplete,
    ModelDefinitionError,
    StaleObjectError,
    UniqueViolation,
    ValidationError,
    WriteError,
)
from dynamo_app.testing import count_requests
from dynamo_app.unique import LOCK_TABLE
from tests.thread_support import in_threads


class Player(models.Model):
    team_id = models.StringField(partition_key=True)
    player_id = models.StringField(sort_key=True, default=models.new_uuid)
    player_name = models.StringField()
    uniform_number = models.IntegerField(null=True)
    email = models.StringField(null=True)

    class Meta:
        table_name = "uq_player"
        unique = [models.Unique("uniform_number", within="team_id"), models.Unique("email")]


def locks():
    handle = get_handle()
    return handle.call("scan", TableName=handle.table_name(LOCK_TABLE))["Items"]


def lock_values():
    return sorted(item["value"]["S"] for item in locks())


def roster(team="team-001"):
    return sorted((p.player_name, p.uniform_number) for p in Player.objects.filter(team_id=team))


def test_the_seed_scenario(dynamo_db):
    alice = Player.objects.create(team_id="team-001", player_name="Alice", uniform_number=18)
    with pytest.raises(UniqueViolation) as error:
        Player.objects.create(team_id="team-001", player_name="Bob", uniform_number=18)
    assert error.value.constraint == "uniform_number" and error.value.value == 18
    assert error.value.model == "Player"
    assert "uniform_number=18" in str(error.value) and "team-001" in str(error.value)
    assert roster() == [("Alice", 18)]  # nothing of Bob was written
    assert lock_values() == ["18"]

    alice.uniform_number = 19
    alice.save()
    assert lock_values() == ["19"]
    Player.objects.create(team_id="team-001", player_name="Bob", uniform_number=18)  # 18 is free
    with pytest.raises(UniqueViolation):
        Player.objects.create(team_id="team-001", player_name="Carol", uniform_number=19)

    alice.delete()
    assert lock_values() == ["18"]
    assert roster() == [("Bob", 18)]


def test_scope_and_global_constraints(dynamo_db):
    Player.objects.create(team_id="t1", player_name="A", uniform_number=7, email="a@x.org")
    Player.objects.create(team_id="t2", player_name="B", uniform_number=7)  # other team
    with pytest.raises(UniqueViolation) as error:
        Player.objects.create(team_id="t3", player_name="C", email="a@x.org")  # global
    assert error.value.constraint == "email"
    assert len(locks()) == 3


def test_null_claims_nothing(dynamo_db):
    Player.objects.create(team_id="t1", player_name="A")
    Player.objects.create(team_id="t1", player_name="B")
    assert locks() == []


def test_create_with_two_constraints_is_one_transaction(dynamo_db):
    with count_requests() as counter:
        Player.objects.create(team_id="t1", player_name="A", uniform_number=1, email="a@x")
    assert dict(counter) == {"TransactWriteItems": 1}
    assert len(locks()) == 2


def test_unchanged_unique_values_cause_no_lock_traffic(dynamo_db):
    player = Player.objects.create(team_id="t1", player_name="A", uniform_number=1)
    player.player_name = "Ann"
    with count_requests() as counter:
        player.save()
        player.update(set={"player_name": "Anne"})
    assert dict(counter) == {"PutItem": 1, "UpdateItem": 1}
    assert lock_values() == ["1"]


def test_changing_a_value_by_update_moves_the_lock(dynamo_db):
    player = Player.objects.create(team_id="t1", player_name="A", uniform_number=1)
    with count_requests() as counter:
        player.update(set={"uniform_number": 2})
    assert dict(counter) == {"TransactWriteItems": 1}
    assert player.uniform_number == 2 and lock_values() == ["2"]
    player.save(update_fields=["uniform_number"])  # unchanged: no lock traffic
    player.update(set={"uniform_number": None})  # to null: releases the lock
    assert locks() == []


def test_a_stale_instance_cannot_steal_orphan_or_free_a_lock(dynamo_db):
    Player.objects.create(team_id="t1", player_id="p1", player_name="A", uniform_number=18)
    first = Player.objects.get(team_id="t1", player_id="p1")
    stale = Player.objects.get(team_id="t1", player_id="p1")
    first.uniform_number = 20
    first.save()  # 18 -> 20
    Player.objects.create(team_id="t1", player_name="B", uniform_number=18)  # 18 re-claimed

    stale.uniform_number = 21
    with pytest.raises(StaleObjectError):
        stale.save()  # would free B's 18
    stale.player_name = "renamed"
    stale.uniform_number = 18
    with pytest.raises(StaleObjectError):
        stale.save()  # unchanged (18) but no longer true: writing it back would orphan 20
    with pytest.raises(StaleObjectError):
        stale.delete()  # would free B's 18 and leave 20 without its owner
    assert lock_values() == ["18", "20"]
    assert roster("t1") == [("A", 20), ("B", 18)]
    assert check_unique().clean


def test_saving_an_unread_instance_never_overwrites(dynamo_db):
    Player.objects.create(team_id="t1", player_id="p1", player_name="A", uniform_number=5)
    fresh = Player(team_id="t1", player_id="p1", player_name="X", uniform_number=6)
    with pytest.raises(AlreadyExists):
        fresh.save()  # it would leave lock 5 without its owner
    assert lock_values() == ["5"]


def test_unique_declaration_errors():
    with pytest.raises(ModelDefinitionError, match="nope"):

        class Bad(models.Model):
            id = models.StringField(partition_key=True)

            class Meta:
                table_name = "uq_bad"
                unique = [models.Unique("nope")]

    with pytest.raises(ModelDefinitionError, match="strings, numbers or binary"):

        class BadType(models.Model):
            id = models.StringField(partition_key=True)
            tags = models.StringSetField()

            class Meta:
                table_name = "uq_bad2"
                unique = [models.Unique("tags")]


def test_race_for_20_values_has_exactly_one_winner_each(dynamo_db):
    """8 threads, each with its own client, race to claim the same 20 numbers
    through the local server."""
    section = {**settings.DYNAMO, "MAX_IDLE_CONNS": 8}
    with override_settings(DYNAMO=section):
        wins = {n: [] for n in range(20)}

        def claim(worker):
            client = Handle(get_settings())
            try:
                with using(client):
                    race(worker)
            finally:
                client.close()

        def race(worker):
            for number in wins:
                try:
                    Player.objects.create(
                        team_id="race", player_name=f"w{worker}", uniform_number=number
                    )
                    wins[number].append(worker)
                except UniqueViolation:
                    pass

        assert in_threads(claim, range(8)) == []
        assert all(len(winners) == 1 for winners in wins.values())
        stored = Player.objects.filter(team_id="race")
        assert sorted(p.uniform_number for p in stored) == list(range(20))
        report = check_unique()
        assert report.findings == [] and report.owners_checked == 20


def _raw_put(item):
    handle = get_handle()
    handle.call("put_item", TableName=handle.table_name("uq_player"), Item=item)


def test_integrity_command_finds_and_repairs(dynamo_db, capsys):
    Player.objects.create(team_id="t1", player_id="ok", player_name="A", uniform_number=1)
    # written by another program, without its lock
    _raw_put(
        {
            "team_id": {"S": "t1"},
            "player_id": {"S": "raw"},
            "player_name": {"S": "R"},
            "uniform_number": {"N": "2"},
        }
    )
    # a lock whose owner was deleted behind the app's back
    orphan = Player.objects.create(
        team_id="t1", player_id="gone", player_name="G", uniform_number=3
    )
    handle = get_handle()
    handle.call(
        "delete_item",
        TableName=handle.table_name("uq_player"),
        Key={"team_id": {"S": "t1"}, "player_id": {"S": "gone"}},
    )
    assert orphan

    report = check_unique()
    assert sorted((f.kind, f.value) for f in report.findings) == [("missing", 2), ("orphan", 3)]
    with pytest.raises(SystemExit) as exit_:
        call_command("dynamo_check_unique")
    assert exit_.value.code == 1
    assert "missing" in capsys.readouterr().out

    call_command("dynamo_check_unique", "--repair")
    assert check_unique().findings == []
    assert lock_values() == ["1", "2"]
    with pytest.raises(UniqueViolation):
        Player.objects.create(team_id="t1", player_name="X", uniform_number=2)


def test_integrity_command_reports_real_duplicates(dynamo_db, capsys):
    for pid in ("a", "b"):
        _raw_put(
            {
                "team_id": {"S": "t1"},
                "player_id": {"S": pid},
                "player_name": {"S": pid},
                "uniform_number": {"N": "9"},
            }
        )
    with pytest.raises(SystemExit):
        call_command("dynamo_check_unique", "--repair")
    out = capsys.readouterr().out
    assert "duplicate" in out and "uniform_number=9" in out
    assert [f.kind for f in check_unique().findings] == ["duplicate"]


# --- every write path keeps the constraint --------------------------------------------------


def test_bulk_save_claims_every_value_and_refuses_a_taken_one(dynamo_db):
    Player.objects.create(team_id="t1", player_name="Alice", uniform_number=18)
    bob = Player(team_id="t1", player_name="Bob", uniform_number=19)
    carol = Player(team_id="t1", player_name="Carol", uniform_number=20, email="c@x.org")
    with count_requests() as counter:
        Player.objects.bulk_save([bob, carol])
    assert dict(counter) == {"TransactWriteItems": 1}  # 2 entities + 3 locks
    assert lock_values() == ['"c@x.org"', "18", "19", "20"]

    dan = Player(team_id="t1", player_name="Dan", uniform_number=21)
    eve = Player(team_id="t1", player_name="Eve", uniform_number=18)
    with pytest.raises(UniqueViolation) as error:
        Player.objects.bulk_save([dan, eve])
    assert (error.value.constraint, error.value.value) == ("uniform_number", 18)
    assert "swap values between items" in str(error.value)  # the way to swap is named
    assert roster("t1") == [("Alice", 18), ("Bob", 19), ("Carol", 20)]  # nothing of Dan or Eve
    assert check_unique().findings == []


def test_bulk_save_refuses_one_value_claimed_twice_before_sending(dynamo_db):
    twins = [Player(team_id="t1", player_name=n, uniform_number=7) for n in ("A", "B")]
    with count_requests() as counter, pytest.raises(UniqueViolation, match="uniform_number=7"):
        Player.objects.bulk_save(twins)
    assert counter.total == 0


def test_bulk_save_moves_locks_and_swaps_values_like_save(dynamo_db):
    Player.objects.create(team_id="t1", player_id="a", player_name="A", uniform_number=1)
    Player.objects.create(team_id="t1", player_id="b", player_name="B", uniform_number=2)
    a, b = Player.objects.bulk_get([("t1", "a"), ("t1", "b")])
    a.uniform_number, b.uniform_number = 2, 1
    with count_requests() as counter:
        Player.objects.bulk_save([a, b])
    assert dict(counter) == {"TransactWriteItems": 1}
    assert roster("t1") == [("A", 2), ("B", 1)]
    a.uniform_number = 3
    Player.objects.bulk_save([a])  # the instances follow what was written
    assert roster("t1") == [("A", 3), ("B", 1)] and lock_values() == ["1", "3"]
    assert check_unique().findings == []


def test_a_large_bulk_save_stops_at_the_failing_chunk_and_says_what_was_written(dynamo_db):
    Player.objects.create(team_id="t1", player_id="holder", player_name="H", uniform_number=99)
    objs = [
        Player(team_id="t1", player_id=f"p{n:02}", player_name=f"P{n}", uniform_number=n)
        for n in range(60)
    ]
    objs[55].uniform_number = 99  # taken: the second chunk fails
    with count_requests() as counter, pytest.raises(BatchIncomplete) as error:
        Player.objects.bulk_save(objs)
    assert dict(counter) == {"TransactWriteItems": 2}  # 50 entities + 50 locks in the first
    assert isinstance(error.value.__cause__, UniqueViolation)
    assert error.value.unprocessed == [
        {"team_id": "t1", "player_id": f"p{n}"} for n in range(50, 60)
    ]
    assert "50 of 60 items were written" in str(error.value)
    assert len(list(Player.objects.filter(team_id="t1"))) == 51
    assert check_unique().findings == []


def test_bulk_delete_releases_locks_and_refuses_bare_keys(dynamo_db):
    a = Player.objects.create(team_id="t1", player_id="a", player_name="A", uniform_number=1)
    b = Player.objects.create(team_id="t1", player_id="b", player_name="B", email="b@x.org")
    with count_requests() as counter, pytest.raises(WriteError, match="instances"):
        Player.objects.bulk_delete([("t1", "a")])
    assert counter.total == 0
    Player.objects.bulk_delete([a, b])
    assert roster("t1") == [] and locks() == []
    assert check_unique().findings == []


def test_two_players_swap_numbers_in_one_transaction(dynamo_db):
    a = Player.objects.create(team_id="t1", player_id="a", player_name="A", uniform_number=18)
    b = Player.objects.create(team_id="t1", player_id="b", player_name="B", uniform_number=19)
    a.uniform_number, b.uniform_number = 19, 18
    with count_requests() as counter:
        with dynamo_app.transaction() as tx:
            tx.save(a)
            tx.save(b)
    assert dict(counter) == {"TransactWriteItems": 1}
    assert roster("t1") == [("A", 19), ("B", 18)]
    c = Player.objects.create(team_id="t1", player_id="c", player_name="C", uniform_number=20)
    with dynamo_app.transaction() as tx:  # a rotation, by update
        tx.update(c, set={"uniform_number": 18})
        tx.update(a, set={"uniform_number": 20})
        tx.update(b, set={"uniform_number": 19})
    assert roster("t1") == [("A", 20), ("B", 19), ("C", 18)]
    assert lock_values() == ["18", "19", "20"] and check_unique().findings == []


def test_a_swap_with_a_stale_instance_changes_nothing(dynamo_db):
    Player.objects.create(team_id="t1", player_id="a", player_name="A", uniform_number=18)
    b = Player.objects.create(team_id="t1", player_id="b", player_name="B", uniform_number=19)
    stale = Player.objects.get(team_id="t1", player_id="a")
    fresh = Player.objects.get(team_id="t1", player_id="a")
    fresh.uniform_number = 30
    fresh.save()  # 18 is free now, and A holds 30
    stale.uniform_number, b.uniform_number = 19, 18
    with pytest.raises(StaleObjectError):
        with dynamo_app.transaction() as tx:
            tx.save(stale)
            tx.save(b)
    assert roster("t1") == [("A", 30), ("B", 19)]
    assert check_unique().findings == []


def test_one_value_claimed_twice_in_a_transaction_is_a_unique_violation(dynamo_db):
    with count_requests() as counter, pytest.raises(UniqueViolation, match="uniform_number=5"):
        with dynamo_app.transaction() as tx:
            tx.create(Player(team_id="t1", player_name="A", uniform_number=5))
            tx.create(Player(team_id="t1", player_name="B", uniform_number=5))
    assert counter.total == 0


class Badge(models.Model):
    """Unique code beside a counter, a map and a required field: every update a lock
    cannot follow can be asked of it."""

    badge_id = models.StringField(partition_key=True)
    code = models.StringField(null=True)
    owner = models.StringField()
    points = models.IntegerField(default=0)
    notes = models.MapField(null=True)

    class Meta:
        table_name = "uq_badge"
        unique = [models.Unique("code")]


@pytest.mark.parametrize(
    ("update", "error", "message"),
    [
        ({"add": {"code": 1}}, ValidationError, r"Badge\.code is part of a unique constraint"),
        (
            {"set": {"code": "B", "notes.x": 1}},
            ValidationError,
            "may only set or remove whole fields",
        ),
        ({"set": {"code": "B"}, "add": {"points": 1}}, ValidationError, "update of their own"),
        (
            {"set": {"owner": "b"}, "defaults": {"notes": {}}},
            ValueError,
            "defaults= is written by upsert=True only",
        ),
        ({"upsert": True, "add": {"points": 1}}, ValidationError, "would leave out owner"),
        (
            {"upsert": True, "add": {"points": 1}, "defaults": {"owner": "x", "code": "C"}},
            ValidationError,
            "unique constraint 'code' without claiming its lock",
        ),
        (
            {"upsert": True, "add": {"points": 1}, "defaults": {"points": 3}},
            ValueError,
            "got points",
        ),
    ],
)
def test_an_update_its_locks_cannot_follow_is_refused_before_sending(
    dynamo_db, update, error, message
):
    badge = Badge.objects.create(badge_id="b1", code="A", owner="ann", notes={})
    with count_requests() as counter, pytest.raises(error, match=message):
        badge.update(**update)
    assert counter.total == 0


def test_changing_a_unique_value_of_an_unread_instance_is_refused(dynamo_db):
    Badge.objects.create(badge_id="b1", code="A", owner="ann")
    with count_requests() as counter, pytest.raises(WriteError, match="values it replaces"):
        Badge(badge_id="b1").update(set={"code": "B"})
    assert counter.total == 0 and len(locks()) == 1
