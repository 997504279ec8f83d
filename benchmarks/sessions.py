"""3. Sessions: requests per second through Django's test client.

One view reads and writes the session; the same requests run with
``dynamo_app.sessions``, Django's ``db`` engine (SQLite in memory) and its
``cache`` engine (locmem). This module is also the URLconf of that view.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from django.db import connection
from django.http import HttpRequest, HttpResponse
from django.test import Client
from django.test.utils import override_settings
from django.urls import path

from dynamo_app.testing import count_requests

from .common import Context, Section, compare, ratio

ENGINES = {
    "dynamo_app.sessions": "dynamo_app.sessions",
    "db (SQLite)": "django.contrib.sessions.backends.db",
    "cache (locmem)": "django.contrib.sessions.backends.cache",
}


def counter_view(request: HttpRequest) -> HttpResponse:
    request.session["hits"] = request.session.get("hits", 0) + 1
    return HttpResponse(str(request.session["hits"]))


urlpatterns = [path("", counter_view)]

SETTINGS = {
    "ROOT_URLCONF": __name__,
    "MIDDLEWARE": ["django.contrib.sessions.middleware.SessionMiddleware"],
    "CACHES": {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}},
}


def _session_table() -> None:
    if "django_session" not in connection.introspection.table_names():
        from django.core.management import call_command

        call_command("migrate", "sessions", verbosity=0)


def _browsing(engine: str, requests: int) -> Callable[[], None]:
    """``requests`` page views of one visitor whose session already exists."""
    with override_settings(SESSION_ENGINE=engine):
        client = Client()
        client.get("/")

    def run() -> None:
        with override_settings(SESSION_ENGINE=engine):
            for _ in range(requests):
                client.get("/")

    return run


def run(ctx: Context) -> Section:
    requests = 20 if ctx.quick else 200
    with override_settings(**SETTINGS):
        _session_table()
        runs = {name: _browsing(engine, requests) for name, engine in ENGINES.items()}
        seconds = compare(runs, repeat=ctx.repeat, clock=time.perf_counter)
        with override_settings(SESSION_ENGINE=ENGINES["dynamo_app.sessions"]):
            client = Client()
            client.get("/")
            with count_requests() as first:
                client.get("/")
            with count_requests() as later:
                client.get("/")
    calls = ", ".join(f"{n} {op}" for op, n in later.items())
    section = Section(
        "3. Sessions: a view that reads and writes the session, through Django's test client",
        ["engine", "requests/s", "dynamo_app.sessions / this", "DynamoDB calls per request"],
    )
    base = seconds["dynamo_app.sessions"]
    for name in ENGINES:
        section.rows.append(
            [
                name,
                f"{requests / seconds[name]:.0f}",
                ratio(requests / base, requests / seconds[name]),
                calls if name == "dynamo_app.sessions" else "-",
            ]
        )
    section.notes.append(
        f"A returning visitor: {first.total} then {later.total} DynamoDB requests per page "
        "view (a strongly consistent GetItem to load, a conditional PutItem to save). Wall "
        f"time, local server in its own process, median of {ctx.repeat} runs of {requests} "
        "requests."
    )
    return section
