"""The local consumer behind ``manage.py dynamo_stream``: every shard of the
streams of the tables whose models declare ``Meta.stream``, read with
DescribeStream, GetShardIterator and GetRecords, delivered to the receivers.

Its place in each shard is a checkpoint item (app table
``dynamo_stream_checkpoints``: stream ARN, shard id, last delivered sequence
number), written after each page of records and before stopping at a failed
record. A restart goes on after the checkpoint, so a record is delivered at
least once: twice when the process stopped between delivering it and writing
the checkpoint. A child shard is read only after its parent is finished, so
the changes of one item arrive in order.
"""

from __future__ import annotations

import collections
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from ..app_tables import CHECKPOINT_SEQUENCE, STREAM_ARN, STREAM_CHECKPOINTS, STREAM_SHARD
from ..client.handle import Handle, get_handle
from ..exceptions import ServiceError
from .dispatch import Dispatcher

Start = Literal["trim_horizon", "latest"]


@dataclass
class Shard:
    """One shard of a stream and where this consumer is in it."""

    stream_arn: str
    table: str
    shard_id: str
    parent_id: str | None
    checkpoint: str | None = None  # the last sequence number delivered
    iterator: str | None = None  # where the next GetRecords reads (kept between rounds)
    finished: bool = False  # closed and read to its end

    @property
    def key(self) -> tuple[str, str]:
        return self.stream_arn, self.shard_id

    def __str__(self) -> str:
        return f"table {self.table!r} shard {self.shard_id}"


class Consumer:
    """Reads the streams of the declared tables on the handle's endpoint and
    delivers their records; ``report`` gets one line of progress at a time."""

    def __init__(
        self,
        *,
        start: Start = "trim_horizon",
        report: Callable[[str], None] = lambda line: None,
        handle: Handle | None = None,
    ) -> None:
        self.handle = handle or get_handle()
        self.start = start
        self.report = report
        self.dispatcher = Dispatcher(self.handle)
        self.checkpoints = self.handle.table_name(STREAM_CHECKPOINTS.declared_name)
        self.shards: dict[tuple[str, str], Shard] = {}
        self._streams: set[str] = set()  # stream ARNs whose checkpoints were read
        self._told: set[str] = set()  # tables reported as having no stream

    def run(self, *, follow: bool = False, interval: float = 1.0) -> int:
        """Deliver until every shard is caught up (its next page is empty), then
        return the number of records delivered; with ``follow``, poll again every
        ``interval`` seconds instead, for ever. ``ReceiverFailed`` stops it."""
        total = 0
        while True:
            total += self.round()
            if not follow:
                return total
            time.sleep(interval)

    def round(self) -> int:
        """One pass: list the shards, read each one until it is caught up (a child
        once its parent is read to its end); return the records delivered."""
        shards = self._discover()
        read: set[tuple[str, str]] = set()
        delivered = 0
        while ready := [s for s in self._ready(shards) if s.key not in read]:
            for shard in ready:
                delivered += self._consume(shard)
                read.add(shard.key)
        return delivered

    # --- shards

    def _discover(self) -> list[Shard]:
        """Every shard of every declared stream (DescribeTable for the stream ARN,
        DescribeStream for its shards, a Query for the checkpoints of a stream not
        seen before), in the order DynamoDB lists them."""
        shards = []
        for table in sorted(self.dispatcher.tables):
            description = self.handle.call("describe_table", TableName=table)["Table"]
            arn = description.get("LatestStreamArn")
            if not arn or not description.get("StreamSpecification", {}).get("StreamEnabled"):
                if table not in self._told:
                    self._told.add(table)
                    self.report(f"table {table!r} has no stream: run `manage.py dynamo_migrate`")
                continue
            checkpoints = {} if arn in self._streams else self._checkpoints(arn)
            self._streams.add(arn)
            for listed in self._list_shards(arn):
                key = (arn, listed["ShardId"])
                if key not in self.shards:
                    self.shards[key] = Shard(
                        arn,
                        table,
                        listed["ShardId"],
                        listed.get("ParentShardId"),
                        checkpoints.get(listed["ShardId"]),
                    )
                shards.append(self.shards[key])
        return shards

    def _list_shards(self, arn: str) -> Iterator[dict[str, Any]]:
        params: dict[str, Any] = {"StreamArn": arn}
        while True:
            stream = self.handle.call("describe_stream", **params)["StreamDescription"]
            yield from stream.get("Shards", [])
            if not stream.get("LastEvaluatedShardId"):
                return
            params["ExclusiveStartShardId"] = stream["LastEvaluatedShardId"]

    def _ready(self, shards: list[Shard]) -> list[Shard]:
        """The unfinished shards whose parent is finished or no longer listed."""
        listed = {s.key: s for s in shards}
        return [
            s
            for s in shards
            if not s.finished
            and (
                s.parent_id is None
                or (s.stream_arn, s.parent_id) not in listed
                or listed[(s.stream_arn, s.parent_id)].finished
            )
        ]

    # --- records

    def _consume(self, shard: Shard) -> int:
        """Read ``shard`` page by page until a page is empty (caught up) or the
        shard ends; deliver each record; checkpoint after each page."""
        delivered = 0
        iterator = shard.iterator or self._iterator(shard)
        while iterator:
            try:
                page = self.handle.call("get_records", ShardIterator=iterator)
            except ServiceError as exc:
                if exc.code != "ExpiredIteratorException":
                    raise
                iterator = self._iterator(shard)  # an iterator expires after 15 minutes
                continue
            records = page.get("Records", [])
            iterator = page.get("NextShardIterator")
            if records:
                delivered += self._deliver(shard, records)
            shard.iterator = iterator
            if not records:
                break
        if iterator is None:
            shard.finished = True
            self.report(f"{shard}: closed, read to its end")
        return delivered

    def _deliver(self, shard: Shard, records: list[dict[str, Any]]) -> int:
        """Deliver one page; checkpoint its last record, or the one before a failure."""
        events: collections.Counter[str] = collections.Counter()
        try:
            for raw in records:
                self.dispatcher.deliver(raw, shard.table)
                shard.checkpoint = raw["dynamodb"]["SequenceNumber"]
                events[raw["eventName"]] += 1
        except BaseException as failure:  # a receiver failed, a record did not decode, Ctrl-C
            shard.iterator = None  # the next round starts after the checkpoint
            self._save_before(shard, failure)
            raise
        self._save(shard)
        counts = ", ".join(f"{name} {n}" for name, n in sorted(events.items()))
        self.report(
            f"{shard}: {len(records)} records delivered ({counts}), checkpoint {shard.checkpoint}"
        )
        return len(records)

    def _iterator(self, shard: Shard) -> str | None:
        params: dict[str, Any] = {"StreamArn": shard.stream_arn, "ShardId": shard.shard_id}
        if shard.checkpoint is not None:
            params |= {
                "ShardIteratorType": "AFTER_SEQUENCE_NUMBER",
                "SequenceNumber": shard.checkpoint,
            }
        else:
            params["ShardIteratorType"] = self.start.upper()
        return self.handle.call("get_shard_iterator", **params).get("ShardIterator")

    # --- checkpoints

    def _checkpoints(self, arn: str) -> dict[str, str]:
        """The saved checkpoints of one stream, by shard id."""
        found = {}
        for page in self.handle.paginate(
            "query",
            TableName=self.checkpoints,
            KeyConditionExpression="#a = :a",
            ExpressionAttributeNames={"#a": STREAM_ARN},
            ExpressionAttributeValues={":a": {"S": arn}},
            ConsistentRead=True,
        ):
            for item in page.get("Items", []):
                found[item[STREAM_SHARD]["S"]] = item[CHECKPOINT_SEQUENCE]["S"]
        return found

    def _save_before(self, shard: Shard, failure: BaseException) -> None:
        """Checkpoint the records delivered before ``failure``. When that fails
        too, ``failure`` stays the error raised (it is why the consumer stops)
        and carries the checkpoint's error as a note, so neither is lost."""
        try:
            self._save(shard)
        except Exception as exc:
            failure.add_note(
                f"Saving the checkpoint of {shard} (sequence number {shard.checkpoint}) failed "
                f"too: {type(exc).__name__}: {exc}\nThe next run starts after the last "
                "checkpoint that was saved, so records delivered before this one may come again."
            )

    def _save(self, shard: Shard) -> None:
        if shard.checkpoint is None:
            return
        self.handle.call(
            "put_item",
            TableName=self.checkpoints,
            Item={
                STREAM_ARN: {"S": shard.stream_arn},
                STREAM_SHARD: {"S": shard.shard_id},
                CHECKPOINT_SEQUENCE: {"S": shard.checkpoint},
                "updated_at": {"S": datetime.now(UTC).isoformat()},
            },
        )
