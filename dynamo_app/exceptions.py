"""Every error a user of dynamo_app can catch, grouped by what it means.

Each message says what went wrong *and* what to do about it. None carries a
secret: settings values that are secrets are masked before any message is built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from django.core.cache.backends.base import InvalidCacheKey
from django.core.exceptions import ImproperlyConfigured, ObjectDoesNotExist, SuspiciousOperation
from django.core.exceptions import ValidationError as DjangoValidationError

if TYPE_CHECKING:
    from .models.base import Model
    from .streams.records import StreamRecord

__all__ = [
    "AccessNotAllowed",
    "AlreadyApplied",
    "AlreadyExists",
    "BatchIncomplete",
    "BatchOutcomeUnknown",
    "CacheKeyError",
    "ConditionFailed",
    "ConnectionFailed",
    "DamagedResponse",
    "DoesNotExist",
    "DynamoError",
    "FastPathUnfit",
    "InvalidCursor",
    "ItemTooLarge",
    "LoadError",
    "LocalServerError",
    "MalformedStreamEvent",
    "MigrationTimeout",
    "MissingDependency",
    "ModelDefinitionError",
    "NotConfigured",
    "NotInstalled",
    "NotSupported",
    "OutcomeUnknown",
    "QueryError",
    "ReceiverFailed",
    "SchemaError",
    "SchemaMismatch",
    "SequenceError",
    "ServerError",
    "ServiceError",
    "StaleObjectError",
    "StateFileError",
    "StoredValueError",
    "StreamError",
    "TableNotFound",
    "Throttled",
    "TransactionCanceled",
    "TransactionLimitExceeded",
    "UniqueViolation",
    "ValidationError",
    "WriteError",
]


class DynamoError(Exception):
    """Base class of every error raised by dynamo_app."""


# --- configuration -----------------------------------------------------------


class FastPathUnfit(DynamoError):
    """A part of the fast client path does not fit the botocore that runs. Raised
    and caught while a client is built: that part is left to botocore, with a
    warning; it never reaches a caller."""


class NotConfigured(DynamoError, ImproperlyConfigured):
    """An operation needs DynamoDB but the app was not enabled."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(
            message
            or "DynamoDB is not enabled: set DYNAMO = {'ENABLED': True, ...} in your "
            "Django settings (and a REGION / ENDPOINT) to use dynamo_app models."
        )


class MissingDependency(DynamoError, ImproperlyConfigured):
    """A feature needs a package that is not installed; the message names the
    extra that brings it (e.g. ``django-dynamo-app[local]`` for the local server)."""


class NotInstalled(DynamoError, ImproperlyConfigured):
    """dynamo_app is used (a model, the DYNAMO section, the session engine) but
    "dynamo_app" is not in INSTALLED_APPS, so its startup checks, system checks
    and commands would silently not run."""


class LocalServerError(DynamoError, ImproperlyConfigured):
    """The local DynamoDB server (``dynamo_local``, ``ENDPOINT = "embedded"``)
    cannot start or cannot be shared; the message says what to do."""


class StateFileError(LocalServerError):
    """The local state file cannot be used: the path is a folder or a file that
    is not the app's state file (left untouched), or another server holds it."""


class AccessNotAllowed(DynamoError, RuntimeError):
    """A test run refused a DynamoDB request: the test did not ask for the run's
    throwaway store, so it would otherwise have reached some other one. The
    message names the fixture, mark or test case that gives a test its tables."""


class ModelDefinitionError(DynamoError, ImproperlyConfigured):
    """A model class, field, index or declared query is declared wrongly."""


class NotSupported(DynamoError, AttributeError):
    """A Django ORM habit that a DynamoDB model has no equivalent for
    (``objects.all()``, ``django.forms.ModelForm``); the message names the
    DynamoDB way. An ``AttributeError``, as the missing attribute was before,
    so ``hasattr()`` and ``getattr(..., default)`` keep answering as they did."""


# --- values and queries ------------------------------------------------------


class ValidationError(DynamoError, DjangoValidationError):
    """A value cannot be stored: wrong type, out of range, too large.

    A subclass of Django's ``ValidationError`` so forms and DRF serializers
    treat it like any other validation failure. Raised before any request.
    ``Model.full_clean()`` raises it with an ``error_dict`` (every bad field);
    ``reason`` is the message without the model and field, for a form.
    """

    def __init__(
        self,
        message: str | dict[str, Any],
        *,
        model: str = "",
        field: str = "",
        reason: str = "",
    ) -> None:
        self.model = model
        self.field = field
        self.reason = reason or (message if isinstance(message, str) else "")
        DjangoValidationError.__init__(self, message)


class ItemTooLarge(ValidationError):
    """An item is over DynamoDB's 400 KB limit; nothing was sent."""


class CacheKeyError(DynamoError, InvalidCacheKey):
    """A cache key DynamoDB cannot store (empty, or over 1,024 bytes): Django's
    ``InvalidCacheKey``, raised before any request."""


class StoredValueError(DynamoError, ValueError):
    """An item in the table holds a value its model cannot read (e.g. a number
    where the field stores a string): written by other code or an older model.
    The message names the table, the field and the stored type."""


class SequenceError(DynamoError, ValueError):
    """A sequence cannot be used or moved as asked: a bad name or cache size,
    or an advance that would move it backwards (numbers already handed out
    would be handed out again). The message names the sequence."""


class LoadError(DynamoError, ValueError):
    """A ``dynamo_load`` file cannot be loaded, or stopped loading: ``line`` is the
    (1-based) number of the first line concerned, ``problems`` every bad line found
    before anything was written, as ``(line, problem)``. The message says which
    lines are loaded."""

    def __init__(
        self, message: str, *, line: int, problems: list[tuple[int, str]] | None = None
    ) -> None:
        super().__init__(message)
        self.line = line
        self.problems = problems or []


class QueryError(DynamoError, ValueError):
    """A query (or a condition) cannot be run as written: no partition-key
    equality, a ``BETWEEN`` whose bounds DynamoDB refuses, a page size it cannot take."""


class InvalidCursor(QueryError, SuspiciousOperation):
    """A pagination cursor is malformed, tampered with, or from another query.

    A cursor comes from the client (``?cursor=``), so this is bad user input:
    as a ``SuspiciousOperation`` Django answers it with a 400 in any view that
    lets it through (logged to ``django.security.InvalidCursor``), never a 500."""


# --- reads -------------------------------------------------------------------


class DoesNotExist(DynamoError, ObjectDoesNotExist):
    """Base of every ``Model.DoesNotExist``. ``attempts`` counts the requests sent
    (an ``update()`` of a missing item finds it out from its failed condition)."""

    def __init__(self, message: str = "", *, attempts: int = 1) -> None:
        super().__init__(message)
        self.attempts = attempts


# --- writes ------------------------------------------------------------------


class WriteError(DynamoError):
    """A write was refused; nothing was changed (by a batch: nothing it lists
    as not written)."""


class ConditionFailed(WriteError):
    """A write's condition did not hold. When DynamoDB returned the item as
    stored, ``raw_item`` is it in wire form (attribute values as sent) and, from
    a model's write, ``item`` is it decoded to a model instance (None from a raw
    ``Handle.call``). ``attempts`` counts the requests sent (throttled ones included)."""

    def __init__(
        self,
        message: str,
        *,
        item: Model | None = None,
        raw_item: dict[str, Any] | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.item = item
        self.raw_item = raw_item
        self.attempts = attempts


class AlreadyExists(ConditionFailed):
    """An insert-only create found an item with the same key."""


class StaleObjectError(ConditionFailed):
    """An optimistic-locking write found a newer version than the one read."""


class UniqueViolation(WriteError):
    """A unique constraint's value is already claimed by another item. ``attempts``
    counts the requests sent (0: two claims of one value, refused before sending)."""

    def __init__(
        self, message: str, *, model: str, constraint: str, value: Any, attempts: int = 1
    ) -> None:
        super().__init__(message)
        self.model = model
        self.constraint = constraint
        self.value = value
        self.attempts = attempts


class TransactionCanceled(WriteError):
    """DynamoDB cancelled a transaction; ``reasons`` holds one entry per action,
    ``attempts`` counts the requests sent."""

    def __init__(
        self,
        message: str,
        *,
        reasons: Sequence[Mapping[str, Any]] | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.reasons = reasons or []
        self.attempts = attempts


class TransactionLimitExceeded(DynamoError, ValueError):
    """A transaction breaks a DynamoDB limit (actions, size, one action per item)."""


class AlreadyApplied(WriteError):
    """A write carrying an idempotency key was applied before; nothing was done now.
    ``attempts`` counts the requests sent."""

    def __init__(self, message: str, *, attempts: int = 1) -> None:
        super().__init__(message)
        self.attempts = attempts


class BatchIncomplete(WriteError):
    """A batch stopped with items known not written (or read): DynamoDB kept
    leaving them unprocessed, or a request of it was refused. The items before
    them are done; ``unprocessed`` lists the keys of the rest, none of them
    written, so sending them again is safe. ``__cause__`` is the refusal, if any.
    A batch that may have written some of them is ``BatchOutcomeUnknown``.
    """

    def __init__(self, message: str, *, unprocessed: list[Any]) -> None:
        super().__init__(message)
        self.unprocessed = unprocessed


# --- the service ---------------------------------------------------------------


class ServiceError(DynamoError):
    """DynamoDB (or the network to it) failed a request after the retry policy.

    ``code`` is DynamoDB's error code where there is one; ``attempts`` counts the
    requests sent; ``__cause__`` is the botocore exception, without its traceback
    (its frames hold the signed request).
    """

    def __init__(
        self, message: str, *, code: str = "", operation: str = "", attempts: int = 1
    ) -> None:
        super().__init__(message)
        self.code = code
        self.operation = operation
        self.attempts = attempts


class ConnectionFailed(ServiceError):
    """The endpoint could not be reached or stopped answering."""


class Throttled(ServiceError):
    """DynamoDB kept throttling or conflicting until the retry budget ran out."""


class ServerError(ServiceError):
    """DynamoDB kept answering a read with a server error (5xx) until the retry
    budget ran out (a write in that case is ``OutcomeUnknown``)."""


class DamagedResponse(ConnectionFailed):
    """The answers to a read arrived damaged (their ``x-amz-crc32`` checksum did
    not match) on every attempt: something between the app and DynamoDB changes them."""


class OutcomeUnknown(ServiceError):
    """A write may or may not have been applied: DynamoDB's answer was a server
    error, never came, or arrived damaged, and the write could not be repeated
    safely (or its repeat could not tell). Not a ``WriteError``: something may
    have changed. Read the item (strongly consistent) before writing again; an
    ``idempotency_key`` makes such a write safely repeatable."""


class BatchOutcomeUnknown(OutcomeUnknown):
    """A batch write stopped at a request whose outcome is unknown: ``written``
    lists the keys known written, ``unknown`` those the request carried (each
    may or may not be written), ``unprocessed`` those known not written (never
    sent), as ``BatchIncomplete.unprocessed`` does. ``__cause__`` is the
    request's ``OutcomeUnknown``."""

    def __init__(
        self,
        message: str,
        *,
        written: list[Any],
        unknown: list[Any],
        unprocessed: list[Any],
        operation: str = "",
        attempts: int = 1,
    ) -> None:
        super().__init__(message, operation=operation, attempts=attempts)
        self.written = written
        self.unknown = unknown
        self.unprocessed = unprocessed


class TableNotFound(ServiceError):
    """A table does not exist (or is not ACTIVE yet)."""


# --- schema -------------------------------------------------------------------


class SchemaError(DynamoError):
    """Base of the schema workflow's errors."""


class SchemaMismatch(SchemaError):
    """Deployed tables differ from the declared ones; ``problems`` lists each."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"DynamoDB schema does not match the declared models:\n{lines}")


class MigrationTimeout(SchemaError):
    """A table or index did not become ACTIVE within the wait limit."""


# --- streams -----------------------------------------------------------------


class StreamError(DynamoError):
    """A stream record could not be delivered: its table is no streamed model's,
    or its item does not decode as the model's."""


class MalformedStreamEvent(StreamError, ValueError):
    """An event handed to ``lambda_handler`` is not a DynamoDB Streams event: no
    ``Records``, or a record without its sequence number, change or stream ARN.
    Nothing of it was delivered; the message names the record and what it lacks."""


class ReceiverFailed(StreamError):
    """A receiver raised on a record: ``record`` (the ``StreamRecord``),
    ``receiver`` (the function) and the exception (``__cause__``) say which.
    The record comes again (at least once), to every receiver of its model."""

    def __init__(self, message: str, *, record: StreamRecord[Any], receiver: Any) -> None:
        super().__init__(message)
        self.record = record
        self.receiver = receiver
