"""Keeping the local server's tables across restarts, in a state file.

moto keeps its tables in memory. A ``StateFile`` pickles them after writes (at
most once a second, and when the server stops) and loads them when a server
starts, so a development database survives restarting ``runserver``. The file
is written to a temporary name and renamed, so a crash leaves the previous
state, never half of one; a kill loses at most the last second of writes.

The file is a pickle of moto's own objects: only ever load a file this
process's user wrote. A file from another moto version (or damaged) is moved
aside with a warning and the server starts empty.
"""

from __future__ import annotations

import logging
import os
import pickle
import threading
from pathlib import Path
from typing import Any

logger = logging.getLogger("dynamo_app.local")

SAVE_INTERVAL = 1.0  # seconds between saves while writes keep coming


def _backends() -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends


def _moto_version() -> str:
    import moto

    return str(moto.__version__)


class StateFile:
    """Saves and restores every DynamoDB table of this process's moto backends.

    ``lock`` is the server's request lock: a snapshot is taken between
    requests, so it is always consistent.
    """

    def __init__(self, path: str | os.PathLike[str], lock: threading.Lock) -> None:
        self.path = Path(path)
        self.lock = lock
        self._dirty = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def load(self) -> int:
        """Restore the saved tables; returns how many were restored."""
        if not self.path.exists():
            return 0
        try:
            with self.path.open("rb") as file:
                state = pickle.load(file)
            if state.get("moto") != _moto_version():
                raise ValueError(f"written by moto {state.get('moto')}, not {_moto_version()}")
            tables = state["tables"]
        except Exception as exc:  # any unreadable file: keep it for the user, start empty
            aside = self.path.with_name(self.path.name + ".unreadable")
            os.replace(self.path, aside)
            logger.warning(
                "dynamo_app: could not load the local DynamoDB state %s (%s); moved it to %s "
                "and started empty.",
                self.path,
                exc,
                aside,
            )
            return 0
        backends = _backends()
        for (account, region), region_tables in tables.items():
            backends[account][region].tables = region_tables
        return sum(len(t) for t in tables.values())

    def snapshot(self) -> bytes:
        tables = {
            (account, region): backend.tables
            for account, regions in _backends().items()
            for region, backend in regions.items()
            if backend.tables
        }
        return pickle.dumps({"moto": _moto_version(), "tables": tables})

    def save(self) -> None:
        """Write the current tables (atomically: a temporary file, then a rename)."""
        with self.lock:
            self._dirty.clear()
            data = self.snapshot()
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        temporary.write_bytes(data)
        os.replace(temporary, self.path)

    def changed(self) -> None:
        """Called after every write request; the saver thread does the rest."""
        self._dirty.set()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="dynamo-local-state", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop saving in the background, and save what is not saved yet."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._dirty.is_set():
            self.save()

    def _run(self) -> None:
        while not self._stopped.is_set():
            if self._dirty.wait(timeout=SAVE_INTERVAL) and not self._stopped.is_set():
                try:
                    self.save()
                except OSError as exc:
                    logger.warning("dynamo_app: could not save the local state: %s", exc)
                self._stopped.wait(SAVE_INTERVAL)
