"""The DYNAMO settings section: defaults, validation, ``${NAME}`` expansion, masking.

``get_settings()`` parses ``settings.DYNAMO`` once into an immutable
``DynamoSettings``; Django's ``setting_changed`` signal (``override_settings``)
drops the parsed copy so the next call re-reads it. Every error names the key
and says what is expected; secret values never appear in a message or repr.
"""

from __future__ import annotations

import difflib
import logging
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.utils.module_loading import import_string

from .exceptions import NotInstalled
from .tables import table_name_problem

SECTION = "DYNAMO"
EMBEDDED = "embedded"

DEFAULTS: dict[str, Any] = {
    "ENABLED": False,
    "REGION": "",
    "ENDPOINT": "",
    "ACCESS_KEY_ID": "",
    "SECRET_ACCESS_KEY": "",
    "SESSION_TOKEN": "",
    "TABLE_PREFIX": "",
    "TABLE_NAMES": {},
    "TABLE_RESOLVER": None,
    "TIMEOUT": "10s",
    "MAX_IDLE_CONNS": 4,
    "VERIFY_SCHEMA": True,
    "AUTO_MIGRATE": False,
    "RETRY": {},
    "LOCAL_STATE_FILE": "",
}

RETRY_DEFAULTS: dict[str, Any] = {
    "MAX_ATTEMPTS": 5,
    "BASE_DELAY": "50ms",
    "MAX_DELAY": "2s",
}

CREDENTIAL_KEYS = ("ACCESS_KEY_ID", "SECRET_ACCESS_KEY", "SESSION_TOKEN")
SECRET_KEYS = ("SECRET_ACCESS_KEY", "SESSION_TOKEN")
MASK = "********"

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$")


class Secret:
    """A secret string that never shows itself in a repr, str or format."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def reveal(self) -> str:
        return self._value

    def __bool__(self) -> bool:
        return bool(self._value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)

    def __repr__(self) -> str:
        return f"Secret({MASK if self._value else ''!r})"

    def __str__(self) -> str:
        return MASK if self._value else ""


@dataclass(frozen=True)
class RetrySettings:
    max_attempts: int = 5
    base_delay: float = 0.05
    max_delay: float = 2.0


@dataclass(frozen=True)
class DynamoSettings:
    """The parsed, validated DYNAMO section. Field names are the keys, lower-cased."""

    enabled: bool = False
    region: str = ""
    endpoint: str = ""
    access_key_id: str = ""
    secret_access_key: Secret = field(default_factory=lambda: Secret(""))
    session_token: Secret = field(default_factory=lambda: Secret(""))
    table_prefix: str = ""
    table_names: dict[str, str] = field(default_factory=dict)
    table_resolver: Callable[[str], str] | None = None
    timeout: float = 10.0
    max_idle_conns: int = 4
    verify_schema: bool = True
    auto_migrate: bool = False
    retry: RetrySettings = field(default_factory=RetrySettings)
    local_state_file: str = ""
    region_source: str = "REGION"

    @property
    def embedded(self) -> bool:
        return self.endpoint == EMBEDDED

    @property
    def credentials_source(self) -> str:
        if self.access_key_id:
            return "DYNAMO settings (ACCESS_KEY_ID/SECRET_ACCESS_KEY)"
        if self.embedded:
            return "embedded server (dummy credentials)"
        return "boto3 credential chain (environment, profile, instance role)"

    def secret_values(self) -> list[str]:
        """The raw secret strings, for log masking. Never print this."""
        return [s.reveal() for s in (self.secret_access_key, self.session_token) if s]

    def summary(self) -> str:
        """One line describing the effective section, secrets masked."""
        if not self.enabled:
            return "dynamo_app: disabled (DYNAMO['ENABLED'] is False)"
        endpoint = self.endpoint or f"AWS ({self.region})"
        if self.table_resolver is not None:
            naming = f"resolver={getattr(self.table_resolver, '__qualname__', self.table_resolver)}"
        else:
            naming = f"prefix={self.table_prefix!r}, {len(self.table_names)} explicit names"
        return (
            f"dynamo_app: region={self.region} (from {self.region_source}), endpoint={endpoint}, "
            f"{naming}, credentials from {self.credentials_source}"
            f"{', session token set' if self.session_token else ''}, "
            f"timeout={self.timeout:g}s, pool={self.max_idle_conns}, "
            f"verify_schema={self.verify_schema}, auto_migrate={self.auto_migrate}"
        )


def parse_duration(key: str, value: Any) -> float:
    """ "500ms", "10s", "2m" or a number of seconds -> seconds (float > 0)."""
    if isinstance(value, bool):
        raise _type_error(key, value, 'a duration such as "500ms", "10s" or a number of seconds')
    if isinstance(value, (int, float, Decimal)):
        seconds = float(value)
    elif isinstance(value, str) and (m := _DURATION.match(value)):
        number, unit = float(m.group(1)), m.group(2) or "s"
        seconds = number * {"ms": 0.001, "s": 1.0, "m": 60.0}[unit]
    else:
        raise ImproperlyConfigured(
            f'DYNAMO[{key!r}] = {value!r} is not a duration: use e.g. "500ms", "10s", '
            '"2m" or a number of seconds.'
        )
    if seconds <= 0:
        raise ImproperlyConfigured(f"DYNAMO[{key!r}] must be greater than zero, got {value!r}.")
    return seconds


def _type_error(key: str, value: Any, expected: str) -> ImproperlyConfigured:
    shown = MASK if key in SECRET_KEYS else repr(value)
    return ImproperlyConfigured(
        f"DYNAMO[{key!r}] must be {expected}, got {type(value).__name__} {shown}."
    )


def _expand(key: str, value: str) -> str:
    """Replace ``${NAME}`` with the environment variable's value."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ImproperlyConfigured(
                f"DYNAMO[{key!r}] refers to the environment variable ${{{name}}}, which is not "
                f"set. Export {name} or put the value in the settings."
            )
        return os.environ[name]

    return _ENV_REF.sub(replace, value)


def _check_type(key: str, value: Any, kind: type | tuple[type, ...], expected: str) -> None:
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise _type_error(key, value, expected)


def _parse_retry(raw: Any) -> RetrySettings:
    _check_type("RETRY", raw, dict, "a dict with MAX_ATTEMPTS, BASE_DELAY, MAX_DELAY")
    _reject_unknown(raw, RETRY_DEFAULTS, "RETRY")
    merged = {**RETRY_DEFAULTS, **raw}
    attempts = merged["MAX_ATTEMPTS"]
    if isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1:
        raise ImproperlyConfigured(
            f"DYNAMO['RETRY']['MAX_ATTEMPTS'] must be an integer of at least 1, got {attempts!r}."
        )
    base = parse_duration("RETRY.BASE_DELAY", merged["BASE_DELAY"])
    cap = parse_duration("RETRY.MAX_DELAY", merged["MAX_DELAY"])
    if cap < base:
        raise ImproperlyConfigured(
            "DYNAMO['RETRY']['MAX_DELAY'] must not be smaller than BASE_DELAY."
        )
    return RetrySettings(max_attempts=attempts, base_delay=base, max_delay=cap)


def _reject_unknown(raw: dict[str, Any], known: dict[str, Any], where: str) -> None:
    for key in raw:
        if key not in known:
            close = difflib.get_close_matches(str(key), list(known), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ImproperlyConfigured(
                f"Unknown key {key!r} in {where}.{hint} Valid keys: {', '.join(known)}."
            )


def _resolve_region(raw_region: str, embedded: bool) -> tuple[str, str]:
    if raw_region:
        return raw_region, "REGION"
    for env in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if os.environ.get(env):
            return os.environ[env], env
    if embedded:
        return "us-east-1", "the embedded default"
    raise ImproperlyConfigured(
        "DYNAMO['REGION'] is empty and neither AWS_REGION nor AWS_DEFAULT_REGION is set: "
        "set DYNAMO['REGION'] (e.g. \"eu-west-1\") or export AWS_REGION."
    )


def parse(raw: Any, *, debug: bool = False) -> DynamoSettings:
    """Validate a DYNAMO section and return the immutable settings object."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ImproperlyConfigured(
            f"settings.DYNAMO must be a dict of upper-case keys, got {type(raw).__name__}."
        )
    _reject_unknown(raw, DEFAULTS, "settings.DYNAMO")
    values = {**DEFAULTS, **raw}

    for key in ("ENABLED", "VERIFY_SCHEMA", "AUTO_MIGRATE"):
        _check_type(key, values[key], bool, "True or False")
    str_keys = ("REGION", "ENDPOINT", "TABLE_PREFIX", *CREDENTIAL_KEYS)
    for key in str_keys:
        _check_type(key, values[key], str, "a string")
    _check_type("TABLE_NAMES", values["TABLE_NAMES"], dict, "a dict of declared -> deployed names")
    _check_type("LOCAL_STATE_FILE", values["LOCAL_STATE_FILE"], (str, os.PathLike), "a file path")
    pool = values["MAX_IDLE_CONNS"]
    if isinstance(pool, bool) or not isinstance(pool, int) or pool < 1:
        raise _type_error("MAX_IDLE_CONNS", pool, "an integer of at least 1")

    creds = {key: _expand(key, values[key]) for key in CREDENTIAL_KEYS}
    if bool(creds["ACCESS_KEY_ID"]) != bool(creds["SECRET_ACCESS_KEY"]):
        given, missing = (
            ("ACCESS_KEY_ID", "SECRET_ACCESS_KEY")
            if creds["ACCESS_KEY_ID"]
            else ("SECRET_ACCESS_KEY", "ACCESS_KEY_ID")
        )
        raise ImproperlyConfigured(
            f"DYNAMO[{given!r}] is set but DYNAMO[{missing!r}] is empty: set both, or neither "
            "to use boto3's credential chain (environment, profile, instance role)."
        )
    if creds["SESSION_TOKEN"] and not creds["ACCESS_KEY_ID"]:
        raise ImproperlyConfigured(
            "DYNAMO['SESSION_TOKEN'] is set without ACCESS_KEY_ID/SECRET_ACCESS_KEY: a session "
            "token only works together with the temporary key pair it was issued with."
        )

    endpoint = values["ENDPOINT"].strip()
    if endpoint and endpoint != EMBEDDED and not re.match(r"^https?://[^\s/]+", endpoint):
        raise ImproperlyConfigured(
            f'DYNAMO[\'ENDPOINT\'] = {endpoint!r} is not valid: use "" for AWS, "embedded" '
            "for a local server started by the app, or a URL such as http://127.0.0.1:8001."
        )

    prefix = values["TABLE_PREFIX"]
    if prefix and not re.match(r"^[A-Za-z0-9_.\-]*$", prefix):
        raise ImproperlyConfigured(
            f"DYNAMO['TABLE_PREFIX'] = {prefix!r} may only contain A-Z, a-z, 0-9, '_', '-' and '.'."
        )
    names = values["TABLE_NAMES"]
    for declared, deployed in names.items():
        problem = table_name_problem(deployed)
        if not isinstance(declared, str) or problem:
            raise ImproperlyConfigured(
                f"DYNAMO['TABLE_NAMES'][{declared!r}] = {deployed!r}: a deployed table name "
                f"{problem or 'needs a string declared name'}."
            )

    resolver = values["TABLE_RESOLVER"]
    if isinstance(resolver, str):
        try:
            resolver = import_string(resolver)
        except ImportError as exc:
            raise ImproperlyConfigured(
                f"DYNAMO['TABLE_RESOLVER'] = {values['TABLE_RESOLVER']!r} cannot be imported: {exc}"
            ) from exc
    if resolver is not None and not callable(resolver):
        raise _type_error("TABLE_RESOLVER", resolver, "a callable or a dotted path to one")

    if values["AUTO_MIGRATE"] and not debug:
        raise ImproperlyConfigured(
            "DYNAMO['AUTO_MIGRATE'] is True but DEBUG is False: auto-migration is for "
            "development only. Run `python manage.py dynamo_migrate` in your deploy instead."
        )

    enabled = values["ENABLED"]
    region, region_source = (
        _resolve_region(values["REGION"], endpoint == EMBEDDED)
        if enabled
        else (values["REGION"], "REGION")
    )
    return DynamoSettings(
        enabled=enabled,
        region=region,
        region_source=region_source,
        endpoint=endpoint,
        access_key_id=creds["ACCESS_KEY_ID"],
        secret_access_key=Secret(creds["SECRET_ACCESS_KEY"]),
        session_token=Secret(creds["SESSION_TOKEN"]),
        table_prefix=prefix,
        table_names=dict(names),
        table_resolver=resolver,
        timeout=parse_duration("TIMEOUT", values["TIMEOUT"]),
        max_idle_conns=pool,
        verify_schema=values["VERIFY_SCHEMA"],
        auto_migrate=values["AUTO_MIGRATE"],
        retry=_parse_retry(values["RETRY"]),
        local_state_file=os.fspath(values["LOCAL_STATE_FILE"]),
    )


def require_installed(what: str) -> None:
    """Refuse to use dynamo_app unless it is in INSTALLED_APPS: without it its
    startup checks, system checks and commands would silently not run."""
    from django.apps import apps

    if apps.apps_ready and not apps.is_installed("dynamo_app"):
        raise NotInstalled(
            f'{what} needs "dynamo_app" in INSTALLED_APPS, and it is not there: add it '
            "(without it the schema is not verified at startup, the system checks do not run "
            "and manage.py has no dynamo_migrate or dynamo_local)."
        )


_parsed: DynamoSettings | None = None


def get_settings() -> DynamoSettings:
    """The parsed section, parsed on first use and after every settings change."""
    global _parsed
    if _parsed is None:
        require_installed("Using dynamo_app (the DYNAMO settings, a model, the session engine)")
        parsed = parse(getattr(django_settings, SECTION, {}), debug=django_settings.DEBUG)
        install_secret_masking(parsed.secret_values())
        _parsed = parsed
    return _parsed


def reload(**kwargs: Any) -> None:
    """Forget the parsed section (and the handle built from it)."""
    global _parsed
    if kwargs.get("setting") not in (None, SECTION, "DEBUG"):
        return
    _parsed = None
    from . import handle  # the handle is built from these settings

    handle.reset()


setting_changed.connect(reload, dispatch_uid="dynamo_app.conf.reload")


class SecretMasker:
    """Masks known secret values in every log record, whichever logger or
    handler it goes through - including botocore's own DEBUG output, which
    prints request headers such as the security token.

    It wraps the log record factory, so it costs nothing for records that are
    never created (disabled levels) and needs no handler configuration.
    """

    def __init__(self) -> None:
        self.secrets: list[str] = []
        self._installed = False

    def mask(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def add(self, secrets: list[str]) -> None:
        known = set(self.secrets) | {s for s in secrets if s}
        self.secrets = sorted(known, key=len, reverse=True)
        if self.secrets and not self._installed:
            self._install()

    def _install(self) -> None:
        previous = logging.getLogRecordFactory()

        def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
            record = previous(*args, **kwargs)
            if self.secrets:
                message = record.getMessage()
                masked = self.mask(message)
                if masked != message:
                    record.msg, record.args = masked, None
                if record.exc_info and record.exc_info[1] is not None:
                    text = logging.Formatter().formatException(record.exc_info)
                    if self.mask(text) != text:
                        record.exc_text, record.exc_info = self.mask(text), None
            return record

        logging.setLogRecordFactory(factory)
        self._installed = True


secret_masker = SecretMasker()


def install_secret_masking(secrets: list[str]) -> None:
    """Mask ``secrets`` in every log record from now on."""
    secret_masker.add(secrets)
