"""What every benchmark shares: the server process, Django settings, timing, output."""

from __future__ import annotations

import contextlib
import gc
import os
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


def load_average() -> str:
    """The 1-minute load average: how busy the shared machine was."""
    return f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x"


SPREAD = "the interquartile range of the rounds' ratios, min-max under four rounds"


@dataclass(frozen=True)
class Timings:
    """One interleaved run: each candidate's chunk times, round by round (seconds)."""

    times: dict[str, list[float]]

    def median(self, name: str) -> float:
        return statistics.median(self.times[name])

    def ratios(self, name: str, reference: str) -> list[float]:
        """``name``'s time over ``reference``'s in each round: time-adjacent pairs,
        so a change of load on a shared machine cancels out of each ratio."""
        return [a / b for a, b in zip(self.times[name], self.times[reference], strict=True)]

    def ratio(self, name: str, reference: str) -> str:
        """The median ratio and, in brackets, its spread (``SPREAD``)."""
        ratios = self.ratios(name, reference)
        if len(ratios) >= 4:
            low, _, high = statistics.quantiles(ratios, n=4)
        else:
            low, high = min(ratios), max(ratios)
        return f"{statistics.median(ratios):.2f}x ({low:.2f}-{high:.2f})"


def measure(
    chunks: dict[str, Callable[[], Any]],
    *,
    rounds: int,
    clock: Callable[[], float] = time.process_time,
) -> Timings:
    """Time each candidate's chunk of work ``rounds`` times, interleaved chunk by chunk.

    Honest on a loaded, garbage-collected interpreter: every chunk starts on a
    freshly collected heap and runs with the collector off, so no candidate pays
    for another's garbage (collected between chunks, untimed); the order rotates
    each round, so no candidate always runs first or after the same neighbour;
    and a round's chunks run back to back, so ``Timings.ratios`` compares
    time-adjacent work. What a chunk returns is freed outside the timing. CPU
    time of this process by default."""
    for chunk in chunks.values():
        chunk()  # warm up: caches, first-use imports, connections
    names = list(chunks)
    times: dict[str, list[float]] = {name: [] for name in names}
    for round_ in range(rounds):
        shift = round_ % len(names)
        for name in names[shift:] + names[:shift]:
            chunk = chunks[name]
            gc.collect()
            gc.disable()
            try:
                start = clock()
                result = chunk()
                elapsed = clock() - start
            finally:
                gc.enable()
            del result
            times[name].append(elapsed)
    return Timings(times)


def compare(
    functions: dict[str, Callable[[], Any]],
    *,
    repeat: int,
    clock: Callable[[], float] = time.process_time,
) -> dict[str, float]:
    """Median time of each function over ``repeat`` interleaved rounds (``measure``)."""
    timings = measure(functions, rounds=repeat, clock=clock)
    return {name: timings.median(name) for name in functions}


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
    from dynamo_app.client import handle

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
