"""DynamoDB Streams: each change to a model's table, delivered to its receivers.

``@receiver(Player)`` connects a function to ``Player``'s changes; each call
gets a :class:`StreamRecord` decoded by the model. Two consumers call the
same receivers: :func:`lambda_handler` behind an AWS Lambda event source
mapping (production), and ``manage.py dynamo_stream`` on the local server
(development and tests; :mod:`dynamo_app.streams.consumer`).
"""

from .dispatch import Dispatcher, Receivers, receiver, receivers
from .lambda_handler import lambda_handler
from .records import EventName, StreamRecord

__all__ = [
    "Dispatcher",
    "EventName",
    "Receivers",
    "StreamRecord",
    "lambda_handler",
    "receiver",
    "receivers",
]
