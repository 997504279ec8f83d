"""``ENDPOINT = "embedded"``: one local server per project, shared by all its processes.

The first process that needs it (``runserver``, ``shell``, a command, a
worker) starts ``python -m dynamo_app.local.shared FILE`` in the background,
and every other process finds it and uses it, so they all see the same data.
FILE is the project's state file (``DYNAMO["LOCAL_STATE_FILE"]``, by default
``.dynamo-local.pickle`` in the project folder); the server keeps the tables
there, and the files beside it say who does what:

* ``FILE.lock``: held by the one server writing FILE; holds its pid and URL.
  This is how processes find it (``local_state.owner``).
* ``FILE.clients``: every process using the server holds a shared lock on it
  for as long as it lives (the OS drops it when the process ends).
* ``FILE.start``: taken while finding or starting the server, so processes
  starting at the same moment start one server, not two.
* ``FILE.log``: the background server's output.

The server stops ``IDLE_STOP`` seconds after the last process using it has
ended (so ``migrate`` then ``runserver``, or a runserver reload, keep it), or
at once with ``manage.py dynamo_local --stop``. It saves the tables first.
Anything that would split the data - another moto version, a server that does
not answer - is refused with an error that says what to do.

In a test run (``local.share_embedded`` off) ``embedded_endpoint`` gives each
process a server of its own, in memory, instead.
"""

from __future__ import annotations

import atexit
import importlib
import logging
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from ..exceptions import LocalServerError, MissingDependency
from . import server as local
from .server import LocalServer, _import_moto, answers
from .state import check_path, flock, moto_version, open_lock, owner, sidecar, unlock

logger = logging.getLogger("dynamo_app.local")

DEFAULT_STATE_FILE = ".dynamo-local.pickle"
IDLE_STOP = 10.0  # seconds the server stays up after the last process using it ended
START_TIMEOUT = 30.0  # seconds to wait for a server to start (a loaded CI machine is slow)
POLL = 0.5  # seconds between the server's checks for processes using it

_attached: dict[Path, int] = {}  # state file -> FILE.clients, held shared by this process
_attach_lock = threading.Lock()


def project_root() -> Path:
    """The project's folder: ``settings.BASE_DIR``, else the folder holding the
    settings module's top-level package (where ``manage.py`` usually is)."""
    from django.conf import settings

    base = getattr(settings, "BASE_DIR", None)
    if base:
        return Path(base)
    module = getattr(settings, "SETTINGS_MODULE", None)
    if module:
        top = importlib.import_module(module.partition(".")[0])
        package = list(getattr(top, "__path__", []))
        if package:
            return Path(package[0]).parent
        if top.__file__:
            return Path(top.__file__).parent
    raise LocalServerError(
        "ENDPOINT = 'embedded' keeps the project's tables in a file found from "
        "settings.BASE_DIR or the settings module, and neither is known here. Set "
        "DYNAMO['LOCAL_STATE_FILE'] to an absolute path, or BASE_DIR."
    )


_embedded: LocalServer | None = None
_embedded_lock = threading.Lock()


def embedded_endpoint(state_file: str | os.PathLike[str] = "") -> str:
    """The URL of the embedded server: the project's shared one (found, or
    started in the background, keeping its tables in ``state_file``), or in a
    test run (``local.share_embedded`` off) one of this process's own, in memory."""
    global _embedded
    if local.share_embedded:
        return attach(project_state_file(state_file))
    with _embedded_lock:
        if _embedded is None or not _embedded.running:
            _embedded = LocalServer().start()
            atexit.register(_embedded.stop)
            logger.info(
                "dynamo_app: started a local DynamoDB for this test run at %s", _embedded.url
            )
        return _embedded.url


def project_state_file(configured: str | os.PathLike[str] = "") -> Path:
    """The project's state file: ``configured`` (relative to the project's
    folder, never to the current directory) or the default."""
    path = Path(configured or DEFAULT_STATE_FILE)
    if not path.is_absolute():
        path = project_root() / path
    return path.resolve()


def attach(path: Path) -> str:
    """Use the server keeping the tables in ``path``, starting it if none runs;
    returns its URL. This process counts as using it until it ends."""
    check_path(path)  # a folder or a foreign file: refused before anything is created
    with _attach_lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path not in _attached:
            clients = open_lock(sidecar(path, ".clients"))
            flock(clients, exclusive=False)
            _attached[path] = clients
        start = open_lock(sidecar(path, ".start"))
        try:
            if not flock(start, timeout=START_TIMEOUT):
                raise LocalServerError(
                    f"Another process has been starting the local DynamoDB server for {path} "
                    f"for {START_TIMEOUT:g}s. See {sidecar(path, '.log')}, then try again."
                )
            info = _running(path) or _start(path)
        finally:
            os.close(start)  # and with it the lock
    return str(info["url"])


def _running(path: Path) -> dict[str, Any] | None:
    """The server holding ``path``, checked, or None when there is none."""
    deadline = time.monotonic() + START_TIMEOUT
    while (info := owner(path)) == {}:  # held, but its URL is not written yet
        if time.monotonic() > deadline:
            raise LocalServerError(
                f"A local DynamoDB server holds {path} but never said where it listens. "
                "Stop it (`python manage.py dynamo_local --stop`) and try again."
            )
        time.sleep(0.02)
    if info is None:
        return None
    pid, url = info.get("pid"), info.get("url")
    stop_it = f"stop it (`python manage.py dynamo_local --stop`, or `kill {pid}`) and try again"
    if info.get("state") != str(path):
        raise LocalServerError(
            f"The local DynamoDB server (pid {pid}) holding {path} keeps its tables in "
            f"{info.get('state')} (was the folder moved?): {stop_it}."
        )
    mine = moto_version()
    if mine and info.get("moto") != mine:
        raise LocalServerError(
            f"The project's local DynamoDB server at {url} (pid {pid}) runs moto "
            f"{info.get('moto')}, this process has moto {mine} (another virtualenv?). Its state "
            f"file is only readable by that moto version: use one virtualenv, or {stop_it}."
        )
    if not answers(str(url), timeout=5.0):
        raise LocalServerError(
            f"The project's local DynamoDB server (pid {pid}) holds {path} but does not "
            f"answer at {url}: {stop_it}."
        )
    return info


def _start(path: Path) -> dict[str, Any]:
    """Start the server for ``path`` in the background and wait until it listens."""
    log = sidecar(path, ".log")
    package_root = str(Path(__file__).resolve().parent.parent.parent)
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [package_root, os.environ.get("PYTHONPATH")])),
    }
    with log.open("wb") as output:
        process = subprocess.Popen(
            [sys.executable, "-P", "-m", __name__, str(path)],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=subprocess.STDOUT,
            cwd=path.parent,
            env=env,
            start_new_session=True,  # not stopped by Ctrl-C in the terminal that started it
        )
    try:
        _import_moto()  # while it starts: without moto, the error that names the extra
    except MissingDependency:
        process.kill()
        raise
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        info = owner(path)
        if info and info.get("url"):
            for warning in info.get("warnings", []):
                logger.warning("dynamo_app: %s", warning)
            logger.info(
                "dynamo_app: started the project's local DynamoDB at %s (pid %s), tables kept "
                "in %s (%s restored)",
                info["url"],
                info["pid"],
                path,
                info.get("restored"),
            )
            return info
        if process.poll() is not None:
            output_text = log.read_text(errors="replace").strip()[-2000:]
            raise LocalServerError(
                f"The project's local DynamoDB server for {path} could not start (exit code "
                f"{process.returncode}). Its output, from {log}:\n{output_text}"
            )
        time.sleep(0.02)
    process.terminate()
    raise LocalServerError(
        f"The project's local DynamoDB server for {path} did not start within "
        f"{START_TIMEOUT:g}s; see {log}."
    )


def _in_use(clients: int) -> bool:
    """Whether some process holds its shared lock on FILE.clients."""
    if flock(clients, timeout=0):
        unlock(clients)
        return False
    return True


def serve(path: Path, idle_stop: float = IDLE_STOP) -> None:
    """The background server's life (``python -m dynamo_app.local.shared FILE``):
    serve until no process has used it for ``idle_stop`` seconds, or until
    SIGTERM (``dynamo_local --stop``); save the tables either way."""
    stopping = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(signum, lambda *_: stopping.set())
    server = LocalServer(state_file=path).start()
    print(
        f"Listening on {server.url} (pid {os.getpid()}); {server.restored} tables restored "
        f"from {path}",
        flush=True,
    )
    clients = open_lock(sidecar(path, ".clients"))
    idle_since: float | None = None
    try:
        while not stopping.wait(POLL):
            if _in_use(clients):
                idle_since = None
                continue
            idle_since = idle_since or time.monotonic()
            if time.monotonic() - idle_since < idle_stop:
                continue
            start = open_lock(sidecar(path, ".start"))
            try:
                flock(start)  # a process arriving now waits, then finds no server and starts one
                if not _in_use(clients):
                    server.stop()
                    print(f"Stopped: no process used it for {idle_stop:g}s", flush=True)
                    return
            finally:
                os.close(start)
        print("Stopped on request", flush=True)
    finally:
        server.stop()
        os.close(clients)


def stop(path: Path, timeout: float = 10.0) -> dict[str, Any] | None:
    """Stop the server holding ``path``, even while processes use it; returns
    what it said about itself, or None when no server holds the file."""
    info = owner(path)
    if info is None:
        return None
    pid = info.get("pid")
    if not pid:
        raise LocalServerError(f"A local DynamoDB server for {path} is starting; try again.")
    try:
        os.kill(int(pid), signal.SIGTERM)
    except ProcessLookupError:
        pass  # it ended meanwhile
    deadline = time.monotonic() + timeout
    while owner(path) is not None:
        if time.monotonic() > deadline:
            raise LocalServerError(
                f"The local DynamoDB server (pid {pid}) did not stop within {timeout:g}s: "
                f"`kill -9 {pid}` (it then loses at most its last second of writes)."
            )
        time.sleep(0.05)
    return info


if __name__ == "__main__":
    serve(Path(sys.argv[1]))
