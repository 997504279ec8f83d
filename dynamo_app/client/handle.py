"""The process handle: one boto3 client and the table resolver, built once.

``AppConfig.ready()`` builds it at startup; every request of the app goes
through ``get_handle().call(...)``, which applies the retry policy and turns
botocore's errors into the app's own. A settings change (``override_settings``)
closes it, and the next use builds a new one.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Literal

import boto3
import botocore.session
from botocore.config import Config
from botocore.exceptions import (
    ChecksumError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
    ResponseStreamingError,
)
from django.core.exceptions import ImproperlyConfigured
from django.core.signals import setting_changed

from .. import exceptions
from ..conf import DynamoSettings, changes_section, get_settings
from . import dax, fastpath, requests
from .retry import Decision, RetryPolicy, Tally, classify, error_code, server_error, stored_item

__all__ = ["Handle", "get_handle", "reset", "using"]

logger = logging.getLogger("dynamo_app")

# Where each paged operation says "more follows", and where the next request says "from here".
_PAGE_KEYS = {"list_tables": ("LastEvaluatedTableName", "ExclusiveStartTableName")}
_ITEM_PAGE_KEYS = ("LastEvaluatedKey", "ExclusiveStartKey")  # scan, query
# The DynamoDB Streams operations: sent by a client of that service, built with
# the same settings, endpoint and credentials as the DynamoDB one.
_STREAMS_OPERATIONS = frozenset(
    {"list_streams", "describe_stream", "get_shard_iterator", "get_records"}
)
# Where a batch operation's answer holds the part DynamoDB did not process.
_UNPROCESSED = {"batch_get_item": "UnprocessedKeys", "batch_write_item": "UnprocessedItems"}

# botocore re-validates every request against the service model. The app
# validates what it builds itself (fields, keys, sizes, expressions), so that
# second pass only costs CPU (~12% of a put). A test run's store turns it back
# on while it is up (dynamo_app.test.store): local engines accept malformed
# requests that DynamoDB rejects, and botocore's check is the suite's guard
# against our own bugs.
validate_parameters = False

# Set by a test run (dynamo_app.testing under pytest, dynamo_app.test.runner under
# ``manage.py test``) whenever no code may use DynamoDB: from startup until the
# run's throwaway store is up, between tests, and in a test that did not ask for
# that store. get_handle() and Handle() then raise AccessNotAllowed with this
# message, so a test never reaches the configured store, nor any store silently.
refused: str | None = None


def _check_access() -> None:
    if refused is not None:
        raise exceptions.AccessNotAllowed(refused)


class Handle:
    """One configured boto3 client, its table resolver and its retry policy; with
    DAX_ENDPOINTS, the DAX client that answers cacheable reads (see dax.py)."""

    def __init__(self, settings: DynamoSettings) -> None:
        _check_access()
        self.settings = settings
        self.resolver = settings.resolver()
        self._deployed: dict[str, str] = {}  # the resolver's answers, asked once per name
        self.retry = RetryPolicy(settings.retry)
        self.endpoint_url = self._endpoint_url()
        self.dax: Any = None
        self.client = self._build_client("dynamodb")
        self._streams: Any = None

    def __repr__(self) -> str:
        return f"<Handle endpoint={self.endpoint_url or 'AWS'} region={self.settings.region}>"

    def _endpoint_url(self) -> str | None:
        if self.settings.embedded:
            from ..local.shared import embedded_endpoint  # starts (or reuses) the local server

            return embedded_endpoint(self.settings.local_state_file)
        return self.settings.endpoint or None

    def _build_client(self, service: Literal["dynamodb", "dynamodbstreams"]) -> Any:
        s = self.settings
        core = botocore.session.get_session()
        # Every body checked against its x-amz-crc32; items parsed without
        # botocore's shape walk while the fast client path is on.
        parsers = fastpath.parser_factory(s.fast_client)
        core.register_component("response_parser_factory", parsers)
        config = Config(
            connect_timeout=s.timeout,
            read_timeout=s.timeout,
            max_pool_connections=s.max_idle_conns,
            retries={"total_max_attempts": 1, "mode": "standard"},  # retry.py retries
            parameter_validation=validate_parameters,
        )
        try:
            # The embedded server signs with dummy credentials; a server on this
            # machine by URL with the chain's when it finds any (DynamoDB Local keeps
            # a database per access key), else dummy ones too.
            session = self._session(core, "embedded" if s.embedded else None)
            if session.get_credentials() is None and s.local:
                session = self._session(core, "local")
            if session.get_credentials() is not None:
                if service == "dynamodb" and s.dax_endpoints:
                    self.dax = dax.factory(s, session, config)
                client = session.client(service, endpoint_url=self.endpoint_url, config=config)
                return fastpath.install(client, parsers, s.fast_client)
        except Exception as exc:
            raise _detached(exc) from None
        raise ImproperlyConfigured(
            "dynamo_app found no AWS credentials: set DYNAMO['ACCESS_KEY_ID'] and "
            "DYNAMO['SECRET_ACCESS_KEY'] (e.g. \"${AWS_SECRET_ACCESS_KEY}\"), or configure "
            "boto3's chain (AWS_ACCESS_KEY_ID / AWS_PROFILE / an instance role)."
        )

    def _session(self, core: Any, dummy: str | None) -> Any:
        """A boto3 session on ``core``: the section's credentials, else ``dummy``
        ones (None: boto3's chain). The secrets go straight to boto3, never into a
        local of a frame: a failure here is shown with every frame's locals
        (see _detached)."""
        s = self.settings
        return boto3.session.Session(
            botocore_session=core,
            aws_access_key_id=s.access_key_id or dummy,
            aws_secret_access_key=s.secret_access_key.reveal() or dummy,
            aws_session_token=s.session_token.reveal() or None,
            region_name=s.region,
        )

    @property
    def streams(self) -> Any:
        """The DynamoDB Streams client (built on first use: only stream consumers need it)."""
        if self._streams is None:
            self._streams = self._build_client("dynamodbstreams")
        return self._streams

    def table_name(self, declared_name: str) -> str:
        """The deployed name of a declared table (one resolver for every caller)."""
        try:
            return self._deployed[declared_name]
        except KeyError:
            deployed = self._deployed[declared_name] = self.resolver(declared_name)
            return deployed

    def call(self, operation: str, *, cacheable: bool = False, **params: Any) -> dict[str, Any]:
        """Run one client operation under the retry policy; raise the app's errors.

        Whether a failed attempt is sent again is decided by ``retry`` from the
        operation, its parameters and the error, never by the caller. A caller
        that accepts an answer from DAX's cache says ``cacheable=True``; whether
        DAX answers is ``dax.serves``'s decision. Every call is reported, once,
        to ``dynamo_app.client.requests`` (the log and the counters) while anyone listens.
        """
        if operation in _STREAMS_OPERATIONS:
            client = self.streams
        elif self.dax is not None and dax.serves(operation, params, cacheable=cacheable):
            client = self.dax
        else:
            client = self.client
        method = getattr(client, operation)
        capacity = self.settings.return_consumed_capacity
        if capacity and operation in requests.TAKES_CAPACITY:
            params.setdefault("ReturnConsumedCapacity", capacity)  # the same request, no other
        tally = Tally()
        response: dict[str, Any] | None = None
        error: Exception | None = None
        start = time.perf_counter()
        try:
            response = self.retry.run(lambda: method(**params), operation, params, tally)
            return response
        except Exception as exc:
            cause = _detached(exc)
            error = self.translate(cause, operation, params, tally)
            raise error from (None if error is cause else cause)
        finally:
            if requests.counting or requests.logger.isEnabledFor(logging.DEBUG):
                requests.sent(
                    requests.api_name(operation),
                    params,
                    time.perf_counter() - start,
                    tally.attempts,
                    response,
                    error,
                    show_values=self.settings.log_values,
                )

    def paginate(self, operation: str, **params: Any) -> Iterator[dict[str, Any]]:
        """Each page's response of a ``scan``, ``query`` or ``list_tables``, the
        next page requested only when the caller asks for it."""
        last, start = _PAGE_KEYS.get(operation, _ITEM_PAGE_KEYS)
        while True:
            page = self.call(operation, **params)
            yield page
            if last not in page:
                return
            params[start] = page[last]

    def until_processed(
        self,
        operation: str,
        request: dict[str, Any],
        incomplete: Callable[[dict[str, Any], int], Exception],
        *,
        cacheable: bool = False,
    ) -> Iterator[dict[str, Any]]:
        """Each response of a batch ``request`` and of the resends of its
        unprocessed remainder, with backoff between them, until nothing is left.

        DynamoDB leaves part of a batch unprocessed when it throttles; a round
        that shrinks the remainder is progress and starts the backoff over. After
        ``RETRY.MAX_ATTEMPTS`` rounds without progress it raises
        ``incomplete(remainder, rounds)``: the caller says what was not done.
        """
        rounds = 0
        left: int | None = None
        while True:
            response = self.call(operation, cacheable=cacheable, RequestItems=request)
            yield response
            request = response.get(_UNPROCESSED[operation]) or {}
            if not request:
                return
            count = sum(len(v["Keys"] if isinstance(v, dict) else v) for v in request.values())
            rounds = rounds + 1 if left is not None and count >= left else 1
            left = count
            if rounds >= self.retry.settings.max_attempts:
                raise incomplete(request, rounds)
            self.retry.sleep(self.retry.delay(rounds))

    def translate(
        self, exc: Exception, operation: str, params: dict[str, Any], tally: Tally
    ) -> Exception:
        """botocore's exception -> the app's, with a message that says what to do."""
        table = params.get("TableName", "")
        where = f" on table {table!r}" if table else ""
        attempts = tally.attempts
        tried = f" after {attempts} attempts" if attempts > 1 else ""
        if tally.outcome_unknown:
            safely = (
                "partiql.execute_transaction() carries a ClientRequestToken, so DynamoDB "
                "applies a repeat of it once"
                if operation == "execute_statement"
                else "an idempotency_key makes such a write safely repeatable"
            )
            return exceptions.OutcomeUnknown(
                f"{operation}{where} may or may not have been applied: {self._lost(exc)}"
                f"{tried}. Read the item (consistent=True) to see whether it was before "
                f"writing again; {safely}.",
                code=error_code(exc),
                operation=operation,
                attempts=attempts,
            )
        if isinstance(exc, ChecksumError):
            return exceptions.DamagedResponse(
                f"DynamoDB's answers to {operation}{where} arrived damaged{tried} (the "
                "x-amz-crc32 checksum did not match the body). Check proxies and middleboxes "
                "between this process and the endpoint.",
                operation=operation,
                attempts=attempts,
            )
        if isinstance(
            exc,
            (
                EndpointConnectionError,
                ConnectTimeoutError,
                ConnectionClosedError,
                ResponseStreamingError,
            ),
        ):
            return exceptions.ConnectionFailed(
                f"Could not reach DynamoDB at {self.endpoint_url or 'AWS ' + self.settings.region} "
                f"({operation}{where}){tried}: {type(exc).__name__}. Check DYNAMO['ENDPOINT'] and "
                "that the server is running.",
                operation=operation,
                attempts=attempts,
            )
        if isinstance(exc, ReadTimeoutError):
            return exceptions.ConnectionFailed(
                f"DynamoDB did not answer {operation}{where} within "
                f"{self.settings.timeout:g}s{tried} (DYNAMO['TIMEOUT']).",
                operation=operation,
                attempts=attempts,
            )
        if not isinstance(exc, ClientError):
            return exc
        code = error_code(exc)
        message = exc.response.get("Error", {}).get("Message", "")
        if code == "ConditionalCheckFailedException":
            return exceptions.ConditionFailed(
                f"The condition of {operation}{where} did not hold; nothing was written.",
                raw_item=stored_item(exc),
                attempts=attempts,
            )
        if code == "DuplicateItemException":
            return exceptions.AlreadyExists(
                f"A PartiQL INSERT found an item with the same key{where}; nothing was written. "
                "Use UPDATE to change an existing item.",
                attempts=attempts,
            )
        if code == "TransactionCanceledException":
            reasons = exc.response.get("CancellationReasons") or []
            if classify(exc) is Decision.RETRY:
                return exceptions.Throttled(
                    f"The transaction kept conflicting with other writes{tried}; nothing was "
                    "written. Retry later, or keep transactions smaller.",
                    code=code,
                    operation=operation,
                )
            return exceptions.TransactionCanceled(
                f"DynamoDB cancelled the transaction; nothing was written. Reasons: "
                f"{[r.get('Code') for r in reasons]}",
                reasons=reasons,
                attempts=attempts,
            )
        if code == "ResourceNotFoundException":
            return exceptions.TableNotFound(
                f"Table {table or '(in request)'} does not exist (or is not ACTIVE yet) for "
                f"{operation}. Run `python manage.py dynamo_migrate`, or check "
                "DYNAMO['TABLE_PREFIX'] / TABLE_NAMES.",
                code=code,
                operation=operation,
                attempts=attempts,
            )
        if server_error(exc):
            return exceptions.ServerError(
                f"DynamoDB answered {operation}{where} with a server error{tried} ({code}: "
                f"{message}). Retry later; if it persists, check the AWS Health Dashboard.",
                code=code,
                operation=operation,
                attempts=attempts,
            )
        if classify(exc) is Decision.RETRY:
            return exceptions.Throttled(
                f"DynamoDB throttled {operation}{where}{tried} ({code}). Retry later or raise "
                "the table's capacity.",
                code=code,
                operation=operation,
                attempts=attempts,
            )
        return exceptions.ServiceError(
            f"DynamoDB rejected {operation}{where}: {code}: {message}",
            code=code,
            operation=operation,
            attempts=attempts,
        )

    def _lost(self, exc: Exception) -> str:
        """Why a write's outcome is unknown, in words."""
        code = error_code(exc)
        if isinstance(exc, ReadTimeoutError):
            return f"no answer within {self.settings.timeout:g}s (DYNAMO['TIMEOUT'])"
        if isinstance(exc, ChecksumError):
            return "the answer arrived damaged (x-amz-crc32 mismatch)"
        if server_error(exc):
            return f"DynamoDB answered with a server error ({code})"
        if code == "ConditionalCheckFailedException":
            return (
                "an answer was lost, and the repeat found the item changed (by someone "
                "else's write, or by ours and then someone else's)"
            )
        if code:
            return f"an answer was lost, and the repeats were refused ({code})"
        return f"the connection broke mid-request ({type(exc).__name__})"

    def close(self) -> None:
        self.client.close()
        if self.dax is not None:
            self.dax.close()
        if self._streams is not None:
            self._streams.close()


def _detached(exc: Exception) -> Exception:
    """``exc`` cut from the frames it was raised through and from the errors
    behind it. botocore's and urllib3's frames hold the signed request (the
    ``X-Amz-Security-Token`` header, the SigV4 signature) and the credentials
    in their locals, and Django's DEBUG page - like other error reporters -
    shows the locals of every frame along an exception's chain. Type, message,
    ``response`` and ``attempts`` stay."""
    exc.__traceback__ = exc.__cause__ = exc.__context__ = None
    for value in getattr(exc, "kwargs", {}).values():  # botocore keeps urllib3's error
        if isinstance(value, Exception):
            _detached(value)
    return exc


_handle: Handle | None = None
_lock = threading.Lock()
_this_thread = threading.local()


def get_handle() -> Handle:
    """The handle this thread uses (see ``using()``), else the process handle;
    raises ``NotConfigured`` when DYNAMO['ENABLED'] is off."""
    global _handle
    _check_access()
    handle = getattr(_this_thread, "handle", None) or _handle
    if handle is not None:
        return handle
    with _lock:
        if _handle is None:
            settings = get_settings()
            if not settings.enabled:
                raise exceptions.NotConfigured()
            _handle = Handle(settings)
        return _handle


@contextmanager
def using(handle: Handle) -> Iterator[Handle]:
    """Send this thread's requests through ``handle`` inside the block - a client
    of its own (e.g. per worker thread, or another account's), built with
    ``Handle(settings)``. The caller closes it."""
    previous = getattr(_this_thread, "handle", None)
    _this_thread.handle = handle
    try:
        yield handle
    finally:
        _this_thread.handle = previous


def reset() -> None:
    """Close the handle; the next ``get_handle()`` builds one from current settings."""
    global _handle
    with _lock:
        if _handle is not None:
            _handle.close()
        _handle = None


def _settings_changed(setting: str, **kwargs: Any) -> None:
    if changes_section(setting):
        reset()


setting_changed.connect(_settings_changed, dispatch_uid="dynamo_app.client.handle.reset")
atexit.register(reset)
