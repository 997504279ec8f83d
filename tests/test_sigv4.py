"""dynamo_app.client.sigv4: AWS's published SigV4 test vectors, and botocore's own
signature of every operation the app sends (the workload of test_iam, which
proves it sends every one), byte for byte; LEAN_SIGNING=False is botocore's signer."""

from __future__ import annotations

from typing import Any

import pytest
from botocore import auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials
from django.conf import settings
from django.test import override_settings

from dynamo_app.client import sigv4
from dynamo_app.client.handle import get_handle
from dynamo_app.deploy import iam
from tests import test_iam
from tests.test_iam import IamReading

SUITE_KEY = Credentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
SCOPE = "AKIDEXAMPLE/20150830/us-east-1/service/aws4_request"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}

# AWS's SigV4 test suite (aws-sig-v4-test-suite): name, method, path, headers, body, signature.
VECTORS = [
    ("get-vanilla", "GET", "/", {}, b"", "host;x-amz-date",
     "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"),
    ("get-vanilla-query-order-key-case", "GET", "/?Param2=value2&Param1=value1", {}, b"",
     "host;x-amz-date", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"),
    ("get-utf8", "GET", "/\u1234", {}, b"", "host;x-amz-date",
     "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"),
    ("post-vanilla", "POST", "/", {}, b"", "host;x-amz-date",
     "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"),
    ("post-vanilla-query", "POST", "/?Param1=value1", {}, b"", "host;x-amz-date",
     "28038455d6de14eafc1f9222cf5aa6f1a96197d7deb8263271d420d138af7f11"),
    ("post-x-www-form-urlencoded", "POST", "/", FORM, b"Param1=value1",
     "content-type;host;x-amz-date",
     "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"),
]  # fmt: skip


@pytest.mark.parametrize("name, method, path, headers, body, signed, signature", VECTORS)
def test_aws_sigv4_test_suite(name, method, path, headers, body, signed, signature):
    request = AWSRequest(
        method, f"https://example.amazonaws.com{path}", {"Host": "example.amazonaws.com", **headers}
    )
    request.data = body
    sigv4.LeanSigV4Auth(SUITE_KEY, "service", "us-east-1").sign_at(request, "20150830T123600Z")
    assert request.headers["Authorization"] == (
        f"AWS4-HMAC-SHA256 Credential={SCOPE}, SignedHeaders={signed}, Signature={signature}"
    )


class SignedTwice:
    """Each request the lean signer signs, signed again by botocore's SigV4Auth at the
    same instant from the same headers (sigv4.signed_twice); the headers must be equal."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.operations: set[str] = set()
        self.mismatches: list[tuple[str, dict[str, Any], dict[str, Any]]] = []
        monkeypatch.setattr(sigv4.LeanSigV4Auth, "add_auth", lambda *args: self.sign(*args))

    def sign(self, signer: Any, request: Any) -> None:
        lean, stock = sigv4.signed_twice(signer, request)
        operation = str(request.headers.get("X-Amz-Target", "")).rpartition(".")[2]
        self.operations.add(operation)
        if lean != stock:
            self.mismatches.append((operation, lean, stock))


def test_every_operation_the_app_sends_is_signed_as_botocore_signs_it(
    monkeypatch, declare, app_operations
):
    twice = SignedTwice(monkeypatch)
    test_iam.test_the_app_sends_every_listed_operation(declare, app_operations)
    assert {op.name for op in iam.OPERATIONS} <= twice.operations
    assert twice.mismatches == []


def test_with_a_session_token_too(monkeypatch, dynamo_db):
    twice = SignedTwice(monkeypatch)
    with override_settings(DYNAMO={**settings.DYNAMO, "SESSION_TOKEN": "session-token-value"}):
        IamReading.objects.create(sensor="tok", at=1)
        IamReading.objects.get(sensor="tok", at=1)
    assert {"PutItem", "GetItem"} <= twice.operations and twice.mismatches == []


def test_lean_signing_off_is_botocore_signer(dynamo_db):
    signer = get_handle().client._request_signer
    assert type(signer.get_auth_instance("dynamodb", "us-east-1", "v4")) is sigv4.LeanSigV4Auth
    with override_settings(DYNAMO={**settings.DYNAMO, "LEAN_SIGNING": False}):
        signer = get_handle().client._request_signer
        assert type(signer.get_auth_instance("dynamodb", "us-east-1", "v4")) is auth.SigV4Auth
        IamReading.objects.create(sensor="off", at=1)
        assert IamReading.objects.get(sensor="off", at=1).at == 1


def test_signing_keys_are_kept_under_a_hash_of_the_secret():
    request = AWSRequest("POST", "https://example.amazonaws.com/", {}, b"{}")
    sigv4.LeanSigV4Auth(SUITE_KEY, "service", "us-east-1").sign_at(request, "20150830T123600Z")
    kept = repr(sigv4.LeanSigV4Auth._signing_keys)
    assert "20150830" in kept  # the key was derived and kept
    assert SUITE_KEY.secret_key not in kept
    assert SUITE_KEY.secret_key.encode() not in b"".join(
        part for key in sigv4.LeanSigV4Auth._signing_keys for part in key if isinstance(part, bytes)
    )
