"""``SESSION_ENGINE = "dynamo_app.sessions"``: Django sessions kept in DynamoDB.

One item per session in the app-owned table ``dynamo_sessions``::

    session_key   S  partition key, a key from Django's generator ([a-z0-9], 32 chars)
    session_data  S  SessionBase.encode(): signed, compressed, serialised dict
    expires_at    N  expiry as epoch seconds; the table's TTL attribute

Guarantees, and the one request each costs:

* load = one strongly consistent ``GetItem``; a missing, expired (TTL deletes
  late) or undecodable item loads as an empty session. Errors are raised.
* create = one ``PutItem`` conditioned on ``attribute_not_exists``: no
  existence probe first; a collision is a ``CreateError`` and a new key.
* save of an existing session = one ``PutItem`` conditioned on the item still
  existing and not expired, else ``UpdateError`` (``SessionInterrupted`` in
  the middleware): a session ended elsewhere is never resurrected.
* invalid keys never reach DynamoDB.
* ``clear_expired()`` (``manage.py clearsessions``) is a full-table ``Scan``:
  a named maintenance operation, never part of a request.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any, TypeGuard, TypeVar

from django.conf import settings
from django.contrib.sessions.backends.base import (
    VALID_KEY_CHARS,
    CreateError,
    SessionBase,
    UpdateError,
)
from django.utils.crypto import get_random_string

from .app_tables import SESSION_EXPIRES, SESSION_KEY, SESSIONS
from .client import threads, wire
from .client.handle import Handle, get_handle
from .conf import require_installed
from .exceptions import BatchIncomplete, ConditionFailed, ItemTooLarge
from .tables import registry

__all__ = ["SessionStore", "register_table"]

logger = logging.getLogger("dynamo_app.sessions")

KEY = SESSION_KEY
DATA = "session_data"
EXPIRES = SESSION_EXPIRES
SESSION_TABLE = SESSIONS

KEY_LENGTH = 32  # what Django's generator makes
_VALID_KEY = re.compile(r"[a-z0-9]{8,40}")  # Django's rule (8+) and its key alphabet
BATCH_SIZE = 25  # BatchWriteItem's limit

T = TypeVar("T")


def register_table() -> None:
    """Declare the session table so ``dynamo_migrate`` creates it (TTL on) and
    startup verifies it. Done at startup when ``SESSION_ENGINE`` is this
    module (``app_tables``); a project whose engine subclasses ``SessionStore`` calls it from its
    ``AppConfig.ready()``."""
    registry.register(SESSION_TABLE)


def valid_key(key: object) -> TypeGuard[str]:
    """Whether ``key`` could have come from Django's key generator."""
    return isinstance(key, str) and _VALID_KEY.fullmatch(key) is not None


def _in_thread(func: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """Run blocking I/O off the event loop, in the app's pool (dynamo_app.client.threads).
    boto3 clients are thread-safe, so concurrent requests need not queue on
    Django's single sync thread."""
    return threads.in_thread(func)


def _expires_at(item: dict[str, Any]) -> Decimal | None:
    try:
        return Decimal(item[EXPIRES]["N"])
    except (KeyError, TypeError, InvalidOperation):
        return None


def _live(item: dict[str, Any] | None) -> TypeGuard[dict[str, Any]]:
    """An item exists and has not expired. TTL deletes days late, so check."""
    if item is None:
        return False
    expires = _expires_at(item)
    return expires is not None and expires > Decimal(time.time())


def _table(handle: Handle) -> str:
    return handle.table_name(SESSION_TABLE.declared_name)


def _get_item(session_key: str, *, expiry_only: bool = False) -> dict[str, Any] | None:
    """One GetItem, strongly consistent: a session written by the previous
    request (a login, then a redirect) must be seen by the next one."""
    handle = get_handle()
    params: dict[str, Any] = {}
    if expiry_only:
        params = {"ProjectionExpression": "#e", "ExpressionAttributeNames": {"#e": EXPIRES}}
    response = handle.call(
        "get_item",
        TableName=_table(handle),
        Key={KEY: {"S": session_key}},
        ConsistentRead=True,
        **params,
    )
    return response.get("Item")


def _put_item(item: dict[str, Any], must_create: bool) -> None:
    """One conditional PutItem. If an attempt's answer is lost, the retry policy
    repeats it; a repeat that fails its condition because the first attempt
    created the item is recognised by the item returned with the failure."""
    handle = get_handle()
    if must_create:
        condition = "attribute_not_exists(#k)"
        names = {"#k": KEY}
        values: dict[str, Any] = {}
    else:
        condition = "attribute_exists(#k) AND #e > :now"
        names = {"#k": KEY, "#e": EXPIRES}
        values = {"ExpressionAttributeValues": {":now": {"N": str(int(time.time()))}}}
    try:
        handle.call(
            "put_item",
            TableName=_table(handle),
            Item=item,
            ConditionExpression=condition,
            ExpressionAttributeNames=names,
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
            **values,
        )
    except ConditionFailed as exc:
        raise (CreateError if must_create else UpdateError) from exc


def _delete_item(session_key: str) -> None:
    handle = get_handle()
    handle.call("delete_item", TableName=_table(handle), Key={KEY: {"S": session_key}})


def _batch_delete(handle: Handle, table: str, keys: list[dict[str, Any]]) -> None:
    """Delete up to 25 keys, re-sending unprocessed ones with backoff."""

    def incomplete(remainder: dict[str, Any], rounds: int) -> BatchIncomplete:
        requests = remainder[table]
        return BatchIncomplete(
            f"{len(requests)} expired sessions in {table!r} were still unprocessed after "
            f"{rounds} BatchWriteItem rounds without progress (throttled). Run clearsessions "
            "again later.",
            unprocessed=requests,
        )

    requests = [{"DeleteRequest": {"Key": key}} for key in keys]
    for _ in handle.until_processed("batch_write_item", {table: requests}, incomplete):
        pass


class SessionStore(SessionBase):
    """Django's session contract on one DynamoDB item per session."""

    def _validate_session_key(self, key: object) -> bool:
        return valid_key(key)

    def _get_new_session_key(self) -> str:
        # No exists() probe: the create is conditioned on attribute_not_exists,
        # so a collision costs a retry instead of every new session a GetItem.
        return get_random_string(KEY_LENGTH, VALID_KEY_CHARS)

    async def _aget_new_session_key(self) -> str:
        return self._get_new_session_key()

    # --- reading ---------------------------------------------------------------

    def _from_item(self, item: dict[str, Any] | None) -> dict[str, Any]:
        if not _live(item):
            self._session_key = None  # never reuse a key the client chose
            return {}
        return self.decode(item.get(DATA, {}).get("S", ""))

    def load(self) -> dict[str, Any]:
        if self.session_key is None:
            return {}
        return self._from_item(_get_item(self.session_key))

    async def aload(self) -> dict[str, Any]:
        if self.session_key is None:
            return {}
        return self._from_item(await _in_thread(_get_item)(self.session_key))

    def exists(self, session_key: str | None) -> bool:
        if not valid_key(session_key):
            return False
        return _live(_get_item(session_key, expiry_only=True))

    async def aexists(self, session_key: str | None) -> bool:
        if not valid_key(session_key):
            return False
        return _live(await _in_thread(_get_item)(session_key, expiry_only=True))

    # --- writing ---------------------------------------------------------------

    def create(self) -> None:
        while True:
            self._session_key = self._get_new_session_key()
            try:
                self.save(must_create=True)
            except CreateError:
                continue  # key collision: try another
            self.modified = True
            return

    async def acreate(self) -> None:
        while True:
            self._session_key = await self._aget_new_session_key()
            try:
                await self.asave(must_create=True)
            except CreateError:
                continue
            self.modified = True
            return

    def _item(self, key: str, data: dict[str, Any], expiry: datetime) -> dict[str, Any]:
        item = {
            KEY: {"S": key},
            DATA: {"S": self.encode(data)},
            EXPIRES: {"N": str(int(expiry.timestamp()))},
        }
        size = wire.item_size(item)
        if size > wire.MAX_ITEM_BYTES:  # moto accepts more: check it here
            raise ItemTooLarge(
                f"The session is {size} bytes encoded, over DynamoDB's 400 KB item limit; "
                "nothing was saved. Keep large data in a model and only its key in the session."
            )
        return item

    def save(self, must_create: bool = False) -> None:
        if self.session_key is None:
            return self.create()
        # django-stubs leave out SessionBase's private _get_session/_aget_session
        data = self._get_session(no_load=must_create)  # type: ignore[attr-defined]
        _put_item(self._item(self.session_key, data, self.get_expiry_date()), must_create)

    async def asave(self, must_create: bool = False) -> None:
        if self.session_key is None:
            return await self.acreate()
        data = await self._aget_session(no_load=must_create)  # type: ignore[attr-defined]
        item = self._item(self.session_key, data, await self.aget_expiry_date())
        await _in_thread(_put_item)(item, must_create)

    def delete(self, session_key: str | None = None) -> None:
        if session_key is None:
            session_key = self.session_key
        if valid_key(session_key):
            _delete_item(session_key)

    async def adelete(self, session_key: str | None = None) -> None:
        if session_key is None:
            session_key = self.session_key
        if valid_key(session_key):
            await _in_thread(_delete_item)(session_key)

    # --- maintenance -------------------------------------------------------------

    @classmethod
    def clear_expired(cls) -> int:  # type: ignore[override]  # Django's returns None
        """Delete expired sessions; return how many. TTL does this for free
        (late); this is for tables without TTL or to reclaim space now.

        Cost: a Scan reads (and bills) every item of the table, whatever the
        filter keeps, plus one write per deleted item.
        """
        handle = get_handle()
        table = _table(handle)
        pages = handle.paginate(
            "scan",
            TableName=table,
            FilterExpression="#e <= :now",
            ProjectionExpression="#k",
            ExpressionAttributeNames={"#e": EXPIRES, "#k": KEY},
            ExpressionAttributeValues={":now": {"N": str(int(time.time()))}},
        )
        deleted = 0
        for page in pages:
            keys = [{KEY: item[KEY]} for item in page.get("Items", [])]
            for start in range(0, len(keys), BATCH_SIZE):
                _batch_delete(handle, table, keys[start : start + BATCH_SIZE])
            deleted += len(keys)
        logger.info("clear_expired: deleted %d expired sessions from %s", deleted, table)
        return deleted

    @classmethod
    async def aclear_expired(cls) -> int:  # type: ignore[override]  # Django's returns None
        return await _in_thread(cls.clear_expired)()


if settings.configured and settings.SESSION_ENGINE == __name__:
    require_installed(f"SESSION_ENGINE = {__name__!r}")
