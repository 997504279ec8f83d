"""Sessions in DynamoDB end to end: Django's test client through the middleware,
django.contrib.auth on the sqlite test database, and a project with no
relational database at all (a subprocess)."""

from __future__ import annotations

import json
import subprocess
import textwrap
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.test import AsyncClient, Client, override_settings

from dynamo_app.sessions import SessionStore
from dynamo_app.testing import count_requests
from tests.process_support import child_environ, run_python
from tests.sessions_support import ENGINE, stored_item


@pytest.fixture(autouse=True)
def tables(session_db: Any) -> Iterator[Any]:
    # After dynamo_server's session-long override of DYNAMO, undone before it.
    fast_hashing = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # tests only
    with override_settings(SESSION_ENGINE=ENGINE, PASSWORD_HASHERS=fast_hashing):
        yield session_db


def session_cookie(client: Client | AsyncClient) -> str:
    return client.cookies[settings.SESSION_COOKIE_NAME].value


@pytest.mark.django_db
def test_login_write_logout(client: Client, django_user_model: Any) -> None:
    django_user_model.objects.create_user(username="ada", password="pw-lovelace")

    with count_requests() as counter:
        response = client.post("/sessions/login/", {"username": "ada", "password": "pw-lovelace"})
    assert response.json() == {"user": "ada"}
    key = session_cookie(client)
    assert counter == {"PutItem": 2}  # cycle_key's create, then the middleware's save
    assert "_auth_user_id" in SessionStore(key).load()

    with count_requests() as counter:
        assert client.get("/sessions/whoami/").json() == {"user": "ada"}
    assert counter == {"GetItem": 1}  # read-only: no write

    with count_requests() as counter:
        assert client.post("/sessions/count/").json() == {"count": 1}
        assert client.post("/sessions/count/").json() == {"count": 2}
    assert counter == {"GetItem": 2, "PutItem": 2}
    assert SessionStore(key).load()["count"] == 2

    with count_requests() as counter:
        assert client.post("/sessions/logout/").json() == {"user": None}
    assert counter == {"GetItem": 1, "DeleteItem": 1}
    assert stored_item(key) is None
    assert client.cookies[settings.SESSION_COOKIE_NAME].value == ""

    # The old cookie replayed after logout: anonymous, and nothing is written.
    client.cookies[settings.SESSION_COOKIE_NAME] = key
    with count_requests() as counter:
        assert client.get("/sessions/whoami/").json() == {"user": None}
    assert counter == {"GetItem": 1}
    assert stored_item(key) is None


@pytest.mark.django_db
def test_login_replacing_an_anonymous_session(client: Client, django_user_model: Any) -> None:
    django_user_model.objects.create_user(username="ada", password="pw-lovelace")
    client.get("/sessions/count/")
    anonymous = session_cookie(client)
    with count_requests() as counter:
        client.post("/sessions/login/", {"username": "ada", "password": "pw-lovelace"})
    assert counter == {"GetItem": 1, "PutItem": 2, "DeleteItem": 1}
    assert session_cookie(client) != anonymous  # cycled: no session fixation
    assert stored_item(anonymous) is None
    assert SessionStore(session_cookie(client)).load()["count"] == 1  # data carried over


@pytest.mark.django_db
def test_test_client_login_uses_dynamo_sessions(client: Client, django_user_model: Any) -> None:
    user = django_user_model.objects.create_user(username="grace", password="pw")
    client.force_login(user)
    assert stored_item(session_cookie(client)) is not None
    assert client.get("/sessions/whoami/").json() == {"user": "grace"}


def test_anonymous_session_costs_one_put_then_one_get_per_read(client: Client) -> None:
    with count_requests() as counter:
        assert client.get("/sessions/count/").json() == {"count": 1}
    assert counter == {"PutItem": 1}  # a new session: no existence probe, no read
    with count_requests() as counter:
        assert client.get("/sessions/peek/").json() == {"count": 1}
    assert counter == {"GetItem": 1}


def test_garbage_cookie_never_reaches_dynamodb(client: Client) -> None:
    client.cookies[settings.SESSION_COOKIE_NAME] = "../../etc/passwd"
    with count_requests() as counter:
        assert client.get("/sessions/peek/").json() == {"count": None}
    assert counter.total == 0


def test_session_ended_during_a_request_is_not_resurrected(client: Client) -> None:
    client.get("/sessions/count/")
    key = session_cookie(client)
    response = client.post("/sessions/ended-elsewhere/")
    assert response.status_code == 400  # SessionInterrupted, as with Django's db backend
    assert stored_item(key) is None


def test_async_view_through_asgi() -> None:
    client = AsyncClient()
    first = async_to_sync(client.get)("/sessions/acount/")
    assert first.json() == {"count": 1}
    second = async_to_sync(client.get)("/sessions/acount/")
    assert second.json() == {"count": 2}
    assert SessionStore(session_cookie(client)).load() == {"count": 2}


NODB_SCRIPT = textwrap.dedent(
    """
    import json

    import django

    django.setup()
    from dynamo_app.tables import registry

    tables = [d.declared_name for d in registry.definitions()]  # before any request
    from django.conf import settings
    from django.db import connections
    from django.test import Client

    client = Client()
    counts = [client.get("/count/").json()["count"] for _ in range(3)]
    print(json.dumps({
        "counts": counts,
        "peek": client.get("/peek/").json(),
        "cookie": client.cookies[settings.SESSION_COOKIE_NAME].value,
        "engine": connections["default"].settings_dict["ENGINE"],
        "tables": tables,
    }))
    """
)


def run_nodb_project(prefix: str) -> subprocess.CompletedProcess[str]:
    env = child_environ(DJANGO_SETTINGS_MODULE="tests.nodb_settings", NODB_DYNAMO_PREFIX=prefix)
    return run_python("-c", NODB_SCRIPT, env=env, timeout=60)


def test_project_without_a_database(dynamo_server: Any) -> None:
    """DATABASES = {}, no contrib.sessions app, SESSION_ENGINE = dynamo_app.sessions:
    startup registers and verifies the session table, and a view keeps state."""
    done = run_nodb_project(settings.DYNAMO["TABLE_PREFIX"])
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["counts"] == [1, 2, 3]
    assert result["peek"] == {"count": 3}
    assert result["engine"] == "django.db.backends.dummy"  # what Django puts in for {}
    assert result["tables"] == ["dynamo_sessions"]
    assert SessionStore(result["cookie"]).load() == {"count": 3}


def test_startup_verifies_the_session_table(dynamo_server: Any) -> None:
    """With the table missing, the project refuses to start and says what to run."""
    done = run_nodb_project("missing-")
    assert done.returncode != 0
    assert "SchemaMismatch" in done.stderr
    assert "'dynamo_sessions' (deployed as 'missing-dynamo_sessions') does not exist" in done.stderr
    assert "dynamo_migrate" in done.stderr
