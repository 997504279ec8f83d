"""Shared by tests/test_demo_*.py: the demo project's URLs, templates and
middleware over the suite's settings, and small helpers. Its tables (``Roster``,
the counters table of ``PAGE_VIEWS``) are registered as in the demo project:
the suite installs ``project.roster``."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client, override_settings

from project import settings as demo
from project.roster.models import Player
from tests.sessions_support import ENGINE, session_tables

DEMO_SETTINGS = {
    "ROOT_URLCONF": demo.ROOT_URLCONF,
    "TEMPLATES": demo.TEMPLATES,
    "MIDDLEWARE": demo.MIDDLEWARE,
    "SESSION_ENGINE": ENGINE,
    "LOGIN_URL": demo.LOGIN_URL,
    "LOGIN_REDIRECT_URL": demo.LOGIN_REDIRECT_URL,
    "LOGOUT_REDIRECT_URL": demo.LOGOUT_REDIRECT_URL,
    "PASSWORD_HASHERS": ["django.contrib.auth.hashers.MD5PasswordHasher"],  # tests only
}


@contextlib.contextmanager
def demo_site(request: pytest.FixtureRequest) -> Iterator[Any]:
    """The demo project on fresh tables (and the sqlite database, for auth)."""
    request.getfixturevalue("db")
    with session_tables(request) as handle, override_settings(**DEMO_SETTINGS):
        yield handle


def seed(client: Client) -> None:
    """Create the sample teams the way a visitor does: the button on the teams page."""
    assert client.post("/teams/sample/").status_code == 302


def form(client: Client, url: str, **values: Any) -> dict[str, Any]:
    """The form as the page shows it (hidden fields included), with ``values`` typed in."""
    shown = client.get(url).context["form"]
    data = {name: shown[name].value() for name in shown.fields}
    return {k: v for k, v in {**data, **values}.items() if v is not None}


def text(response: Any) -> str:
    """The page as text, tags stripped and whitespace collapsed, for readable asserts."""
    return " ".join(re.sub(r"<[^>]+>", " ", response.content.decode()).split())


def roster(team_id: str) -> list[tuple[int, str]]:
    """The stored roster as (uniform number, name), by number; duplicates would show."""
    return sorted((p.uniform_number, p.player_name) for p in Player.objects.filter(team_id=team_id))
