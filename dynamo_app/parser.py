"""A leaner botocore response parser for DynamoDB's attribute values.

botocore parses every response by walking the service model shape by shape;
for items that is a dozen calls per attribute, and it is most of a Query
page's client CPU. An attribute value needs only one conversion after
``json.loads``: binary (``B``, ``BS``, also inside ``M`` and ``L``) is
base64 text on the wire and bytes in Python. This parser does exactly that
for every map of attribute values (``Item``, ``Items``, ``Key``,
``LastEvaluatedKey``, ``Attributes``, cancellation reasons' ``Item``, ...)
and leaves everything else - response metadata, errors and their codes,
capacity, table descriptions and their timestamps - to botocore, unchanged.
Its result equals botocore's for every attribute value DynamoDB sends.

It first checks every body against DynamoDB's ``x-amz-crc32`` header (the
check botocore makes only in its own retry handler, which the handle turns
off): a changed or cut-short body raises ``ChecksumError`` instead of being
read as an item or as no item. A response without the header is parsed as is.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Mapping
from typing import Any

from botocore import parsers
from botocore.exceptions import ChecksumError

_ATTRIBUTE_VALUE = "AttributeValue"


def _value(value: Any, blob: Callable[[Any], bytes]) -> Any:
    """One attribute value, converted in place (the parsed JSON is ours alone)."""
    if not isinstance(value, dict):
        return value
    if "M" in value:
        for member in value["M"].values():
            _value(member, blob)
    elif "L" in value:
        for member in value["L"]:
            _value(member, blob)
    elif "B" in value:
        value["B"] = blob(value["B"])
    elif "BS" in value:
        value["BS"] = [blob(member) for member in value["BS"]]
    return value


def binary_values(item: Mapping[str, Any], blob: Callable[[Any], bytes]) -> Mapping[str, Any]:
    """A map of attribute values parsed from JSON by hand (a Lambda event's
    stream record), its binary values converted in place by ``blob``."""
    for value in item.values():
        _value(value, blob)
    return item


# botocore-stubs declare botocore's public API only: the private members these
# classes extend (_blob_parser, _handle_map, _handle_structure, _defaults) carry
# targeted ignores.


class _TextualJSONParser(parsers.JSONParser):
    """botocore's JSON parser, attribute values taken as ``json.loads`` gives them:
    right for a body that holds no binary value (nothing to convert)."""

    def _handle_map(self, shape: Any, value: Any) -> Any:
        if shape.value.name == _ATTRIBUTE_VALUE and isinstance(value, dict):
            return value
        return super()._handle_map(shape, value)  # type: ignore[misc]

    def _handle_structure(self, shape: Any, value: Any) -> Any:
        if shape.name == _ATTRIBUTE_VALUE and value is not None:
            return value
        return super()._handle_structure(shape, value)  # type: ignore[misc]


class DynamoJSONParser(parsers.JSONParser):
    """botocore's JSON parser, with attribute values converted directly.

    A body without ``"B"`` or ``"BS"`` anywhere has no binary value to convert
    (a binary value is always written ``{"B": ...}`` or ``{"BS": [...]}``), so its
    attribute values are not walked at all: on a page of 25 items the walk was a
    fifth of the client's CPU. Text that merely contains those characters only
    costs the walk.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._textual = _TextualJSONParser(*args, **kwargs)

    def parse(self, response: Mapping[str, Any], shape: Any) -> Any:
        body = response["body"]
        expected = response["headers"].get("x-amz-crc32")
        if expected is not None:
            actual = zlib.crc32(body)
            if not expected.isdigit() or int(expected) != actual:
                raise ChecksumError(
                    checksum_type="crc32", expected_checksum=expected, actual_checksum=str(actual)
                )
        if b'"B"' in body or b'"BS"' in body:
            return super().parse(response, shape)
        return self._textual.parse(response, shape)

    def _handle_map(self, shape: Any, value: Any) -> Any:
        if shape.value.name == _ATTRIBUTE_VALUE and isinstance(value, dict):
            return binary_values(value, self._blob_parser)  # type: ignore[attr-defined]
        return super()._handle_map(shape, value)  # type: ignore[misc]

    def _handle_structure(self, shape: Any, value: Any) -> Any:
        if shape.name == _ATTRIBUTE_VALUE and value is not None:
            return _value(value, self._blob_parser)  # type: ignore[attr-defined]
        return super()._handle_structure(shape, value)  # type: ignore[misc]


class ResponseParserFactory(parsers.ResponseParserFactory):
    """Gives a client the lean parser for the JSON protocol (DynamoDB's)."""

    def create_parser(self, protocol_name: str) -> Any:
        if protocol_name == "json":
            return DynamoJSONParser(**self._defaults)  # type: ignore[attr-defined]
        return super().create_parser(protocol_name)
