"""dynamo_app: Amazon DynamoDB for Django - declared models, a checked schema
workflow, transactions with unique constraints, and a session engine.

``dynamo_app.transaction()`` and ``dynamo_app.read_atomic()`` are imported
lazily, so that importing the package (as Django does for INSTALLED_APPS)
does not import boto3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # what __getattr__ gives, typed
    from .models.writes import ModelTransaction as Transaction
    from .models.writes import transaction
    from .transactions import read as read_atomic

__all__ = ["Transaction", "read_atomic", "transaction"]
__version__ = "0.1.0"


def __getattr__(name: str) -> Any:
    if name == "read_atomic":
        from .transactions import read

        return read
    if name in ("transaction", "Transaction"):
        from .models import writes

        return writes.transaction if name == "transaction" else writes.ModelTransaction
    raise AttributeError(f"module 'dynamo_app' has no attribute {name!r}")
