"""The worker threads of the async API (``aget``, ``asave``, ``async for``,
``async with transaction()``, the session engine's async methods).

Each async method runs its sync twin in one of ``DYNAMO['ASYNC_THREADS']``
threads of this pool, not in the event loop's default executor: that one is
sized by CPU count (6 threads on 2 cores), shared with everything else a
project runs in threads, and so caps how many DynamoDB requests an event loop
can have in flight. Measured (docs/explanation/benchmarks.md, section 8): 200 concurrent
``aget`` run on exactly this many threads, each keeping one of the client's
``MAX_IDLE_CONNS`` connections, so keep that at least as large.
"""

from __future__ import annotations

import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ParamSpec, TypeVar

from asgiref.sync import sync_to_async
from django.core.signals import setting_changed

from ..conf import changes_section, get_settings

__all__ = ["in_thread", "reset"]

P = ParamSpec("P")
T = TypeVar("T")
NAME = "dynamo-async"

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    global _pool
    pool = _pool
    if pool is None:
        with _lock:
            if _pool is None:
                size = get_settings().async_threads
                _pool = ThreadPoolExecutor(max_workers=size, thread_name_prefix=NAME)
            pool = _pool
    return pool


def in_thread(func: Callable[P, T]) -> Callable[P, Awaitable[T]]:
    """``func`` as a coroutine function run in the pool (with the caller's
    context, as ``sync_to_async`` gives: the request counters stay per task)."""

    async def run(*args: P.args, **kwargs: P.kwargs) -> T:
        call = sync_to_async(func, thread_sensitive=False, executor=_executor())
        return await call(*args, **kwargs)

    return run


def reset() -> None:
    """Let the running calls finish; the next one starts a pool of the current size."""
    global _pool
    with _lock:
        if _pool is not None:
            _pool.shutdown(wait=False)
        _pool = None


def _settings_changed(setting: str, **kwargs: Any) -> None:
    if changes_section(setting):
        reset()


setting_changed.connect(_settings_changed, dispatch_uid="dynamo_app.client.threads.reset")
