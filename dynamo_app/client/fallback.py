"""Which parts of the fast client path are off in this process, and the one warning that says so.

The fast path (``sigv4``, ``parser``, ``pipeline``) leans on botocore internals
that any release may rename. A part that fails its check when a client is
built, or fails while serving a request, is handed back to stock botocore for
the rest of the process: requests keep working, at botocore's CPU cost. The
operator hears of it once per part, not once per request.
"""

from __future__ import annotations

import logging
import threading

import botocore

__all__ = ["COMPONENTS", "off", "turn_off"]

logger = logging.getLogger("dynamo_app.fastpath")

COMPONENTS = ("signing", "parsing", "pipeline")

# component -> why it is off. Read per request as ``component in off`` (no call:
# the request path stays short); written only by turn_off().
off: dict[str, str] = {}
_lock = threading.Lock()


def turn_off(component: str, why: object) -> None:
    """Leave ``component`` to botocore from now on; warn the first time only."""
    with _lock:
        if component in off:
            return
        off[component] = reason = _reason(why)
    logger.warning(
        "dynamo_app's fast client %s is off: it does not fit botocore %s (%s). botocore's own "
        "%s serves every request instead, with more CPU per request and the same results.",
        component,
        botocore.__version__,
        reason,
        component,
    )


def _reason(why: object) -> str:
    if isinstance(why, BaseException):
        return f"{type(why).__name__}: {why}"
    return str(why)


def reset() -> None:
    """Every component on again (tests: a new botocore state)."""
    with _lock:
        off.clear()
