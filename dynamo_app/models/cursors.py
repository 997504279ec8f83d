"""Opaque, signed pagination cursors (keyset pagination, never offsets).

A cursor carries DynamoDB's ``LastEvaluatedKey``, signed with Django's
``SECRET_KEY`` under a salt derived from the query it came from (model,
index, key condition, filter, direction). A cursor that was edited, cut
short, or made by another query or table fails the signature check and gives
``InvalidCursor`` - never a request that starts somewhere unexpected.

The text uses only ``A-Z a-z 0-9 - _ .``: safe in a URL without quoting.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from django.core import signing

from ..exceptions import InvalidCursor

_SALT = "dynamo_app.cursor"


def fingerprint(parts: dict[str, Any]) -> str:
    """A stable digest of what identifies a query (not its page size)."""
    return hashlib.sha256(repr(sorted(parts.items())).encode()).hexdigest()[:32]


def _signer(query: str) -> signing.Signer:
    return signing.Signer(salt=f"{_SALT}:{query}", sep=".")


def encode(last_key: dict[str, dict[str, Any]], query: str) -> str:
    payload = []
    for name, value in last_key.items():
        ((kind, raw),) = value.items()
        if kind == "B":
            raw = base64.b64encode(raw).decode()
        payload.append([name, kind, raw])
    return _signer(query).sign_object(payload)


def decode(cursor: str, query: str, key_names: set[str]) -> dict[str, dict[str, Any]]:
    """The ``ExclusiveStartKey`` of a cursor made by this same query."""
    if not isinstance(cursor, str) or not cursor:
        raise InvalidCursor(f"A cursor is a non-empty string, got {cursor!r}.")
    try:
        payload = _signer(query).unsign_object(cursor)
        key: dict[str, dict[str, Any]] = {}
        for name, kind, raw in payload:
            if kind not in ("S", "N", "B"):
                raise ValueError(kind)
            key[name] = {kind: base64.b64decode(raw) if kind == "B" else raw}
    except (signing.BadSignature, ValueError, TypeError) as exc:
        raise InvalidCursor(
            "This cursor is malformed, was modified, or belongs to another query or table. "
            "Start again from the first page (cursor=None)."
        ) from exc
    if set(key) != key_names:
        raise InvalidCursor("This cursor does not fit the query's key; start from the first page.")
    return key
