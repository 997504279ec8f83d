"""The app's own tables: one rule says which a project needs, and only a declaration
that succeeds registers one."""

from contextlib import contextmanager
from unittest import mock

import pytest
from django.test import override_settings

from dynamo_app import app_tables, models
from dynamo_app.app_tables import CHECKPOINTS, COUNTERS, IDEMPOTENCY, LOCKS, SESSIONS
from dynamo_app.exceptions import ModelDefinitionError
from dynamo_app.tables import TableDefinition, registry
from tests.test_models_declared import Sensor
from tests.test_unique import Player


@contextmanager
def withdrawn(*definitions):
    """The registry without ``definitions`` inside the block, as it was after it."""
    present = [d for d in definitions if d.declared_name in registry]
    for definition in present:
        registry.unregister(definition.declared_name)
    try:
        yield
    finally:
        for definition in definitions:
            registry.unregister(definition.declared_name)
        for definition in present:
            registry.register(definition)


@mock.patch.object(app_tables, "counters_declared", set())
def test_the_session_table_is_needed_with_the_session_engine_only():
    with override_settings(SESSION_ENGINE="dynamo_app.sessions"):
        assert app_tables.needed() == (SESSIONS,)
    with override_settings(SESSION_ENGINE="django.contrib.sessions.backends.db"):
        assert app_tables.needed() == ()


def test_the_counters_table_is_needed_once_a_sharded_counter_is_declared():
    with mock.patch.object(app_tables, "counters_declared", set()):
        assert COUNTERS not in app_tables.needed()
        models.ShardedCounter("app_tables_views")
        assert app_tables.needed()[-1] is COUNTERS


def test_a_model_needs_the_idempotency_records_and_with_meta_unique_the_locks():
    assert not Sensor._meta.unique and Player._meta.unique
    assert app_tables.needed(Sensor._meta) == (IDEMPOTENCY, CHECKPOINTS)
    assert app_tables.needed(Player._meta) == (IDEMPOTENCY, CHECKPOINTS, LOCKS)
    with withdrawn(LOCKS, IDEMPOTENCY):
        app_tables.register(Player._meta)
        assert LOCKS.declared_name in registry and IDEMPOTENCY.declared_name in registry


def test_a_model_declared_wrongly_registers_no_app_table():
    with withdrawn(LOCKS, IDEMPOTENCY):
        with pytest.raises(ModelDefinitionError, match="nope"):

            class Bad(models.Model):
                id = models.StringField(partition_key=True)

                class Meta:
                    table_name = "app_tables_bad"
                    unique = [models.Unique("nope")]

        assert LOCKS.declared_name not in registry
        assert IDEMPOTENCY.declared_name not in registry


@pytest.mark.usefixtures("declared")
def test_a_concrete_model_registers_what_it_needs_when_declared():
    with withdrawn(LOCKS, IDEMPOTENCY):

        class Plain(models.Model):  # no Meta.unique: dynamo_check_unique never visits it
            id = models.StringField(partition_key=True)

            class Meta:
                table_name = "app_tables_plain"

        assert IDEMPOTENCY.declared_name in registry and LOCKS.declared_name not in registry


@pytest.mark.usefixtures("declared")
def test_every_app_table_is_declared_when_its_feature_is_usable_without_an_import():
    """dynamo_backfill runs on any model, so its checkpoint table is declared with the
    first model (an IaC-only account gets it from dynamo_plan before the first backfill);
    and no table of app_tables is left out of needed()."""
    streamed = type("Meta", (), {"unique": True, "stream": "new_image", "sequences": [1]})
    every_feature = override_settings(
        SESSION_ENGINE="dynamo_app.sessions",
        CACHES={"default": {"BACKEND": app_tables.CACHE_BACKEND}},
    )
    with every_feature, mock.patch.object(app_tables, "counters_declared", {"page_views"}):
        ruled = {*app_tables.needed(), *app_tables.needed(streamed)}  # type: ignore[arg-type]
    defined = {v for v in vars(app_tables).values() if isinstance(v, TableDefinition)}
    assert ruled == defined
    with withdrawn(CHECKPOINTS):

        class Filled(models.Model):
            id = models.StringField(partition_key=True)

            class Meta:
                table_name = "app_tables_filled"

        assert CHECKPOINTS.declared_name in registry
