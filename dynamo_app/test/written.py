"""Which tables a test changed, as the run's own server saw its requests (or,
on another engine, as this process sent them: ``dynamo_app.test.sent``).

Emptying the store by dropping everything and creating every registered table
costs a CreateTable per table per test (~30 ms each on moto; a suite declares
a hundred tables), while a test changes one or two. The run's moto server sees
every request, whoever sends it (the app's handle, a raw boto3 client, a
subprocess; and moto's data is the process's, so every server of the process
is watched), so ``WrittenTables`` can say which tables changed and the store
recreates only those. A request it cannot pin to tables of the run's own
account and region (PartiQL, backups, another region or key, moto's own API
such as another server's reset, a restored state file, a body it cannot read)
means "anything may have changed": the next emptying is a full reset. So
does what the process sending them cannot see on another engine (a process
it starts, another HTTP client).
"""

from __future__ import annotations

import json
import threading
from typing import Any

from ..local.server import READ_OPERATIONS

DYNAMODB_TARGETS = ("DynamoDB_20120810.", "DynamoDBStreams_20120810.")
# Reads of DynamoDB Streams: they change no table.
STREAM_READS = frozenset({"DescribeStream", "GetRecords", "GetShardIterator", "ListStreams"})
# Operations that change the one table named by their TableName.
ONE_TABLE = frozenset(
    {
        "PutItem",
        "UpdateItem",
        "DeleteItem",
        "CreateTable",
        "DeleteTable",
        "UpdateTable",
        "UpdateTimeToLive",
        "UpdateContinuousBackups",
    }
)
TAGGING = frozenset({"TagResource", "UntagResource"})


class WrittenTables:
    """A ``local.request_hooks`` hook: collects the names of the tables that
    requests signed with ``access_key`` in ``region`` may have changed, to any
    server of this process (they share moto's data)."""

    def __init__(self, access_key: str, region: str) -> None:
        self._scope = (f"Credential={access_key}/", f"/{region}/dynamodb/aws4_request")
        self._lock = threading.Lock()
        self._names: set[str] | None = None  # None: anything (the state at start is unknown)

    def __call__(self, environ: dict[str, Any] | None, body: bytes) -> None:
        if environ is not None and environ.get("REQUEST_METHOD") != "POST":
            return
        names = None if environ is None else self._changed(environ, body)
        with self._lock:
            if names is None or self._names is None:
                self._names = None
            else:
                self._names |= names

    def take(self) -> set[str] | None:
        """The tables changed since the last ``take()`` (None: anything may have
        changed), and start collecting anew."""
        with self._lock:
            names, self._names = self._names, set()
        return names

    def _changed(self, environ: dict[str, Any], body: bytes) -> set[str] | None:
        service, _, operation = environ.get("HTTP_X_AMZ_TARGET", "").partition(".")
        authorization = environ.get("HTTP_AUTHORIZATION", "")
        ours = all(part in authorization for part in self._scope)
        if f"{service}." not in DYNAMODB_TARGETS or not ours:
            return None
        if operation in READ_OPERATIONS or operation in STREAM_READS:
            return set()
        try:
            request = json.loads(body)
            if operation in ONE_TABLE:
                return {_table(request["TableName"])}
            if operation in TAGGING:
                return {_table(request["ResourceArn"])}
            if operation == "BatchWriteItem":
                return {_table(name) for name in request["RequestItems"]}
            if operation == "TransactWriteItems":
                return {
                    _table(action["TableName"])
                    for item in request["TransactItems"]
                    for action in item.values()
                }
        except (ValueError, KeyError, TypeError, AttributeError):
            pass
        return None


def _table(name: str) -> str:
    """A table's name, from its name or its ARN (``arn:aws:dynamodb:...:table/NAME``)."""
    if not isinstance(name, str):
        raise TypeError(name)
    return name.partition(":table/")[2].partition("/")[0] if name.startswith("arn:") else name
