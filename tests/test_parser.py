"""The lean response parser gives exactly what botocore's own parser gives."""

import base64
import json

import botocore.session
import pytest
from botocore.parsers import JSONParser

from dynamo_app.client import parser
from dynamo_app.client.parser import DynamoJSONParser

MODEL = botocore.session.get_session().get_service_model("dynamodb")


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


ITEM = {
    "pk": {"S": "team-1"},
    "n": {"N": "1.50"},
    "b": {"B": b64(b"\x00\xffbytes")},
    "bs": {"BS": [b64(b"one"), b64(b"two")]},
    "ss": {"SS": ["a", "b"]},
    "ns": {"NS": ["1", "2.5"]},
    "ok": {"BOOL": False},
    "none": {"NULL": True},
    "doc": {
        "M": {
            "inner": {"B": b64(b"deep")},
            "list": {"L": [{"B": b64(b"x")}, {"S": "y"}, {"M": {"z": {"BS": [b64(b"z")]}}}]},
            "empty": {"M": {}},
        }
    },
    "list": {"L": []},
}


def parse(parser_class: type, operation: str, body: dict, status: int = 200) -> dict:
    """What botocore's endpoint does: parse, then an error's modeled fields."""
    response = {
        "status_code": status,
        "headers": {"x-amzn-requestid": "r-1"},
        "body": json.dumps(body).encode(),
        "context": {"operation_name": operation},
    }
    parser = parser_class()
    parsed = parser.parse(response, MODEL.operation_model(operation).output_shape)
    if status >= 300:
        error_shape = MODEL.shape_for_error_code(parsed["Error"]["Code"])
        parsed.update(parser.parse(response, error_shape))
    return parsed


@pytest.mark.parametrize(
    "operation, body",
    [
        ("GetItem", {"Item": ITEM}),
        ("GetItem", {}),
        (
            "Query",
            {
                "Items": [ITEM, {"pk": {"S": "team-2"}}],
                "Count": 2,
                "ScannedCount": 2,
                "LastEvaluatedKey": {"pk": {"S": "team-2"}, "b": {"B": b64(b"k")}},
                "ConsumedCapacity": {"TableName": "t", "CapacityUnits": 0.5},
            },
        ),
        ("UpdateItem", {"Attributes": ITEM}),
        ("BatchGetItem", {"Responses": {"t": [ITEM]}, "UnprocessedKeys": {}}),
        (
            "DescribeTable",
            {
                "Table": {
                    "TableName": "t",
                    "TableStatus": "ACTIVE",
                    "CreationDateTime": 1714555800.5,
                    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
                }
            },
        ),
    ],
)
def test_success_responses_parse_as_botocore_parses_them(operation: str, body: dict) -> None:
    assert parse(DynamoJSONParser, operation, body) == parse(JSONParser, operation, body)


@pytest.mark.parametrize(
    "body",
    [
        {
            "__type": "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",
            "message": "The conditional request failed",
            "Item": ITEM,
        },
        {
            "__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
            "Message": "Transaction cancelled",
            "CancellationReasons": [
                {"Code": "ConditionalCheckFailed", "Item": ITEM},
                {"Code": "None"},
            ],
        },
    ],
)
def test_error_responses_parse_as_botocore_parses_them(body: dict) -> None:
    operation = "PutItem" if "Item" in body else "TransactWriteItems"
    lean = parse(DynamoJSONParser, operation, body, status=400)
    assert lean == parse(JSONParser, operation, body, status=400)
    assert lean["Error"]["Code"] == body["__type"].split("#")[-1]


TEXT_ONLY = {k: v for k, v in ITEM.items() if k not in ("b", "bs", "doc")}
LOOKS_BINARY = {**TEXT_ONLY, "note": {"S": 'says "B": "x" and "BS"'}}


@pytest.mark.parametrize("item", [TEXT_ONLY, LOOKS_BINARY, ITEM])
def test_pages_with_or_without_binary_values_parse_as_botocore_parses_them(item: dict) -> None:
    body = {
        "Items": [item] * 3,
        "Count": 3,
        "ScannedCount": 3,
        "LastEvaluatedKey": {"pk": item["pk"]},
    }
    assert parse(DynamoJSONParser, "Query", body) == parse(JSONParser, "Query", body)


def test_a_body_without_binary_values_is_not_walked(monkeypatch: pytest.MonkeyPatch) -> None:
    def walked(*args: object) -> None:
        raise AssertionError("attribute values walked")

    class LeanOnly(DynamoJSONParser):
        parse = DynamoJSONParser.lean_parse  # no fallback to botocore's parse

    monkeypatch.setattr(parser, "_value", walked)
    monkeypatch.setattr(parser, "binary_values", walked)
    body = {"Items": [TEXT_ONLY] * 25, "Count": 25, "ScannedCount": 25}
    assert parse(LeanOnly, "Query", body)["Items"] == [TEXT_ONLY] * 25
    with pytest.raises(AssertionError, match="walked"):
        parse(LeanOnly, "Query", {"Items": [ITEM], "Count": 1, "ScannedCount": 1})
