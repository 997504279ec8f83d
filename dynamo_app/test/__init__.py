"""Test runs that never touch the configured store (see docs/howto/testing.md).

``store``: the run's throwaway DynamoDB, shared by both runners. ``runner``:
``DynamoTestRunner`` for ``manage.py test``. ``counting``: ``count_requests()``,
``RequestAssertions.assertNumRequests``.
The pytest plugin is ``dynamo_app.testing``.
"""

from .counting import RequestAssertions, RequestCounter, count_requests

__all__ = ["RequestAssertions", "RequestCounter", "count_requests"]
