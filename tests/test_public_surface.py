"""The public surface: each module the docs present as API says what it exports."""

from __future__ import annotations

import importlib
import inspect

import pytest

# As the docs name them: six of these paths are kept for users, their modules' homes are
# in client/ and data/ (tests/test_layers.py).
PUBLIC_MODULES = [
    "dynamo_app",
    "dynamo_app.admin",
    "dynamo_app.backfill",
    "dynamo_app.cache",
    "dynamo_app.conf",
    "dynamo_app.contrib.debug_toolbar",
    "dynamo_app.contrib.rest_framework",
    "dynamo_app.counters",
    "dynamo_app.dax",
    "dynamo_app.dumpload",
    "dynamo_app.exceptions",
    "dynamo_app.forms",
    "dynamo_app.handle",
    "dynamo_app.middleware",
    "dynamo_app.models",
    "dynamo_app.partiql",
    "dynamo_app.permissions",
    "dynamo_app.requests",
    "dynamo_app.sequences",
    "dynamo_app.serialization",
    "dynamo_app.sessions",
    "dynamo_app.signals",
    "dynamo_app.streams",
    "dynamo_app.test",
    "dynamo_app.testing",
    "dynamo_app.transactions",
]


@pytest.mark.parametrize("name", PUBLIC_MODULES)
def test_public_modules_declare_what_they_export(name):
    module = importlib.import_module(name)
    exported = module.__dict__.get("__all__")
    assert exported, f"{name} has no __all__"
    assert sorted(set(exported)) == sorted(exported), f"{name}.__all__ repeats a name"
    missing = [n for n in exported if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ names what it lacks: {missing}"
    assert not [n for n in exported if n.startswith("_")]


def test_every_error_class_is_exported():
    from dynamo_app import exceptions

    classes = {
        n
        for n, obj in vars(exceptions).items()
        if inspect.isclass(obj) and issubclass(obj, exceptions.DynamoError)
    }
    assert classes == set(exceptions.__all__)


def test_documented_api_names_are_exported():
    from dynamo_app import conf, sessions
    from dynamo_app.client import handle

    assert {"Handle", "get_handle", "using"} <= set(handle.__all__)
    assert "get_settings" in conf.__all__
    assert "SessionStore" in sessions.__all__


@pytest.mark.parametrize("name", ["dynamo_app.test", "dynamo_app.testing"])
def test_no_testing_helper_is_named_like_a_test(name):
    """pytest collects a ``test*`` function or ``Test*`` class that a test module
    imports: a helper named so would run (and fail) as a test in every importer."""
    module = importlib.import_module(name)
    looks_like_a_test = [
        n
        for n in module.__all__
        if (inspect.isfunction(getattr(module, n)) and n.startswith("test"))
        or (inspect.isclass(getattr(module, n)) and n.startswith("Test"))
    ]
    assert not looks_like_a_test
