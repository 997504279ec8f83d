"""With DEBUG on, Django's technical 500 page shows every frame's locals along
the exception chain. No secret may be among them, whatever failed: a refused
connection, a read timeout, a 4xx, a 5xx, a value refused before sending, or
the client that could not be built. Rendered for real, through the test client."""

import base64
import logging
import socket
import warnings
from urllib.parse import quote

import pytest
from django.conf import settings
from django.http import HttpResponse
from django.test import Client, override_settings
from django.urls import path
from django.views.debug import ExceptionCycleWarning

from dynamo_app.client.handle import get_handle
from dynamo_app.conf import get_settings
from tests.fault_support import answer
from tests.test_unique import Player

# Real keys and tokens hold '/', '+' and '='.
SECRET = "CANARYpage/secret+KEY=0d15"
TOKEN = "CANARYpage/session+TOKEN=5e55" * 4


def shown_forms(value):
    """The ways a page or a log could show ``value``: as is, URL-quoted, base64."""
    raw = value.encode()
    return [value, quote(value, safe=""), base64.b64encode(raw).decode(), repr(raw)[2:-1]]


FORBIDDEN = [
    *shown_forms(SECRET),
    *shown_forms(TOKEN),
    "secret+KEY",  # any recognisable part of either
    "session+TOKEN",
    "Signature=",  # SigV4's signature, derived from the secret key
]


def leaks(text):
    return [form for form in FORBIDDEN if form in text]


# --- the view: runs the action the test chose --------------------------------

ACTIONS = {}


def run(request, case):
    ACTIONS[case]()
    return HttpResponse("no error")


urlpatterns = [path("fail/<str:case>/", run)]


def closed_port_url():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.fixture
def silent_server():
    """Accepts connections (the kernel completes the handshake) and never answers."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(8)
        yield f"http://127.0.0.1:{s.getsockname()[1]}"


def read_missing_player():
    Player.objects.get(team_id="t", player_id="nobody")


def player_table():
    return get_handle().table_name(Player._meta.table_name)


def server_error():
    """A 5xx answer to a request signed and sent for real (no local engine returns one)."""

    def answer_500(request, **kwargs):
        body = b'{"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"x"}'
        return answer(500, body, url=request.url)

    events = get_handle().client.meta.events
    events.register("before-send.dynamodb", answer_500, unique_id="debug-page-500")
    try:
        read_missing_player()
    finally:
        events.unregister("before-send.dynamodb", unique_id="debug-page-500")


CASES = {
    # name: (DYNAMO overrides, action, what the page must still say)
    "refused": ({"ENDPOINT": closed_port_url()}, read_missing_player, "ConnectionFailed"),
    "timeout": ({"TIMEOUT": "300ms"}, read_missing_player, "within 0.3s"),
    "table not found": ({"TABLE_PREFIX": "debugpage-"}, read_missing_player, "TableNotFound"),
    "rejected": (
        {},
        lambda: get_handle().call("get_item", TableName=player_table(), Key={}),
        "ValidationException",
    ),
    "server error": ({}, server_error, "InternalServerError"),
    "botocore validation": (
        {},
        lambda: get_handle().call("get_item", TableName=player_table(), Key="no map"),
        "ParamValidationError",
    ),
    "app validation": (
        {},
        lambda: Player.objects.create(team_id="t", player_name="p", uniform_number="seven"),
        "ValidationError",
    ),
    "client not built": ({"REGION": "no such region!"}, read_missing_player, "InvalidRegionError"),
}


@pytest.fixture(params=["direct", "from environment"])
def credentials(request, monkeypatch):
    if request.param == "direct":
        return {"SECRET_ACCESS_KEY": SECRET, "SESSION_TOKEN": TOKEN}
    monkeypatch.setenv("CANARY_PAGE_S", SECRET)  # names Django's settings filter does not hide
    monkeypatch.setenv("CANARY_PAGE_T", TOKEN)
    return {"SECRET_ACCESS_KEY": "${CANARY_PAGE_S}", "SESSION_TOKEN": "${CANARY_PAGE_T}"}


@pytest.mark.parametrize("case", list(CASES))
def test_the_debug_page_never_shows_a_secret(case, credentials, dynamo_db, silent_server, caplog):
    overrides, action, diagnosis = CASES[case]
    if case == "timeout":
        overrides = {**overrides, "ENDPOINT": silent_server}
    section = {
        **settings.DYNAMO,  # the suite's server, region and tables
        **credentials,
        "RETRY": {"MAX_ATTEMPTS": 1},
        **overrides,
    }
    ACTIONS[case] = action
    client = Client(raise_request_exception=False)
    with (
        override_settings(DYNAMO=section, DEBUG=True, ROOT_URLCONF=__name__),
        caplog.at_level(logging.ERROR, logger="django.request"),
        warnings.catch_warnings(record=True) as warned,
    ):
        warnings.simplefilter("always")
        assert get_settings().session_token.reveal() == TOKEN  # the canary is in use
        html = client.get(f"/fail/{case}/")
        text = client.get(f"/fail/{case}/", HTTP_ACCEPT="text/plain")

    assert html.status_code == text.status_code == 500
    page, plain = html.content.decode(), text.content.decode()
    assert "Local vars" in page and "Traceback" in plain  # the technical 500 page, in full
    assert diagnosis in page and diagnosis in plain  # still says what failed
    logged = [r for r in caplog.records if r.name == "django.request"]
    assert logged and all(r.exc_info or r.exc_text for r in logged)
    assert not [w for w in warned if issubclass(w.category, ExceptionCycleWarning)]
    assert leaks(page) == [] and leaks(plain) == [] and leaks(caplog.text) == []


def reachable_frames(exc):
    """Every frame an exception keeps alive: along its chain, and in the errors
    botocore keeps in ``kwargs`` (the urllib3 error it wraps)."""
    frames, todo, seen = [], [exc], set()
    while todo:
        error = todo.pop()
        if error is None or id(error) in seen:
            continue
        seen.add(id(error))
        tb = error.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        todo += [error.__cause__, error.__context__]
        todo += [v for v in getattr(error, "kwargs", {}).values() if isinstance(v, BaseException)]
    return frames


@pytest.mark.parametrize("case", ["refused", "timeout", "rejected", "botocore validation"])
def test_the_app_error_keeps_no_frame_of_botocore_or_urllib3(case, dynamo_db, silent_server):
    """Not only the DEBUG page: whatever walks the error (Sentry, a debugger,
    ``traceback`` with ``capture_locals``) finds no frame holding the signed request."""
    overrides, action, _ = CASES[case]
    if case == "timeout":
        overrides = {**overrides, "ENDPOINT": silent_server}
    section = {**settings.DYNAMO, "RETRY": {"MAX_ATTEMPTS": 1}, **overrides}
    with override_settings(DYNAMO=section), pytest.raises(Exception) as raised:
        action()
    files = {frame.f_code.co_filename for frame in reachable_frames(raised.value)}
    assert files and not [f for f in files if "botocore" in f or "urllib3" in f]
    assert raised.value.__cause__ is not None or case == "botocore validation"
