"""DAX: which reads a DynamoDB Accelerator cluster answers, and its client.

With ``DYNAMO["DAX_ENDPOINTS"]`` set, the handle holds a second client, built by
``factory`` (in production ``build_client``: amazon-dax-client, the ``[dax]``
extra). ``serves`` decides, for every request, which client sends it.

DAX is a write-through cache with its own consistency: an item read through
it may be up to its TTL old, and a write that goes to DynamoDB directly is not
seen by DAX reads until the cached copy expires. So only eventually consistent
item reads whose caller accepts that go there: the model layer's ``get()``,
queries, scans (declared ones too) and ``bulk_get()``, without ``consistent``.
Writes, strongly consistent reads, transactions, PartiQL, schema calls and the
app's own reads (sessions; reads that decide a write, such as ``check_unique``
and ``clearsessions``) always go to DynamoDB.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..exceptions import ConnectionFailed, MissingDependency

if TYPE_CHECKING:
    import boto3
    from botocore.config import Config

    from ..conf import DynamoSettings

__all__ = ["build_client", "factory", "serves"]

# The item reads DAX answers from its cache (it passes everything else through).
CACHED_OPERATIONS = frozenset({"get_item", "query", "scan", "batch_get_item"})


def serves(operation: str, params: Mapping[str, Any], *, cacheable: bool) -> bool:
    """Whether DAX, not DynamoDB, answers this request: an eventually consistent item
    read whose caller accepts an answer from the cache (``cacheable``)."""
    if not cacheable or operation not in CACHED_OPERATIONS:
        return False
    if operation == "batch_get_item":
        return not any(t.get("ConsistentRead") for t in params["RequestItems"].values())
    return not params.get("ConsistentRead")


def build_client(settings: DynamoSettings, session: boto3.session.Session, config: Config) -> Any:
    """An ``AmazonDaxClient`` for ``settings.dax_endpoints``, with the handle's
    credentials, region and timeouts. It connects to the cluster before it returns."""
    try:
        from amazondax import AmazonDaxClient  # type: ignore[import-untyped, import-not-found, unused-ignore]
    except ModuleNotFoundError as exc:
        raise MissingDependency(
            "DYNAMO['DAX_ENDPOINTS'] is set, and DAX's client (amazon-dax-client) is not "
            f"installed ({exc}). Install the 'dax' extra: pip install "
            '"django-dynamo-app[dax]", or empty DAX_ENDPOINTS to read from DynamoDB directly.'
        ) from exc
    try:
        return AmazonDaxClient(
            session,
            region_name=settings.region,
            endpoints=list(settings.dax_endpoints),
            config=config,
        )
    except Exception as exc:
        raise ConnectionFailed(
            f"Could not connect to the DAX cluster at {', '.join(settings.dax_endpoints)} "
            f"({type(exc).__name__}: {exc}). Check DYNAMO['DAX_ENDPOINTS'] and that this host "
            "may reach the cluster (its security group, port 8111 or 9111 for daxs://).",
            operation="connect",
        ) from None


# How the handle gets its DAX client. A test points it at another local server
# (a boto3 DynamoDB client speaks the same API), so the routing can be proven
# without a cluster.
factory: Callable[[DynamoSettings, boto3.session.Session, Config], Any] = build_client
