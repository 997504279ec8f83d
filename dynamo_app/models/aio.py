"""The async API (``aget``, ``asave``, ...): each method runs its sync twin in a worker thread.

One implementation of every behaviour: ``asave(...)`` is ``save(...)`` - the
same requests, the same errors - called off the event loop. The thread is one
of the app's pool (``dynamo_app.client.threads``, ``DYNAMO['ASYNC_THREADS']``), not
Django's single sync thread: boto3 clients are thread-safe, so concurrent ASGI
requests need not queue behind each other.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine, Iterator
from typing import Any, Concatenate, ParamSpec, TypeVar

from ..client import threads

S = TypeVar("S")
P = ParamSpec("P")
T = TypeVar("T")


def in_thread(
    method: Callable[Concatenate[S, P], T],
) -> Callable[Concatenate[S, P], Coroutine[Any, Any, T]]:
    """The async twin of ``method``, with its signature: ``aget = in_thread(get)``.

    It calls ``self.<name>`` at call time, so a subclass overriding the sync
    method (as Django users override ``save``) changes the async one too.
    """
    name = method.__name__

    async def twin(self: S, /, *args: P.args, **kwargs: P.kwargs) -> T:
        sync: Callable[P, T] = getattr(self, name)
        return await threads.in_thread(sync)(*args, **kwargs)

    functools.update_wrapper(twin, method)
    twin.__name__ = f"a{name}"
    twin.__qualname__ = f"{method.__qualname__.rpartition('.')[0]}.a{name}".lstrip(".")
    twin.__doc__ = f"Async ``{name}()``, run in a worker thread.\n\n{method.__doc__ or ''}".strip()
    return twin


async def next_in_thread(iterator: Iterator[T]) -> T | None:
    """The next item of a blocking iterator (``None`` at its end), fetched in a worker thread."""

    def step() -> T | None:
        return next(iterator, None)

    return await threads.in_thread(step)()
