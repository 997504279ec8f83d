"""A canary secret in SECRET_ACCESS_KEY and SESSION_TOKEN, set directly and
through ``${NAME}``, never shows in a log record (botocore's DEBUG output
included), an exception, a repr, or any management command's output."""

import logging

import pytest
from django.core.management import CommandError, call_command
from django.test import override_settings

from dynamo_app.client.handle import get_handle
from dynamo_app.conf import get_settings
from dynamo_app.deploy import schema
from dynamo_app.exceptions import ConnectionFailed, ServiceError, TableNotFound
from dynamo_app.local.server import LocalServer
from dynamo_app.testing import settings_for_tests

# Real keys and tokens hold '/', '+' and '='; a mask must not miss them.
SECRET = "CANARY/secret+KEY=4b1d"
TOKEN = "CANARY/session+TOKEN=9e77" * 4


@pytest.fixture(params=["direct", "from environment"])
def canary(request, dynamo_server, monkeypatch, caplog):
    """DYNAMO with the canary credentials, botocore logging at DEBUG into caplog."""
    if request.param == "direct":
        secrets = {"SECRET_ACCESS_KEY": SECRET, "SESSION_TOKEN": TOKEN}
    else:
        monkeypatch.setenv("CANARY_SECRET", SECRET)
        monkeypatch.setenv("CANARY_TOKEN", TOKEN)
        secrets = {"SECRET_ACCESS_KEY": "${CANARY_SECRET}", "SESSION_TOKEN": "${CANARY_TOKEN}"}
    section = {
        **settings_for_tests({"TABLE_PREFIX": "secrets-"}, dynamo_server.url),
        "ACCESS_KEY_ID": "AKIATESTKEY",
        **secrets,
    }
    botocore = logging.getLogger("botocore")
    level = botocore.level
    botocore.setLevel(logging.DEBUG)
    try:
        with override_settings(DYNAMO=section), caplog.at_level(logging.DEBUG):
            yield section
    finally:
        botocore.setLevel(level)


def leaks(*texts):
    """The texts that show the canary, or a recognisable part of it."""
    return [t for t in texts if any(part in t for part in ("secret+KEY", "session+TOKEN"))]


def logged(caplog):
    records = caplog.records
    return [caplog.text, *(r.getMessage() for r in records), *(r.exc_text or "" for r in records)]


def test_requests_errors_and_reprs_never_show_the_secret(canary, caplog):
    handle = get_handle()
    assert get_settings().session_token.reveal() == TOKEN  # the canary is really in use
    handle.call("list_tables")
    errors = []
    with pytest.raises(TableNotFound) as missing:
        handle.call("describe_table", TableName="no-such-table")
    errors.append(missing.value)
    with pytest.raises(ServiceError) as rejected:
        handle.call("get_item", TableName="x", Key={})
    errors.append(rejected.value)
    dead = LocalServer().start()
    url = dead.url
    dead.stop()
    with override_settings(DYNAMO={**canary, "ENDPOINT": url, "RETRY": {"MAX_ATTEMPTS": 1}}):
        with pytest.raises(ConnectionFailed) as unreachable:
            get_handle().call("list_tables")
    errors.append(unreachable.value)

    texts = [repr(get_settings()), str(get_settings()), get_settings().summary(), repr(handle)]
    for error in errors:
        texts += [str(error), repr(error), repr(error.__cause__)]
    # botocore printed the request headers, security token included - masked.
    assert any("X-Amz-Security-Token" in t for t in logged(caplog))
    assert leaks(*texts, *logged(caplog)) == []


def test_a_logged_traceback_is_masked(canary, caplog):
    get_settings()
    try:
        raise RuntimeError(f"a library put the secret in its message: {SECRET}")
    except RuntimeError:
        logging.getLogger("somewhere.else").exception("it failed")
    assert "a library put the secret" in caplog.text  # the traceback was logged ...
    assert leaks(*logged(caplog)) == []  # ... with the secret masked


@pytest.mark.parametrize(
    "command",
    [
        ["dynamo_plan"],
        ["dynamo_plan", "--json"],
        ["dynamo_migrate"],
        ["dynamo_check_unique"],
        ["check"],
        ["dynamo_local", "--help"],
    ],
)
def test_management_commands_never_show_the_secret(canary, caplog, capsys, command):
    schema.migrate()  # the tables exist whichever command this worker ran before
    try:
        call_command(*command)
    except SystemExit:  # --help, or a check that found something: the output still counts
        pass
    out, err = capsys.readouterr()
    assert out or err
    assert leaks(out, err, *logged(caplog)) == []


def test_a_failing_command_never_shows_the_secret(canary, caplog, capsys):
    """A command that fails (here: the tables are missing) shows no secret either."""
    handle = get_handle()
    for name in schema.table_names(handle):  # every page: a worker's server holds 100+ tables
        if name.startswith("secrets-"):
            handle.call("delete_table", TableName=name)
    with pytest.raises(CommandError) as error:
        call_command("dynamo_check_unique")
    out, err = capsys.readouterr()
    assert leaks(str(error.value), out, err, *logged(caplog)) == []
