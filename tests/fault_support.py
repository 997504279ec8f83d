"""Faults the local engines never produce, injected between the client and the
server: error answers, lost answers (the request applied, the client told
otherwise), damaged bodies. Each is a botocore event hook on the handle's client
for one block; everything else goes to the real server over HTTP.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from botocore.awsrequest import AWSResponse
from botocore.exceptions import ClientError, ConnectionClosedError, ReadTimeoutError
from botocore.httpsession import URLLib3Session

from dynamo_app.client.handle import get_handle

JSON = {"Content-Type": "application/x-amz-json-1.0"}


def client_error(code: str, status: int = 400, reasons: list[str] | None = None) -> ClientError:
    """The ClientError botocore raises for DynamoDB's ``code`` (with a transaction's
    cancellation ``reasons``)."""
    response: dict[str, Any] = {
        "Error": {"Code": code, "Message": code},
        "ResponseMetadata": {"HTTPStatusCode": status},
    }
    if reasons is not None:
        response["CancellationReasons"] = [{"Code": c} for c in reasons]
    return ClientError(response, "Op")


class _Raw:
    """An ``AWSResponse``'s raw body: botocore reads it through ``stream()``."""

    def __init__(self, data: bytes) -> None:
        self.data = data

    def stream(self, **kwargs: Any) -> Any:
        yield self.data


def answer(
    status: int, body: bytes, headers: dict[str, str] = JSON, url: str = "http://127.0.0.1"
) -> AWSResponse:
    """An HTTP answer for botocore to parse as if the server had sent it."""
    return AWSResponse(url, status, headers, _Raw(body))


def error_answer(error: ClientError) -> AWSResponse:
    """The HTTP answer from which botocore raises ``error`` (a ``client_error()``)."""
    body: dict[str, Any] = {
        "__type": f"com.amazonaws.dynamodb.v20120810#{error.response['Error']['Code']}",
        "message": "x",
    }
    if "CancellationReasons" in error.response:
        body["CancellationReasons"] = error.response["CancellationReasons"]
    return answer(error.response["ResponseMetadata"]["HTTPStatusCode"], json.dumps(body).encode())


class Intercepted:
    """For the block, ``send`` sees each request of ``operation`` on the handle's
    client before it goes out, and returns an answer, or None to let it go to the
    server; ``forward`` sends it there itself."""

    def __init__(self, operation: str) -> None:
        self.event = f"before-send.dynamodb.{operation}"
        self.http: URLLib3Session | None = None

    def __enter__(self) -> Any:
        get_handle().client.meta.events.register(self.event, self.send, unique_id=id(self))
        return self

    def __exit__(self, *exc: object) -> None:
        get_handle().client.meta.events.unregister(self.event, unique_id=id(self))
        if self.http is not None:
            self.http.close()
            self.http = None

    def send(self, request: Any, **kwargs: Any) -> AWSResponse | None:
        raise NotImplementedError

    def forward(self, request: Any) -> Any:
        """Send ``request`` to the server; its answer (it is applied)."""
        if self.http is None:
            self.http = URLLib3Session()
        return self.http.send(request)


class Faults:
    """Raise the queued exceptions on the next requests, then let them through
    to the real server. Records the parameters of every attempt."""

    def __init__(self, client: Any, *faults: Exception) -> None:
        self.faults = list(faults)
        self.attempts: list[dict[str, Any]] = []
        self.client = client

    def __enter__(self) -> Faults:
        self.client.meta.events.register(
            "before-send.dynamodb", self.before_send, unique_id="faults"
        )
        self.client.meta.events.register(
            "before-parameter-build.dynamodb", self.before_call, unique_id="faults-p"
        )
        return self

    def __exit__(self, *exc: object) -> None:
        self.client.meta.events.unregister("before-send.dynamodb", unique_id="faults")
        self.client.meta.events.unregister("before-parameter-build.dynamodb", unique_id="faults-p")

    def before_call(self, params: dict[str, Any], **kwargs: Any) -> None:
        self.attempts.append(dict(params))

    def before_send(self, request: Any, **kwargs: Any) -> AWSResponse | None:
        if self.faults:
            fault = self.faults.pop(0)
            if isinstance(fault, ClientError):
                return error_answer(fault)
            raise fault
        return None


SERVER_ERROR = client_error("InternalServerError", 500)
LOSSES = {
    "500": SERVER_ERROR,
    "read timeout": ReadTimeoutError(endpoint_url="x"),
    "connection closed": ConnectionClosedError(endpoint_url="x"),
}


class Lost(Intercepted):
    """The next ``times`` requests of ``operation`` (after the first ``after``,
    answered as usual) reach the server and are applied (with ``reaches=False``:
    never reach it); the client gets ``loss`` (an error answer, or a network
    error) instead of the server's answer. ``then`` runs after each applied
    request: someone else's write in the window before our retry."""

    def __init__(
        self,
        operation: str,
        loss: Exception = SERVER_ERROR,
        times: int = 1,
        then: Callable[[], object] | None = None,
        reaches: bool = True,
        after: int = 0,
    ) -> None:
        super().__init__(operation)
        self.loss, self.times, self.then, self.reaches = loss, times, then, reaches
        self.after = after
        self.lost = self.applied = 0

    def send(self, request: Any, **kwargs: Any) -> AWSResponse | None:
        if self.after:
            self.after -= 1
            return None
        if self.lost >= self.times:
            return None
        self.lost += 1
        if self.reaches:
            self.applied += 1
            answered = self.forward(request)
            assert answered.status_code == 200, answered.content  # the write really happened
            if self.then is not None:
                self.then()
        if isinstance(self.loss, ClientError):
            return error_answer(self.loss)
        raise self.loss


class Damaged(Intercepted):
    """Change the body of the next ``times`` answers to ``operation`` between
    the server and the parser, leaving its ``x-amz-crc32`` header (DynamoDB,
    moto and MiniStack send one with every body) as the server sent it, or
    dropped (``checksum=False``): the request goes to the server from
    ``before-send`` (which every botocore emits), and its answer comes back changed."""

    def __init__(
        self,
        operation: str,
        damage: Callable[[bytes], bytes],
        times: int = 1,
        checksum: bool = True,
    ) -> None:
        super().__init__(operation)
        self.damage, self.times, self.checksum = damage, times, checksum
        self.damaged = 0

    def send(self, request: Any, **kwargs: Any) -> AWSResponse | None:
        if self.damaged >= self.times:
            return None
        self.damaged += 1
        answered = self.forward(request)
        assert "x-amz-crc32" in answered.headers
        headers = {
            name: value
            for name, value in answered.headers.items()
            if self.checksum or name.lower() != "x-amz-crc32"
        }
        return answer(answered.status_code, self.damage(answered.content), headers, request.url)


def changed_byte(body: bytes) -> bytes:
    return body.replace(b"Hawks", b"Hawkz")


def cut_short(body: bytes) -> bytes:
    return body[: len(body) // 2]
