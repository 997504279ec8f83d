"""Faults the local server can really produce: it goes away mid-run and comes
back on the same port; startup finds nothing listening. (Error classes it
cannot produce are injected in test_retry.py.)"""

import sys
import time

import pytest
from django.apps import apps as django_apps
from django.test import override_settings

from dynamo_app.data.integrity import check_unique
from dynamo_app.exceptions import ConnectionFailed
from dynamo_app.local.server import LocalServer
from dynamo_app.testing import create_tables, settings_for_tests
from tests.test_unique import Player, lock_values

FAST_FAILURE = {
    "TIMEOUT": "5s",  # a refusal is immediate; the limit only guards slow, shared machines
    "RETRY": {"MAX_ATTEMPTS": 3, "BASE_DELAY": "10ms", "MAX_DELAY": "50ms"},
}
# moto keeps its data per process, shared by every server in it: a region of our
# own keeps this server's tables apart from the suite's.
REGION = "eu-west-3"


@pytest.fixture
def own_server(dynamo_server):
    """A moto server of this test's own (whichever engine the suite runs on),
    with every registered table, and DYNAMO pointed at it (dynamo_server: so
    the test may use DynamoDB at all)."""
    server = LocalServer().start()
    server.reset()  # this process's moto data: left over by an earlier run of this test
    section = {**settings_for_tests({}, server.url), **FAST_FAILURE, "REGION": REGION}
    try:
        with override_settings(DYNAMO=section):
            create_tables()
            yield server
    finally:
        server.stop()


def test_server_going_away_fails_clearly_writes_nothing_and_recovers(own_server):
    url = own_server.url
    alice = Player.objects.create(
        team_id="t1", player_id="alice", player_name="A", uniform_number=1
    )
    own_server.stop()

    failures = {
        "create": lambda: Player.objects.create(
            team_id="t1", player_id="bob", player_name="B", uniform_number=2
        ),
        "get": lambda: Player.objects.get(team_id="t1", player_id="alice"),
        "save": lambda: _move(alice, 3),
        "delete": alice.delete,
    }
    for operation, call in failures.items():
        with pytest.raises(ConnectionFailed) as error:
            call()
        message = str(error.value)
        assert url in message and "after 3 attempts" in message, operation
        assert "DYNAMO['ENDPOINT']" in message

    restarted = LocalServer(port=int(url.rsplit(":", 1)[1])).start()
    try:
        # What DynamoDB guarantees: the committed write is there, none of the
        # failed ones applied, and every lock still has its owner.
        assert [(p.player_id, p.uniform_number) for p in Player.objects.filter(team_id="t1")] == [
            ("alice", 1)
        ]
        assert lock_values() == ["1"] and check_unique().findings == []
        # ... and the same operations succeed once the server is back.
        Player.objects.create(team_id="t1", player_id="bob", player_name="B", uniform_number=2)
        alice.refresh_from_db()
        _move(alice, 3)
        assert lock_values() == ["2", "3"] and check_unique().findings == []
        alice.delete()
        assert lock_values() == ["2"]
    finally:
        restarted.stop()


def _move(player, number):
    player.uniform_number = number
    player.save()


def test_startup_against_a_refusing_endpoint_names_it_within_the_timeout(dynamo_db, monkeypatch):
    dead = LocalServer().start()
    url = dead.url
    dead.stop()  # nothing listens on this port now
    monkeypatch.setattr(sys, "argv", ["gunicorn", "project.wsgi"])
    section = {
        **settings_for_tests({"TABLE_PREFIX": "test-"}, url),
        **FAST_FAILURE,
        "TIMEOUT": "10s",  # the promise: within TIMEOUT (normally ~0.7 s; CI machines are shared)
        "VERIFY_SCHEMA": True,
        "SECRET_ACCESS_KEY": "CANARY-SECRET-startup",
    }
    with override_settings(DYNAMO=section):
        started = time.monotonic()
        with pytest.raises(ConnectionFailed) as error:
            django_apps.get_app_config("dynamo_app").ready()  # the schema check at startup
        elapsed = time.monotonic() - started
    assert url in str(error.value) and "describe_table" in str(error.value)
    assert "CANARY-SECRET" not in str(error.value)
    assert elapsed < 10.0  # TIMEOUT
