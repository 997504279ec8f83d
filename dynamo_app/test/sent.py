"""What this process sends, for a test run on a server it did not start.

The run's own moto server shows the store every request it serves
(``dynamo_app.local.server.request_hooks``); a server at ``DYNAMO_TEST_ENDPOINT`` shows
nothing. So there the run watches its own side: every botocore client of the
process (the app's handle, a test's own boto3 client) sends through
``URLLib3Session.send``, where ``watch()`` shows each request to a
``WrittenTables`` as the server would have. What cannot be watched there counts
as "anything may have changed" (Python's audit events tell of it): a process
started (subprocess, fork, exec, spawn, system), and a connection to the
server's port opened outside a botocore send (another HTTP client).
"""

from __future__ import annotations

import sys
import threading
from typing import Any
from urllib.parse import urlsplit

from botocore.awsrequest import AWSPreparedRequest, AWSRequest, AWSResponse
from botocore.httpsession import URLLib3Session

from .written import WrittenTables

# The audit events of starting a process: it may send what this one never sees.
PROCESS_EVENTS = frozenset(
    {
        "os.exec",
        "os.fork",
        "os.forkpty",
        "os.posix_spawn",
        "os.spawn",
        "os.system",
        "pty.spawn",
        "subprocess.Popen",
    }
)

_watchers: list[tuple[WrittenTables, int]] = []  # with the port of the server each watches
_sending = threading.local()  # set while this thread is in a botocore send
_botocore_send = URLLib3Session.send
_audit_hook_added = False


def watch(written: WrittenTables, endpoint: str) -> None:
    """Show ``written`` every request this process sends, and tell it of what it cannot see."""
    global _audit_hook_added
    parts = urlsplit(endpoint)
    _watchers.append((written, parts.port or (443 if parts.scheme == "https" else 80)))
    URLLib3Session.send = _watched_send  # type: ignore[method-assign, assignment]
    if not _audit_hook_added:  # an audit hook stays for the process's life: added once
        sys.addaudithook(_audited)
        _audit_hook_added = True


def unwatch(written: WrittenTables) -> None:
    """Stop showing ``written`` anything; botocore sends as before once no one watches."""
    _watchers[:] = [entry for entry in _watchers if entry[0] is not written]
    if not _watchers:
        URLLib3Session.send = _botocore_send  # type: ignore[method-assign]


def _watched_send(session: URLLib3Session, request: AWSRequest | AWSPreparedRequest) -> AWSResponse:
    body = request.body
    body = body.encode() if isinstance(body, str) else body
    environ = {
        "REQUEST_METHOD": request.method,
        "HTTP_X_AMZ_TARGET": _text(request.headers.get("X-Amz-Target", "")),
        "HTTP_AUTHORIZATION": _text(request.headers.get("Authorization", "")),
    }
    for written, _ in list(_watchers):
        written(environ, body if isinstance(body, bytes) else b"")  # a stream: unreadable here
    _sending.active = True
    try:
        return _botocore_send(session, request)
    finally:
        _sending.active = False


def _text(value: str | bytes) -> str:
    return value.decode("latin-1") if isinstance(value, bytes) else value


def _audited(event: str, args: tuple[Any, ...]) -> None:
    if not _watchers:
        return
    if event in PROCESS_EVENTS:
        unseen = True
    elif event == "socket.connect" and not getattr(_sending, "active", False):
        address = args[1]
        unseen = (
            isinstance(address, tuple)
            and len(address) >= 2
            and address[1] in {port for _, port in _watchers}
        )
    else:
        return
    if unseen:
        for written, _ in list(_watchers):
            written(None, b"")
