"""``lambda_handler``: the receivers behind an AWS Lambda event source mapping.

Configure the mapping with ``FunctionResponseTypes=["ReportBatchItemFailures"]``:
Lambda then checkpoints before the sequence number this handler reports and
sends the batch again from there, so a failing record is retried without
redoing the records before it. Records after a failure are not delivered in
that invocation: they come again after it, in order.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from .dispatch import Dispatcher
from .records import from_lambda, table_of

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
    _setup_django()
    dispatcher = Dispatcher()
    for raw in event.get("Records", []):
        sequence = raw["dynamodb"]["SequenceNumber"]
        try:
            dispatcher.deliver(from_lambda(raw), table_of(raw["eventSourceARN"]))
        except Exception:
            logger.exception("Stream record #%s failed; Lambda will send it again", sequence)
            return {"batchItemFailures": [{"itemIdentifier": sequence}]}
    return {"batchItemFailures": []}


def _setup_django() -> None:
    from django.apps import apps

    if not apps.ready:
        import django

        django.setup()
