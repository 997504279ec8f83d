"""dynamo_app: Amazon DynamoDB for Django - declared models, a checked schema
workflow, transactions with unique constraints, and a session engine.

``dynamo_app.transaction()`` and ``dynamo_app.read_atomic()`` are imported
lazily, so that importing the package (as Django does for INSTALLED_APPS)
does not import boto3.
"""

from __future__ import annotations

from typing import Any

__all__ = ["Transaction", "read_atomic", "transaction"]
__version__ = "0.1.0"

_LAZY = {"transaction": "transaction", "read_atomic": "read", "Transaction": "Transaction"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import transactions

        return getattr(transactions, _LAZY[name])
    raise AttributeError(f"module 'dynamo_app' has no attribute {name!r}")
