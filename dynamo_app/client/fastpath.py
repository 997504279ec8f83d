"""The one installer of the fast client path: each part checked, then installed or left out.

``sigv4`` (signing), ``parser`` (parsing) and ``pipeline`` (endpoint cache, no
retry machinery) each do a part of botocore's client work with less CPU, and
each leans on botocore internals that any release may change. When the handle
builds a client, each part first checks itself against the botocore that runs:
a probe request signed both ways must come out byte for byte the same, probe
responses parsed both ways must read the same, and the handlers and objects a
part replaces must be where it expects them. A part that fails is left to
stock botocore, with one WARNING (``fallback``); so is a part that later fails
while serving a request. ``DYNAMO['FAST_CLIENT'] = False`` leaves the whole
client to botocore. Either way every response is checked against its
``x-amz-crc32`` header.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from . import fallback, parser, pipeline, sigv4

__all__ = ["install", "parser_factory"]


def parser_factory(enabled: bool) -> parser.ResponseParserFactory:
    """The parser factory a client is built with (registered on its botocore session)."""
    return parser.ResponseParserFactory(lean=enabled)


def install(client: Any, factory: parser.ResponseParserFactory, enabled: bool) -> Any:
    """``client``, built with ``factory``, with each fast part that fits installed."""
    steps: tuple[tuple[str, Callable[[], Any]], ...] = (
        (parser.COMPONENT, lambda: parser.install(client, factory)),
        (sigv4.COMPONENT, lambda: sigv4.lean_signing(client)),
        (pipeline.COMPONENT, lambda: pipeline.lean(client)),
    )
    for component, step in steps:
        if component != parser.COMPONENT and (not enabled or component in fallback.off):
            continue
        try:
            step()
        except Exception as exc:
            fallback.turn_off(component, exc)
    return client
