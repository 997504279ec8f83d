"""The least-privilege IAM policy: exactly the DynamoDB operations dynamo_app
sends, each allowed on the resources it touches and nowhere else.

``OPERATIONS`` is the one list of every operation the app's code sends (the
test suite fails a test whose app code sends one not listed here, and one test
sends every listed one: tests/test_iam.py). IAM authorises some operations by
other names: a ``TransactWriteItems`` by the ``PutItem``/``UpdateItem``/
``DeleteItem``/``ConditionCheckItem`` of its actions, a ``TransactGetItems``
by ``GetItem``, a PartiQL statement by its kind (``PartiQLSelect``...).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .iac import DeployedTable


class Need(enum.StrEnum):
    """Who needs an operation, which decides the statement it is allowed in."""

    ITEMS = "DynamoAppItems"  # reads and writes: every process that uses the models
    INDEXES = "DynamoAppIndexQueries"  # Query and Scan of a declared index
    SCHEMA = "DynamoAppSchemaCheck"  # VERIFY_SCHEMA at startup, dynamo_plan, dynamo_migrate
    LIST = "DynamoAppListTables"  # dynamo_plan's undeclared tables under TABLE_PREFIX
    STREAMS = "DynamoAppStreams"  # a stream consumer of a table with Meta.stream
    MIGRATE = "DynamoAppMigrate"  # dynamo_migrate: only where the app creates its tables
    DEVELOP = "DynamoAppDevelopment"  # dynamo_drop_table: a local store only, never a policy


@dataclass(frozen=True)
class Operation:
    name: str  # the API operation, as botocore names it
    need: Need  # the statement that allows it
    actions: tuple[str, ...]  # the IAM actions that authorise it, on the tables
    index_actions: tuple[str, ...] = ()  # ... and on the declared indexes


def _op(name: str, need: Need, actions: tuple[str, ...] = (), **kwargs: Any) -> Operation:
    return Operation(name, need, actions or (name,), **kwargs)


# A PartiQL statement is authorised by its kind (an EXISTS of a transaction is a read).
PARTIQL = ("PartiQLSelect", "PartiQLInsert", "PartiQLUpdate", "PartiQLDelete")

OPERATIONS: tuple[Operation, ...] = (
    _op("GetItem", Need.ITEMS),
    _op("PutItem", Need.ITEMS),
    _op("UpdateItem", Need.ITEMS),
    _op("DeleteItem", Need.ITEMS),
    _op("BatchGetItem", Need.ITEMS),
    _op("BatchWriteItem", Need.ITEMS),
    _op("TransactGetItems", Need.ITEMS, ("GetItem",)),
    _op(
        "TransactWriteItems",
        Need.ITEMS,
        ("PutItem", "UpdateItem", "DeleteItem", "ConditionCheckItem"),
    ),
    _op("Query", Need.ITEMS, index_actions=("Query",)),
    _op("Scan", Need.ITEMS, index_actions=("Scan",)),
    _op("ExecuteStatement", Need.ITEMS, PARTIQL, index_actions=("PartiQLSelect",)),
    _op("ExecuteTransaction", Need.ITEMS, PARTIQL),
    _op("DescribeTable", Need.SCHEMA),
    _op("ListTables", Need.LIST),
    _op("CreateTable", Need.MIGRATE),
    _op("UpdateTable", Need.MIGRATE),
    _op("UpdateTimeToLive", Need.MIGRATE),
    _op("DeleteTable", Need.DEVELOP),
    _op("DescribeStream", Need.STREAMS),  # manage.py dynamo_stream, the local consumer
    _op("GetShardIterator", Need.STREAMS),
    _op("GetRecords", Need.STREAMS),
)

# What the Lambda (or other consumer) of a declared stream is sent by AWS's
# event source mapping, which calls these with the function's role.
STREAM_ACTIONS = ("DescribeStream", "GetRecords", "GetShardIterator", "ListStreams")

# The ARN parts only the deploying account knows: CloudFormation's pseudo
# parameters, which Fn::Sub replaces; elsewhere replace them by hand.
PARTITION, REGION, ACCOUNT = "${AWS::Partition}", "${AWS::Region}", "${AWS::AccountId}"


def table_arn(name: str, suffix: str = "") -> str:
    return f"arn:{PARTITION}:dynamodb:{REGION}:{ACCOUNT}:table/{name}{suffix}"


def policy(
    tables: Iterable[DeployedTable], *, list_tables: bool, migrate: bool = False
) -> dict[str, Any]:
    """The policy document for ``tables``. ``list_tables``: dynamo_plan lists
    undeclared tables (a TABLE_PREFIX without TABLE_RESOLVER), which needs
    ``ListTables`` on every table (IAM cannot narrow it). ``migrate``: add what
    dynamo_migrate sends, for a role that creates the tables itself."""
    tables = list(tables)
    resources = {
        Need.ITEMS: [table_arn(t.name) for t in tables],
        Need.INDEXES: [
            table_arn(t.name, f"/index/{i.name}") for t in tables for i in t.definition.indexes
        ],
        Need.SCHEMA: [table_arn(t.name) for t in tables],
        Need.LIST: ["*"] if list_tables else [],
        Need.STREAMS: [table_arn(t.name, "/stream/*") for t in tables if t.stream_view_type],
        Need.MIGRATE: [table_arn(t.name) for t in tables] if migrate else [],
        Need.DEVELOP: [],
    }
    statements = [
        {
            "Sid": need.value,
            "Effect": "Allow",
            "Action": [f"dynamodb:{a}" for a in sorted(actions(need))],
            "Resource": resources[need],
        }
        for need in Need
        if resources[need]
    ]
    return {"Version": "2012-10-17", "Statement": statements}


def actions(need: Need) -> set[str]:
    """The IAM actions (without ``dynamodb:``) a statement for ``need`` allows."""
    if need is Need.STREAMS:
        return set(STREAM_ACTIONS)
    if need is Need.INDEXES:
        return {a for op in OPERATIONS for a in op.index_actions}
    return {a for op in OPERATIONS if op.need is need for a in op.actions}
