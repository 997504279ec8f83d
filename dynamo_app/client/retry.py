"""Which failed calls to send again, and how long to wait: the one place that decides.

A failed attempt has one of four classes (``classify``):

* ``RETRY`` - the service refused it without applying it (throttling, a
  transaction conflict): send it again after capped exponential backoff with
  full jitter.
* ``RECONNECT`` - the request never reached the service (connection refused,
  connect timeout): always safe to send again.
* ``IF_IDEMPOTENT`` - the outcome is unknown: a 5xx, a read timeout, a
  connection dropped mid-request, a damaged response (``x-amz-crc32``
  mismatch). DynamoDB may or may not have applied the write.
* ``NEVER`` - the answer is final (condition failed, validation, missing table).

Whether an unknown outcome may be sent again depends on the call alone
(``repeatable``): reads (PartiQL SELECTs too), unconditional whole-item puts
and deletes and batch writes may; a conditioned put or delete, and a
transaction (``TransactWriteItems``, ``ExecuteTransaction``) carrying a
``ClientRequestToken``, may, and a repeat that then fails its conditions is
resolved from the items DynamoDB returns with the failure (``our_write_in_place``:
else the outcome stays unknown); an ``UpdateItem`` (counters, list appends,
version bumps) never is. ``RetryPolicy.run`` applies both, and records in
the caller's ``Tally`` a write whose outcome stayed unknown (``outcome_unknown``),
so it is reported as ``OutcomeUnknown`` and never as "nothing was written".

botocore's own retries are switched off by the handle, so the two layers never
multiply.
"""

from __future__ import annotations

import enum
import logging
import random
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeGuard, cast

from botocore.exceptions import (
    ChecksumError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
    ResponseStreamingError,
)

from ..conf import RetrySettings
from . import wire

logger = logging.getLogger("dynamo_app.retry")


class Decision(enum.Enum):
    RETRY = "retry"
    RECONNECT = "reconnect"
    IF_IDEMPOTENT = "retry if repeatable"
    NEVER = "never retry"


class Repeat(enum.Enum):
    """Whether a call may be sent again after an attempt whose outcome is unknown."""

    SAFE = "safe"  # a repeat changes nothing the first attempt did not
    CHECKED = "checked"  # a repeat may fail its condition on our own first attempt
    NO = "no"  # a repeat could apply it twice


THROTTLING_CODES = frozenset(
    {
        "ThrottlingException",
        "ProvisionedThroughputExceededException",
        "RequestLimitExceeded",
        "TransactionInProgressException",
        "LimitExceededException",
    }
)
# A 5xx may or may not have been applied (DynamoDB's error-handling guide).
SERVER_ERROR_CODES = frozenset({"InternalServerError", "ServiceUnavailable"})
# Cancellation reasons that mean "someone else was busy", never "your data is wrong".
TRANSIENT_CANCELLATION_CODES = frozenset(
    {"TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "None", ""}
)
# Calls whose repetition cannot change data.
READ_OPERATIONS = frozenset(
    {
        "get_item",
        "batch_get_item",
        "query",
        "scan",
        "transact_get_items",
        "describe_table",
        "describe_time_to_live",
        "list_tables",
    }
)


def error_code(exc: BaseException) -> str:
    if isinstance(exc, ClientError):
        return str(exc.response.get("Error", {}).get("Code", ""))
    return ""


def stored_item(exc: ClientError) -> dict[str, Any] | None:
    """The item a failed condition found (``ReturnValuesOnConditionCheckFailure``),
    in wire form. botocore's type for an error response leaves this key out."""
    return cast("dict[str, Any] | None", exc.response.get("Item"))


def cancellation_reasons(exc: ClientError) -> list[dict[str, Any]]:
    """A cancelled transaction's reasons, one per action (with the item a failed
    condition found, when asked for)."""
    return cast("list[dict[str, Any]]", exc.response.get("CancellationReasons") or [])


def cancellation_codes(exc: ClientError) -> list[str]:
    return [str(r.get("Code") or "None") for r in cancellation_reasons(exc)]


def server_error(exc: BaseException) -> bool:
    """A 5xx answer: DynamoDB failed while handling the request."""
    if not isinstance(exc, ClientError):
        return False
    status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
    return error_code(exc) in SERVER_ERROR_CODES or (isinstance(status, int) and status >= 500)


def classify(exc: BaseException) -> Decision:
    """The retry class of one failed attempt."""
    if isinstance(exc, (EndpointConnectionError, ConnectTimeoutError)):
        return Decision.RECONNECT
    if isinstance(
        exc, (ReadTimeoutError, ConnectionClosedError, ResponseStreamingError, ChecksumError)
    ):
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
    if server_error(exc):
        return Decision.IF_IDEMPOTENT
    return Decision.NEVER


def reads_only(operation: str, params: Mapping[str, Any]) -> bool:
    """Whether the call only reads: a read operation, or PartiQL whose every
    statement is a SELECT."""
    if operation == "execute_statement":
        return _select(params["Statement"])
    if operation == "execute_transaction":
        return all(_select(s["Statement"]) for s in params["TransactStatements"])
    return operation in READ_OPERATIONS


def _select(statement: str) -> bool:
    return re.match(r"\s*SELECT\b", statement, re.IGNORECASE) is not None


def repeatable(operation: str, params: Mapping[str, Any]) -> Repeat:
    """Whether ``operation`` with ``params`` may be sent again when an earlier
    attempt's outcome is unknown."""
    if reads_only(operation, params) or operation == "batch_write_item":
        return Repeat.SAFE  # batch writes are whole-item puts and deletes, never conditioned
    if operation in ("transact_write_items", "execute_transaction"):
        # DynamoDB answers a repeated token with the first attempt's outcome (for 10
        # minutes); an engine that ignores the token (moto) runs the repeat again, and
        # its conditions then fail on our own first attempt: resolved as a put's are.
        return Repeat.CHECKED if params.get("ClientRequestToken") else Repeat.NO
    if operation in ("put_item", "delete_item"):
        return Repeat.CHECKED if "ConditionExpression" in params else Repeat.SAFE
    # update_item (ADD, list_append, arithmetic), PartiQL writes (the text alone cannot
    # tell a conditioned write from a plain one), schema operations
    return Repeat.NO


def our_write_in_place(operation: str, params: Mapping[str, Any], exc: ClientError) -> bool:
    """Whether the item a repeated put or delete found, when its condition failed,
    is what our own earlier attempt left: the very item we put, or no item after a
    delete. Needs ``ReturnValuesOnConditionCheckFailure=ALL_OLD``, so it costs no
    request: DynamoDB returns the item with the failure. A transaction's repeat:
    every action it refused is such a put or delete (an update, a condition check
    or a PartiQL statement cannot tell)."""
    if operation == "transact_write_items":
        reasons = cancellation_reasons(exc)
        refused = [
            (action, reason)
            for action, reason in zip(params["TransactItems"], reasons, strict=False)
            if reason.get("Code") not in ("None", "", None)
        ]
        return bool(refused) and all(
            reason.get("Code") == "ConditionalCheckFailed"
            and kind in ("Put", "Delete")
            and _in_place(kind, action[kind], reason.get("Item"))
            for action, reason in refused
            for kind in action
        )
    if operation in ("put_item", "delete_item"):
        return _in_place("Put" if operation == "put_item" else "Delete", params, stored_item(exc))
    return False


def _in_place(kind: str, params: Mapping[str, Any], stored: dict[str, Any] | None) -> bool:
    if params.get("ReturnValuesOnConditionCheckFailure") != "ALL_OLD":
        return False
    if kind == "Delete":
        return stored is None
    return stored is not None and same_item(stored, params["Item"])


def same_item(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Equal items by value (DynamoDB normalises numbers and orders sets its own way)."""
    return a.keys() == b.keys() and all(wire.decode(a[k]) == wire.decode(b[k]) for k in a)


def _again(decision: Decision, repeat: Repeat) -> bool:
    """Whether an attempt that failed with ``decision`` may be sent again."""
    if decision is Decision.IF_IDEMPOTENT:
        return repeat is not Repeat.NO
    return decision in (Decision.RETRY, Decision.RECONNECT)


def _condition_failed(exc: BaseException) -> TypeGuard[ClientError]:
    """Refused for its conditions: a put's or delete's, or some action's of a
    transaction (``DuplicateItem``: a PartiQL INSERT's key taken)."""
    if not isinstance(exc, ClientError):
        return False
    if error_code(exc) == "TransactionCanceledException":
        codes = cancellation_codes(exc)
        return any(c in ("ConditionalCheckFailed", "DuplicateItem") for c in codes)
    return error_code(exc) == "ConditionalCheckFailedException"


@dataclass
class Tally:
    """How one call under the policy went, for the caller's error and log: kept
    here, never on botocore's exception objects, which are botocore's."""

    attempts: int = 0
    outcome_unknown: bool = False  # a write that may or may not have been applied


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

    def run(
        self,
        call: Callable[[], dict[str, Any]],
        operation: str,
        params: Mapping[str, Any],
        tally: Tally | None = None,
    ) -> dict[str, Any]:
        """Call ``call`` until it succeeds, fails for good, or attempts run out.

        The last exception is re-raised unchanged; ``tally`` says how hard we
        tried and whether a write's outcome is unknown. A conditioned put or
        delete whose repeat finds our own earlier write in place returns ``{}``,
        the answer of the write itself.
        """
        tally = tally if tally is not None else Tally()
        repeat = repeatable(operation, params)
        unknown = False  # an earlier attempt may have been applied
        attempt = 1
        while True:
            tally.attempts = attempt
            try:
                return call()
            except Exception as exc:
                decision = classify(exc)
                final = attempt >= self.settings.max_attempts
                if unknown and repeat is Repeat.CHECKED and _condition_failed(exc):
                    if our_write_in_place(operation, params, exc):
                        return {}
                    # Someone else's item - or ours, overwritten since: no answer either way.
                    decision, final = Decision.IF_IDEMPOTENT, True
                unknown = unknown or decision is Decision.IF_IDEMPOTENT
                if final or not _again(decision, repeat):
                    tally.outcome_unknown = (
                        unknown
                        and decision is not Decision.NEVER
                        and not reads_only(operation, params)
                    )
                    raise
                wait = self.delay(attempt)
                logger.info(
                    "%s failed (%s: %s), attempt %d of %d; retrying in %.3fs",
                    operation,
                    type(exc).__name__,
                    error_code(exc) or decision.value,
                    attempt,
                    self.settings.max_attempts,
                    wait,
                )
                self.sleep(wait)
                attempt += 1
