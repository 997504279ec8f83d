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
botocore's private helpers are looked up when a request is signed, never at
import, so a botocore without one still imports this module; a signature that
fails for want of one is made by botocore's ``SigV4Auth`` instead, and signing
is left to botocore from then on (``fallback``).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

from botocore import auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from botocore.exceptions import NoCredentialsError
from botocore.signers import RequestSigner

from ..exceptions import FastPathUnfit
from . import fallback

__all__ = ["LeanSigV4Auth", "lean_signing", "signed_twice"]

# botocore-stubs declare botocore's public API only; these are the private
# helpers SigV4Auth itself uses, so the output stays botocore's.
_auth: Any = auth

COMPONENT = "signing"
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
        """The day's key, derived once: kept under a hash of the secret, so the
        secret itself is in no structure a repr or a debugger could show."""
        secret = str(self.credentials.secret_key)
        digest = hashlib.sha256(secret.encode("utf-8")).digest()
        cache_key = (digest, day, self._region_name, self._service_name)
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
        if COMPONENT in fallback.off:
            return super().add_auth(request)
        try:
            self.sign_at(request, datetime.now(UTC).strftime(auth.SIGV4_TIMESTAMP))
        except NoCredentialsError:
            raise
        except Exception as exc:
            fallback.turn_off(COMPONENT, exc)
            super().add_auth(request)  # nothing was sent: botocore signs it afresh

    def sign_at(self, request: Any, timestamp: str) -> None:
        """Sign ``request`` as at ``timestamp`` (``SIGV4_TIMESTAMP``, UTC)."""
        if self.credentials is None:
            raise NoCredentialsError()
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


def signed_twice(signer: LeanSigV4Auth, request: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """``request`` signed by ``signer``, and an unsigned copy of it by botocore's
    ``SigV4Auth`` at the same instant: the two sets of headers, to compare."""
    again = AWSRequest(request.method, request.url, dict(request.headers.items()), request.data)
    again.context = dict(request.context)
    auth.SigV4Auth(signer.credentials, signer._service_name, signer._region_name).add_auth(again)
    signer.sign_at(request, again.context["timestamp"])
    return dict(request.headers.items()), dict(again.headers.items())


# One request as the handle's client sends it, signed by fixed credentials (a
# session token too) at client build: both ways, to compare.
_PROBE_CREDENTIALS = Credentials("AKIDEXAMPLE", "probe-not-a-secret", "probe-session-token")
_PROBE_HEADERS = {
    "X-Amz-Target": "DynamoDB_20120810.GetItem",
    "Content-Type": "application/x-amz-json-1.0",
    "User-Agent": "dynamo_app-probe",
}
_PROBE_BODY = b'{"TableName": "t", "Key": {"pk": {"S": "a b"}}}'


def lean_signing(client: Any) -> Any:
    """``client`` signing its SigV4 requests with ``LeanSigV4Auth``, once a probe
    request signed both ways came out the same; else ``FastPathUnfit``, and
    ``client`` unchanged."""
    if type(client._request_signer) is not RequestSigner:
        raise FastPathUnfit(
            f"the client's request signer is a {type(client._request_signer).__name__}"
        )
    region = client.meta.region_name
    url = f"https://dynamodb.{region}.amazonaws.com/"
    request = AWSRequest("POST", url, dict(_PROBE_HEADERS), _PROBE_BODY)
    signer = LeanSigV4Auth(_PROBE_CREDENTIALS, "dynamodb", region)
    lean, stock = signed_twice(signer, request)
    if lean != stock:
        differ = sorted(k for k in lean.keys() | stock.keys() if lean.get(k) != stock.get(k))
        raise FastPathUnfit(f"a probe request signed both ways differs in {', '.join(differ)}")
    client._request_signer.__class__ = _LeanRequestSigner
    return client
