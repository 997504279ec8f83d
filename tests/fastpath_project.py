"""Run as ``python -m tests.fastpath_project NAME...`` by tests/test_fastpath.py: a
project on a botocore from which each NAME is gone (``module:attribute``,
``module:Class.attribute``, or a ``module`` made unimportable), as an older or newer
release may lack it; a NAME ending in ``~`` is a method botocore changed (its text
result gets a trailing space: botocore signing differently, say). It imports
every dynamo_app module, builds the handle, and sends a get, a put, a query and a
transaction; it prints what it read and the fast path's warnings, as JSON."""

from __future__ import annotations

import importlib
import json
import logging
import pkgutil
import sys
import uuid
from typing import Any

import boto3  # noqa: F401  botocore's own modules first, with every name they import
import botocore.client  # noqa: F401


def remove(name: str) -> None:
    module, _, path = name.partition(":")
    if not path:
        sys.modules[module] = None  # type: ignore[assignment]  # import raises ImportError
        return
    owner: Any = importlib.import_module(module)
    *classes, attribute = path.rstrip("~").split(".")
    for class_name in classes:
        owner = getattr(owner, class_name)
    if not path.endswith("~"):
        if hasattr(owner, attribute):  # an older botocore may never have had it
            delattr(owner, attribute)
        return
    method = getattr(owner, attribute)
    setattr(owner, attribute, lambda *args, **kwargs: method(*args, **kwargs) + " ")


class Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def serve() -> dict[str, Any]:
    from dynamo_app.client.handle import get_handle

    handle = get_handle()
    table = handle.table_name(f"fastpath-{uuid.uuid4().hex[:8]}")
    handle.call(
        "create_table",
        TableName=table,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    try:
        item = {"pk": {"S": "a"}, "b": {"B": b"\x00\xff"}, "n": {"N": "1.5"}}
        handle.call("put_item", TableName=table, Item=item)
        got = handle.call("get_item", TableName=table, Key={"pk": {"S": "a"}})["Item"]
        handle.call(
            "transact_write_items",
            TransactItems=[{"Put": {"TableName": table, "Item": {"pk": {"S": "b"}}}}],
        )
        page = handle.call(
            "query",
            TableName=table,
            KeyConditionExpression="pk = :pk",
            ExpressionAttributeValues={":pk": {"S": "b"}},
        )
    finally:
        handle.call("delete_table", TableName=table)
    return {"got": {k: repr(v) for k, v in got.items()}, "queried": page["Count"]}


def main(names: list[str]) -> None:
    for name in names:
        remove(name)
    warnings = Warnings()
    logging.getLogger("dynamo_app.fastpath").addHandler(warnings)
    import django

    django.setup()
    import dynamo_app

    for module in pkgutil.walk_packages(dynamo_app.__path__, "dynamo_app."):
        importlib.import_module(module.name)
    print(json.dumps({**serve(), "warnings": warnings.messages}))


if __name__ == "__main__":
    main(sys.argv[1:])
