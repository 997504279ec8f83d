"""Table definitions, DynamoDB's naming rules, and declared -> deployed names.

A ``TableDefinition`` is the desired shape of one table. Models build theirs
from ``_meta``; the app's own tables (sessions, unique locks, idempotency
records) build theirs by hand. All of them go into one ``registry`` that the
schema workflow plans, creates and verifies.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from django.core.exceptions import ImproperlyConfigured

from .exceptions import ModelDefinitionError

KeyType = Literal["S", "N", "B"]
KEY_TYPES: tuple[str, ...] = ("S", "N", "B")

_TABLE_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{3,255}$")
_INDEX_NAME_RE = re.compile(r"^[A-Za-z0-9_.\-]{3,255}$")


def table_name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid DynamoDB table name, or None if it is."""
    if not isinstance(name, str):
        return f"must be a string, not {type(name).__name__}"
    if not _TABLE_NAME_RE.match(name):
        return "must be 3-255 characters of A-Z, a-z, 0-9, '_', '-' and '.'"
    return None


def index_name_problem(name: object) -> str | None:
    """Why ``name`` is not a valid DynamoDB index name, or None if it is."""
    if not isinstance(name, str) or not _INDEX_NAME_RE.match(name):
        return "must be 3-255 characters of A-Z, a-z, 0-9, '_', '-' and '.'"
    return None


def snake_case(class_name: str) -> str:
    """``PlayerStats`` -> ``player_stats``; ``HTTPLog`` -> ``http_log``."""
    s = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", class_name)
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", s).lower()


@dataclass(frozen=True)
class KeyAttribute:
    name: str
    type: KeyType

    def __str__(self) -> str:
        return f"{self.name} ({self.type})"


@dataclass(frozen=True)
class IndexDefinition:
    """A secondary index. ``kind`` is "global" or "local"; a local index
    shares the table's partition key, so its ``partition_key`` is the table's."""

    name: str
    kind: Literal["global", "local"]
    partition_key: KeyAttribute
    sort_key: KeyAttribute | None = None
    projection: str | tuple[str, ...] = "ALL"  # "ALL", "KEYS_ONLY" or attribute names

    def key_schema(self) -> list[dict[str, str]]:
        return _key_schema(self.partition_key, self.sort_key)

    def projection_spec(self) -> dict[str, object]:
        if isinstance(self.projection, tuple):
            return {"ProjectionType": "INCLUDE", "NonKeyAttributes": list(self.projection)}
        return {"ProjectionType": self.projection}

    def request(self) -> dict[str, object]:
        """The index as CreateTable and UpdateTable (``Create``) take it."""
        return {
            "IndexName": self.name,
            "KeySchema": self.key_schema(),
            "Projection": self.projection_spec(),
        }

    def shape(self) -> str:
        keys = ", ".join(str(k) for k in (self.partition_key, self.sort_key) if k)
        return f"{self.kind} index {self.name}: {keys}"


@dataclass(frozen=True)
class TableDefinition:
    """The desired shape of one table, as declared in code."""

    declared_name: str
    partition_key: KeyAttribute
    sort_key: KeyAttribute | None = None
    indexes: tuple[IndexDefinition, ...] = ()
    ttl_attribute: str | None = None
    stream: str | None = None  # the StreamViewType ("NEW_AND_OLD_IMAGES", ...), None: no stream
    billing_mode: str = "PAY_PER_REQUEST"
    owner: str = ""  # who declared it, for messages: "demo.Player", "dynamo_app sessions"
    # The models in a shared table (models.Table), by label; () for a model's own table.
    shared_by: tuple[str, ...] = field(default=(), compare=False)
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    def key_schema(self) -> list[dict[str, str]]:
        return _key_schema(self.partition_key, self.sort_key)

    def key_names(self) -> tuple[str, ...]:
        return tuple(k.name for k in (self.partition_key, self.sort_key) if k)

    def shape(self) -> str:
        """A human description of the key, used in mismatch messages."""
        keys = [f"partition key {self.partition_key}"]
        if self.sort_key:
            keys.append(f"sort key {self.sort_key}")
        else:
            keys.append("no sort key")
        shared = f"; shared by {', '.join(self.shared_by)}" if self.shared_by else ""
        return ", ".join(keys) + shared

    def attribute_definitions(self) -> list[dict[str, str]]:
        seen: dict[str, str] = {}
        keys = [self.partition_key, self.sort_key]
        for index in self.indexes:
            keys += [index.partition_key, index.sort_key]
        for key in keys:
            if key is not None:
                seen.setdefault(key.name, key.type)
        return [{"AttributeName": n, "AttributeType": t} for n, t in seen.items()]

    def create_request(self, deployed_name: str) -> dict[str, Any]:
        """The CreateTable parameters for this definition under ``deployed_name``."""
        request: dict[str, Any] = {
            "TableName": deployed_name,
            "KeySchema": self.key_schema(),
            "AttributeDefinitions": self.attribute_definitions(),
            "BillingMode": self.billing_mode,
        }
        for kind, entry in INDEX_ENTRIES:
            specs = [i.request() for i in self.indexes if i.kind == kind]
            if specs:
                request[entry] = specs
        if self.stream:
            request["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": self.stream}
        return request


# Where each kind of index stands in CreateTable requests and DescribeTable answers.
INDEX_ENTRIES: tuple[tuple[Literal["global", "local"], str], ...] = (
    ("global", "GlobalSecondaryIndexes"),
    ("local", "LocalSecondaryIndexes"),
)


def _key_schema(partition: KeyAttribute, sort: KeyAttribute | None) -> list[dict[str, str]]:
    schema = [{"AttributeName": partition.name, "KeyType": "HASH"}]
    if sort is not None:
        schema.append({"AttributeName": sort.name, "KeyType": "RANGE"})
    return schema


class Registry:
    """Every table the project declares, by declared name.

    Re-registering the same owner (a module reloaded by the autoreloader, a
    model redefined in a test) replaces the entry; two different owners
    declaring one table name is an error naming both.
    """

    def __init__(self) -> None:
        self._tables: dict[str, TableDefinition] = {}
        self._lock = threading.Lock()

    def register(self, definition: TableDefinition) -> None:
        problem = table_name_problem(definition.declared_name)
        if problem:
            raise ModelDefinitionError(
                f"{definition.owner or 'A table'} declares table name "
                f"{definition.declared_name!r}, which {problem}."
            )
        with self._lock:
            existing = self._tables.get(definition.declared_name)
            if existing is not None and existing.owner != definition.owner:
                raise ModelDefinitionError(
                    f"Table {definition.declared_name!r} is declared by both "
                    f"{existing.owner} and {definition.owner}; give one of them "
                    "another Meta.table_name."
                )
            self._tables[definition.declared_name] = definition

    def unregister(self, declared_name: str) -> None:
        with self._lock:
            self._tables.pop(declared_name, None)

    def get(self, declared_name: str) -> TableDefinition | None:
        return self._tables.get(declared_name)

    def __contains__(self, declared_name: object) -> bool:
        return declared_name in self._tables

    def definitions(self) -> list[TableDefinition]:
        with self._lock:
            return sorted(self._tables.values(), key=lambda d: d.declared_name)


registry = Registry()


class TableResolver:
    """Maps declared table names to deployed ones, one rule for every caller.

    An explicit ``names`` entry wins, then ``prefix`` + declared name. A
    ``custom`` callable (TABLE_RESOLVER) replaces both. Every result is checked
    against DynamoDB's naming rules, so a bad prefix fails loudly, not at AWS.
    """

    def __init__(
        self,
        prefix: str = "",
        names: dict[str, str] | None = None,
        custom: Callable[[str], str] | None = None,
    ) -> None:
        self.prefix = prefix
        self.names = dict(names or {})
        self.custom = custom

    def __call__(self, declared_name: str) -> str:
        if self.custom is not None:
            deployed = self.custom(declared_name)
            source = "TABLE_RESOLVER"
        elif declared_name in self.names:
            deployed = self.names[declared_name]
            source = "TABLE_NAMES"
        else:
            deployed = self.prefix + declared_name
            source = "TABLE_PREFIX" if self.prefix else "the declared name"
        problem = table_name_problem(deployed)
        if problem:
            raise ImproperlyConfigured(
                f"DYNAMO: the deployed name for table {declared_name!r} "
                f"(from {source}) is {deployed!r}, which {problem}."
            )
        return deployed

    def check(self, declared_names: Iterable[str]) -> None:
        """Resolve every declared name now (startup), and reject TABLE_NAMES
        entries that name no declared table: a typo there is never a no-op."""
        declared = set(declared_names)
        unknown = sorted(set(self.names) - declared)
        if unknown:
            raise ImproperlyConfigured(
                f"DYNAMO['TABLE_NAMES'] maps {', '.join(map(repr, unknown))}, but no model "
                f"or app table declares that name. Declared tables: "
                f"{', '.join(sorted(declared)) or '(none)'}."
            )
        for name in sorted(declared):
            self(name)
