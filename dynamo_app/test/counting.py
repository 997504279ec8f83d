"""Counting the DynamoDB requests a block of code sends (the one-request economy, in tests).

``count_requests()`` is ``dynamo_app.client.requests``'s: it needs no pytest and
counts per thread and asyncio task. ``RequestAssertions`` gives a
``django.test.TestCase`` ``assertNumRequests``, as Django's has ``assertNumQueries``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

from ..client.requests import RequestCounter, count_requests

__all__ = ["RequestAssertions", "RequestCounter", "count_requests"]


class RequestAssertions:
    """A mixin for ``unittest.TestCase`` classes: ``assertNumRequests``."""

    def assertNumRequests(  # noqa: N802  # unittest's spelling
        self, num: int, func: Callable[..., Any] | None = None, *args: Any, **kwargs: Any
    ) -> Any:
        """Fail unless exactly ``num`` DynamoDB requests are sent by this thread
        inside the block (``with self.assertNumRequests(1):``), or by
        ``func(*args, **kwargs)``, whose result it returns. The failure lists them."""
        if func is None:
            return self._num_requests(num)
        with self._num_requests(num):
            return func(*args, **kwargs)

    @contextlib.contextmanager
    def _num_requests(self, num: int) -> Iterator[RequestCounter]:
        with count_requests() as counter:
            yield counter
        if counter.total != num:
            listed = "\n".join(f"{i}. {r}" for i, r in enumerate(counter.requests, 1))
            raise AssertionError(
                f"{counter.total} != {num} : {counter.total} DynamoDB requests were sent, "
                f"not {num}:\n{listed}"
            )
