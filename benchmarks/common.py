"""What every benchmark shares: the server process, Django settings, timing, output."""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

TABLE_PREFIX = "bench-"


@dataclass(frozen=True)
class Context:
    quick: bool
    repeat: int
    url: str


@dataclass
class Section:
    """One benchmark's results: a table and the sentences under it."""

    title: str
    header: list[str]
    rows: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def markdown(self) -> str:
        lines = [f"### {self.title}", ""]
        if self.header:
            lines.append("| " + " | ".join(self.header) + " |")
            lines.append("|" + "---|" * len(self.header))
            lines += ["| " + " | ".join(row) + " |" for row in self.rows]
        if self.notes:
            lines.append("")
            lines += [f"- {note}" for note in self.notes]
        return "\n".join(lines) + "\n"


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x"


def compare(
    functions: dict[str, Callable[[], Any]],
    *,
    repeat: int,
    clock: Callable[[], float] = time.process_time,
) -> dict[str, float]:
    """Median time of each function, the runs interleaved so that a load change
    on a shared machine hits every contender alike. CPU time by default."""
    times: dict[str, list[float]] = {name: [] for name in functions}
    for function in functions.values():
        function()  # warm up: caches, first-use imports, connections
    for _ in range(repeat):
        for name, function in functions.items():
            start = clock()
            function()
            times[name].append(clock() - start)
    return {name: statistics.median(values) for name, values in times.items()}


@contextlib.contextmanager
def local_server() -> Iterator[str]:
    """The local server (moto behind its lock) in a child process; yields its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "benchmarks.server"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        if not url.startswith("http://127.0.0.1:"):
            raise RuntimeError(f"the local server did not start (it said {url!r})")
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)


BASE_SETTINGS: dict[str, Any] = {
    "SECRET_KEY": "benchmarks-only-not-secret",
    "USE_TZ": True,
    "INSTALLED_APPS": [
        "django.contrib.contenttypes",
        "django.contrib.auth",
        "django.contrib.sessions",
        "dynamo_app",
    ],
    "DATABASES": {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}},
    "DEFAULT_AUTO_FIELD": "django.db.models.AutoField",
    "ALLOWED_HOSTS": ["testserver"],
}


@contextlib.contextmanager
def django_pointed_at(url: str) -> Iterator[None]:
    """Django configured (unless it already is, as under pytest) and the DYNAMO
    section pointed at the local server, exactly as the test plugin does it."""
    import django
    from django.conf import settings
    from django.test.utils import override_settings

    from dynamo_app.testing import settings_for_tests  # also skips the startup schema check

    if not settings.configured:
        settings.configure(**BASE_SETTINGS)
        django.setup()
    from dynamo_app import handle

    dynamo = settings_for_tests({"TABLE_PREFIX": TABLE_PREFIX}, url)
    # Measure the production client: a test run's store (the smoke test runs these
    # under one) turns botocore's redundant request validation on as a guard; a
    # deployed app runs without it.
    validating, handle.validate_parameters = handle.validate_parameters, False
    try:
        with override_settings(DYNAMO=dynamo):
            yield
    finally:
        handle.validate_parameters = validating
