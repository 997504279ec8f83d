"""Cursors are one HMAC-SHA256 (keyed from SECRET_KEY, compared in constant time)
over the query's identity and the payload; SECRET_KEY_FALLBACKS still read."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from django.test import override_settings

from dynamo_app import models
from dynamo_app.exceptions import InvalidCursor
from dynamo_app.models import cursors


class CurReading(models.Model):
    sensor = models.StringField(partition_key=True)
    at = models.IntegerField(sort_key=True)


LAST = {"sensor": {"S": "s1"}, "at": {"N": "7"}, "blob": {"B": b"\x00\xff"}}


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@override_settings(SECRET_KEY="cursor-test-secret")
def test_a_cursor_is_its_payload_and_an_hmac_of_query_and_payload():
    cursor = cursors.encode(LAST, "query-identity")
    text, signature = cursor.split(".")
    key = hmac.new(b"cursor-test-secret", b"dynamo_app.cursor", hashlib.sha256).digest()
    expected = hmac.new(key, b"query-identity\n" + text.encode(), hashlib.sha256).digest()
    assert _unb64(signature) == expected
    assert set(cursor) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
    assert cursors.decode(cursor, "query-identity", set(LAST)) == LAST
    with pytest.raises(InvalidCursor):
        cursors.decode(cursor, "another-query", set(LAST))


def test_a_rotated_secret_still_reads_cursors_signed_with_a_fallback():
    with override_settings(SECRET_KEY="old-secret"):
        cursor = cursors.encode(LAST, "q")
    with override_settings(SECRET_KEY="new-secret", SECRET_KEY_FALLBACKS=["old-secret"]):
        assert cursors.decode(cursor, "q", set(LAST)) == LAST
    with override_settings(SECRET_KEY="new-secret"), pytest.raises(InvalidCursor):
        cursors.decode(cursor, "q", set(LAST))


def test_the_query_identity_includes_the_key_values(dynamo_db):
    one = CurReading.objects.filter(sensor="s1")._params()[1]
    same = CurReading.objects.filter(sensor="s1")._params()[1]
    other = CurReading.objects.filter(sensor="s2")._params()[1]
    backwards = CurReading.objects.filter(sensor="s1").order_by("-at")._params()[1]
    assert one == same and len({one, other, backwards}) == 3
