"""The handle's botocore client, without the per-request work whose answer never changes.

Profiled on a PutItem with HTTP replaced by a recorded answer, botocore spends
about a tenth of its CPU resolving the endpoint - walking DynamoDB's endpoint
rules' parameters (region, FIPS, dual stack, account id, the table's ARN) for
every request, although the answer depends only on the operation and the
tables it names - and more on retry machinery the handle has switched off
(``retry.py`` retries; botocore's own attempts are capped at one). ``lean()``
takes both, on the handle's own client only:

* the endpoint is resolved once per operation and table names, and the
  feature ids that resolution reports (to the User-Agent) are reported again
  on each reuse; requests naming no table in a way read here resolve as before;
* botocore's retry handlers are unregistered: the attempt-count headers
  (``amz-sdk-invocation-id``, ``amz-sdk-request``, which only describe
  botocore's own retries, here always "attempt 1 of 1") are no longer sent, and
  nothing decides on a retry that cannot happen.

Everything else - credentials and their providers, signing, serialisation,
checksums, error parsing - is botocore's, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from botocore import handlers
from botocore.regions import EndpointRulesetResolver

from ..exceptions import FastPathUnfit
from . import fallback

__all__ = ["lean"]

# The requests whose endpoint parameters come from table names only: one
# (ResourceArn = TableName), or several (ResourceArnList), and where those are.
_ITEMS_BY_TABLE = frozenset({"BatchGetItem", "BatchWriteItem"})
_TRANSACTIONS = frozenset({"TransactGetItems", "TransactWriteItems"})
_CACHE_SIZE = 1024  # distinct (operation, tables); cleared when full
COMPONENT = "pipeline"


def _tables(operation: Any, params: dict[str, Any] | None) -> tuple[Any, ...] | None:
    """The table names the endpoint rules read from a request, or None when
    they read something else (an ARN of a backup, a shard iterator, ...)."""
    params = params or {}
    name = operation.name
    if name in _ITEMS_BY_TABLE:
        return tuple(params.get("RequestItems") or ())
    if name in _TRANSACTIONS:
        return tuple(
            body.get("TableName")
            for action in params.get("TransactItems") or ()
            for body in action.values()
        )
    context = operation.context_parameters
    if operation.operation_context_parameters or operation.static_context_parameters:
        return None
    if len(context) == 1 and context[0].member_name == "TableName":
        return (params.get("TableName"),)
    return None if context else ()


class _CachingResolver(EndpointRulesetResolver):
    """botocore's endpoint resolver, its answers kept per operation and tables."""

    _answers: dict[tuple[str, tuple[Any, ...]], tuple[Any, frozenset[str]]]
    _context: Callable[[], Any]  # botocore.context.get_context, looked up at install

    def construct_endpoint(self, operation_model: Any, call_args: Any, request_context: Any) -> Any:
        try:
            key = self._key(operation_model, call_args)
            context = self._context() if key is not None else None
            known = self._answers.get(key) if key is not None else None
            if known is not None:
                if context is not None:
                    context.features.update(known[1])
                return known[0]
            before = set(context.features) if context is not None else set()
        except Exception as exc:  # a botocore internal gone: botocore's from now on
            fallback.turn_off(COMPONENT, exc)
            key = None
        answer = super().construct_endpoint(operation_model, call_args, request_context)
        if key is not None:
            features = frozenset(context.features - before) if context is not None else frozenset()
            if len(self._answers) >= _CACHE_SIZE:
                self._answers.clear()
            self._answers[key] = (answer, features)
        return answer

    def _key(self, operation_model: Any, call_args: Any) -> tuple[str, tuple[Any, ...]] | None:
        """Where a request's answer is kept; None: resolved afresh every time."""
        if COMPONENT in fallback.off:
            return None
        tables = _tables(operation_model, call_args)
        if tables is None or not all(isinstance(t, str) for t in tables):
            return None
        return (operation_model.name, tables)


def lean(client: Any) -> Any:
    """``client`` (a DynamoDB or DynamoDB Streams client the handle built), leaner;
    ``FastPathUnfit``, and ``client`` unchanged, unless every botocore part this
    replaces is where it is expected."""
    try:
        from botocore.context import get_context  # botocore 1.38 on
    except ImportError as exc:
        raise FastPathUnfit(f"no botocore.context ({exc})") from None
    resolver = client._ruleset_resolver
    if type(resolver) is not EndpointRulesetResolver:
        raise FastPathUnfit(f"the client's endpoint resolver is a {type(resolver).__name__}")
    events = client.meta.events
    service = client.meta.service_model.service_id.hyphenize()
    retry_ids = (f"retry-config-{service}", f"seed-max-attempts-{service}")
    quota = [
        handler
        for handler in events._emitter._handlers.prefix_search(f"after-call.{service}")
        if getattr(handler, "__name__", "") == "release_retry_quota"
    ]
    missing = [i for i in retry_ids if i not in events._emitter._unique_id_handlers]
    if missing or len(quota) != 1:
        raise FastPathUnfit(f"botocore's retry handlers are not as expected ({missing or quota})")
    model = client.meta.service_model
    probe = model.operation_model("GetItem") if "GetItem" in model.operation_names else None
    if probe is not None and _tables(probe, {"TableName": "t"}) != ("t",):
        raise FastPathUnfit("GetItem's endpoint parameters are not its table name alone")
    resolver.__class__ = _CachingResolver
    resolver._answers = {}  # type: ignore[attr-defined]
    resolver._context = get_context  # type: ignore[attr-defined]
    events.unregister(f"needs-retry.{service}", unique_id=retry_ids[0])
    events.unregister(f"request-created.{service}", unique_id=retry_ids[1])
    events.unregister("request-created", handlers.add_retry_headers)
    events.unregister(f"after-call.{service}", quota[0])
    return client
