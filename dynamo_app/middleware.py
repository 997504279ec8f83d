"""``RequestCountMiddleware``: what each view cost in DynamoDB requests, for development.

One line per request/response cycle on the ``dynamo_app.requests`` logger,
``GET /teams/ (roster:teams): 3 DynamoDB requests, 4.2 ms, 1.5 capacity units``:
at INFO when the cycle sent a DynamoDB request, at DEBUG when it sent none (a
static file, a 404), so an INFO log holds only the pages that cost something.
The counter is also ``request.dynamo_requests`` for the view and the middleware
after this one. It counts what runs inside it, so it is listed before
``SessionMiddleware`` (``manage.py check`` says so, dynamo.W001), as the debug
toolbar is: the log line and the toolbar panel then count the same requests,
the session's read and write included. Counting is per thread and asyncio task
(``count_requests()``), so concurrent requests, sync or async, never mix.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.http import HttpRequest, HttpResponseBase

from .client.requests import RequestCounter, count_requests, logger

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
    logger.log(
        logging.INFO if counter.total else logging.DEBUG,
        "%s %s%s: %s",
        request.method,
        request.path,
        view,
        counter.summary(),
        extra={"dynamo_requests": counter.for_log()},
    )
