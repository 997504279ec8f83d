"""dynamo_app.sessions against the local server: Django's session contract
(every behaviour of Django's own ``SessionTestsMixin``, sync and async), then
what DynamoDB adds: conditions, expiry, errors, request counts, clear_expired.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from botocore.awsrequest import AWSResponse
from django.conf import settings
from django.contrib.sessions.backends.base import CreateError, UpdateError
from django.core import management
from django.core.signing import TimestampSigner
from django.test import override_settings
from django.utils import timezone

from dynamo_app import exceptions
from dynamo_app.client.handle import get_handle
from dynamo_app.sessions import SESSION_TABLE, SessionStore
from dynamo_app.testing import count_requests
from tests.sessions_support import ENGINE, stored_item

run = async_to_sync


pytestmark = pytest.mark.usefixtures("session_db")


@pytest.fixture
def session() -> Iterator[SessionStore]:
    store = SessionStore()
    yield store
    store.delete()


def put_raw(session_key: str, data: str, expires_at: int | None) -> None:
    """Write an item behind the store's back (another process, an old version)."""
    item: dict[str, Any] = {"session_key": {"S": session_key}, "session_data": {"S": data}}
    if expires_at is not None:
        item["expires_at"] = {"N": str(expires_at)}
    handle = get_handle()
    handle.call("put_item", TableName=handle.table_name("dynamo_sessions"), Item=item)


def now_epoch() -> int:
    return int(timezone.now().timestamp())


# --- SessionTestsMixin: the dict API (no storage until a key exists) ----------------


def test_new_session(session: SessionStore) -> None:
    assert session.modified is False
    assert session.accessed is False


def test_get_empty(session: SessionStore) -> None:
    assert session.get("cat") is None
    assert run(session.aget)("cat") is None


def test_store(session: SessionStore) -> None:
    session["cat"] = "dog"
    assert session.modified is True
    assert session.pop("cat") == "dog"


def test_store_async(session: SessionStore) -> None:
    run(session.aset)("cat", "dog")
    assert session.modified is True
    assert run(session.apop)("cat") == "dog"


def test_pop(session: SessionStore) -> None:
    session["some key"] = "exists"
    assert session.pop("some key") == "exists"
    assert session.accessed is True and session.modified is True
    assert session.get("some key") is None


def test_pop_async(session: SessionStore) -> None:
    run(session.aset)("some key", "exists")
    assert run(session.apop)("some key") == "exists"
    assert session.accessed is True and session.modified is True
    assert run(session.aget)("some key") is None


def test_pop_default(session: SessionStore) -> None:
    assert session.pop("some key", "does not exist") == "does not exist"
    assert session.pop("some key", default="does not exist") == "does not exist"
    assert session.accessed is True and session.modified is False
    with pytest.raises(KeyError):
        session.pop("some key")


def test_pop_default_async(session: SessionStore) -> None:
    assert run(session.apop)("some key", "does not exist") == "does not exist"
    assert run(session.apop)("some key", default="does not exist") == "does not exist"
    assert session.accessed is True and session.modified is False
    with pytest.raises(KeyError):
        run(session.apop)("some key")


def test_setdefault(session: SessionStore) -> None:
    assert session.setdefault("foo", "bar") == "bar"
    assert session.setdefault("foo", "baz") == "bar"
    assert session.accessed is True and session.modified is True


def test_setdefault_async(session: SessionStore) -> None:
    assert run(session.asetdefault)("foo", "bar") == "bar"
    assert run(session.asetdefault)("foo", "baz") == "bar"
    assert session.accessed is True and session.modified is True


def test_update(session: SessionStore) -> None:
    session.update({"update key": 1})
    assert session.accessed is True and session.modified is True
    assert session.get("update key") == 1


def test_update_async(session: SessionStore) -> None:
    run(session.aupdate)({"update key": 1})
    assert session.accessed is True and session.modified is True
    assert run(session.aget)("update key") == 1


@pytest.mark.parametrize("use_async", [False, True])
def test_has_key_keys_values_items(session: SessionStore, use_async: bool) -> None:
    assert list(session.values()) == []
    assert session.accessed is True
    session["x"] = 1
    for read, expected in [
        (lambda: "x" in session if not use_async else run(session.ahas_key)("x"), True),
        (lambda: list(session.keys() if not use_async else run(session.akeys)()), ["x"]),
        (lambda: list(session.values() if not use_async else run(session.avalues)()), [1]),
        (lambda: list(session.items() if not use_async else run(session.aitems)()), [("x", 1)]),
    ]:
        session.modified = session.accessed = False
        assert read() == expected
        assert session.accessed is True and session.modified is False


def test_clear(session: SessionStore) -> None:
    session["x"] = 1
    session.modified = session.accessed = False
    assert list(session.items()) == [("x", 1)]
    session.clear()
    assert list(session.items()) == []
    assert session.accessed is True and session.modified is True


# --- SessionTestsMixin: storage ------------------------------------------------------


def test_save(session: SessionStore) -> None:
    session.save()
    assert session.exists(session.session_key) is True


def test_save_async(session: SessionStore) -> None:
    run(session.asave)()
    assert run(session.aexists)(session.session_key) is True


def test_delete(session: SessionStore) -> None:
    session.save()
    session.delete(session.session_key)
    assert session.exists(session.session_key) is False


def test_delete_async(session: SessionStore) -> None:
    run(session.asave)()
    run(session.adelete)(session.session_key)
    assert run(session.aexists)(session.session_key) is False


def test_flush(session: SessionStore) -> None:
    session["foo"] = "bar"
    session.save()
    prev_key = session.session_key
    session.flush()
    assert session.exists(prev_key) is False
    assert session.session_key is None
    assert session.modified is True and session.accessed is True
    assert stored_item(prev_key) is None


def test_flush_async(session: SessionStore) -> None:
    run(session.aset)("foo", "bar")
    run(session.asave)()
    prev_key = session.session_key
    run(session.aflush)()
    assert run(session.aexists)(prev_key) is False
    assert session.session_key is None
    assert session.modified is True and session.accessed is True


def test_cycle(session: SessionStore) -> None:
    session["a"], session["b"] = "c", "d"
    session.save()
    prev_key = session.session_key
    prev_data = list(session.items())
    session.cycle_key()
    assert session.exists(prev_key) is False
    assert session.session_key != prev_key
    assert list(session.items()) == prev_data
    assert SessionStore(session.session_key).load() == dict(prev_data)


def test_cycle_async(session: SessionStore) -> None:
    run(session.aset)("a", "c")
    run(session.aset)("b", "d")
    run(session.asave)()
    prev_key = session.session_key
    prev_data = list(run(session.aitems)())
    run(session.acycle_key)()
    assert run(session.aexists)(prev_key) is False
    assert session.session_key != prev_key
    assert list(run(session.aitems)()) == prev_data


def test_cycle_with_no_session_cache(session: SessionStore) -> None:
    session["a"], session["b"] = "c", "d"
    session.save()
    reopened = SessionStore(session.session_key)
    assert not hasattr(reopened, "_session_cache")
    reopened.cycle_key()
    assert sorted(reopened.items()) == [("a", "c"), ("b", "d")]
    reopened.delete()


def test_cycle_with_no_session_cache_async(session: SessionStore) -> None:
    run(session.aset)("a", "c")
    run(session.aset)("b", "d")
    run(session.asave)()
    reopened = SessionStore(session.session_key)
    assert not hasattr(reopened, "_session_cache")
    run(reopened.acycle_key)()
    assert sorted(run(reopened.aitems)()) == [("a", "c"), ("b", "d")]
    run(reopened.adelete)()


def test_save_doesnt_clear_data(session: SessionStore) -> None:
    session["a"] = "b"
    session.save()
    assert session["a"] == "b"
    run(session.aset)("c", "d")
    run(session.asave)()
    assert run(session.aget)("c") == "d"


@pytest.mark.parametrize("use_async", [False, True])
def test_invalid_key(use_async: bool) -> None:
    """A key that is not one of ours gives a new key, never a record under it."""
    store = SessionStore("1")
    with count_requests() as counter:
        if use_async:
            run(store.asave)()
            run(store.adelete)("1")
        else:
            store.save()
            store.delete("1")
    assert store.session_key not in (None, "1")
    assert store.get("cat") is None
    assert counter == {"PutItem": 1}  # the new session; "1" never reached DynamoDB
    store.delete()


def test_session_key_validation(session: SessionStore) -> None:
    session._session_key = ""
    assert session.session_key is None
    session._session_key = "1234567"
    assert session.session_key is None
    session._session_key = "12345678"
    assert session.session_key == "12345678"
    with pytest.raises(AttributeError):
        session.session_key = session._get_new_session_key()  # type: ignore[misc]


@pytest.mark.parametrize(
    "key",
    [
        "../../etc/passwd",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345",  # Django never makes upper case
        "a" * 41,
        "abcdefgh\x00",
        "abc def ghi",
        "é" * 32,
        "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" * 20,
    ],
)
def test_invalid_keys_never_reach_dynamodb(key: str) -> None:
    with count_requests() as counter:
        store = SessionStore(key)
        assert store.session_key is None
        assert store.load() == {}
        assert store.exists(key) is False
        assert run(store.aexists)(key) is False
        store.delete(key)
        run(store.adelete)(key)
    assert counter.total == 0


def test_load_does_not_create_record() -> None:
    store = SessionStore("someunknownkey")
    with count_requests() as counter:
        assert store.load() == {}
    assert counter == {"GetItem": 1}
    assert store.session_key is None  # the client's key is cycled, not reused
    assert store.exists(store.session_key) is False
    assert stored_item("someunknownkey") is None


def test_load_does_not_create_record_async() -> None:
    store = SessionStore("someunknownkey")
    assert run(store.aload)() == {}
    assert store.session_key is None
    assert run(store.aexists)(store.session_key) is False
    assert stored_item("someunknownkey") is None


def test_save_does_not_resurrect_session_logged_out_in_other_context() -> None:
    s1 = SessionStore()
    s1["test_data"] = "value1"
    s1.save(must_create=True)
    SessionStore(s1.session_key).delete()  # logout in another tab
    s1["test_data"] = "value2"
    with pytest.raises(UpdateError):
        s1.save()
    assert s1.load() == {}
    assert stored_item(s1.session_key or "someunknownkey") is None


def test_asave_does_not_resurrect_session_logged_out_in_other_context() -> None:
    s1 = SessionStore()
    run(s1.aset)("test_data", "value1")
    run(s1.asave)(must_create=True)
    key = s1.session_key
    run(SessionStore(key).adelete)()
    run(s1.aset)("test_data", "value2")
    with pytest.raises(UpdateError):
        run(s1.asave)()
    assert run(s1.aload)() == {}
    assert stored_item(key) is None


# --- SessionTestsMixin: expiry ---------------------------------------------------------


def test_default_expiry(session: SessionStore) -> None:
    assert session.get_expiry_age() == settings.SESSION_COOKIE_AGE
    session.set_expiry(0)  # expires at browser close; the stored age is the default
    assert session.get_expiry_age() == settings.SESSION_COOKIE_AGE


def test_default_expiry_async(session: SessionStore) -> None:
    assert run(session.aget_expiry_age)() == settings.SESSION_COOKIE_AGE
    run(session.aset_expiry)(0)
    assert run(session.aget_expiry_age)() == settings.SESSION_COOKIE_AGE


@pytest.mark.parametrize("use_async", [False, True])
@pytest.mark.parametrize("kind", ["seconds", "timedelta", "datetime"])
def test_custom_expiry(
    session: SessionStore, kind: str, use_async: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    modification = timezone.now()
    monkeypatch.setattr(timezone, "now", lambda: modification)  # set_expiry reads now
    value = {
        "seconds": 10,
        "timedelta": timedelta(seconds=10),
        "datetime": modification + timedelta(seconds=10),
    }[kind]
    if use_async:
        run(session.aset_expiry)(value)
        date = run(session.aget_expiry_date)(modification=modification)
        age = run(session.aget_expiry_age)(modification=modification)
    else:
        session.set_expiry(value)
        date = session.get_expiry_date(modification=modification)
        age = session.get_expiry_age(modification=modification)
    assert date == modification + timedelta(seconds=10)
    assert age == 10


def test_custom_expiry_reset(session: SessionStore) -> None:
    session.set_expiry(None)
    session.set_expiry(10)
    session.set_expiry(None)
    assert session.get_expiry_age() == settings.SESSION_COOKIE_AGE
    run(session.aset_expiry)(10)
    run(session.aset_expiry)(None)
    assert run(session.aget_expiry_age)() == settings.SESSION_COOKIE_AGE


@pytest.mark.parametrize("use_async", [False, True])
def test_get_expire_at_browser_close(session: SessionStore, use_async: bool) -> None:
    def check(value: Any) -> bool:
        if use_async:
            run(session.aset_expiry)(value)
            return run(session.aget_expire_at_browser_close)()
        session.set_expiry(value)
        return session.get_expire_at_browser_close()

    for at_close in (False, True):
        with override_settings(SESSION_EXPIRE_AT_BROWSER_CLOSE=at_close):
            assert check(10) is False
            assert check(0) is True
            assert check(None) is at_close


@pytest.mark.parametrize("use_async", [False, True])
def test_actual_expiry(session: SessionStore, use_async: bool) -> None:
    """A session saved with an expiry in the past is gone at once, though the
    item stays until TTL removes it (days later on AWS, never on moto)."""
    if use_async:
        run(session.aset)("foo", "bar")
        run(session.aset_expiry)(-timedelta(seconds=10))
        run(session.asave)()
    else:
        session["foo"] = "bar"
        session.set_expiry(-timedelta(seconds=10))
        session.save()
    old_key = session.session_key
    assert stored_item(old_key) is not None
    reopened = SessionStore(old_key)
    if use_async:
        assert run(reopened.ahas_key)("foo") is False
    else:
        assert "foo" not in reopened
    assert reopened.session_key is None
    assert SessionStore().exists(old_key) is False


def test_stored_expiry_is_epoch_seconds_in_the_ttl_attribute(session: SessionStore) -> None:
    session["x"] = 1
    session.set_expiry(3600)
    session.save()
    item = stored_item(session.session_key)
    assert item is not None
    assert set(item) == {"session_key", "session_data", "expires_at"}
    assert abs(int(item["expires_at"]["N"]) - (now_epoch() + 3600)) <= 2
    assert session.decode(item["session_data"]["S"]) == {"x": 1, "_session_expiry": 3600}
    handle = get_handle()
    ttl = handle.call("describe_time_to_live", TableName=handle.table_name("dynamo_sessions"))
    assert ttl["TimeToLiveDescription"]["AttributeName"] == SESSION_TABLE.ttl_attribute


# --- SessionTestsMixin: encoding ---------------------------------------------------------


def test_decode(session: SessionStore) -> None:
    data = {"a test key": "a test value"}
    assert session.decode(session.encode(data)) == data


@pytest.mark.parametrize(
    "stored", [base64.b64encode(b"flaskdj:alkdjf").decode("ascii"), "bad:encoded:value"]
)
def test_tampered_data_loads_empty_and_warns(
    stored: str, caplog: pytest.LogCaptureFixture
) -> None:
    key = "tampered0000000000000000000000000"[:32]
    put_raw(key, stored, now_epoch() + 3600)
    with caplog.at_level(logging.WARNING, logger="django.security.SuspiciousSession"):
        store = SessionStore(key)
        assert store.load() == {}
    assert "Session data corrupted" in caplog.text
    # The key is kept (the item exists): a save replaces the bad data, as in Django's db backend.
    store["fresh"] = True
    store.save()
    assert SessionStore(key).load() == {"fresh": True}


def test_undecodable_data_loads_empty(session: SessionStore) -> None:
    signed = TimestampSigner(salt=session.key_salt).sign(b"invalid data")
    assert session.decode(signed) == {}
    put_raw("undecodable00000000000000000000x", signed, now_epoch() + 3600)
    assert SessionStore("undecodable00000000000000000000x").load() == {}


def test_item_without_expiry_is_treated_as_absent() -> None:
    put_raw("noexpiry", SessionStore().encode({"a": 1}), None)
    store = SessionStore("noexpiry")
    assert store.load() == {}
    assert store.session_key is None


# --- what DynamoDB adds: conditions -------------------------------------------------------


def test_create_retries_with_a_new_key_on_collision(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = "k" * 32
    put_raw(taken, SessionStore().encode({"owner": "someone else"}), now_epoch() + 3600)
    keys = iter([taken, "n" * 32])
    monkeypatch.setattr("dynamo_app.sessions.get_random_string", lambda *a: next(keys))
    store = SessionStore()
    store["mine"] = 1
    with count_requests() as counter:
        store.save()
    assert store.session_key == "n" * 32
    assert counter == {"PutItem": 2}  # the collision, then the new key; no GetItem probes
    assert SessionStore(taken).load() == {"owner": "someone else"}  # never overwritten
    assert SessionStore("n" * 32).load() == {"mine": 1}


def test_must_create_on_an_existing_key_raises_create_error(session: SessionStore) -> None:
    session.save()
    other = SessionStore(session.session_key)
    with pytest.raises(CreateError):
        other.save(must_create=True)
    with pytest.raises(CreateError):
        run(other.asave)(must_create=True)


def test_saving_an_expired_session_raises_update_error(session: SessionStore) -> None:
    """An item past its expiry but not yet removed by TTL is never extended."""
    key = "expired0"
    expired_at = now_epoch() - 5
    put_raw(key, session.encode({"a": 1}), expired_at)
    store = SessionStore(key)
    store._session_cache = {"a": 2}  # as if loaded just before it expired
    with pytest.raises(UpdateError):
        store.save()
    assert stored_item(key)["expires_at"]["N"] == str(expired_at)  # type: ignore[index]


def test_item_too_large_is_refused_before_any_request(session: SessionStore) -> None:
    session["blob"] = secrets.token_urlsafe(400_000)  # random: compression cannot save it
    with count_requests() as counter, pytest.raises(exceptions.ItemTooLarge):
        session.save()
    assert counter.total == 0


# --- errors are raised, never a silent logout ------------------------------------------------


Hook = Callable[[str, Callable[..., Any]], None]  # the hook fixture (tests/conftest.py)


def inject(hook: Hook, operation: str, code: str, times: int | None = None) -> Callable[[], int]:
    """Answer ``operation`` with error ``code`` (every time, or the first ``times``)
    before it leaves the client; returns a function giving how often it fired."""
    fired = 0

    def handler(**kwargs: Any) -> Any:
        nonlocal fired
        if times is not None and fired >= times:
            return None
        fired += 1
        status = 500 if code == "InternalServerError" else 400
        return AWSResponse("http://injected", status, {}, None), {
            "Error": {"Code": code, "Message": "injected"},
            "ResponseMetadata": {"HTTPStatusCode": status},
        }

    hook(f"before-call.dynamodb.{operation}", handler)
    return lambda: fired


@pytest.mark.parametrize("use_async", [False, True])
def test_throttled_load_raises_after_retries(
    session: SessionStore, slept: list[float], hook: Hook, use_async: bool
) -> None:
    session["user"] = 1
    session.save()
    fired = inject(hook, "GetItem", "ProvisionedThroughputExceededException")
    store = SessionStore(session.session_key)
    with pytest.raises(exceptions.Throttled):
        run(store.aload)() if use_async else store.load()
    attempts = get_handle().settings.retry.max_attempts
    assert fired() == attempts and len(slept) == attempts - 1
    assert store.session_key == session.session_key  # not logged out


def test_transient_throttling_is_retried_and_succeeds(
    session: SessionStore, slept: list[float], hook: Hook
) -> None:
    session["user"] = 1
    session.save()
    inject(hook, "GetItem", "ThrottlingException", times=2)
    assert SessionStore(session.session_key).load() == {"user": 1}
    assert len(slept) == 2


def test_a_save_failing_with_server_errors_is_reported_as_unknown(
    session: SessionStore, slept: list[float], hook: Hook
) -> None:
    fired = inject(hook, "PutItem", "InternalServerError")
    session["x"] = 1
    with pytest.raises(exceptions.OutcomeUnknown, match="may or may not have been applied"):
        session.save()
    assert fired() == get_handle().settings.retry.max_attempts  # a put may be repeated


def test_unreachable_endpoint_raises(slept: list[float]) -> None:
    with override_settings(DYNAMO={**settings.DYNAMO, "ENDPOINT": "http://127.0.0.1:9"}):
        get_handle().retry.sleep = lambda seconds: None
        with pytest.raises(exceptions.ConnectionFailed):
            SessionStore("a" * 32).load()


def test_missing_table_raises(session: SessionStore) -> None:
    with override_settings(DYNAMO={**settings.DYNAMO, "TABLE_PREFIX": "nowhere-"}):
        with pytest.raises(exceptions.TableNotFound):
            SessionStore("a" * 32).load()


# --- request economy ---------------------------------------------------------------------


def test_request_counts(session: SessionStore) -> None:
    with count_requests() as created:
        session["a"] = 1
        session.save()
    assert created == {"PutItem": 1}

    reader = SessionStore(session.session_key)
    with count_requests() as read:
        assert reader["a"] == 1
        assert reader.get("b") is None
    assert read == {"GetItem": 1}
    assert read.calls[0][1]["ConsistentRead"] is True

    with count_requests() as changed:
        reader["b"] = 2
        reader.save()
    assert changed == {"PutItem": 1}

    with count_requests() as probed:
        assert SessionStore().exists(session.session_key) is True
    assert probed == {"GetItem": 1}


def test_every_expression_name_is_aliased(session: SessionStore) -> None:
    session["a"] = 1
    with count_requests() as counter:
        session.save()
        session["a"] = 2
        session.save()
        session.exists(session.session_key)
    for _, params in counter.calls:
        for key in ("ConditionExpression", "ProjectionExpression"):
            if key in params:
                assert set(params[key].replace("(", " ").replace(")", " ").split()) <= {
                    "attribute_not_exists", "attribute_exists", "AND", ">", "#k", "#e", ":now"
                }


# --- clear_expired / clearsessions --------------------------------------------------------


def make_sessions(live: int, expired: int) -> list[str]:
    keys = []
    for n in range(live + expired):
        store = SessionStore()
        store["n"] = n
        store.set_expiry(3600 if n < live else -3600)
        store.save()
        keys.append(store.session_key)
    return keys


def item_count() -> int:
    handle = get_handle()
    table = handle.table_name("dynamo_sessions")
    return handle.call("scan", TableName=table, Select="COUNT")["Count"]


def test_clearsessions_command() -> None:
    make_sessions(live=1, expired=1)
    assert item_count() == 2
    with override_settings(SESSION_ENGINE=ENGINE):
        management.call_command("clearsessions")
    assert item_count() == 1


def test_aclear_expired() -> None:
    make_sessions(live=1, expired=1)
    assert run(SessionStore.aclear_expired)() == 1
    assert item_count() == 1


def test_clear_expired_pages_and_batches_of_25(hook: Hook) -> None:
    keys = make_sessions(live=3, expired=60)
    hook("provide-client-params.dynamodb.Scan", lambda params, **kw: params.update(Limit=20))
    with count_requests() as counter:
        assert SessionStore.clear_expired() == 60
    assert counter["Scan"] == 4  # 63 items, 20 a page: the last page ends the loop
    batches = [p["RequestItems"] for op, p in counter.calls if op == "BatchWriteItem"]
    assert all(len(r) == 1 and len(next(iter(r.values()))) <= 25 for r in batches)
    assert sum(len(next(iter(r.values()))) for r in batches) == 60
    assert item_count() == 3
    assert all(SessionStore().exists(k) for k in keys[:3])


def _unprocessed_first(hook: Hook, times: int) -> Callable[[], int]:
    """BatchWriteItem answers 'all unprocessed' the first ``times`` times."""
    fired = 0

    def handler(params: dict[str, Any], **kwargs: Any) -> Any:
        nonlocal fired
        if fired >= times:
            return None
        fired += 1
        return AWSResponse("http://injected", 200, {}, None), {
            "UnprocessedItems": json.loads(params["body"])["RequestItems"],
            "ResponseMetadata": {"HTTPStatusCode": 200},
        }

    hook("before-call.dynamodb.BatchWriteItem", handler)
    return lambda: fired


def test_clear_expired_resends_unprocessed_items(slept: list[float], hook: Hook) -> None:
    make_sessions(live=0, expired=3)
    _unprocessed_first(hook, 2)
    assert SessionStore.clear_expired() == 3
    assert item_count() == 0
    assert len(slept) == 2


def test_clear_expired_reports_what_stayed_unprocessed(
    slept: list[float], hook: Hook
) -> None:
    make_sessions(live=0, expired=2)
    _unprocessed_first(hook, 100)
    with pytest.raises(exceptions.BatchIncomplete) as info:
        SessionStore.clear_expired()
    assert len(info.value.unprocessed) == 2
    assert item_count() == 2
