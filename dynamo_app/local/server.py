"""A local DynamoDB-compatible server (moto's server) bound to 127.0.0.1.

moto's DynamoDB has no locking: concurrent requests can both pass an
``attribute_not_exists`` condition, and a failed ``TransactWriteItems``
restores a whole-table snapshot, undoing other clients' writes. Real DynamoDB
transactions are serializable, so this server runs moto's WSGI app under one
lock: requests are handled one at a time and every race a test sees is the
app's, not moto's.

The server keeps its data in memory, and with a state file
(``DYNAMO["LOCAL_STATE_FILE"]``, ``dynamo_local --state``) also on disk, so it
survives a restart (see ``local_state``). ``ENDPOINT = "embedded"`` means the
project's one shared server (``local_shared.embedded_endpoint``); in a test
run it means a server of the process's own, in memory (``share_embedded``).
"""

from __future__ import annotations

import io
import logging
import os
import threading
import urllib.request
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from ..exceptions import MissingDependency
from .state import StateFile

logger = logging.getLogger("dynamo_app.local")

HOST = "127.0.0.1"

# Off while a test run's store is up (dynamo_app.test.store) and in ``manage.py
# test``: a test run's embedded server is its own and in memory, never the
# project's shared store.
share_embedded = True


# DynamoDB operations that change nothing: no need to save the state after them.
READ_OPERATIONS = frozenset(
    {
        "BatchGetItem",
        "DescribeContinuousBackups",
        "DescribeEndpoints",
        "DescribeLimits",
        "DescribeTable",
        "DescribeTimeToLive",
        "GetItem",
        "ListTables",
        "ListTagsOfResource",
        "Query",
        "Scan",
        "TransactGetItems",
    }
)


def _is_write(environ: dict[str, Any]) -> bool:
    if environ.get("REQUEST_METHOD") != "POST":
        return False
    operation = environ.get("HTTP_X_AMZ_TARGET", "").rpartition(".")[2]
    if operation:
        return operation not in READ_OPERATIONS
    path: str = environ.get("PATH_INFO", "")
    return path.startswith("/moto-api/reset")


# Shown every request (WSGI environ and body) to every LocalServer of this process,
# before it is served, and ``None`` when a server replaces the data wholesale (a
# state file restored): moto keeps its data per process, so every server here
# serves the same tables. A test run's store learns from it which tables changed.
RequestHook = Callable[[dict[str, Any] | None, bytes], None]
request_hooks: list[RequestHook] = []


class _OneAtATime:
    """WSGI middleware: serve one request at a time (see the module docstring),
    show ``request_hooks`` each request before it is served, and tell ``on_write``
    after each request that may have changed data."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.lock = threading.Lock()
        self.on_write: Callable[[], None] | None = None

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        with self.lock:
            if request_hooks:
                body = _read_body(environ)
                for hook in request_hooks:
                    hook(environ, body)
            result = self.app(environ, start_response)
            try:
                return [b"".join(result)]
            finally:
                close = getattr(result, "close", None)
                if close is not None:
                    close()
                if self.on_write is not None and _is_write(environ):
                    self.on_write()


def _read_body(environ: dict[str, Any]) -> bytes:
    """The request's body, left readable for the app behind."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    if not length:
        return b""
    body: bytes = environ["wsgi.input"].read(length)
    environ["wsgi.input"] = io.BytesIO(body)
    return body


def _import_moto() -> tuple[Any, Any]:
    """moto's WSGI app, or an error naming the extra that installs it: moto is
    not a runtime dependency, only the local server needs it."""
    try:
        from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
    except ModuleNotFoundError as exc:
        raise MissingDependency(
            "The local DynamoDB server (ENDPOINT = 'embedded', manage.py dynamo_local, the "
            f"pytest plugin's server) runs moto, which is not installed ({exc}). Install the "
            "'local' extra: pip install \"django-dynamo-app[local]\" (from a checkout: "
            'pip install "/path/to/checkout[local]").'
        ) from exc
    return DomainDispatcherApplication, create_backend_app


class LocalServer:
    """moto's DynamoDB over HTTP on 127.0.0.1, serialised, in a daemon thread.

    ``port=0`` picks a free port; ``url`` tells which one after ``start()``.
    """

    def __init__(
        self, port: int = 0, host: str = HOST, state_file: str | os.PathLike[str] | None = None
    ) -> None:
        self.host = host
        self.port = port
        self.state_file = Path(state_file) if state_file else None
        self.restored = 0  # tables loaded from the state file at start
        self.warnings: list[str] = []  # what could not be restored from it
        self._state: StateFile | None = None
        self._server: Any = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        if self._server is None:
            raise RuntimeError("LocalServer.url is only known after start().")
        return f"http://{self.host}:{self._server.server_address[1]}"

    @property
    def running(self) -> bool:
        return self._server is not None

    def start(self) -> LocalServer:
        DomainDispatcherApplication, create_backend_app = _import_moto()
        from werkzeug.serving import WSGIRequestHandler, make_server

        class QuietHandler(WSGIRequestHandler):
            def log_request(self, *args: Any, **kwargs: Any) -> None:
                pass  # one line per request would drown the developer's console

        app = _OneAtATime(DomainDispatcherApplication(create_backend_app))
        state = None
        if self.state_file is not None:
            state = StateFile(self.state_file, app.lock)
            self.restored = state.open()  # its one writer, or StateFileError
            for hook in request_hooks:
                hook(None, b"")
            self.warnings = state.warnings
            app.on_write = state.changed
        try:
            self._server = make_server(
                self.host, self.port, app, threaded=True, request_handler=QuietHandler
            )
        except BaseException:
            if state is not None:
                state.close()
            raise
        self._server.daemon_threads = True
        if state is not None:
            state.claim(self.url)
            state.start()
            self._state = state
        self._thread = threading.Thread(
            target=self._server.serve_forever, name="dynamo-local-server", daemon=True
        )
        self._thread.start()
        logger.debug("local DynamoDB server listening on %s", self.url)
        return self

    def stop(self) -> None:
        """Stop serving (and write the state file, when there is one)."""
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        if self._state is not None:
            self._state.stop()
            self._state = None
        self._server = None
        self._thread = None

    def reset(self) -> None:
        """Drop every table and item (moto's reset API)."""
        request = urllib.request.Request(f"{self.url}/moto-api/reset", method="POST", data=b"")
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()

    def serve_forever(self) -> None:
        """Block until interrupted (for ``manage.py dynamo_local``)."""
        if self._thread is None:
            self.start()
        try:
            while self._thread is not None and self._thread.is_alive():
                self._thread.join(timeout=0.5)
        finally:
            self.stop()


def answers(url: str, timeout: float = 1.0) -> bool:
    """Whether a local server answers at ``url``."""
    try:
        with urllib.request.urlopen(f"{url}/moto-api/", timeout=timeout) as response:
            response.read()
        return True
    except Exception:
        return False
