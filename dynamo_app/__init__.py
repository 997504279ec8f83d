"""dynamo_app: Amazon DynamoDB for Django - declared models, a checked schema
workflow, transactions with unique constraints, and a session engine."""

from __future__ import annotations

__version__ = "0.1.0"
