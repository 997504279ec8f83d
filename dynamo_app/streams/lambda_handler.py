"""``lambda_handler``: the receivers behind an AWS Lambda event source mapping.

Configure the mapping with ``FunctionResponseTypes=["ReportBatchItemFailures"]``:
Lambda then checkpoints before the sequence number this handler reports and
sends the batch again from there, so a failing record is retried without
redoing the records before it. Records after a failure are not delivered in
that invocation: they come again after it, in order.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from ..exceptions import MalformedStreamEvent
from .dispatch import Dispatcher
from .records import from_lambda, table_of

EVENT_NAMES = ("INSERT", "MODIFY", "REMOVE")
STREAM_ARN = re.compile(r"^arn:[^:]*:dynamodb:[^:]*:[^:]*:table/[^/]+/stream/")

logger = logging.getLogger("dynamo_app.streams")


def lambda_handler(
    event: Mapping[str, Any], context: Any = None
) -> dict[str, list[dict[str, str]]]:
    """Deliver each record of a DynamoDB Streams event to its model's receivers;
    ``{"batchItemFailures": [{"itemIdentifier": <sequence number>}]}`` names the
    first record that failed (empty when all were delivered).

    Django is set up on the first call when the function's module did not do it
    (``DJANGO_SETTINGS_MODULE`` names the settings).
    """
    records = _records(event)
    _setup_django()
    dispatcher = Dispatcher()
    for raw, sequence, table in records:
        try:
            dispatcher.deliver(from_lambda(raw), table)
        except Exception:
            logger.exception("Stream record #%s failed; Lambda will send it again", sequence)
            return {"batchItemFailures": [{"itemIdentifier": sequence}]}
    return {"batchItemFailures": []}


def _records(event: Any) -> list[tuple[Mapping[str, Any], str, str]]:
    """``(record, sequence number, table)`` of each record, every one checked before
    any is delivered: an event of another shape is ``MalformedStreamEvent``, never
    success (an event without records delivered nothing) nor a bare KeyError."""
    records = event.get("Records") if isinstance(event, Mapping) else None
    if not isinstance(records, list) or not records:
        raise MalformedStreamEvent(
            "lambda_handler takes a DynamoDB Streams event ({'Records': [...]}, at least one "
            f"record), got {_shape(event)}. Map the function to a table's stream."
        )
    out = []
    for number, raw in enumerate(records):
        change = raw.get("dynamodb") if isinstance(raw, Mapping) else None
        arn = raw.get("eventSourceARN") if isinstance(raw, Mapping) else None
        problem = None
        if not isinstance(change, Mapping) or not isinstance(change.get("Keys"), Mapping):
            problem = "no 'dynamodb' change with 'Keys'"
        elif not isinstance(change.get("SequenceNumber"), str):
            problem = "no 'dynamodb.SequenceNumber'"
        elif raw.get("eventName") not in EVENT_NAMES:
            problem = f"'eventName' is not one of {', '.join(EVENT_NAMES)}"
        elif not isinstance(arn, str) or not STREAM_ARN.match(arn):
            problem = "no stream ARN ('eventSourceARN' ...:table/NAME/stream/LABEL)"
        if problem or not isinstance(change, Mapping) or not isinstance(arn, str):
            raise MalformedStreamEvent(
                f"Record {number} of the event has {problem}; nothing of the event was "
                "delivered. Is the function mapped to a DynamoDB stream?"
            )
        out.append((raw, change["SequenceNumber"], table_of(arn)))
    return out


def _shape(value: Any) -> str:
    """What a value is, without its contents (an event may carry item values)."""
    if isinstance(value, Mapping):
        return f"a mapping with keys {sorted(map(str, value))[:10]}"
    return f"a {type(value).__name__}"


def _setup_django() -> None:
    from django.apps import apps

    if not apps.ready:
        import django

        django.setup()
