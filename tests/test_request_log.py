"""The request log and the counters (dynamo_app.client.requests), consumed capacity,
RequestCountMiddleware and assertNumRequests: one line per call, values masked
unless LOG_VALUES asks, and counts per thread and asyncio task, never mixed."""

from __future__ import annotations

import asyncio
import contextvars
import importlib
import logging
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse
from django.test import AsyncClient, Client, TestCase, override_settings
from django.urls import path

from dynamo_app import models
from dynamo_app.client import requests
from dynamo_app.client.requests import Request, masked
from dynamo_app.conf import parse
from dynamo_app.test import RequestAssertions
from dynamo_app.testing import ENGINE, count_requests
from tests.thread_support import in_threads

VALUE = "CANARY-VALUE-51f0"  # an item value: never in a log line unless LOG_VALUES


class ObsReading(models.Model):
    sensor = models.StringField(partition_key=True)
    at = models.IntegerField(sort_key=True)
    site = models.StringField(null=True)
    note = models.StringField(null=True)

    class Meta:
        indexes = [models.GlobalIndex("by_site", partition_key="site", sort_key="at")]


def section(**keys: Any) -> dict[str, Any]:
    return {**settings.DYNAMO, **keys}


@pytest.fixture
def request_log(caplog: pytest.LogCaptureFixture) -> Iterator[pytest.LogCaptureFixture]:
    """caplog, with dynamo_app.client.requests at DEBUG."""
    with caplog.at_level(logging.DEBUG, logger="dynamo_app.requests"):
        yield caplog


def lines(records: list[logging.LogRecord]) -> list[str]:
    """The per-request lines."""
    return [r.getMessage() for r in records if hasattr(r, "dynamo_request")]


# --- the log line ------------------------------------------------------------------------


def test_one_line_per_request_with_table_index_time_attempts_and_items(dynamo_db, request_log):
    ObsReading.objects.create(sensor="s1", at=1, site="kyoto", note=VALUE)
    ObsReading.objects.create(sensor="s1", at=2, site="kyoto")
    got = list(ObsReading.objects.using_index("by_site").filter(site="kyoto"))
    assert len(got) == 2

    put, _, query = (r.dynamo_request for r in request_log.records if hasattr(r, "dynamo_request"))
    table = dynamo_db.table_name("obs_reading")
    assert (put.operation, put.table, put.index, put.attempts, put.items) == (
        "PutItem",
        table,
        "",
        1,
        0,
    )
    assert (query.operation, query.table, query.index) == ("Query", table, "by_site")
    assert query.items == 2
    assert 0 < query.seconds < 10
    line = lines(request_log.records)[2]
    assert line.startswith("(") and " ms) Query " + table + " index=by_site attempts=1" in line
    assert "items=2" in line and "capacity=" not in line  # not asked for
    # Names and expressions are shown, values never: the key's and the item's.
    first = lines(request_log.records)[0]
    assert '"sensor":{"S":"********"}' in first and '"note":{"S":"********"}' in first
    assert all(VALUE not in text and '"s1"' not in text for text in lines(request_log.records))


def _everything_in(record: logging.LogRecord) -> str:
    """What a JSON formatter or an error tracker may ship of a record: every
    attribute and argument, as repr and str."""
    parts = [repr(record.args), *(str(a) for a in record.args or ())]
    for value in vars(record).values():
        parts += [repr(value), str(value)]
        for inner in getattr(value, "requests", [value]):
            parts.append(repr(getattr(inner, "params", "")))
    return " ".join(parts)


def test_no_value_in_any_attribute_of_a_record_without_log_values(dynamo_db, request_log):
    ObsReading.objects.create(sensor="s1", at=1, site="kyoto", note=VALUE)
    list(ObsReading.objects.using_index("by_site").filter(site="kyoto"))
    records = [r for r in request_log.records if hasattr(r, "dynamo_request")]
    assert len(records) == 2
    for record in records:
        shipped = _everything_in(record)
        assert VALUE not in shipped and "kyoto" not in shipped and "'s1'" not in shipped
    with override_settings(DYNAMO=section(LOG_VALUES=True)):
        ObsReading.objects.create(sensor="s2", at=1, note=VALUE)
    assert VALUE in _everything_in(request_log.records[-1])


def test_values_are_shown_only_when_log_values_asks(dynamo_db, request_log):
    with override_settings(DYNAMO=section(LOG_VALUES=True)):
        ObsReading.objects.create(sensor="s1", at=1, note=VALUE)
    assert VALUE in lines(request_log.records)[0]


def test_a_failed_call_is_logged_with_the_apps_error(dynamo_db, request_log):
    ObsReading.objects.create(sensor="s1", at=1)
    with pytest.raises(Exception, match="exists"):
        ObsReading.objects.create(sensor="s1", at=1)
    failed = lines(request_log.records)[1]
    assert "PutItem" in failed and "failed=ConditionFailed" in failed


def test_nothing_is_built_when_no_one_listens(dynamo_db, monkeypatch):
    built = []

    def recording(**fields: Any) -> Request:
        built.append(fields)
        return Request(**fields)

    monkeypatch.setattr("dynamo_app.client.requests.Request", recording)
    ObsReading.objects.create(sensor="s1", at=1)
    assert built == []
    with count_requests():
        ObsReading.objects.create(sensor="s1", at=2)
    assert len(built) == 1


def test_no_call_reaches_the_request_log_when_no_one_listens(dynamo_db, monkeypatch, caplog):
    """No count_requests() block open anywhere, the log below DEBUG: Handle.call
    calls nothing in dynamo_app.client.requests (issue 20: a plain save() crosses one
    module less). Either listener brings the report back."""
    reported = []
    sent = requests.sent

    def reporting(operation: str, *args: Any, **kwargs: Any) -> None:
        reported.append(operation)
        sent(operation, *args, **kwargs)

    monkeypatch.setattr(requests, "sent", reporting)
    ObsReading.objects.create(sensor="s1", at=1)
    assert reported == []
    with count_requests() as counter:
        ObsReading.objects.get(sensor="s1", at=1)
    assert reported == ["GetItem"] and counter.total == 1
    with caplog.at_level(logging.DEBUG, logger="dynamo_app.requests"):
        ObsReading.objects.get(sensor="s1", at=1)
    assert reported == ["GetItem", "GetItem"] and len(lines(caplog.records)) == 1
    ObsReading.objects.get(sensor="s1", at=1)
    assert len(reported) == 2


def test_nested_blocks_each_count_what_was_sent_inside_them(dynamo_db):
    ObsReading.objects.create(sensor="s1", at=1)
    with count_requests() as outer:
        ObsReading.objects.get(sensor="s1", at=1)
        with count_requests() as inner:
            ObsReading.objects.get(sensor="s1", at=1)
        assert len(list(ObsReading.objects.filter(sensor="s1"))) == 1
    assert dict(inner) == {"GetItem": 1}
    assert dict(outer) == {"GetItem": 2, "Query": 1}
    assert inner.requests[0] is outer.requests[1]  # one report, seen by both blocks


def test_masking_covers_every_place_a_value_travels():
    av = {"S": VALUE}
    params = {
        "Key": {"pk": av},
        "ExclusiveStartKey": {"pk": av},
        "ExpressionAttributeValues": {":v": {"M": {"x": av}}},
        "ExpressionAttributeNames": {"#n": "note"},
        "RequestItems": {
            "t": [{"PutRequest": {"Item": {"pk": av}}}, {"DeleteRequest": {"Key": {"pk": av}}}],
            "u": {"Keys": [{"pk": av}], "ProjectionExpression": "#n"},
        },
        "TransactItems": [{"ConditionCheck": {"Key": {"pk": av}, "TableName": "t"}}],
        "Statement": "SELECT * FROM t WHERE pk = ?",
        "Parameters": [av],
    }
    shown = repr(masked(params))
    assert VALUE not in shown
    assert "'#n': 'note'" in shown and "'ProjectionExpression': '#n'" in shown
    assert masked({"Key": {"pk": av}}) == {"Key": {"pk": {"S": "********"}}}


# --- consumed capacity ---------------------------------------------------------------------


@pytest.mark.parametrize("value, sent", [("total", "TOTAL"), ("INDEXES", "INDEXES")])
def test_capacity_is_asked_for_on_every_request_that_takes_it_at_no_extra_request(
    dynamo_db, value, sent
):
    def workload() -> None:
        ObsReading.objects.create(sensor="s1", at=1, site="kyoto")
        ObsReading.objects.get(sensor="s1", at=1)
        list(ObsReading.objects.filter(sensor="s1"))
        ObsReading.objects.bulk_save([ObsReading(sensor="s2", at=i) for i in range(3)])
        ObsReading.objects.bulk_get([("s2", 1)])
        ObsReading.objects.get(sensor="s1", at=1).update(set={"note": "x"})
        dynamo_db.call("describe_table", TableName=dynamo_db.table_name("obs_reading"))

    with count_requests() as without:
        workload()
    dynamo_db.call("delete_table", TableName=dynamo_db.table_name("obs_reading"))
    with override_settings(DYNAMO=section(RETURN_CONSUMED_CAPACITY=value)):
        from dynamo_app.deploy.schema import migrate

        migrate()
        with count_requests() as counted:
            workload()
    assert dict(counted) == dict(without)  # the economy: ReturnConsumedCapacity adds none
    for operation, params in counted.calls:
        expected = None if operation == "DescribeTable" else sent
        assert params.get("ReturnConsumedCapacity") == expected, operation
    # Both engines report capacity for single-item calls and queries; moto for
    # BatchGetItem too, MiniStack not (and, unlike moto, for transactions).
    by_operation = {r.operation: r.capacity for r in counted.requests}
    reported = ["PutItem", "GetItem", "Query", "UpdateItem"]
    for operation in reported + (["BatchGetItem"] if ENGINE == "moto" else []):
        assert by_operation[operation] and by_operation[operation] > 0, operation
    assert counted.capacity == pytest.approx(
        sum(r.capacity for r in counted.requests if r.capacity is not None)
    )
    assert f"{counted.capacity:g} capacity units" in counted.summary()


def test_capacity_setting_is_validated_naming_the_key():
    assert parse({}).return_consumed_capacity is None
    with pytest.raises(ImproperlyConfigured, match=r"RETURN_CONSUMED_CAPACITY.*\"total\""):
        parse({"RETURN_CONSUMED_CAPACITY": "NONE-please"})


# --- counts per thread and per asyncio task -----------------------------------------------


def test_concurrent_threads_never_mix_counts(dynamo_db):
    ObsReading.objects.create(sensor="s1", at=1)
    barrier = threading.Barrier(2, timeout=30)
    counts: dict[int, int] = {}

    def worker(gets: int) -> None:
        with count_requests() as counter:
            ObsReading.objects.get(sensor="s1", at=1)
            barrier.wait()  # both blocks are open from here on
            for _ in range(gets - 1):
                ObsReading.objects.get(sensor="s1", at=1)
            barrier.wait()
        counts[gets] = counter.total

    assert in_threads(worker, (1, 4)) == []
    assert counts == {1: 1, 4: 4}


def test_a_thread_in_a_copy_of_the_blocks_context_counts_for_the_block(dynamo_db):
    ObsReading.objects.create(sensor="s1", at=1)

    def get() -> None:
        ObsReading.objects.get(sensor="s1", at=1)

    with count_requests() as counter:
        threads = [
            threading.Thread(target=contextvars.copy_context().run, args=(get,)),
            threading.Thread(target=get),  # in a context of its own: not this block's
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert dict(counter) == {"GetItem": 1}


def test_concurrent_asyncio_tasks_never_mix_counts(dynamo_db):
    ObsReading.objects.create(sensor="s1", at=1)

    async def task(gets: int, barrier: asyncio.Barrier) -> int:
        with count_requests() as counter:
            await ObsReading.objects.aget(sensor="s1", at=1)
            await barrier.wait()
            for _ in range(gets - 1):
                await ObsReading.objects.aget(sensor="s1", at=1)
            await barrier.wait()
        return counter.total

    async def both() -> list[int]:
        barrier = asyncio.Barrier(2)
        return list(await asyncio.gather(task(1, barrier), task(3, barrier)))

    with count_requests() as outer:  # and an enclosing block sees both
        assert asyncio.run(both()) == [1, 3]
    assert outer.total == 4


# --- RequestCountMiddleware --------------------------------------------------------------

BARRIER: dict[str, Any] = {}


def sync_view(request: HttpRequest, gets: int) -> HttpResponse:
    ObsReading.objects.get(sensor="s1", at=1)
    BARRIER["sync"].wait()
    for _ in range(gets - 1):
        ObsReading.objects.get(sensor="s1", at=1)
    BARRIER["sync"].wait()
    return HttpResponse(str(request.dynamo_requests.total))  # type: ignore[attr-defined]


async def async_view(request: HttpRequest, gets: int) -> HttpResponse:
    await ObsReading.objects.aget(sensor="s1", at=1)
    await BARRIER["async"].wait()
    for _ in range(gets - 1):
        await ObsReading.objects.aget(sensor="s1", at=1)
    await BARRIER["async"].wait()
    return HttpResponse(str(request.dynamo_requests.total))  # type: ignore[attr-defined]


def nothing_view(request: HttpRequest) -> HttpResponse:
    return HttpResponse("no DynamoDB here")


urlpatterns = [
    path("nothing/", nothing_view, name="nothing"),
    path("sync/<int:gets>/", sync_view, name="sync"),
    path("async/<int:gets>/", async_view, name="async"),
]

MIDDLEWARE_SETTINGS = {
    "ROOT_URLCONF": __name__,
    "MIDDLEWARE": ["dynamo_app.middleware.RequestCountMiddleware"],
}


def summaries(records: list[logging.LogRecord]) -> dict[str, str]:
    return {
        r.getMessage().split(" ")[1]: r.getMessage().split(": ", 1)[1]
        for r in records
        if hasattr(r, "dynamo_requests")
    }


@override_settings(**MIDDLEWARE_SETTINGS)
def test_middleware_reports_each_views_requests_with_concurrent_sync_requests(
    dynamo_db, request_log
):
    ObsReading.objects.create(sensor="s1", at=1)
    BARRIER["sync"] = threading.Barrier(2, timeout=30)
    bodies: dict[int, bytes] = {}

    def visit(gets: int) -> None:
        bodies[gets] = Client().get(f"/sync/{gets}/").content

    assert in_threads(visit, (1, 3)) == []
    assert bodies == {1: b"1", 3: b"3"}
    found = summaries(request_log.records)
    assert found["/sync/1/"].startswith("1 DynamoDB request, ")
    assert found["/sync/3/"].startswith("3 DynamoDB requests, ")
    assert "GET /sync/3/ (sync): 3 DynamoDB requests, " in request_log.text


@override_settings(**MIDDLEWARE_SETTINGS)
def test_middleware_reports_each_views_requests_with_concurrent_async_requests(
    dynamo_db, request_log
):
    ObsReading.objects.create(sensor="s1", at=1)

    async def visit_both() -> list[bytes]:
        BARRIER["async"] = asyncio.Barrier(2)
        client = AsyncClient()
        pages = await asyncio.gather(client.get("/async/2/"), client.get("/async/5/"))
        return [page.content for page in pages]

    assert asyncio.run(visit_both()) == [b"2", b"5"]
    found = summaries(request_log.records)
    assert found["/async/2/"].startswith("2 DynamoDB requests, ")
    assert found["/async/5/"].startswith("5 DynamoDB requests, ")


@override_settings(**MIDDLEWARE_SETTINGS)
def test_the_middlewares_record_carries_no_value(dynamo_db, request_log):
    ObsReading.objects.create(sensor="s1", at=1, note=VALUE)
    BARRIER["sync"] = threading.Barrier(1)
    Client().get("/sync/2/")
    (record,) = [r for r in request_log.records if hasattr(r, "dynamo_requests")]
    assert record.dynamo_requests.total == 2
    assert "'s1'" not in _everything_in(record) and VALUE not in _everything_in(record)


@override_settings(**MIDDLEWARE_SETTINGS)
def test_middleware_summary_carries_capacity_when_asked(dynamo_db, request_log):
    ObsReading.objects.create(sensor="s1", at=1)
    BARRIER["sync"] = threading.Barrier(1)
    with override_settings(DYNAMO=section(RETURN_CONSUMED_CAPACITY="total")):
        Client().get("/sync/2/")
    assert summaries(request_log.records)["/sync/2/"].endswith(" ms, 1 capacity unit")


@override_settings(**MIDDLEWARE_SETTINGS)
def test_a_request_that_sent_nothing_is_logged_only_at_debug(dynamo_db, caplog):
    ObsReading.objects.create(sensor="s1", at=1)
    BARRIER["sync"] = threading.Barrier(1)
    with caplog.at_level(logging.INFO, logger="dynamo_app.requests"):
        Client().get("/nothing/")
        Client().get("/sync/1/")
    assert list(summaries(caplog.records)) == ["/sync/1/"]  # at INFO: the page that cost something
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="dynamo_app.requests"):
        Client().get("/nothing/")
    assert summaries(caplog.records) == {"/nothing/": "0 DynamoDB requests, 0.0 ms"}


def test_the_middleware_after_the_session_middleware_is_a_warning_naming_the_fix():
    from django.core import checks

    counting = "dynamo_app.middleware.RequestCountMiddleware"
    sessions = "django.contrib.sessions.middleware.SessionMiddleware"

    def warnings(middleware: list[str], engine: str = "dynamo_app.sessions") -> list[str]:
        with override_settings(MIDDLEWARE=middleware, SESSION_ENGINE=engine):
            found = checks.run_checks(tags=["dynamo"])
        return [f"{w.msg} {w.hint}" for w in found if w.id == "dynamo.W001"]

    (warning,) = warnings([sessions, counting])
    assert "misses the session's DynamoDB requests" in warning
    assert "Move it before SessionMiddleware" in warning
    assert warnings([counting, sessions]) == []
    assert warnings([sessions, counting], engine="django.contrib.sessions.backends.db") == []


# --- dynamo_app.testing without pytest, and assertNumRequests for django.test.TestCase ---


def test_testing_helpers_import_without_pytest_and_change_nothing(monkeypatch):
    from dynamo_app.client import handle

    before = (handle.refused, handle.validate_parameters, logging.getLogRecordFactory())
    monkeypatch.setitem(sys.modules, "pytest", None)  # `import pytest` fails
    for name in ("dynamo_app.testing", "dynamo_app.test.plugin"):
        monkeypatch.delitem(sys.modules, name)
    testing = importlib.import_module("dynamo_app.testing")
    assert testing.count_requests is count_requests and testing.RequestAssertions
    assert (handle.refused, handle.validate_parameters, logging.getLogRecordFactory()) == before
    with pytest.raises(ImportError):
        testing.moto_only  # noqa: B018  # the one name that needs pytest



class AssertNumRequestsTests(RequestAssertions, TestCase):
    def test_counts_this_threads_requests_only(self) -> None:
        ObsReading.objects.create(sensor="s1", at=1)
        other = threading.Thread(target=ObsReading.objects.get, kwargs={"sensor": "s1", "at": 1})
        with self.assertNumRequests(1):
            other.start()
            ObsReading.objects.get(sensor="s1", at=1)
            other.join()

    def test_takes_a_callable_and_returns_its_result(self) -> None:
        got = self.assertNumRequests(1, ObsReading.objects.bulk_get, [("s1", 9)])
        assert got == [None]

    def test_failure_lists_the_requests(self) -> None:
        with self.assertRaises(AssertionError) as failure, self.assertNumRequests(1):
            ObsReading.objects.create(sensor="s1", at=1)
            ObsReading.objects.get(sensor="s1", at=1)
        message = str(failure.exception)
        assert message.startswith("2 != 1")
        assert "1. (" in message and "PutItem" in message and "2. (" in message
