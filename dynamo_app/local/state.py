"""Keeping the local server's tables across restarts, in a state file.

moto keeps its tables in memory. A ``StateFile`` pickles them after writes (at
most once a second, and when the server stops) and loads them when a server
starts, so a development database survives restarts. The file is written to a
fresh temporary name and renamed, so a crash leaves the previous state, never
half of one; a kill loses at most the last second of writes.

One server writes a state file at a time: it holds an exclusive lock on
``FILE.lock`` (released by the OS when the process dies, however it dies) and
writes its pid and URL there, which is how other processes find it
(``local_shared``). The file starts with a header naming it as dynamo_app's:
a path that is a folder, or a file without that header (``db.sqlite3`` named by
mistake), is refused and never renamed or replaced. A state file that has the
header but cannot be loaded (damaged, or written by another moto version) is
kept under a new unique name (``FILE.damaged-<time>-<random>``) and the server
starts empty.

The body is a pickle of moto's own objects: only ever load a file this
machine's user wrote (it is created readable by that user only).
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import tempfile
import threading
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from ..exceptions import LocalServerError, StateFileError

logger = logging.getLogger("dynamo_app.local")

SAVE_INTERVAL = 1.0  # seconds between saves while writes keep coming
MAGIC = b"dynamo_app local DynamoDB state"
SETTING = "DYNAMO['LOCAL_STATE_FILE'] (or dynamo_local --state)"


def _backends() -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends


def moto_version() -> str | None:
    """The installed moto's version (without importing moto), or None."""
    try:
        return metadata.version("moto")
    except metadata.PackageNotFoundError:
        return None


def sidecar(path: Path, suffix: str) -> Path:
    """A file beside the state file: ``FILE.lock``, ``FILE.log``, ..."""
    return path.with_name(path.name + suffix)


# --- advisory file locks (flock: per open file, released when the process dies) ---


def _fcntl() -> Any:
    try:
        import fcntl
    except ImportError:  # Windows
        raise LocalServerError(
            "The local state file and the shared embedded server need POSIX file locks "
            "(Linux, macOS). On this platform run `python manage.py dynamo_local --port 8001` "
            "in a terminal and set DYNAMO['ENDPOINT'] = 'http://127.0.0.1:8001'."
        ) from None
    return fcntl


def open_lock(path: Path) -> int:
    """An open descriptor on the lock file ``path`` (created if missing)."""
    return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)


def flock(fd: int, *, exclusive: bool = True, timeout: float | None = None) -> bool:
    """Lock ``fd``; wait at most ``timeout`` seconds (None: as long as it takes,
    0: not at all). Returns whether the lock was taken."""
    fcntl = _fcntl()
    mode = fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH
    if timeout is None:
        fcntl.flock(fd, mode)
        return True
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)


def unlock(fd: int) -> None:
    fcntl = _fcntl()
    fcntl.flock(fd, fcntl.LOCK_UN)


def _read_fd(fd: int) -> bytes:
    return os.pread(fd, 65536, 0)


def owner(path: Path) -> dict[str, Any] | None:
    """Who holds the state file ``path``: None when no server does; else what it
    wrote in ``FILE.lock`` (pid, url, state, moto; empty while it starts)."""
    try:
        fd = os.open(sidecar(path, ".lock"), os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        if flock(fd, exclusive=False, timeout=0):
            unlock(fd)
            return None
        try:
            info = json.loads(_read_fd(fd) or b"{}")
        except ValueError:  # being written
            info = {}
        return info if isinstance(info, dict) else {}
    finally:
        os.close(fd)


def check_path(path: Path) -> None:
    """Refuse a path that is a folder, or a file that is not a state file."""
    if path.is_dir():
        raise StateFileError(
            f"{SETTING} names {path}, which is a folder. Name a file instead, e.g. "
            f"{path / '.dynamo-local.pickle'}; the folder was left untouched."
        )
    try:
        with path.open("rb") as file:
            start = file.read(len(MAGIC))
    except FileNotFoundError:
        return
    if start != MAGIC:
        raise StateFileError(
            f"{SETTING} names {path}, which is not a dynamo_app local state file (it does not "
            "start with the state file's header). It was left untouched: name another file, "
            "e.g. '.dynamo-local.pickle' (it is created when missing)."
        )


class StateFile:
    """Saves and restores every DynamoDB table of this process's moto backends.

    ``lock`` is the server's request lock: a snapshot is taken between
    requests, so it is always consistent.
    """

    def __init__(self, path: str | os.PathLike[str], lock: threading.Lock) -> None:
        self.path = Path(path).absolute()
        self.lock = lock
        self.warnings: list[str] = []  # what load() could not restore, for the user
        self.restored = 0
        self._lock_fd: int | None = None
        self._dirty = threading.Event()
        self._stopped = threading.Event()
        self._thread: threading.Thread | None = None

    def open(self) -> int:
        """Become the file's one writer, then restore its tables; returns how
        many were restored. StateFileError when the path is not a state file or
        another server holds it."""
        check_path(self.path)  # before anything is created beside it
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = open_lock(sidecar(self.path, ".lock"))
        if not flock(fd, timeout=0):
            holder = json.loads(_read_fd(fd) or b"{}")
            os.close(fd)
            pid = holder.get("pid", "?")
            raise StateFileError(
                f"{self.path} is in use by another local DynamoDB server (pid {pid}, "
                f"{holder.get('url', 'starting')}): one server at a time writes a state file. "
                "Use that server, or stop it first (`python manage.py dynamo_local --stop`, "
                f"or `kill {pid}`)."
            )
        self._lock_fd = fd
        try:
            self.restored = self.load()
        except BaseException:
            self.close()
            raise
        return self.restored

    def claim(self, url: str) -> None:
        """Say in ``FILE.lock`` which server holds the file, so others find it."""
        assert self._lock_fd is not None
        info = {
            "pid": os.getpid(),
            "url": url,
            "state": str(self.path),
            "moto": moto_version(),
            "restored": self.restored,
            "warnings": self.warnings,
        }
        os.ftruncate(self._lock_fd, 0)
        os.pwrite(self._lock_fd, json.dumps(info).encode(), 0)

    def load(self) -> int:
        """Restore the saved tables; returns how many were restored."""
        try:
            data = self.path.read_bytes()
        except FileNotFoundError:
            return 0
        header, _, body = data.partition(b"\n")
        written_by = header[len(MAGIC) :].decode("ascii", "replace").strip()
        try:
            if written_by != f"moto={moto_version()}":
                raise ValueError(f"written by {written_by}, this is moto={moto_version()}")
            tables = pickle.loads(body)
            if not isinstance(tables, dict):
                raise ValueError(f"holds a {type(tables).__name__}, not tables")
        except Exception as exc:  # keep it for the user, start empty
            aside = self._keep_aside()
            self.warnings.append(
                f"could not load the local DynamoDB state {self.path} ({exc}); kept it as "
                f"{aside} and started empty."
            )
            logger.warning("dynamo_app: %s", self.warnings[-1])
            return 0
        backends = _backends()
        for (account, region), region_tables in tables.items():
            backends[account][region].tables = region_tables
        return sum(len(t) for t in tables.values())

    def _keep_aside(self) -> Path:
        """Move the file to a new unique name (never over an earlier copy)."""
        stamp = time.strftime("%Y%m%d-%H%M%S")
        fd, name = tempfile.mkstemp(
            dir=self.path.parent, prefix=f"{self.path.name}.damaged-{stamp}-"
        )
        os.close(fd)
        os.replace(self.path, name)  # over the empty file just reserved
        return Path(name)

    def snapshot(self) -> bytes:
        tables = {
            (account, region): backend.tables
            for account, regions in _backends().items()
            for region, backend in regions.items()
            if backend.tables
        }
        return MAGIC + f" moto={moto_version()}\n".encode() + pickle.dumps(tables)

    def save(self) -> None:
        """Write the current tables (atomically: a fresh temporary file, then a rename)."""
        with self.lock:
            self._dirty.clear()
            data = self.snapshot()
        check_path(self.path)  # still ours: never replace anything else
        fd, temporary = tempfile.mkstemp(
            dir=self.path.parent, prefix=f"{self.path.name}.", suffix=".tmp"
        )
        try:
            with os.fdopen(fd, "wb") as file:
                file.write(data)
            os.replace(temporary, self.path)
        except BaseException:
            os.unlink(temporary)
            raise

    def changed(self) -> None:
        """Called after every write request; the saver thread does the rest."""
        self._dirty.set()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="dynamo-local-state", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop saving in the background, save what is not saved yet, let go of the file."""
        self._stopped.set()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._dirty.is_set():
            self._save_or_warn()
        self.close()

    def close(self) -> None:
        """Let go of the file (another server may write it now)."""
        if self._lock_fd is not None:
            os.ftruncate(self._lock_fd, 0)
            os.close(self._lock_fd)
            self._lock_fd = None

    def _run(self) -> None:
        while not self._stopped.is_set():
            if self._dirty.wait(timeout=SAVE_INTERVAL) and not self._stopped.is_set():
                self._save_or_warn()
                self._stopped.wait(SAVE_INTERVAL)

    def _save_or_warn(self) -> None:
        try:
            self.save()
        except (OSError, StateFileError) as exc:
            logger.warning("dynamo_app: could not save the local state: %s", exc)
