"""Opaque, signed pagination cursors (keyset pagination, never offsets).

A cursor carries DynamoDB's ``LastEvaluatedKey`` and an HMAC-SHA256 over it
and the query it came from (model, index, key condition and its values,
filter, direction), keyed by Django's ``SECRET_KEY`` (``SECRET_KEY_FALLBACKS``
are accepted when reading, as Django's own signing does). A cursor that was
edited, cut short, or made by another query, table or deployment fails the
constant-time signature check and gives ``InvalidCursor`` - never a request
that starts somewhere unexpected.

One HMAC per cursor, its key derived once per secret: Django's ``Signer``
derives a key on every call and serialises through more layers, which was
most of a page's cursor cost.

The text uses only ``A-Z a-z 0-9 - _ .``: safe in a URL without quoting.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import json
from typing import Any

from django.conf import settings

from ..exceptions import InvalidCursor

_SALT = b"dynamo_app.cursor"
_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=True)


def identity(parts: dict[str, Any]) -> str:
    """The text that identifies a query (not its page size), signed into its cursors."""
    return repr(sorted(parts.items()))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@functools.lru_cache(maxsize=8)
def _key(secret: str | bytes) -> bytes:
    """The cursor key of one secret: cursors can never be confused with another
    use of the secret (Django's signatures, sessions)."""
    raw = secret.encode() if isinstance(secret, str) else secret
    return hmac.new(raw, _SALT, hashlib.sha256).digest()


def _signature(secret: str | bytes, query: str, payload: str) -> bytes:
    message = f"{query}\n{payload}".encode()
    return hmac.new(_key(secret), message, hashlib.sha256).digest()


def encode(last_key: dict[str, dict[str, Any]], query: str) -> str:
    payload = []
    for name, value in last_key.items():
        ((kind, raw),) = value.items()
        if kind == "B":
            raw = base64.b64encode(raw).decode()
        payload.append([name, kind, raw])
    text = _b64(_JSON.encode(payload).encode())
    return f"{text}.{_b64(_signature(settings.SECRET_KEY, query, text))}"


def decode(cursor: str, query: str, key_names: set[str]) -> dict[str, dict[str, Any]]:
    """The ``ExclusiveStartKey`` of a cursor made by this same query."""
    if not isinstance(cursor, str) or not cursor:
        raise InvalidCursor(f"A cursor is a non-empty string, got {cursor!r}.")
    try:
        text, _, signature = cursor.rpartition(".")
        given = _unb64(signature)
        secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", ())]
        if not any(hmac.compare_digest(given, _signature(s, query, text)) for s in secrets):
            raise ValueError("signature")
        key: dict[str, dict[str, Any]] = {}
        for name, kind, raw in json.loads(_unb64(text)):
            if kind not in ("S", "N", "B"):
                raise ValueError(kind)
            key[name] = {kind: base64.b64decode(raw, validate=True) if kind == "B" else raw}
    except (ValueError, TypeError, binascii.Error) as exc:
        raise InvalidCursor(
            "This cursor is malformed, was modified, or belongs to another query or table. "
            "Start again from the first page (cursor=None)."
        ) from exc
    if set(key) != key_names:
        raise InvalidCursor("This cursor does not fit the query's key; start from the first page.")
    return key
