"""A django-debug-toolbar panel: each DynamoDB request of the page (the ``[debug-toolbar]`` extra).

::

    DEBUG_TOOLBAR_PANELS = [
        *debug_toolbar.settings.PANELS_DEFAULTS,
        "dynamo_app.contrib.debug_toolbar.RequestsPanel",
    ]

It lists the requests ``dynamo_app.client.requests`` saw while the page was made -
operation, table, index, parameters, attempts, time, consumed capacity - with
item values masked unless ``DYNAMO["LOG_VALUES"]`` is on. Nothing imports this
module but that setting, so without the toolbar nothing of it is loaded.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable
from typing import Any

from ..client.requests import Request, RequestCounter, count_requests
from ..exceptions import MissingDependency

try:
    from debug_toolbar.panels import Panel
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise MissingDependency(
        "dynamo_app.contrib.debug_toolbar.RequestsPanel needs django-debug-toolbar: "
        'pip install "django-dynamo-app[debug-toolbar]" (from a checkout: '
        'pip install "/path/to/checkout[debug-toolbar]").'
    ) from exc

__all__ = ["RequestsPanel"]


class RequestsPanel(Panel):
    """The page's DynamoDB requests, counted in the page's own context."""

    title = "DynamoDB requests"
    nav_title = "DynamoDB"
    template = "dynamo_app/debug_toolbar_panel.html"
    is_async = True
    counter: RequestCounter

    @property
    def nav_subtitle(self) -> str:
        stats = self.get_stats()  # type: ignore[no-untyped-call]
        return str(stats.get("summary", ""))

    def process_request(self, request: Any) -> Any:
        with count_requests() as self.counter:  # a sync view runs here
            response = self.get_response(request)
        if inspect.isawaitable(response):  # an async one runs when awaited
            return self._counted(response)
        return response

    async def _counted(self, response: Awaitable[Any]) -> Any:
        with count_requests() as self.counter:
            return await response

    def generate_stats(self, request: Any, response: Any) -> None:
        self.record_stats(  # type: ignore[no-untyped-call]
            {
                "summary": self.counter.summary(),
                "requests": [_row(r) for r in self.counter.requests],
            }
        )


def _row(request: Request) -> dict[str, Any]:
    """What the panel shows of one request (the toolbar stores it as JSON)."""
    return {
        "operation": request.operation,
        "table": request.table,
        "index": request.index,
        "milliseconds": round(request.milliseconds, 1),
        "attempts": request.attempts,
        "capacity": request.capacity,
        "items": request.items,
        "error": request.error,
        "params": json.dumps(request.shown_params(), indent=2, default=str),
    }
