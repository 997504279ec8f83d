"""The app's own tables - sessions, the cache, unique locks, idempotency records, stream
and backfill checkpoints, sequences, sharded counters - and the one rule that says
which of them a project needs.

A project is asked to create only the tables it may use, so each is registered
as soon as its feature is usable, never on first use (``dynamo_plan``, its
CloudFormation and Terraform output and the IAM policy are made from the
registry, and an account whose tables come from IaC must have them before the
feature runs): the session table at startup when ``SESSION_ENGINE`` is
``dynamo_app.sessions`` (a project whose engine subclasses ``SessionStore``
calls ``sessions.register_table()``); the cache table at startup when a
``CACHES`` entry's ``BACKEND`` is ``dynamo_app.cache.DynamoCache`` (a subclass's
project calls ``cache.register_table()``); with the first concrete model, the
idempotency records (every model write can carry an ``idempotency_key``) and
the backfill checkpoints (``manage.py dynamo_backfill`` runs on any model); the
lock table with the first model that declares ``Meta.unique``; the stream
checkpoints (``manage.py dynamo_stream``'s place in each shard) with the first
model that declares ``Meta.stream``; the sequences with the first model that
has a ``SequenceField``; the counters with the first ``ShardedCounter`` (declare
it in a module imported at startup, such as ``models.py``). A table added here
is added to ``needed()``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings

from .tables import KeyAttribute, TableDefinition, registry

if TYPE_CHECKING:
    from .models.options import Options

SESSION_ENGINE = "dynamo_app.sessions"
SESSION_KEY = "session_key"
SESSION_EXPIRES = "expires_at"
SESSIONS = TableDefinition(
    declared_name="dynamo_sessions",
    partition_key=KeyAttribute(SESSION_KEY, "S"),
    ttl_attribute=SESSION_EXPIRES,
    owner="dynamo_app sessions",
)

CACHE_BACKEND = "dynamo_app.cache.DynamoCache"
CACHE_NAME = "cache_name"
CACHE_KEY = "cache_key"
CACHE_EXPIRES = "expires_at"
CACHE = TableDefinition(
    declared_name="dynamo_cache",
    partition_key=KeyAttribute(CACHE_NAME, "S"),
    sort_key=KeyAttribute(CACHE_KEY, "S"),
    ttl_attribute=CACHE_EXPIRES,
    owner="dynamo_app cache",
)

LOCK_ID = "lock_id"
LOCKS = TableDefinition(
    declared_name="dynamo_unique",
    partition_key=KeyAttribute(LOCK_ID, "S"),
    owner="dynamo_app unique locks",
)

IDEMPOTENCY_KEY = "idempotency_key"
IDEMPOTENCY_EXPIRES = "expires_at"
IDEMPOTENCY = TableDefinition(
    declared_name="dynamo_idempotency",
    partition_key=KeyAttribute(IDEMPOTENCY_KEY, "S"),
    ttl_attribute=IDEMPOTENCY_EXPIRES,
    owner="dynamo_app idempotency records",
)

CHECKPOINT_ID = "checkpoint_id"
CHECKPOINTS = TableDefinition(
    declared_name="dynamo_backfill",
    partition_key=KeyAttribute(CHECKPOINT_ID, "S"),
    owner="dynamo_app backfill checkpoints",
)

STREAM_ARN = "stream_arn"
STREAM_SHARD = "shard_id"
CHECKPOINT_SEQUENCE = "sequence_number"
STREAM_CHECKPOINTS = TableDefinition(
    declared_name="dynamo_stream_checkpoints",
    partition_key=KeyAttribute(STREAM_ARN, "S"),
    sort_key=KeyAttribute(STREAM_SHARD, "S"),
    owner="dynamo_app stream checkpoints",
)

SEQUENCE_NAME = "sequence"
SEQUENCE_VALUE = "value"
SEQUENCES = TableDefinition(
    declared_name="dynamo_sequences",
    partition_key=KeyAttribute(SEQUENCE_NAME, "S"),
    owner="dynamo_app sequences",
)

COUNTER_ID = "counter_id"
COUNTER_VALUE = "value"
COUNTERS = TableDefinition(
    declared_name="dynamo_counters",
    partition_key=KeyAttribute(COUNTER_ID, "S"),
    owner="dynamo_app sharded counters",
)
counters_declared: set[str] = set()  # the names of the ShardedCounters made so far


def needed(model: Options | None = None) -> tuple[TableDefinition, ...]:
    """The app tables the settings and the counters declared (no ``model``) or a
    concrete model's declaration need."""
    if model is None:
        caches = getattr(settings, "CACHES", {}).values()
        return (
            *((SESSIONS,) if settings.SESSION_ENGINE == SESSION_ENGINE else ()),
            *((CACHE,) if any(c.get("BACKEND") == CACHE_BACKEND for c in caches) else ()),
            *((COUNTERS,) if counters_declared else ()),
        )
    return (
        IDEMPOTENCY,
        CHECKPOINTS,
        *((LOCKS,) if model.unique else ()),
        *((STREAM_CHECKPOINTS,) if model.stream else ()),
        *((SEQUENCES,) if model.sequences else ()),
    )


def register(model: Options | None = None) -> None:
    """Register what ``needed(model)`` names; ``AppConfig.ready()`` calls it
    without a model, the model metaclass with each concrete model's options."""
    for definition in needed(model):
        if definition.declared_name not in registry:
            registry.register(definition)
