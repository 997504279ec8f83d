"""Bad input: each gets a clear, specific error, and nothing is written.

Covered elsewhere (and cited in docs/explanation/guarantees.md): bad prefixes, explicit
names and resolver results (test_conf.py, test_handle.py), session keys
(test_sessions.py::test_invalid_keys_never_reach_dynamodb), tampered and
foreign cursors (test_models_queries.py), invalid values (test_properties.py).
"""

import base64
import os

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings
from hypothesis import given
from hypothesis import strategies as st

from dynamo_app import models
from dynamo_app.conf import DEFAULTS, RETRY_DEFAULTS, parse
from dynamo_app.exceptions import (
    InvalidCursor,
    ItemTooLarge,
    ModelDefinitionError,
    QueryError,
    ValidationError,
)
from dynamo_app.models import Attr
from dynamo_app.sessions import SessionStore
from dynamo_app.tables import TableResolver
from dynamo_app.testing import count_requests
from tests.sessions_support import stored_item
from tests.test_models_fields import Everything
from tests.test_properties import PROPERTIES
from tests.test_unique import Player

CANARY = "CANARY-SECRET-5e2d90"

# --- settings: every key, a value of the wrong type ---------------------------------------

WRONG_TYPE = {
    "ENABLED": "yes",
    "REGION": ["eu-west-1"],
    "ENDPOINT": 8001,
    "ACCESS_KEY_ID": 1234,
    "SECRET_ACCESS_KEY": CANARY.encode(),
    "SESSION_TOKEN": CANARY.encode(),
    "TABLE_PREFIX": None,
    "TABLE_NAMES": [("player", "Players")],
    "TABLE_RESOLVER": 42,
    "TIMEOUT": "soon",
    "MAX_IDLE_CONNS": 2.5,
    "ASYNC_THREADS": "10",
    "FAST_CLIENT": "off",
    "LEAN_SIGNING": "no",
    "VERIFY_SCHEMA": "False",
    "AUTO_MIGRATE": 1,
    "RETRY": 5,
    "LOCAL_STATE_FILE": 42,
    "DAX_ENDPOINTS": "daxs://cluster.abc.dax-clusters.eu-west-1.amazonaws.com",
    "RETURN_CONSUMED_CAPACITY": True,
    "LOG_VALUES": "yes",
}


def test_every_settings_key_is_covered():
    assert set(WRONG_TYPE) == set(DEFAULTS)


@pytest.mark.parametrize("key", sorted(WRONG_TYPE))
def test_every_settings_key_rejects_a_wrong_type_naming_the_key(key):
    with pytest.raises(ImproperlyConfigured) as error:
        parse({key: WRONG_TYPE[key]}, debug=True)
    assert repr(key) in str(error.value)
    assert CANARY not in str(error.value)


@pytest.mark.parametrize(
    "retry, named",
    [
        ({"MAX_ATTEMPTS": "3"}, "MAX_ATTEMPTS"),
        ({"MAX_ATTEMPTS": True}, "MAX_ATTEMPTS"),
        ({"BASE_DELAY": "fast"}, "BASE_DELAY"),
        ({"MAX_DELAY": -1}, "MAX_DELAY"),
        ({"BASE_DELAY": "2s", "MAX_DELAY": "1s"}, "MAX_DELAY"),
        ({"MAX_DELAYS": "1s"}, "MAX_DELAYS"),
    ],
)
def test_every_retry_key_is_checked(retry, named):
    assert set(RETRY_DEFAULTS) <= {"MAX_ATTEMPTS", "BASE_DELAY", "MAX_DELAY"}
    with pytest.raises(ImproperlyConfigured, match=named):
        parse({"RETRY": retry})


def test_a_table_names_entry_needs_a_string_declared_name():
    with pytest.raises(ImproperlyConfigured, match="TABLE_NAMES"):
        parse({"TABLE_NAMES": {7: "Players"}})


# --- table names ---------------------------------------------------------------------------


def test_a_prefix_that_makes_a_name_too_long_fails_at_startup_naming_the_table():
    resolver = TableResolver(prefix="p" * 250)
    with pytest.raises(ImproperlyConfigured) as error:
        resolver.check(["uq_player"])
    assert "'uq_player'" in str(error.value) and "TABLE_PREFIX" in str(error.value)


@pytest.mark.parametrize("result", [None, "", "a b", "x" * 256, "tëam"])
def test_every_bad_resolver_result_is_refused_naming_the_resolver(result):
    with pytest.raises(ImproperlyConfigured) as error:
        TableResolver(custom=lambda declared: result)("uq_player")
    assert "TABLE_RESOLVER" in str(error.value) and "'uq_player'" in str(error.value)


@pytest.mark.parametrize("name", ["ab", "has space", "ünïcode", "x" * 256])
def test_a_bad_declared_table_name_is_a_definition_error(name):
    with pytest.raises(ModelDefinitionError, match="table name"):

        class Bad(models.Model):
            id = models.StringField(partition_key=True)

            class Meta:
                table_name = name


# --- cursors -------------------------------------------------------------------------------


@PROPERTIES
@given(cursor=st.text(max_size=200) | st.integers() | st.binary(max_size=50))
def test_any_forged_cursor_is_invalid_and_sends_nothing(dynamo_db, cursor):
    with count_requests() as requests, pytest.raises(InvalidCursor):
        Player.objects.filter(team_id="t1").page(size=2, cursor=cursor)
    assert requests.total == 0


def test_a_cursor_signed_with_another_secret_key_is_invalid(dynamo_db):
    for number in range(3):
        Player.objects.create(team_id="t1", player_name="p", uniform_number=number)
    with override_settings(SECRET_KEY="another-deployment"):
        cursor = Player.objects.filter(team_id="t1").page(size=1).next_cursor
    with count_requests() as requests, pytest.raises(InvalidCursor):
        Player.objects.filter(team_id="t1").page(size=1, cursor=cursor)
    assert requests.total == 0


# --- keys with empty strings ---------------------------------------------------------------


@pytest.mark.parametrize(
    "call",
    [
        lambda: Player.objects.get(team_id="", player_id="p1"),
        lambda: Player.objects.get(team_id="t1", player_id=""),
        lambda: Player.objects.filter(team_id="").page(size=1),
        lambda: Player.objects.bulk_get([("t1", "p1"), ("t1", "")]),
        lambda: Player.objects.bulk_save(
            [Player(team_id="t1", player_name="ok"), Player(team_id="", player_name="bad")]
        ),
        lambda: Player(team_id="t1", player_id="", player_name="x").delete(),
        lambda: Player.objects.create(team_id="", player_name="x", uniform_number=1),
    ],
)
def test_an_empty_key_is_refused_before_any_request(dynamo_db, call):
    with count_requests() as requests, pytest.raises((ValidationError, QueryError)) as error:
        call()
    assert "Player" in str(error.value) and "key" in str(error.value)
    assert requests.total == 0


# --- oversize items ------------------------------------------------------------------------


def test_an_oversize_item_in_a_batch_stops_the_whole_batch_before_sending(dynamo_db):
    objs = [Everything(id="small"), Everything(id="huge", name="x" * 410_000)]
    with count_requests() as requests, pytest.raises(ItemTooLarge, match="'huge'"):
        Everything.objects.bulk_save(objs)
    assert requests.total == 0


def test_an_oversize_session_is_refused_and_nothing_is_stored(session_db):
    store = SessionStore()
    store["blob"] = base64.b64encode(os.urandom(420_000)).decode()  # does not compress
    with count_requests() as requests, pytest.raises(ItemTooLarge, match="400 KB"):
        store.save()
    assert requests.total == 0
    assert stored_item(store.session_key) is None


# --- attribute names: reserved words and Unicode ---------------------------------------------


class Unicode(models.Model):
    """Stored attribute names DynamoDB reserves or that are not ASCII."""

    part = models.StringField(partition_key=True, db_name="キー")
    order = models.IntegerField(sort_key=True, db_name="order")
    name = models.StringField(null=True, db_name="名前 🎉")
    count = models.IntegerField(default=0, db_name="größe.count")

    class Meta:
        table_name = "bad_input_unicode"


def test_reserved_and_unicode_attribute_names_work_in_every_expression(dynamo_db):
    Unicode.objects.create(part="k", order=1, name="ä")
    Unicode.objects.create(part="k", order=2, name="b")
    obj = Unicode.objects.get(part="k", order=1, consistent=True)
    assert obj.update(add={"count": 2}, condition=Attr("name") == "ä") == {"count": 2}
    obj.save(condition=Attr("count") == 2)
    found = Unicode.objects.filter(part="k", order__gte=1).where(Attr("count") > 0).consistent()
    assert [(u.order, u.name, u.count) for u in found] == [(1, "ä", 2)]
    assert Unicode.objects.filter(part="k").order_by("-order").first().order == 2
    item = dynamo_db.call(
        "get_item",
        TableName=dynamo_db.table_name("bad_input_unicode"),
        Key={"キー": {"S": "k"}, "order": {"N": "1"}},
    )["Item"]
    assert set(item) == {"キー", "order", "名前 🎉", "größe.count"}  # a dot is not a path here


def _nested(levels):
    value = "leaf"
    for _ in range(levels):
        value = {"n": value}
    return value


def test_nesting_deeper_than_dynamodb_stores_is_refused_before_sending(dynamo_db):
    """DynamoDB keeps 32 levels, the attribute itself counting as one: 31 maps
    inside an attribute are stored, 32 are refused (moto would accept them)."""
    Everything(id="deep", data=_nested(31)).save()
    assert Everything.objects.get(id="deep").data == _nested(31)
    with count_requests() as requests, pytest.raises(ValidationError, match="Everything.data"):
        Everything(id="deeper", data=_nested(32)).save()
    assert requests.total == 0


def test_update_operands_are_checked_like_stored_values(dynamo_db):
    obj = Everything(id="u")
    obj.save()
    with count_requests() as requests:
        with pytest.raises(ValidationError, match="Everything.data"):
            obj.update(set={"data": _nested(32)})
        with pytest.raises(ValidationError, match="lone surrogate"):
            obj.update(set={"data": {"text": "bad \ud800"}})
    assert requests.total == 0
    obj.update(set={"data": _nested(31)})
    assert Everything.objects.get(id="u").data == _nested(31)


# --- DynamoDB's request limits: refused before sending -------------------------------------


@pytest.mark.parametrize(
    "actions, field",
    [
        ({"set": {"name": "x" * 410_000}}, "Everything.name"),
        ({"append": {"scores": [7] * 140_000}}, "Everything.scores"),  # 3 bytes an element
        ({"set": {"name": "x" * 210_000, "blob": b"x" * 210_000}}, "Everything."),
        ({"add": {"tags": {f"{n:06}" for n in range(70_000)}}}, "Everything.tags"),
    ],
)
def test_an_update_whose_values_cannot_fit_in_an_item_is_item_too_large(dynamo_db, actions, field):
    """SET, ADD and append values land in the item: over 400 KB they cannot fit."""
    obj = Everything(id="u")
    obj.save()
    with count_requests() as requests, pytest.raises(ItemTooLarge, match=field) as error:
        obj.update(**actions)
    assert "400 KB" in str(error.value) and error.value.model == "Everything"
    assert requests.total == 0


def test_a_large_condition_value_does_not_count_towards_the_item(dynamo_db):
    """A condition's operands are compared, not stored: a 300 KB value written
    under a condition holding another 300 KB value is a 300 KB item, and is sent."""
    obj = Everything(id="cas", name="short")
    obj.save()
    with count_requests() as requests:
        obj.update(set={"name": "b" * 300_000}, condition=Attr("name") != "a" * 300_000)
    assert dict(requests) == {"UpdateItem": 1}
    assert Everything.objects.get(id="cas", consistent=True).name == "b" * 300_000
