"""Progress of a long walk over items (dump, load, backfill): count, rate, ETA.

On a terminal one line is redrawn in place, a few times a second; anywhere
else (a log file, a CI job, a Kubernetes pod) a plain line is written every
``interval`` seconds, so the output stays readable and small. ``total`` is an
estimate (DynamoDB's ``ItemCount`` is refreshed about every six hours), so the
ETA is shown only while the count is below it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

TERMINAL_REDRAW = 0.2  # seconds between redraws on a terminal
PLAIN_INTERVAL = 10.0  # seconds between plain lines


class Progress:
    def __init__(
        self,
        stream: TextIO,
        label: str,
        *,
        total: int | None = None,
        interval: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.stream = stream
        self.label = label
        self.total = total
        self.done = 0
        self.terminal = _is_terminal(stream)
        self.interval = (
            interval
            if interval is not None
            else (TERMINAL_REDRAW if self.terminal else PLAIN_INTERVAL)
        )
        self._clock = clock
        self._start = self._last = clock()
        self._lock = threading.Lock()

    def add(self, count: int = 1) -> None:
        """Count ``count`` more items (from any thread); redraw when due."""
        with self._lock:
            self.done += count
            now = self._clock()
            if now - self._last >= self.interval:
                self._last = now
                self._write(self.line(now))

    @property
    def elapsed(self) -> float:
        return self._clock() - self._start

    def line(self, now: float | None = None) -> str:
        """``label: 1,200 of ~5,000 items, 400 items/s, ETA 0:00:09``."""
        seconds = max((now if now is not None else self._clock()) - self._start, 1e-9)
        rate = self.done / seconds
        text = f"{self.label}: {self.done:,}"
        if self.total:
            text += f" of ~{self.total:,}"
        text += f" items, {rate:,.0f} items/s"
        if self.total and rate > 0 and self.done < self.total:
            text += f", ETA {_clock_time((self.total - self.done) / rate)}"
        return text

    def close(self) -> None:
        """The last count (on a terminal, the redrawn line ended with a newline)."""
        self._write(self.line())
        if self.terminal:
            self.stream.write("\n")
            self.stream.flush()

    def _write(self, text: str) -> None:
        if self.terminal:
            self.stream.write(f"\r\x1b[K{text}")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()


def _is_terminal(stream: TextIO) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _clock_time(seconds: float) -> str:
    whole = int(seconds + 0.5)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"
