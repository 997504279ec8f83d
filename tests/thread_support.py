"""Shared by the tests that run work in several threads at once (races for one key,
counts kept apart per thread)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")


def in_threads(work: Callable[[T], object], args: Iterable[T]) -> list[BaseException]:
    """Call ``work(arg)`` for each of ``args``, each in a thread of its own, all
    released at once; wait for every one and return what they raised (a thread's
    exception is otherwise only printed)."""
    args = list(args)
    start = threading.Barrier(len(args), timeout=30)
    raised: list[BaseException] = []

    def run(arg: T) -> None:
        start.wait()
        try:
            work(arg)
        except BaseException as exc:  # noqa: BLE001 - returned to the test, which asserts on it
            raised.append(exc)

    threads = [threading.Thread(target=run, args=(arg,)) for arg in args]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return raised
