"""A change record of a model's table, decoded by the model: ``StreamRecord``.

The same record arrives in two forms: from ``GetRecords`` (botocore has parsed
binary values to bytes and the creation time to a datetime) and in a Lambda
event (JSON: binary values are base64 text, the time is epoch seconds).
``from_lambda`` turns the second into the first, so one parser serves both.
"""

from __future__ import annotations

import base64
import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar, cast

from ..client.parser import binary_values

if TYPE_CHECKING:
    from ..models.base import Model

M = TypeVar("M", bound="Model")
EventName = Literal["INSERT", "MODIFY", "REMOVE"]

# Who deleted an item DynamoDB's TTL expired (the record's ``userIdentity``).
_TTL_IDENTITY = {"type": "Service", "principalId": "dynamodb.amazonaws.com"}
_IMAGES = ("Keys", "NewImage", "OldImage")


@dataclass(frozen=True)
class StreamRecord(Generic[M]):
    """One change to one item: what a receiver gets.

    ``old`` and ``new`` are instances decoded by the model, or None where the
    stream's view type leaves the image out (``keys_only``; ``old`` under
    ``new_image``, ``new`` under ``old_image``) and where there is none (no
    ``old`` for an INSERT, no ``new`` for a REMOVE). ``keys`` holds the key
    fields' values by field name, whatever the view type.
    """

    model: type[M]
    event_name: EventName
    keys: dict[str, Any]
    old: M | None
    new: M | None
    sequence_number: str
    approximate_creation_time: datetime
    table: str  # the deployed table name
    event_id: str = ""
    expired: bool = False  # a REMOVE made by DynamoDB's TTL, not by a request
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __str__(self) -> str:
        keys = ", ".join(f"{name}={value!r}" for name, value in self.keys.items())
        return f"{self.event_name} {self.model.__name__}({keys}) #{self.sequence_number}"


def parse(raw: Mapping[str, Any], model: type[M], table: str) -> StreamRecord[M]:
    """A record in ``GetRecords`` form as a ``StreamRecord`` of ``model``."""
    meta = model._meta
    change = raw["dynamodb"]
    keys = change["Keys"]
    # A missing image can also arrive empty ({}: moto sends OldImage on INSERT).
    old, new = change.get("OldImage") or None, change.get("NewImage") or None
    return StreamRecord(
        model=model,
        event_name=raw["eventName"],
        keys={f.name: f.decode_slow(keys[f.db_name], table) for f in meta.key_fields},
        old=cast(M, meta.decode(old)) if old else None,
        new=cast(M, meta.decode(new)) if new else None,
        sequence_number=change["SequenceNumber"],
        approximate_creation_time=_utc(change["ApproximateCreationDateTime"]),
        table=table,
        event_id=raw.get("eventID", ""),
        expired=_lower_keys(raw.get("userIdentity")) == _TTL_IDENTITY,
        raw=raw,
    )


def from_lambda(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A Lambda event's record in ``GetRecords`` form: binary values as bytes
    (base64 text in the event's JSON). The creation time (epoch seconds there)
    is read by ``parse`` in either form."""
    record = copy.deepcopy(dict(raw))
    change = record["dynamodb"]
    for name in _IMAGES:
        if change.get(name):
            binary_values(change[name], base64.b64decode)
    return record


def table_of(stream_arn: str) -> str:
    """The table name in a stream ARN
    (``arn:aws:dynamodb:REGION:ACCOUNT:table/NAME/stream/LABEL``)."""
    return stream_arn.split(":", 5)[5].split("/")[1]


def _utc(value: datetime | float | int | str) -> datetime:
    """The creation time, in UTC: a datetime (GetRecords; moto's has no zone),
    epoch seconds (a Lambda event) or ISO text."""
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, UTC)
    if isinstance(value, str):
        value = datetime.fromisoformat(value)
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _lower_keys(identity: Any) -> Any:
    """``userIdentity`` in the Lambda event's spelling (``type``, ``principalId``),
    whichever form it came in (GetRecords spells them ``Type``, ``PrincipalId``)."""
    if not isinstance(identity, Mapping):
        return identity
    return {k[:1].lower() + k[1:]: v for k, v in identity.items()}
