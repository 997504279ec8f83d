"""The DYNAMO settings section: every rule of the section, one test each."""

from dataclasses import fields

import pytest
from django.core.exceptions import ImproperlyConfigured

from dynamo_app.conf import (
    DEFAULTS,
    MASK,
    RETRY_DEFAULTS,
    DynamoSettings,
    RetrySettings,
    keys,
    parse,
    parse_duration,
)

CANARY = "CANARY-SECRET-9f3b1c"


def test_defaults():
    s = parse({})
    assert s.enabled is False
    assert s.timeout == 10.0
    assert s.max_idle_conns == 10 and s.async_threads == 10
    assert s.verify_schema is True and s.auto_migrate is False
    assert s.retry.max_attempts == 5


def test_unknown_key_names_it_and_the_closest_valid_key():
    with pytest.raises(ImproperlyConfigured) as e:
        parse({"TABLE_PREFX": "x-"})
    assert "'TABLE_PREFX'" in str(e.value) and "'TABLE_PREFIX'" in str(e.value)


@pytest.mark.parametrize(
    "key, value, expected",
    [
        ("ENABLED", "yes", "True or False"),
        ("REGION", 5, "a string"),
        ("TABLE_NAMES", ["a"], "a dict"),
        ("MAX_IDLE_CONNS", "4", "an integer"),
        ("MAX_IDLE_CONNS", 0, "an integer of at least 1"),
        ("VERIFY_SCHEMA", 1, "True or False"),
    ],
)
def test_wrong_type_names_key_and_expected_type(key, value, expected):
    with pytest.raises(ImproperlyConfigured) as e:
        parse({key: value})
    assert repr(key) in str(e.value) and expected in str(e.value)


def test_secret_of_wrong_type_is_not_echoed():
    with pytest.raises(ImproperlyConfigured) as e:
        parse({"SECRET_ACCESS_KEY": 12345678})
    assert "12345678" not in str(e.value)


@pytest.mark.parametrize(
    "value, seconds", [("500ms", 0.5), ("10s", 10.0), ("2m", 120.0), (3, 3.0), (0.25, 0.25)]
)
def test_timeout_forms(value, seconds):
    assert parse({"TIMEOUT": value}).timeout == seconds


@pytest.mark.parametrize("value", ["ten seconds", "-1s", 0, True, "5h"])
def test_bad_timeout_names_key(value):
    with pytest.raises(ImproperlyConfigured, match="TIMEOUT"):
        parse_duration("TIMEOUT", value)


@pytest.mark.parametrize("given", ["ACCESS_KEY_ID", "SECRET_ACCESS_KEY"])
def test_half_a_key_pair_is_rejected(given):
    with pytest.raises(ImproperlyConfigured) as e:
        parse({given: CANARY})
    assert "set both" in str(e.value)
    assert CANARY not in str(e.value)


def test_session_token_without_key_pair_is_rejected():
    with pytest.raises(ImproperlyConfigured, match="SESSION_TOKEN"):
        parse({"SESSION_TOKEN": CANARY})


def test_env_expansion(monkeypatch):
    monkeypatch.setenv("DYN_TEST_SECRET", CANARY)
    s = parse({"ACCESS_KEY_ID": "AKIA1", "SECRET_ACCESS_KEY": "${DYN_TEST_SECRET}"})
    assert s.secret_access_key.reveal() == CANARY
    assert CANARY not in repr(s) and CANARY not in str(s)


def test_missing_env_variable_names_the_variable(monkeypatch):
    monkeypatch.delenv("DYN_NOT_SET", raising=False)
    with pytest.raises(ImproperlyConfigured) as e:
        parse({"ACCESS_KEY_ID": "AKIA1", "SECRET_ACCESS_KEY": "${DYN_NOT_SET}"})
    assert "DYN_NOT_SET" in str(e.value)


def test_secrets_masked_in_repr_and_summary():
    s = parse(
        {
            "ENABLED": True,
            "REGION": "eu-west-1",
            "ACCESS_KEY_ID": "AKIA1",
            "SECRET_ACCESS_KEY": CANARY,
            "SESSION_TOKEN": CANARY + "-token",
        }
    )
    for text in (repr(s), str(s), s.summary(), repr(s.secret_access_key), f"{s.session_token}"):
        assert CANARY not in text
    assert MASK in repr(s)
    assert "eu-west-1" in s.summary() and "session token set" in s.summary()


def test_the_summary_counts_in_the_singular_and_plural():
    one = parse({"ENABLED": True, "REGION": "eu-west-1", "TABLE_NAMES": {"team": "teams"}})
    assert ", 1 explicit name, " in one.summary()
    two = parse({"ENABLED": True, "REGION": "eu-west-1", "TABLE_NAMES": {"a": "xxx", "b": "yyy"}})
    assert ", 2 explicit names, " in two.summary()


def test_region_from_environment(monkeypatch):
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_DEFAULT_REGION", "ap-south-1")
    s = parse({"ENABLED": True})
    assert s.region == "ap-south-1" and s.region_source == "AWS_DEFAULT_REGION"


def test_no_region_anywhere_is_a_startup_error(monkeypatch):
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    with pytest.raises(ImproperlyConfigured, match="REGION"):
        parse({"ENABLED": True})


@pytest.mark.parametrize(
    "endpoint", ["embedded", "http://127.0.0.1:8001", "http://localhost:8001", "http://[::1]:8001"]
)
def test_a_local_server_needs_no_region(monkeypatch, endpoint):
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    s = parse({"ENABLED": True, "ENDPOINT": endpoint})
    assert (s.region, s.local) == ("us-east-1", True)


@pytest.mark.parametrize("endpoint", ["http://10.0.0.5:8000", "https://dynamo.example.com"])
def test_a_server_elsewhere_needs_a_region(monkeypatch, endpoint):
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    with pytest.raises(ImproperlyConfigured, match="REGION"):
        parse({"ENABLED": True, "ENDPOINT": endpoint})


@pytest.mark.parametrize("endpoint", ["localhost:8000", "ftp://x", "embeded"])
def test_bad_endpoint(endpoint):
    with pytest.raises(ImproperlyConfigured, match="ENDPOINT"):
        parse({"ENDPOINT": endpoint})


@pytest.mark.parametrize("prefix", ["my app-", "app/", "ü-"])
def test_bad_prefix(prefix):
    with pytest.raises(ImproperlyConfigured, match="TABLE_PREFIX"):
        parse({"TABLE_PREFIX": prefix})


@pytest.mark.parametrize("deployed", ["ab", "has space", "x" * 256, 7])
def test_bad_explicit_table_name(deployed):
    with pytest.raises(ImproperlyConfigured, match="TABLE_NAMES"):
        parse({"TABLE_NAMES": {"player": deployed}})


def test_resolver_dotted_path():
    s = parse({"TABLE_RESOLVER": "tests.test_conf.upper_resolver"})
    assert s.table_resolver is upper_resolver


def test_resolver_import_error_names_key():
    with pytest.raises(ImproperlyConfigured, match="TABLE_RESOLVER"):
        parse({"TABLE_RESOLVER": "tests.nowhere.resolver"})


def test_resolver_not_callable():
    with pytest.raises(ImproperlyConfigured, match="TABLE_RESOLVER"):
        parse({"TABLE_RESOLVER": 42})


def test_auto_migrate_needs_debug():
    with pytest.raises(ImproperlyConfigured, match="AUTO_MIGRATE"):
        parse({"AUTO_MIGRATE": True}, debug=False)
    assert parse({"AUTO_MIGRATE": True}, debug=True).auto_migrate


def test_retry_section():
    s = parse({"RETRY": {"MAX_ATTEMPTS": 3, "BASE_DELAY": "10ms", "MAX_DELAY": "1s"}})
    assert (s.retry.max_attempts, s.retry.base_delay, s.retry.max_delay) == (3, 0.01, 1.0)
    with pytest.raises(ImproperlyConfigured, match="MAX_ATTEMPTS"):
        parse({"RETRY": {"MAX_ATTEMPTS": 0}})
    with pytest.raises(ImproperlyConfigured, match="MAX_ATEMPTS"):
        parse({"RETRY": {"MAX_ATEMPTS": 3}})


def test_section_must_be_a_dict():
    with pytest.raises(ImproperlyConfigured, match="dict"):
        parse(["ENABLED"])


def upper_resolver(declared: str) -> str:
    return "PROD-" + declared.upper()


# --- each key declared once: the table in conf.py is the only declaration ------------------


def test_the_table_is_the_section_its_defaults_and_its_parsers():
    """Every field of DynamoSettings is a key declared with its default and parser (but the
    derived ``region_source``), so DynamoSettings() is the parsed default section."""
    declared = {f.name for f in fields(DynamoSettings)} - {"region_source"}
    assert {key.lower() for key in DEFAULTS} == declared
    assert DynamoSettings() == parse({})
    assert {key.lower() for key in RETRY_DEFAULTS} == {f.name for f in fields(RetrySettings)}
    assert RetrySettings() == parse({}).retry


def test_every_key_says_what_it_means():
    """The settings reference (docs/reference/settings.md) is generated from these."""
    for section in (DynamoSettings, RetrySettings):
        for key, declared in keys(section).items():
            assert declared.metadata["meaning"].strip(), key
