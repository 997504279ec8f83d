"""Which failures to retry, and how long to wait: conflicts are normal, not bugs.

Every error is put in one of four classes:

* ``RETRY`` - transient on the service side (throttling, transaction conflicts,
  5xx): retry with capped exponential backoff and full jitter.
* ``RECONNECT`` - the request never reached the service (connection refused,
  connect timeout): open a new connection and retry; always safe.
* ``IF_IDEMPOTENT`` - the outcome is unknown (read timeout, connection dropped
  mid-request): retry only an operation that is safe to apply twice.
* ``NEVER`` - the answer is final (condition failed, validation, missing table).

botocore's own retries are switched off by the handle, so the two layers never
multiply.
"""

from __future__ import annotations

import enum
import logging
import random
import time
from collections.abc import Callable
from typing import TypeVar

from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from .conf import RetrySettings

logger = logging.getLogger("dynamo_app.retry")

T = TypeVar("T")


class Decision(enum.Enum):
    RETRY = "retry"
    RECONNECT = "reconnect"
    IF_IDEMPOTENT = "retry if idempotent"
    NEVER = "never retry"


THROTTLING_CODES = frozenset(
    {
        "ThrottlingException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "TransactionInProgressException",
        "InternalServerError",
        "ServiceUnavailable",
        "LimitExceededException",
    }
)
# Cancellation reasons that mean "someone else was busy", never "your data is wrong".
TRANSIENT_CANCELLATION_CODES = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "None", ""}
)


def error_code(exc: BaseException) -> str:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code", ""))
    return ""


def cancellation_codes(exc: ClientError) -> list[str]:
    reasons = exc.response.get("CancellationReasons") or []
    return [str(r.get("Code") or "None") for r in reasons]


def classify(exc: BaseException) -> Decision:
    """The retry class of one failed attempt."""
    if isinstance(exc, (EndpointConnectionError, ConnectTimeoutError)):
        return Decision.RECONNECT
    if isinstance(exc, (ReadTimeoutError, ConnectionClosedError)):
        return Decision.IF_IDEMPOTENT
    if not isinstance(exc, ClientError):
        return Decision.NEVER
    code = error_code(exc)
    if code in THROTTLING_CODES:
        return Decision.RETRY
    if code == "TransactionCanceledException":
        codes = cancellation_codes(exc)
        transient = [c for c in codes if c not in ("None", "")]
        if transient and all(c in TRANSIENT_CANCELLATION_CODES for c in transient):
            return Decision.RETRY
        return Decision.NEVER
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    if isinstance(status, int) and status >= 500:
        return Decision.RETRY
    return Decision.NEVER


class RetryPolicy:
    """Runs a call under the app's retry rules.

    ``sleep`` and ``rng`` are injectable so tests can check the delays without
    waiting for them.
    """

    def __init__(
        self,
        settings: RetrySettings,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self.settings = settings
        self.sleep = sleep
        self.rng = rng or random.Random()

    def delay(self, attempt: int) -> float:
        """Full-jitter backoff before retry number ``attempt`` (1-based)."""
        ceiling = min(self.settings.max_delay, self.settings.base_delay * (2 ** (attempt - 1)))
        return self.rng.uniform(0, ceiling)

    def should_retry(self, exc: BaseException, *, idempotent: bool) -> bool:
        decision = classify(exc)
        if decision in (Decision.RETRY, Decision.RECONNECT):
            return True
        return decision is Decision.IF_IDEMPOTENT and idempotent

    def run(self, call: Callable[[], T], *, idempotent: bool, what: str = "request") -> T:
        """Call ``call`` until it succeeds, fails for good, or attempts run out.

        The last exception is re-raised unchanged; ``attempts`` is set on it so
        callers can report how hard we tried.
        """
        attempt = 1
        while True:
            try:
                return call()
            except Exception as exc:
                if attempt >= self.settings.max_attempts or not self.should_retry(
                    exc, idempotent=idempotent
                ):
                    exc.attempts = attempt  # type: ignore[attr-defined]
                    raise
                wait = self.delay(attempt)
                logger.info(
                    "%s failed (%s: %s), attempt %d of %d; retrying in %.3fs",
                    what,
                    type(exc).__name__,
                    error_code(exc) or classify(exc).value,
                    attempt,
                    self.settings.max_attempts,
                    wait,
                )
                self.sleep(wait)
                attempt += 1
