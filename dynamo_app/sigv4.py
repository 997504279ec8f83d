"""SigV4 for the handle's client: botocore's algorithm and output, with less work per request.

Profiled with HTTP replaced by a recorded answer, signing is the largest part
of botocore's CPU per DynamoDB request. botocore's ``SigV4Auth`` copies the
headers into an ``email.message`` object twice per request (once for the
canonical request, once for the ``Authorization`` header), parses the URL
three times, and derives the signing key with four HMACs. ``LeanSigV4Auth``
produces the same bytes - the same canonical request, string to sign and
``Authorization`` header; tests/test_sigv4.py holds it to AWS's published
SigV4 test vectors and to botocore's own output for every operation the app
sends - while reading the headers once, hashing the body's bytes without
preparing the whole request again, keeping what depends on the URL alone (host,
path, query) per URL, and the signing key per day, region and service.

Credentials are botocore's (its providers, refresh and frozen credentials per
request); payload hashing, the date and token headers are botocore's methods.
``DYNAMO['LEAN_SIGNING'] = False`` leaves signing wholly to botocore.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Callable
from datetime import datetime
from typing import Any, cast
from urllib.parse import urlsplit

from botocore import auth, utils
from botocore.exceptions import NoCredentialsError
from botocore.signers import RequestSigner

__all__ = ["LeanSigV4Auth", "lean_signing"]

# botocore-stubs declare botocore's public API only; these are the private
# helpers SigV4Auth itself uses, so the output stays botocore's.
_auth: Any = auth
get_current_datetime: Callable[[], datetime] = cast(Any, utils).get_current_datetime

_KEYS_KEPT = 8  # signing keys (one per day, secret, region and service)


@functools.lru_cache(maxsize=256)
def _url_parts(url: str) -> tuple[str, str, str]:
    """The host header, canonical path and canonical query of a URL, as botocore makes them."""
    signer = _auth.SigV4Auth(None, "", "")
    parts = urlsplit(url)
    path = signer._normalize_url_path(parts.path)
    return _auth._host_from_url(url), path, signer._canonical_query_string_url(parts)


class LeanSigV4Auth(auth.SigV4Auth):
    """``botocore.auth.SigV4Auth`` with the same output, computed with less overhead."""

    _signing_keys: dict[tuple[Any, ...], bytes] = {}
    # set by SigV4Auth.__init__ / defined by SigV4Auth (not in botocore-stubs)
    _region_name: str
    _service_name: str
    _modify_request_before_signing: Callable[[Any], None]
    _is_streaming_checksum_payload: Callable[[Any], bool]
    _should_sha256_sign_payload: Callable[[Any], bool]

    def _canonical_headers(self, request: Any, host: str) -> tuple[str, str]:
        """(canonical headers, signed headers) as ``headers_to_sign``,
        ``canonical_headers`` and ``signed_headers`` make them."""
        values: dict[str, list[Any]] = {}
        for name, value in request.headers.items():
            lname = name.lower()
            if lname not in auth.SIGNED_HEADERS_BLACKLIST:
                values.setdefault(lname, []).append(value)
        if "host" not in values:
            values["host"] = [host]
        lines = []
        for key in sorted(values):
            value = ",".join(" ".join(v.split()) for v in values[key])
            lines.append(f"{key}:{_auth.ensure_unicode(value)}\n")
        return "".join(lines), ";".join(sorted(n.strip() for n in values))

    def _signing_key(self, day: str) -> bytes:
        secret = self.credentials.secret_key
        cache_key = (secret, day, self._region_name, self._service_name)
        key = self._signing_keys.get(cache_key)
        if key is None:
            key = f"AWS4{secret}".encode()
            for part in (day, self._region_name, self._service_name, "aws4_request"):
                key = hmac.new(key, part.encode("utf-8"), hashlib.sha256).digest()
            if len(self._signing_keys) >= _KEYS_KEPT:
                self._signing_keys.clear()
            self._signing_keys[cache_key] = key
        return key

    def payload(self, request: Any) -> str:
        """botocore's payload hash; a body of bytes (every DynamoDB request's JSON)
        is hashed as it is, without ``request.body``'s preparing of the whole request."""
        data = request.data
        if type(data) is not bytes or not self._plain_payload(request):
            return super().payload(request)
        return hashlib.sha256(data).hexdigest() if data else _auth.EMPTY_SHA256_HASH

    def _plain_payload(self, request: Any) -> bool:
        """Whether botocore would hash the body itself (no trailer, payload signing on)."""
        return not self._is_streaming_checksum_payload(request) and bool(
            self._should_sha256_sign_payload(request)
        )

    def add_auth(self, request: Any) -> None:
        if self.credentials is None:
            raise NoCredentialsError()
        timestamp = get_current_datetime().strftime(auth.SIGV4_TIMESTAMP)
        request.context["timestamp"] = timestamp
        self._modify_request_before_signing(request)
        host, path, query = _url_parts(request.url)
        if request.params:
            query = self.canonical_query_string(request)
        canonical_headers, signed_headers = self._canonical_headers(request, host)
        if "X-Amz-Content-SHA256" in request.headers:
            body_checksum = request.headers["X-Amz-Content-SHA256"]
        else:
            body_checksum = self.payload(request)
        canonical_request = "\n".join(
            (
                request.method.upper(),
                path,
                query,
                canonical_headers,
                signed_headers,
                body_checksum,
            )
        )
        scope = f"{timestamp[:8]}/{self._region_name}/{self._service_name}/aws4_request"
        string_to_sign = "\n".join(
            (
                "AWS4-HMAC-SHA256",
                timestamp,
                scope,
                hashlib.sha256(canonical_request.encode("utf-8")).hexdigest(),
            )
        )
        signature = hmac.new(
            self._signing_key(timestamp[:8]), string_to_sign.encode("utf-8"), hashlib.sha256
        ).hexdigest()
        request.headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={self.credentials.access_key}/{scope}, "
            f"SignedHeaders={signed_headers}, Signature={signature}"
        )


class _LeanRequestSigner(RequestSigner):
    """botocore's request signer, handing out ``LeanSigV4Auth`` where it chose SigV4."""

    def get_auth_instance(self, *args: Any, **kwargs: Any) -> Any:
        signer = super().get_auth_instance(*args, **kwargs)
        if type(signer) is auth.SigV4Auth:
            signer.__class__ = LeanSigV4Auth
        return signer


def lean_signing(client: Any) -> Any:
    """``client`` signing its SigV4 requests with ``LeanSigV4Auth``."""
    if type(client._request_signer) is RequestSigner:
        client._request_signer.__class__ = _LeanRequestSigner
    return client
