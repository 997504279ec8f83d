"""The process handle: built from the section, reached by every operation."""

import logging

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import override_settings

from dynamo_app import exceptions
from dynamo_app.client.handle import Handle, get_handle
from dynamo_app.conf import get_settings
from dynamo_app.local.server import LocalServer
from dynamo_app.testing import count_requests

CANARY = "CANARY-SECRET-7d41aa"


def test_disabled_app_raises_not_configured(dynamo_server):
    with override_settings(DYNAMO={"ENABLED": False}):
        with pytest.raises(exceptions.NotConfigured) as e:
            get_handle()
    assert "ENABLED" in str(e.value)
    assert isinstance(e.value, ImproperlyConfigured)


def test_settings_change_rebuilds_the_handle(dynamo_server):
    first = get_handle()
    with override_settings(DYNAMO={**_local(dynamo_server), "TABLE_PREFIX": "other-"}):
        second = get_handle()
        assert second is not first
        assert second.table_name("player") == "other-player"
    assert get_handle().table_name("player") != "other-player"


def test_client_is_configured_from_the_section(dynamo_server):
    section = {**_local(dynamo_server), "TIMEOUT": "750ms", "MAX_IDLE_CONNS": 7}
    with override_settings(DYNAMO=section):
        config = get_handle().client.meta.config
        assert config.connect_timeout == 0.75 and config.read_timeout == 0.75
        assert config.max_pool_connections == 7
        assert get_handle().client.meta.endpoint_url == dynamo_server.url


CHAIN = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE")


def test_no_credentials_anywhere_fails_at_startup(monkeypatch, dynamo_server):
    for var in CHAIN:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    section = {"ENABLED": True, "REGION": "us-east-1", "ENDPOINT": ""}  # AWS: builds, sends nothing
    with override_settings(DYNAMO=section):
        with pytest.raises(ImproperlyConfigured, match="no AWS credentials"):
            get_handle()


def test_a_local_url_needs_no_region_nor_credentials(monkeypatch, dynamo_server):
    """dynamo_local says 'use ENDPOINT = http://127.0.0.1:<port>': that line alone works."""
    for var in ("AWS_REGION", "AWS_DEFAULT_REGION", *CHAIN):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    local = dynamo_server.url.replace("127.0.0.1", "localhost")
    with override_settings(DYNAMO={"ENABLED": True, "ENDPOINT": local}):
        handle = get_handle()
        assert handle.settings.region == "us-east-1"
        assert handle.client.meta.region_name == "us-east-1"
        assert handle.client._request_signer._credentials.access_key == "local"
        assert "else dummy ones (a server on this machine)" in handle.settings.summary()
        handle.call("list_tables")  # the server answers a request signed so


def test_a_local_url_keeps_the_chains_credentials(monkeypatch, dynamo_server):
    """DynamoDB Local keeps a database per access key: the one the chain gives stays."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIALOCALKEYOFTHEUSER")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "local-secret")
    with override_settings(DYNAMO={"ENABLED": True, "ENDPOINT": dynamo_server.url}):
        signer = get_handle().client._request_signer
        assert signer._credentials.access_key == "AKIALOCALKEYOFTHEUSER"


def test_resolver_rules(dynamo_server):
    section = {**_local(dynamo_server), "TABLE_PREFIX": "app-", "TABLE_NAMES": {"team": "Teams"}}
    with override_settings(DYNAMO=section):
        resolver = get_handle().resolver
        assert resolver("player") == "app-player"
        assert resolver("team") == "Teams"
        with pytest.raises(ImproperlyConfigured, match="TABLE_NAMES"):
            resolver.check(["player"])  # "team" is mapped but nobody declares it
        resolver.check(["player", "team"])
    with override_settings(DYNAMO={**_local(dynamo_server), "TABLE_RESOLVER": lambda n: "x"}):
        with pytest.raises(ImproperlyConfigured, match="TABLE_RESOLVER"):
            get_handle().table_name("player")  # "x" breaks DynamoDB's naming rules


def test_unreachable_endpoint_is_a_clear_connection_error(dynamo_server):
    dead = LocalServer().start()
    url = dead.url
    dead.stop()
    section = {
        **_creds(),
        "ENABLED": True,
        "ENDPOINT": url,
        "REGION": "us-east-1",
        "TIMEOUT": "1s",
        "RETRY": {"MAX_ATTEMPTS": 2, "BASE_DELAY": "1ms", "MAX_DELAY": "2ms"},
    }
    with override_settings(DYNAMO=section):
        with pytest.raises(exceptions.ConnectionFailed) as e:
            get_handle().call("list_tables")
    assert url in str(e.value) and "after 2 attempts" in str(e.value)
    assert CANARY not in str(e.value)


def test_missing_table_names_the_table_and_the_fix(dynamo_db):
    with pytest.raises(exceptions.TableNotFound) as e:
        dynamo_db.call("get_item", TableName="no-such-table", Key={"pk": {"S": "1"}})
    assert "no-such-table" in str(e.value) and "dynamo_migrate" in str(e.value)


def test_canary_secret_never_logged_or_raised(dynamo_server, caplog, monkeypatch):
    monkeypatch.setenv("CANARY_TOKEN", CANARY + "-token")
    section = {
        "ENABLED": True,
        "ENDPOINT": dynamo_server.url,
        "REGION": "us-east-1",
        "ACCESS_KEY_ID": "AKIATEST",
        "SECRET_ACCESS_KEY": CANARY,
        "SESSION_TOKEN": "${CANARY_TOKEN}",
    }
    with override_settings(DYNAMO=section), caplog.at_level(logging.DEBUG):
        logging.getLogger("botocore").setLevel(logging.DEBUG)
        try:
            handle = get_handle()
            logging.getLogger("dynamo_app").info(get_settings().summary())
            handle.call("list_tables")
            with pytest.raises(exceptions.TableNotFound) as e:
                handle.call("describe_table", TableName="missing-table")
            texts = [str(e.value), repr(e.value), repr(handle), repr(get_settings())]
        finally:
            logging.getLogger("botocore").setLevel(logging.WARNING)
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "X-Amz-Security-Token" in logged or "x-amz-security-token" in logged.lower()
    for text in [logged, *texts]:
        assert CANARY not in text


def test_request_counter_counts_operations(dynamo_db):
    with count_requests() as counter:
        dynamo_db.call("list_tables")
        dynamo_db.call("list_tables")
    assert counter["ListTables"] == 2 and counter.total == 2


def test_handle_repr_has_no_secrets(dynamo_server):
    with override_settings(DYNAMO={**_local(dynamo_server), "SECRET_ACCESS_KEY": CANARY}):
        assert CANARY not in repr(get_handle())
        assert isinstance(get_handle(), Handle)


def _creds():
    return {"ACCESS_KEY_ID": "testing", "SECRET_ACCESS_KEY": "testing"}


def _local(server):
    return {**_creds(), "ENABLED": True, "ENDPOINT": server.url, "REGION": "us-east-1"}
