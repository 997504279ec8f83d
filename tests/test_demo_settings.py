"""The demo project's settings as environment variables shape them (development
defaults, docs/howto/production.md)."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured

SETTINGS = Path(__file__).resolve().parent.parent / "project" / "settings.py"


def load(monkeypatch: pytest.MonkeyPatch, **environ: str) -> dict[str, Any]:
    """Run project/settings.py in a fresh namespace under ``environ``."""
    for name in ("DJANGO_DEBUG", "DJANGO_SECRET_KEY", "DYNAMO_AUTO_MIGRATE", "DYNAMO_REGION"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS))


def test_development_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load(monkeypatch)
    dynamo = settings["DYNAMO"]
    assert settings["DEBUG"] is True and settings["SESSION_ENGINE"] == "dynamo_app.sessions"
    assert dynamo["ENDPOINT"] == "embedded" and dynamo["AUTO_MIGRATE"] is True
    assert dynamo["VERIFY_SCHEMA"] is True and dynamo["TABLE_PREFIX"] == "demo-"


def test_production_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load(
        monkeypatch,
        DJANGO_DEBUG="false",
        DJANGO_SECRET_KEY="x" * 50,
        DYNAMO_REGION="eu-west-1",
        DYNAMO_ENDPOINT="",
        DYNAMO_TABLE_PREFIX="roster-prod-",
        DYNAMO_ACCESS_KEY_ID="${ROSTER_KEY_ID}",
        DYNAMO_SECRET_ACCESS_KEY="${ROSTER_SECRET}",
    )
    dynamo = settings["DYNAMO"]
    assert dynamo["REGION"] == "eu-west-1" and dynamo["ENDPOINT"] == ""
    assert dynamo["AUTO_MIGRATE"] is False and dynamo["VERIFY_SCHEMA"] is True
    # Passed on as written, for dynamo_app to expand and mask.
    assert dynamo["ACCESS_KEY_ID"] == "${ROSTER_KEY_ID}"
    assert dynamo["SECRET_ACCESS_KEY"] == "${ROSTER_SECRET}"


def test_production_needs_a_secret_key(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ImproperlyConfigured, match="DJANGO_SECRET_KEY"):
        load(monkeypatch, DJANGO_DEBUG="false")
