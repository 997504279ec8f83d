"""``RequestCountMiddleware``: what each view cost in DynamoDB requests, for development.

One INFO line per request/response cycle on the ``dynamo_app.requests`` logger,
``GET /teams/ (roster:teams): 3 DynamoDB requests, 4.2 ms, 1.5 capacity units``;
the counter is also ``request.dynamo_requests`` for the view and the middleware
after this one. Counting is per thread and asyncio task (``count_requests()``),
so concurrent requests, sync or async, never mix their counts.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponseBase

from .requests import RequestCounter, count_requests, logger

__all__ = ["RequestCountMiddleware"]


class RequestCountMiddleware:
    """Counts the DynamoDB requests of each view and logs the total."""

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self._acall(request)
        with count_requests() as counter:
            request.dynamo_requests = counter  # type: ignore[attr-defined]
            response: HttpResponseBase = self.get_response(request)
        _report(request, counter)
        return response

    async def _acall(self, request: HttpRequest) -> HttpResponseBase:
        get_response: Callable[[HttpRequest], Awaitable[HttpResponseBase]] = self.get_response
        with count_requests() as counter:
            request.dynamo_requests = counter  # type: ignore[attr-defined]
            response = await get_response(request)
        _report(request, counter)
        return response


def _report(request: HttpRequest, counter: RequestCounter) -> None:
    match = request.resolver_match
    view = f" ({match.view_name})" if match is not None else ""
    logger.info(
        "%s %s%s: %s",
        request.method,
        request.path,
        view,
        counter.summary(),
        extra={"dynamo_requests": counter},
    )
