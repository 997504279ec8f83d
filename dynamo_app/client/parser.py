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

Whichever parser reads a response - this one, or botocore's own when the fast
path is off (``CheckedJSONParser``) - first checks the body against DynamoDB's
``x-amz-crc32`` header (the check botocore makes only in its own retry
handler, which the handle turns off): a changed or cut-short body raises
``ChecksumError`` instead of being read as an item or as no item. A response
without the header is parsed as is.

A failure of the lean parse itself (a botocore internal it uses gone) is not
the caller's: the response is parsed again by botocore's parser, and parsing
is left to botocore from then on (``fallback``).
"""

from __future__ import annotations

import base64
import json
import zlib
from collections.abc import Callable, Mapping
from typing import Any

from botocore import parsers
from botocore.exceptions import ChecksumError

from ..exceptions import FastPathUnfit
from . import fallback

_ATTRIBUTE_VALUE = "AttributeValue"
COMPONENT = "parsing"


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


def check_crc32(response: Mapping[str, Any]) -> None:
    """Refuse a body that does not match its ``x-amz-crc32`` header."""
    expected = response["headers"].get("x-amz-crc32")
    if expected is not None:
        actual = zlib.crc32(response["body"])
        if not expected.isdigit() or int(expected) != actual:
            raise ChecksumError(
                checksum_type="crc32", expected_checksum=expected, actual_checksum=str(actual)
            )


class CheckedJSONParser(parsers.JSONParser):
    """botocore's JSON parser, reading only bodies that match their checksum."""

    def parse(self, response: Mapping[str, Any], shape: Any) -> Any:
        check_crc32(response)
        return super().parse(response, shape)


class DynamoJSONParser(parsers.JSONParser):
    """botocore's JSON parser, with attribute values converted directly.

    A body without ``"B"`` or ``"BS"`` anywhere has no binary value to convert
    (a binary value is always written ``{"B": ...}`` or ``{"BS": [...]}``), so its
    attribute values are not walked at all: on a page of 25 items the walk was a
    fifth of the client's CPU. Text that merely contains those characters only
    costs the walk.
    """

    def __init__(self, **defaults: Any) -> None:
        super().__init__(**defaults)
        self._defaults = defaults
        self._textual = _TextualJSONParser(**defaults)

    def parse(self, response: Mapping[str, Any], shape: Any) -> Any:
        check_crc32(response)
        try:
            return self.lean_parse(response, shape)
        except Exception as exc:
            # A response botocore cannot read either fails as botocore fails it;
            # one it can read means the lean parse broke: botocore's from now on.
            parsed = parsers.JSONParser(**self._defaults).parse(response, shape)
            fallback.turn_off(COMPONENT, exc)
            return parsed

    def lean_parse(self, response: Mapping[str, Any], shape: Any) -> Any:
        """The parse, without the checksum check and without the fallback."""
        body = response["body"]
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
    """Gives a client a checked parser for the JSON protocol (DynamoDB's): the lean
    one while ``lean`` and parsing is not off, else botocore's own."""

    def __init__(self, *, lean: bool) -> None:
        super().__init__()
        self.lean = lean

    def create_parser(self, protocol_name: str) -> Any:
        if protocol_name != "json":
            return super().create_parser(protocol_name)
        defaults = getattr(self, "_defaults", {})  # set_parser_defaults()'s, none by the app
        if self.lean and COMPONENT not in fallback.off:
            return DynamoJSONParser(**defaults)
        return CheckedJSONParser(**defaults)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


# Responses read both ways at client build: binary values at every depth (the
# walk), and a page with none (botocore's parser with attribute values as given).
_PROBE_ITEM = {
    "pk": {"S": "a"},
    "n": {"N": "1.50"},
    "b": {"B": _b64(b"\x00\xff")},
    "bs": {"BS": [_b64(b"one"), _b64(b"two")]},
    "doc": {"M": {"l": {"L": [{"B": _b64(b"x")}, {"NULL": True}, {"SS": ["s"]}]}}},
}
_PROBES = (
    ("GetItem", {"Item": _PROBE_ITEM}),
    ("Query", {"Items": [{"pk": {"S": "a"}, "ok": {"BOOL": True}}], "Count": 1}),
)


def _probe(body: Mapping[str, Any]) -> dict[str, Any]:
    data = json.dumps(body).encode()
    headers = {"x-amzn-requestid": "probe", "x-amz-crc32": str(zlib.crc32(data))}
    return {"status_code": 200, "headers": headers, "body": data, "context": {}}


def install(client: Any, factory: ResponseParserFactory) -> None:
    """Check that ``client`` reads every response with ``factory``'s (checked)
    parsers and, with ``factory.lean``, that the lean parser reads probe responses
    as botocore's does; else ``FastPathUnfit``. A client that takes its parsers
    elsewhere gets the checksum check as a ``before-parse`` handler instead."""
    model = client.meta.service_model
    endpoint = getattr(client, "_endpoint", None)
    protocol = getattr(model, "resolved_protocol", model.protocol)
    if getattr(endpoint, "_response_parser_factory", None) is not factory or protocol != "json":
        client.meta.events.register(f"before-parse.{model.service_id.hyphenize()}", _check)
        raise FastPathUnfit(f"the client reads its {protocol} responses with a parser of its own")
    if not factory.lean or COMPONENT in fallback.off:
        return
    for operation, body in _PROBES:
        shape = model.operation_model(operation).output_shape
        lean = DynamoJSONParser().lean_parse(_probe(body), shape)
        if lean != parsers.JSONParser().parse(_probe(body), shape):
            raise FastPathUnfit(f"a probe {operation} response parsed both ways differs")


def _check(response_dict: Mapping[str, Any], **kwargs: Any) -> None:
    check_crc32(response_dict)
