"""The fast client path (dynamo_app.client.fastpath): never the reason an app fails to
start or a request fails. A project on a botocore without the internals it uses
imports, starts and serves; each part left out says so once."""

from __future__ import annotations

import importlib.util
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import botocore
import pytest
from botocore import auth
from django.conf import settings
from django.test import override_settings

import dynamo_app
from dynamo_app import exceptions, models
from dynamo_app.client import fallback, parser, pipeline, sigv4
from dynamo_app.client.handle import get_handle
from dynamo_app.testing import count_requests
from tests.fault_support import Damaged, changed_byte
from tests.process_support import child_environ, run_python

# The endpoint cache reports botocore's feature ids through botocore.context (1.38 on);
# before it, botocore resolves every request itself, and says so once.
HAS_CONTEXT = importlib.util.find_spec("botocore.context") is not None
FITTING = set(fallback.COMPONENTS) - (set() if HAS_CONTEXT else {"pipeline"})


def run_project(*gone: str) -> dict[str, Any]:
    """tests/fastpath_project.py on a botocore without the names ``gone``."""
    env = child_environ(DJANGO_SETTINGS_MODULE="tests.fastpath_settings")
    done = run_python("-m", "tests.fastpath_project", *gone, env=env)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["got"] == {"pk": "{'S': 'a'}", "b": "{'B': b'\\x00\\xff'}", "n": "{'N': '1.5'}"}
    assert result["queried"] == 1
    return result


def test_every_part_fits_this_botocore(dynamo_server: Any) -> None:
    warnings = run_project()["warnings"]
    assert len(warnings) == len(fallback.COMPONENTS) - len(FITTING)


@pytest.mark.parametrize(
    "gone, part",
    [
        ("botocore.context", "pipeline"),  # before botocore 1.38
        ("botocore.handlers:add_retry_headers", "pipeline"),
        ("botocore.auth:SigV4Auth.canonical_headers~", "signing"),  # botocore signs otherwise
    ],
)
def test_a_part_whose_botocore_internal_is_gone_is_left_to_botocore(
    dynamo_server: Any, gone: str, part: str
) -> None:
    warnings = run_project(gone)["warnings"]
    (warning,) = [w for w in warnings if f"fast client {part} is off" in w]
    assert f"botocore {botocore.__version__} " in warning
    assert len(warnings) == 1 + len(set(fallback.COMPONENTS) - FITTING - {part})


def test_each_part_left_out_warns_once(dynamo_server: Any) -> None:
    gone = ("botocore.context", "botocore.auth:SigV4Auth.canonical_headers~")
    warnings = run_project(*gone)["warnings"]
    assert sorted(w.split(" is off")[0] for w in warnings) == [
        "dynamo_app's fast client pipeline",
        "dynamo_app's fast client signing",
    ]


def test_the_imports_older_botocore_lacks_are_not_needed(dynamo_server: Any) -> None:
    """Before 1.40.2 botocore.utils had no get_current_datetime, before 1.38 there was
    no botocore.context: dynamo_app imported neither at import time."""
    run_project("botocore.utils:get_current_datetime", "botocore.context")


# --- in this process: the handle's own client --------------------------------------------


class FastNote(models.Model):
    topic = models.StringField(partition_key=True)
    data = models.BinaryField(null=True)
    tags = models.MapField(null=True)


@pytest.fixture
def parts_on() -> Iterator[None]:
    """Every part on before and after the test: one a test turned off stays off
    for the rest of the process otherwise."""
    fallback.reset()
    yield
    fallback.reset()


@pytest.fixture
def warned(caplog: pytest.LogCaptureFixture) -> Callable[[], list[str]]:
    caplog.set_level(logging.WARNING, logger="dynamo_app.fastpath")
    return lambda: [r.getMessage() for r in caplog.records if r.name == "dynamo_app.fastpath"]


def serve_everything(run: str = "") -> None:
    """A get, a put, a query, a transaction and a batch get (its map of tables:
    botocore's own parse, under the lean one)."""
    a, b = f"a{run}", f"b{run}"
    FastNote.objects.create(topic=a, data=b"\x00\xff", tags={"k": {"n": 1}})
    assert FastNote.objects.get(topic=a).data == b"\x00\xff"
    with dynamo_app.transaction() as tx:
        tx.create(FastNote(topic=b))
    assert [n.topic for n in FastNote.objects.filter(topic=a)] == [a]
    table = get_handle().table_name(FastNote._meta.table_name)
    batch = get_handle().call(
        "batch_get_item", RequestItems={table: {"Keys": [{"topic": {"S": b}}]}}
    )
    assert batch["Responses"][table] == [{"topic": {"S": b}}]


def fast_parts(client: Any) -> set[str]:
    """The parts installed on ``client`` and not turned off since."""
    installed = {
        "signing": type(client._request_signer).__name__ == "_LeanRequestSigner",
        "parsing": client._endpoint._response_parser_factory.lean,
        "pipeline": type(client._ruleset_resolver).__name__ == "_CachingResolver",
    }
    return {part for part, on in installed.items() if on and part not in fallback.off}


def test_on_this_botocore_the_handle_builds_every_part(dynamo_db, parts_on, warned):
    assert fast_parts(get_handle().client) == FITTING
    serve_everything()


@pytest.mark.parametrize("key", ["FAST_CLIENT", "LEAN_SIGNING"])
def test_the_setting_leaves_the_whole_client_to_botocore(dynamo_db, parts_on, warned, key):
    with override_settings(DYNAMO={**settings.DYNAMO, key: False}):
        client = get_handle().client
        assert fast_parts(client) == set()
        assert type(client._request_signer.get_auth_instance("dynamodb", "us-east-1", "v4")) is (
            auth.SigV4Auth
        )
        serve_everything()
    assert warned() == []


def _broken(*args: Any, **kwargs: Any) -> Any:
    raise AttributeError("module 'botocore.auth' has no attribute '_host_from_url'")


BREAKS = {
    # What each part reaches into at request time, gone after the handle was built.
    "signing": lambda mp: mp.setattr(sigv4, "_url_parts", _broken),
    "parsing": lambda mp: mp.setattr(parser, "binary_values", _broken),
    "pipeline": lambda mp: mp.setattr(pipeline, "_tables", _broken),
}


@pytest.mark.parametrize(
    "part",
    [
        pytest.param(p, marks=pytest.mark.skipif(p not in FITTING, reason="not installed"))
        for p in sorted(BREAKS)
    ],
)
def test_a_part_failing_while_serving_is_left_to_botocore_for_the_rest_of_the_process(
    dynamo_db, parts_on, warned, monkeypatch, part
):
    client = get_handle().client
    BREAKS[part](monkeypatch)
    with count_requests() as counter:
        serve_everything("1")
        serve_everything("2")
    assert counter["PutItem"] == 2  # each sent once: the failure cost no request
    assert fast_parts(client) == FITTING - {part}
    (warning,) = [w for w in warned() if f" {part} " in w]
    assert f"fast client {part} is off" in warning and botocore.__version__ in warning
    assert "AttributeError" in warning


def test_a_probe_parsed_otherwise_leaves_parsing_to_botocore(dynamo_db, parts_on, warned):
    def lean_parse(self: Any, response: Any, shape: Any) -> Any:
        return {**original(self, response, shape), "extra": 1}

    original = parser.DynamoJSONParser.lean_parse
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(parser.DynamoJSONParser, "lean_parse", lean_parse)
        with override_settings(DYNAMO={**settings.DYNAMO}):
            assert fast_parts(get_handle().client) == FITTING - {"parsing"}
            serve_everything()
    (warning,) = [w for w in warned() if " parsing " in w]
    assert "fast client parsing is off" in warning and "GetItem" in warning


@pytest.mark.parametrize("setup", ["fast", "FAST_CLIENT off", "parsing fell back"])
def test_a_damaged_body_is_refused_whichever_parser_reads_it(dynamo_db, parts_on, setup):
    overrides = {"FAST_CLIENT": False} if setup == "FAST_CLIENT off" else {}
    if setup == "parsing fell back":
        fallback.turn_off("parsing", "test")
    with override_settings(DYNAMO={**settings.DYNAMO, **overrides}):
        handle = get_handle()
        handle.retry.sleep = lambda seconds: None
        FastNote.objects.create(topic="d", tags={"team": "Hawks"})
        attempts = handle.settings.retry.max_attempts
        with Damaged("GetItem", changed_byte, times=attempts):
            with pytest.raises(exceptions.DamagedResponse, match="x-amz-crc32"):
                FastNote.objects.get(topic="d")
        assert FastNote.objects.get(topic="d").tags == {"team": "Hawks"}


class Sent:
    """Each request as it goes out: its body and headers, from botocore's own event."""

    def __init__(self) -> None:
        self.requests: list[tuple[bytes, dict[str, Any]]] = []

    def __call__(self, request: Any, **kwargs: Any) -> None:
        self.requests.append((request.body, dict(request.headers.items())))


def test_the_fast_path_sends_what_botocore_sends(dynamo_db, parts_on, monkeypatch):
    """The same bytes with the fast path on and off: the body, every header and the
    headers signed. Only the signature and its instant differ (another instant),
    and the two headers that describe botocore's own retries, which the pipeline
    drops."""
    sent = {}
    for fast in (True, False):
        with override_settings(DYNAMO={**settings.DYNAMO, "FAST_CLIENT": fast}):
            watch = Sent()
            get_handle().client.meta.events.register("before-send.dynamodb", watch)
            FastNote.objects.filter(topic="q").first()
            FastNote(topic="q", data=b"x").save()
            sent[fast] = watch.requests
    retry_headers = {"amz-sdk-invocation-id", "amz-sdk-request"}
    for (fast_body, fast), (stock_body, stock) in zip(sent[True], sent[False], strict=True):
        assert fast_body == stock_body
        if "pipeline" in FITTING:
            assert retry_headers <= stock.keys() and not retry_headers & fast.keys()
        unlike = {"X-Amz-Date", "Authorization", *retry_headers}  # an instant, an invocation
        assert {k: v for k, v in fast.items() if k not in unlike} == {
            k: v for k, v in stock.items() if k not in unlike
        }
        signed = [
            h["Authorization"].split(b"SignedHeaders=")[1].split(b",")[0] for h in (fast, stock)
        ]
        assert signed[0] == signed[1]
