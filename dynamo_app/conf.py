"""The DYNAMO settings section: defaults, validation, ``${NAME}`` expansion, masking.

``get_settings()`` parses ``settings.DYNAMO`` once into an immutable
``DynamoSettings``; Django's ``setting_changed`` signal (``override_settings``)
drops the parsed copy so the next call re-reads it. Every error names the key
and says what is expected; secret values never appear in a message or repr.
"""

from __future__ import annotations

import difflib
import ipaddress
import logging
import os
import re
from collections.abc import Callable
from dataclasses import Field, dataclass, field, fields
from decimal import Decimal
from typing import Any
from urllib.parse import urlsplit

from django.conf import settings as django_settings
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed
from django.utils.module_loading import import_string
from django.utils.translation import ngettext

from .exceptions import NotInstalled
from .tables import TableResolver, table_name_problem

__all__ = ["DynamoSettings", "RetrySettings", "Secret", "get_settings", "reload"]

SECTION = "DYNAMO"
EMBEDDED = "embedded"
MASK = "********"

_ENV_REF = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$")

Parser = Callable[[str, Any], Any]


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


# --- parsers: (key as named in messages, raw value) -> the field's value -------------------


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


def _check_type(key: str, value: Any, kind: type | tuple[type, ...], expected: str) -> None:
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise _type_error(key, value, expected)


def _boolean(key: str, value: Any) -> bool:
    _check_type(key, value, bool, "True or False")
    return bool(value)


def _string(key: str, value: Any) -> str:
    _check_type(key, value, str, "a string")
    return str(value)


def _credential(key: str, value: Any) -> str:
    """A string in which ``${NAME}`` is replaced with the environment variable's value."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ImproperlyConfigured(
                f"DYNAMO[{key!r}] refers to the environment variable ${{{name}}}, which is not "
                f"set. Export {name} or put the value in the settings."
            )
        return os.environ[name]

    return _ENV_REF.sub(replace, _string(key, value))


def _secret(key: str, value: Any) -> Secret:
    return Secret(_credential(key, value))


def _endpoint(key: str, value: Any) -> str:
    endpoint = _string(key, value).strip()
    if endpoint and endpoint != EMBEDDED and not re.match(r"^https?://[^\s/]+", endpoint):
        raise ImproperlyConfigured(
            f'DYNAMO[\'ENDPOINT\'] = {endpoint!r} is not valid: use "" for AWS, "embedded" '
            "for a local server started by the app, or a URL such as http://127.0.0.1:8001."
        )
    return endpoint


def _prefix(key: str, value: Any) -> str:
    prefix = _string(key, value)
    if prefix and not re.match(r"^[A-Za-z0-9_.\-]*$", prefix):
        raise ImproperlyConfigured(
            f"DYNAMO['TABLE_PREFIX'] = {prefix!r} may only contain A-Z, a-z, 0-9, '_', '-' and '.'."
        )
    return prefix


def _table_names(key: str, value: Any) -> dict[str, str]:
    _check_type(key, value, dict, "a dict of declared -> deployed names")
    for declared, deployed in value.items():
        problem = table_name_problem(deployed)
        if not isinstance(declared, str) or problem:
            raise ImproperlyConfigured(
                f"DYNAMO['TABLE_NAMES'][{declared!r}] = {deployed!r}: a deployed table name "
                f"{problem or 'needs a string declared name'}."
            )
    return dict(value)


def _resolver(key: str, value: Any) -> Callable[[str], str] | None:
    resolver: Callable[[str], str] | None = value
    if isinstance(value, str):
        try:
            resolver = import_string(value)
        except ImportError as exc:
            raise ImproperlyConfigured(
                f"DYNAMO['TABLE_RESOLVER'] = {value!r} cannot be imported: {exc}"
            ) from exc
    if resolver is not None and not callable(resolver):
        raise _type_error(key, resolver, "a callable or a dotted path to one")
    return resolver


def _pool_size(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _type_error(key, value, "an integer of at least 1")
    return value


def _attempts(key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ImproperlyConfigured(
            f"DYNAMO['RETRY']['MAX_ATTEMPTS'] must be an integer of at least 1, got {value!r}."
        )
    return value


def _dax_endpoints(key: str, value: Any) -> tuple[str, ...]:
    _check_type(key, value, (list, tuple), 'a list of DAX cluster endpoints ("daxs://...")')
    for endpoint in value:
        if not isinstance(endpoint, str) or not re.match(r"^daxs?://[^\s/]+/?$", endpoint):
            raise ImproperlyConfigured(
                f"DYNAMO['DAX_ENDPOINTS'] holds {endpoint!r}: each entry is a DAX cluster's "
                'discovery endpoint, "daxs://<name>.<id>.dax-clusters.<region>.amazonaws.com" '
                '(TLS) or "dax://..." (a cluster without encryption in transit).'
            )
    return tuple(value)


def _path(key: str, value: Any) -> str:
    _check_type(key, value, (str, os.PathLike), "a file path")
    path: str = os.fspath(value)
    return path


CAPACITY_CHOICES = {"off": None, "total": "TOTAL", "indexes": "INDEXES"}


def _capacity(key: str, value: Any) -> str | None:
    """ "off", "total" or "indexes" -> the ReturnConsumedCapacity sent (None: none)."""
    if not isinstance(value, str) or value.lower() not in CAPACITY_CHOICES:
        raise ImproperlyConfigured(
            f'DYNAMO[{key!r}] = {value!r} is not valid: use "off", "total" (capacity '
            'units per request) or "indexes" (per table and index as well).'
        )
    return CAPACITY_CHOICES[value.lower()]


def _retry(key: str, value: Any) -> RetrySettings:
    _check_type(key, value, dict, "a dict with MAX_ATTEMPTS, BASE_DELAY, MAX_DELAY")
    values = _parse_keys(RetrySettings, value, where="RETRY", named="RETRY.")
    if values["max_delay"] < values["base_delay"]:
        raise ImproperlyConfigured(
            "DYNAMO['RETRY']['MAX_DELAY'] must not be smaller than BASE_DELAY."
        )
    return RetrySettings(**values)


# --- the tables: one field per key, with its default as written in settings.py -----------


def setting(default: Any, parser: Parser, meaning: str) -> Any:
    """A settings key: the field's name upper-cased, ``default`` as a user would
    write it, the parser that checks a value and converts it to the field's, and what
    the key means (markdown: the settings reference is generated from it)."""
    return field(
        default_factory=lambda: parser("", default),
        metadata={"default": default, "parse": parser, "meaning": meaning},
    )


def keys(section: type) -> dict[str, Field[Any]]:
    """The settings keys of a section class, by key name (upper-case)."""
    return {f.name.upper(): f for f in fields(section) if "parse" in f.metadata}


def defaults(section: type) -> dict[str, Any]:
    """Each key's default, as written in settings.py."""
    return {key: f.metadata["default"] for key, f in keys(section).items()}


@dataclass(frozen=True)
class RetrySettings:
    """``DYNAMO["RETRY"]``: see retry.py."""

    max_attempts: int = setting(
        5,
        _attempts,
        "the attempts of one request, the first included (at least 1)",
    )
    base_delay: float = setting(
        "50ms",
        parse_duration,
        "the backoff before retry n is a random delay in [0, min(MAX_DELAY, BASE_DELAY * 2^(n-1))]",
    )
    max_delay: float = setting(
        "2s",
        parse_duration,
        "the cap of the backoff delay; at least BASE_DELAY",
    )


@dataclass(frozen=True)
class DynamoSettings:
    """The parsed, validated DYNAMO section. Field names are the keys, lower-cased;
    each key is declared once, here, with its default and its parser."""

    enabled: bool = setting(
        False,
        _boolean,
        "open the client at startup and hold it as the process handle; when off, any operation "
        "raises `dynamo_app.exceptions.NotConfigured`",
    )
    region: str = setting(
        "",
        _string,
        "empty: `AWS_REGION` / `AWS_DEFAULT_REGION` from the environment; neither: startup error, "
        "but for a local server (`\"embedded\"` or a URL on 127.0.0.1, ::1 or localhost), "
        "which gets `us-east-1`",
    )
    endpoint: str = setting(
        "",
        _endpoint,
        '`""`: the region\'s AWS host; a URL: a local or compatible server; `"embedded"`: the '
        "project's one local server, started by the first process that needs it (the `[local]` "
        'extra; see "Local development")',
    )
    access_key_id: str = setting(
        "",
        _credential,
        "empty: boto3's normal credential chain (environment, profile, instance role); the "
        "embedded server gets dummy ones, and so does a server on this machine when the chain "
        "finds none; set both or neither",
    )
    secret_access_key: Secret = setting(
        "",
        _secret,
        "masked everywhere",
    )
    session_token: Secret = setting(
        "",
        _secret,
        "masked everywhere; needs the key pair it was issued with",
    )
    table_prefix: str = setting(
        "",
        _prefix,
        "put before every declared table name",
    )
    table_names: dict[str, str] = setting(
        {},
        _table_names,
        "explicit declared → deployed names; wins over the prefix; an entry naming no declared "
        "table is an error",
    )
    table_resolver: Callable[[str], str] | None = setting(
        None,
        _resolver,
        "callable or dotted path, declared → deployed; replaces prefix and mapping",
    )
    timeout: float = setting(
        "10s",
        parse_duration,
        'per-request limit (`"500ms"`, `"10s"`, `"2m"` or seconds) → botocore connect and read '
        "timeouts",
    )
    max_idle_conns: int = setting(
        10,
        _pool_size,
        "botocore's connection pool size: the connections kept open for reuse; keep it at least "
        "`ASYNC_THREADS` plus the threads your project sends requests from, or the extra "
        "connections are closed after each burst and opened again",
    )
    async_threads: int = setting(
        10,
        _pool_size,
        "the worker threads of the async API (`aget`, `asave`, `async for`, `async with "
        "transaction()`, the session engine's async methods): how many of one process's async "
        'DynamoDB calls can be in flight at once. See "Async"',
    )
    fast_client: bool = setting(
        True,
        _boolean,
        "the fast client path: signing (`dynamo_app.client.sigv4`), response parsing "
        "(`dynamo_app.client.parser`) and the endpoint cache (`dynamo_app.client.pipeline`), each "
        "botocore's output with less CPU per request, each checked against the running botocore "
        "when a client is built and left to botocore (one WARNING) if it does not fit; `False`: "
        "botocore's own client throughout. Responses are checked against their `x-amz-crc32` "
        "either way",
    )
    lean_signing: bool = setting(
        True,
        _boolean,
        "the earlier name of `FAST_CLIENT`, still accepted: `False` turns the whole fast client "
        "path off",
    )
    verify_schema: bool = setting(
        True,
        _boolean,
        "check every registered table at startup and refuse to start on a mismatch",
    )
    auto_migrate: bool = setting(
        False,
        _boolean,
        "create missing tables at startup; a configuration error unless `DEBUG` is true",
    )
    retry: RetrySettings = setting(
        {},
        _retry,
        '`MAX_ATTEMPTS` (5), `BASE_DELAY` (`"50ms"`), `MAX_DELAY` (`"2s"`): see "Retries"',
    )
    local_state_file: str = setting(
        "",
        _path,
        'with `ENDPOINT = "embedded"`: the file (str or `Path`; relative: to the project folder) '
        "where the project's shared server keeps its tables; empty: `.dynamo-local.pickle` in the "
        'project folder. See "Local development"',
    )
    dax_endpoints: tuple[str, ...] = setting(
        [],
        _dax_endpoints,
        'DAX cluster discovery endpoints (`"daxs://..."` / `"dax://..."`); set: eventually '
        'consistent model reads go through DAX (the `[dax]` extra); empty: no DAX. See "DAX"',
    )
    return_consumed_capacity: str | None = setting(
        "off",
        _capacity,
        '`"total"`: ask DynamoDB for the capacity units of every request that can report them '
        '(`ReturnConsumedCapacity`, no extra request); `"indexes"`: per table and index too. See '
        '"Request log and capacity"',
    )
    log_values: bool = setting(
        False,
        _boolean,
        "show item values (keys, items, expression values) in the `dynamo_app.requests` log and "
        "the debug-toolbar panel; off: each value is shown as its type and `********`",
    )
    region_source: str = "REGION"  # not a key: where ``region`` came from

    @property
    def embedded(self) -> bool:
        return self.endpoint == EMBEDDED

    @property
    def local(self) -> bool:
        """The embedded server, or a URL on this machine (``dynamo_local``, a
        container): it needs no real region nor credentials."""
        return is_local(self.endpoint)

    @property
    def credentials_source(self) -> str:
        if self.access_key_id:
            return "DYNAMO settings (ACCESS_KEY_ID/SECRET_ACCESS_KEY)"
        if self.embedded:
            return "the embedded server (dummy credentials)"
        if self.local:
            return "boto3 credential chain, else dummy ones (a server on this machine)"
        return "boto3 credential chain (environment, profile, instance role)"

    def resolver(self) -> TableResolver:
        """The declared -> deployed name rule of this section (no client needed)."""
        return TableResolver(self.table_prefix, self.table_names, self.table_resolver)

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
            names = len(self.table_names)
            explicit = ngettext("%(n)d explicit name", "%(n)d explicit names", names)
            naming = f"prefix={self.table_prefix!r}, {explicit % {'n': names}}"
        count = len(self.dax_endpoints)
        endpoints = ngettext("%(n)d endpoint", "%(n)d endpoints", count) % {"n": count}
        dax = f", dax={endpoints}" if count else ""
        return (
            f"dynamo_app: region={self.region} (from {self.region_source}), endpoint={endpoint}, "
            f"{naming}, credentials from {self.credentials_source}"
            f"{', session token set' if self.session_token else ''}, "
            f"timeout={self.timeout:g}s, pool={self.max_idle_conns}, "
            f"verify_schema={self.verify_schema}, auto_migrate={self.auto_migrate}"
            f"{dax}"
        )


DEFAULTS: dict[str, Any] = defaults(DynamoSettings)
RETRY_DEFAULTS: dict[str, Any] = defaults(RetrySettings)
SECRET_KEYS = tuple(k for k, f in keys(DynamoSettings).items() if f.metadata["parse"] is _secret)


# --- the rules between keys ----------------------------------------------------------------


def _key_pair(values: dict[str, Any], debug: bool) -> None:
    key_id, secret = values["access_key_id"], values["secret_access_key"]
    if bool(key_id) != bool(secret):
        given, missing = (
            ("ACCESS_KEY_ID", "SECRET_ACCESS_KEY")
            if key_id
            else ("SECRET_ACCESS_KEY", "ACCESS_KEY_ID")
        )
        raise ImproperlyConfigured(
            f"DYNAMO[{given!r}] is set but DYNAMO[{missing!r}] is empty: set both, or neither "
            "to use boto3's credential chain (environment, profile, instance role)."
        )
    if values["session_token"] and not key_id:
        raise ImproperlyConfigured(
            "DYNAMO['SESSION_TOKEN'] is set without ACCESS_KEY_ID/SECRET_ACCESS_KEY: a session "
            "token only works together with the temporary key pair it was issued with."
        )


def _fast_client(values: dict[str, Any], debug: bool) -> None:
    """LEAN_SIGNING, FAST_CLIENT's earlier name: either set to False turns the fast path off."""
    values["fast_client"] = values["fast_client"] and values["lean_signing"]


def _auto_migrate_needs_debug(values: dict[str, Any], debug: bool) -> None:
    if values["auto_migrate"] and not debug:
        raise ImproperlyConfigured(
            "DYNAMO['AUTO_MIGRATE'] is True but DEBUG is False: auto-migration is for "
            "development only. Run `python manage.py dynamo_migrate` in your deploy instead."
        )


def is_local(endpoint: str) -> bool:
    """Whether ``endpoint`` is the embedded server or a URL of this machine
    (127.0.0.0/8, ::1, localhost)."""
    if endpoint == EMBEDDED:
        return True
    host = urlsplit(endpoint).hostname
    if host == "localhost":
        return True
    if not host:
        return False
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _region(values: dict[str, Any], debug: bool) -> None:
    """An enabled section needs a region: REGION, else the environment's, else
    (a local server only) a default."""
    if not values["enabled"] or values["region"]:
        return
    for env in ("AWS_REGION", "AWS_DEFAULT_REGION"):
        if os.environ.get(env):
            values.update(region=os.environ[env], region_source=env)
            return
    if is_local(values["endpoint"]):
        values.update(region="us-east-1", region_source="the local-server default")
        return
    raise ImproperlyConfigured(
        "DYNAMO['REGION'] is empty and neither AWS_REGION nor AWS_DEFAULT_REGION is set: "
        "set DYNAMO['REGION'] (e.g. \"eu-west-1\") or export AWS_REGION."
    )


RULES: tuple[Callable[[dict[str, Any], bool], None], ...] = (
    _key_pair,
    _fast_client,
    _auto_migrate_needs_debug,
    _region,
)


def _reject_unknown(raw: dict[str, Any], known: dict[str, Any], where: str) -> None:
    for key in raw:
        if key not in known:
            close = difflib.get_close_matches(str(key), list(known), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            raise ImproperlyConfigured(
                f"Unknown key {key!r} in {where}.{hint} Valid keys: {', '.join(known)}."
            )


def _parse_keys(
    section: type, raw: dict[str, Any], *, where: str, named: str = ""
) -> dict[str, Any]:
    """Every key of ``section`` parsed by its own parser: ``raw``'s value or the default."""
    table = keys(section)
    _reject_unknown(raw, table, where)
    return {
        f.name: f.metadata["parse"](named + key, raw.get(key, f.metadata["default"]))
        for key, f in table.items()
    }


def parse(raw: Any, *, debug: bool = False) -> DynamoSettings:
    """Validate a DYNAMO section and return the immutable settings object."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise ImproperlyConfigured(
            f"settings.DYNAMO must be a dict of upper-case keys, got {type(raw).__name__}."
        )
    values = _parse_keys(DynamoSettings, raw, where="settings.DYNAMO")
    for rule in RULES:
        rule(values, debug)
    return DynamoSettings(**values)


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


def changes_section(setting: str | None) -> bool:
    """Whether a change of ``setting`` (None: unknown) can change the parsed section."""
    return setting in (None, SECTION, "DEBUG")


def reload(**kwargs: Any) -> None:
    """Forget the parsed section; what was built from it listens for itself."""
    global _parsed
    if changes_section(kwargs.get("setting")):
        _parsed = None


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
