"""Transactions, idempotency keys, optimistic locking and counters."""

import pytest
from botocore.exceptions import ReadTimeoutError

import dynamo_app
from dynamo_app import models
from dynamo_app.exceptions import (
    AlreadyApplied,
    AlreadyExists,
    ConditionFailed,
    OutcomeUnknown,
    StaleObjectError,
    TransactionCanceled,
    TransactionLimitExceeded,
    UniqueViolation,
    ValidationError,
    WriteError,
)
from dynamo_app.models import Attr
from dynamo_app.testing import count_requests
from tests.fault_support import Faults, client_error


class Team(models.Model):
    team_id = models.StringField(partition_key=True)
    name = models.StringField()
    version = models.VersionField()

    class Meta:
        table_name = "tx_team"


class Member(models.Model):
    team_id = models.StringField(partition_key=True)
    member_id = models.StringField(sort_key=True)
    number = models.IntegerField(null=True)
    blob = models.BinaryField(null=True)
    visits = models.IntegerField(default=0)

    class Meta:
        table_name = "tx_member"
        unique = [models.Unique("number", within="team_id")]


class Standing(models.Model):
    """A counter beside a required field: increment() must not create it half."""

    team_id = models.StringField(partition_key=True)
    team_name = models.StringField()
    league = models.StringField(default="central")
    wins = models.IntegerField(default=0)
    version = models.VersionField()

    class Meta:
        table_name = "tx_standing"


class Seat(models.Model):
    venue = models.StringField(partition_key=True)
    code = models.StringField()
    sold = models.IntegerField(default=0)

    class Meta:
        table_name = "tx_seat"
        unique = [models.Unique("code")]


class Views(models.Model):
    team_id = models.StringField(partition_key=True)
    views = models.IntegerField(default=0)

    class Meta:
        table_name = "tx_views"


# --- transactions -------------------------------------------------------------------------


def test_writes_across_tables_are_one_request(dynamo_db):
    team = Team.objects.create(team_id="t1", name="Hawks")
    with count_requests() as counter:
        with dynamo_app.transaction() as tx:
            tx.create(Member(team_id="t1", member_id="m1", number=7))
            tx.update(team, set={"name": "Falcons"})
            tx.condition_check(Views(team_id="t1"), Attr("team_id").not_exists())
    assert dict(counter) == {"TransactWriteItems": 1}
    assert Team.objects.get(team_id="t1").name == "Falcons"
    assert Member.objects.get(team_id="t1", member_id="m1").number == 7


def test_an_exception_inside_the_block_sends_nothing(dynamo_db):
    with count_requests() as counter, pytest.raises(RuntimeError):
        with dynamo_app.transaction() as tx:
            tx.create(Member(team_id="t1", member_id="m1", number=7))
            raise RuntimeError("changed my mind")
    assert counter.total == 0
    assert list(Member.objects.filter(team_id="t1")) == []


def test_a_failed_action_is_reported_as_its_own_error(dynamo_db):
    Member.objects.create(team_id="t1", member_id="m1", number=7)
    with pytest.raises(AlreadyExists):
        with dynamo_app.transaction() as tx:
            tx.create(Member(team_id="t1", member_id="m2", number=8))
            tx.create(Member(team_id="t1", member_id="m1"))
    with pytest.raises(UniqueViolation) as error:
        with dynamo_app.transaction() as tx:
            tx.create(Member(team_id="t1", member_id="m3", number=7))
    assert (error.value.constraint, error.value.value) == ("number", 7)
    with pytest.raises(ConditionFailed):
        with dynamo_app.transaction() as tx:
            tx.condition_check(Member(team_id="t1", member_id="m1"), Attr("number") == 99)
    assert sorted(m.member_id for m in Member.objects.filter(team_id="t1")) == ["m1"]


def test_other_cancellations_carry_every_reason(dynamo_db):
    conflict = client_error("TransactionCanceledException", reasons=["None", "ValidationError"])
    with Faults(dynamo_db.client, conflict):
        with pytest.raises(TransactionCanceled) as error:
            with dynamo_app.transaction() as tx:
                tx.create(Views(team_id="a"))
                tx.create(Views(team_id="b"))
    assert [r["Code"] for r in error.value.reasons] == ["None", "ValidationError"]


def test_limits_are_checked_before_sending(dynamo_db):
    with count_requests() as counter:
        with pytest.raises(TransactionLimitExceeded, match="101 actions"):
            with dynamo_app.transaction() as tx:
                for n in range(101):
                    tx.create(Views(team_id=f"t{n}"))
        with pytest.raises(TransactionLimitExceeded, match=r"one item twice.*tx.save\(\) it once"):
            with dynamo_app.transaction() as tx:
                tx.create(Views(team_id="same"))
                tx.delete(Views(team_id="same"))
        with pytest.raises(TransactionLimitExceeded, match="4 MB"):
            with dynamo_app.transaction() as tx:
                for n in range(11):
                    tx.create(Member(team_id="t", member_id=str(n), blob=b"x" * 390_000))
    assert counter.total == 0


def test_conflicts_are_retried_with_backoff_and_one_token(dynamo_db, slept):
    conflict = client_error("TransactionCanceledException", reasons=["TransactionConflict"])
    with Faults(dynamo_db.client, conflict, conflict) as faults:
        Member.objects.create(team_id="t1", member_id="m1", number=1)
    assert len(faults.attempts) == 3 and len(slept) == 2
    assert len({a["ClientRequestToken"] for a in faults.attempts}) == 1


def test_a_timeout_on_a_transaction_is_retried_with_the_same_token(dynamo_db):
    with Faults(dynamo_db.client, ReadTimeoutError(endpoint_url="x")) as faults:
        Member.objects.create(team_id="t1", member_id="m1", number=1)
    tokens = [a["ClientRequestToken"] for a in faults.attempts]
    assert len(tokens) == 2 and tokens[0] == tokens[1]


def test_a_condition_failure_is_tried_once(dynamo_db):
    Member.objects.create(team_id="t1", member_id="m1", number=1)
    with count_requests() as counter, pytest.raises(UniqueViolation):
        Member.objects.create(team_id="t1", member_id="m2", number=1)
    assert dict(counter) == {"TransactWriteItems": 1}


def test_read_atomic(dynamo_db):
    Team.objects.create(team_id="t1", name="Hawks")
    Member.objects.create(team_id="t1", member_id="m1", number=1)
    with count_requests() as counter:
        team, missing, member = dynamo_app.read_atomic(
            [(Team, "t1"), (Team, "nope"), (Member, ("t1", "m1"))]
        )
    assert dict(counter) == {"TransactGetItems": 1}
    assert team.name == "Hawks" and missing is None and member.number == 1


# --- idempotency keys ----------------------------------------------------------------------


def test_an_idempotency_key_applies_once(dynamo_db):
    Views.objects.create(team_id="t1")
    for attempt in range(3):
        try:
            with dynamo_app.transaction(idempotency_key="form-123") as tx:
                tx.update(Views(team_id="t1"), add={"views": 1})
        except AlreadyApplied as exc:
            assert attempt > 0 and "form-123" in str(exc)
    assert Views.objects.get(team_id="t1").views == 1


def test_a_timeout_on_a_counter_add_is_not_retried(dynamo_db):
    counter = Views.objects.create(team_id="t1")
    with Faults(dynamo_db.client, ReadTimeoutError(endpoint_url="x")) as faults:
        with pytest.raises(OutcomeUnknown):
            counter.update(add={"views": 1})
    assert len(faults.attempts) == 1


def test_with_an_idempotency_key_a_timed_out_add_is_retried_and_applied_once(dynamo_db):
    Views.objects.create(team_id="t1")
    with Faults(dynamo_db.client, ReadTimeoutError(endpoint_url="x")) as faults:
        new = Views.objects.increment(team_id="t1", views=1, idempotency_key="k1")
    writes = [a for a in faults.attempts if "TransactItems" in a]
    assert len(writes) == 2 and writes[0]["ClientRequestToken"] == writes[1]["ClientRequestToken"]
    assert new == {"views": 1}
    with pytest.raises(AlreadyApplied):
        Views.objects.increment(team_id="t1", views=1, idempotency_key="k1")
    assert Views.objects.get(team_id="t1").views == 1


# --- counters --------------------------------------------------------------------------------


def test_increment_needs_no_read_and_returns_the_new_value(dynamo_db):
    with count_requests() as counter:
        assert Views.objects.increment(team_id="t1", views=1) == {"views": 1}
        assert Views.objects.increment(team_id="t1", views=5) == {"views": 6}
    assert dict(counter) == {"UpdateItem": 2}


def test_increment_validates_its_arguments(dynamo_db):
    with pytest.raises(ValueError, match="key"):
        Views.objects.increment(views=1)
    with pytest.raises(ValueError, match="number"):
        Views.objects.increment(team_id="t1", views="one")


def test_increment_refuses_to_create_an_item_without_its_required_fields(dynamo_db):
    with count_requests() as counter, pytest.raises(ValidationError, match="team_name"):
        Standing.objects.increment(team_id="t1", wins=1)
    assert counter.total == 0
    new = Standing.objects.increment(team_id="t1", wins=1, defaults={"team_name": "Hawks"})
    assert new == {"wins": 1}
    stored = Standing.objects.get(team_id="t1")
    assert (stored.team_name, stored.league, stored.wins) == ("Hawks", "central", 1)
    assert Standing.objects.get(team_id="t1", consistent=True).version == 1
    # defaults only fill a missing attribute; the counter and the version go on
    Standing.objects.increment(team_id="t1", wins=2, defaults={"team_name": "Other"})
    stored = Standing.objects.get(team_id="t1", consistent=True)
    assert (stored.team_name, stored.wins, stored.version) == ("Hawks", 3, 2)


def test_increment_cannot_create_an_item_that_needs_a_unique_value(dynamo_db):
    with count_requests() as counter:
        with pytest.raises(ValidationError, match="code.*objects.create"):
            Seat.objects.increment(venue="v1", sold=1)
        with pytest.raises(ValidationError, match="unique"):
            Seat.objects.increment(venue="v1", sold=1, defaults={"code": "A1"})
    assert counter.total == 0
    seat = Seat.objects.create(venue="v1", code="A1")
    assert seat.update(add={"sold": 1}) == {"sold": 1}  # the way: create, then add
    # a unique field that may be null claims nothing when absent: no reason to refuse
    assert Member.objects.increment(team_id="t1", member_id="m1", visits=1) == {"visits": 1}


# --- optimistic locking ----------------------------------------------------------------------


def test_version_field_counts_writes(dynamo_db):
    team = Team.objects.create(team_id="t1", name="Hawks")
    assert team.version == 1
    team.name = "Falcons"
    team.save()
    assert team.version == 2
    team.update(set={"name": "Eagles"})
    assert team.version == 3
    assert Team.objects.get(team_id="t1").version == 3


@pytest.fixture
def stale(dynamo_db):
    """Team t1 ("Hawks") as read before another copy of it was saved as "Falcons"."""
    Team.objects.create(team_id="t1", name="Hawks")
    stale = Team.objects.get(team_id="t1")
    fresh = Team.objects.get(team_id="t1")
    fresh.name = "Falcons"
    fresh.save()
    return stale


def test_a_stale_write_raises_and_changes_nothing(stale):
    stale.name = "Ravens"
    with pytest.raises(StaleObjectError):
        stale.save()
    with pytest.raises(StaleObjectError):
        stale.update(set={"name": "Crows"})
    with pytest.raises(StaleObjectError):
        stale.delete()
    stored = Team.objects.get(team_id="t1")
    assert (stored.name, stored.version) == ("Falcons", 2)
    stored.delete()


def test_a_stale_write_in_a_transaction_is_reported_as_stale(stale):
    with pytest.raises(StaleObjectError):
        with dynamo_app.transaction() as tx:
            tx.save(stale)
            tx.create(Views(team_id="t1"))
    assert list(Views.objects.scan()) == []


def test_update_and_condition_values_count_towards_the_4_mb(dynamo_db):
    """DynamoDB refuses a transaction over 4 MB: update values and condition values
    count, not only keys and expression text."""
    name = "x" * 390_000
    teams = [Team(team_id=str(n)) for n in range(11)]
    with count_requests() as counter:
        with pytest.raises(TransactionLimitExceeded, match="4 MB"):
            with dynamo_app.transaction() as tx:
                for team in teams:
                    tx.update(team, set={"name": name}, upsert=True)
        with pytest.raises(TransactionLimitExceeded, match="4 MB"):
            with dynamo_app.transaction() as tx:
                for team in teams:
                    tx.condition_check(team, Attr("name") == name)
    assert counter.total == 0
    with count_requests() as counter:  # 10 of them fit
        with dynamo_app.transaction() as tx:
            for team in teams[:10]:
                tx.update(team, set={"name": name}, upsert=True)
    assert dict(counter) == {"TransactWriteItems": 1}
    assert Team.objects.get(team_id="9").name == name


@pytest.mark.parametrize(
    "key",
    ["k\ud800", "😀" * 600, "", "x" * 1025, 42],  # lone surrogate; 2,400 UTF-8 bytes
)
def test_an_idempotency_key_is_checked_like_a_stored_key_before_sending(dynamo_db, key):
    with count_requests() as counter:
        with pytest.raises(TransactionLimitExceeded, match="idempotency key"):
            with dynamo_app.transaction(idempotency_key=key) as tx:
                tx.create(Views(team_id="t1"))
        with pytest.raises(TransactionLimitExceeded, match="idempotency key"):
            Views(team_id="t1").save(idempotency_key=key)
    assert counter.total == 0


def test_bulk_save_and_bulk_delete_keep_optimistic_locking(stale):
    stale.name = "Ravens"
    with pytest.raises(StaleObjectError):
        Team.objects.bulk_save([stale, Team(team_id="t2", name="Crows")])
    assert [(t.team_id, t.name, t.version) for t in Team.objects.scan()] == [("t1", "Falcons", 2)]
    fresh = Team.objects.get(team_id="t1")
    fresh.name = "Eagles"
    with count_requests() as counter:
        Team.objects.bulk_save([fresh, Team(team_id="t2", name="Crows")])
    assert dict(counter) == {"TransactWriteItems": 1}
    assert fresh.version == 3 and Team.objects.get(team_id="t2").version == 1
    with pytest.raises(WriteError, match="instances"):
        Team.objects.bulk_delete(["t1"])
    with pytest.raises(StaleObjectError):
        Team.objects.bulk_delete([stale])
    Team.objects.bulk_delete([fresh])
    assert [t.team_id for t in Team.objects.scan()] == ["t2"]
