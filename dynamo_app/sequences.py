"""Sequence numbers (``SequenceField``): integers from a counter item, a block at a time.

DynamoDB has no auto-increment. Each sequence is one item of the app table
``dynamo_sequences``::

    sequence  S  partition key: the sequence's name
    value     N  the highest number reserved so far, by any process

A process reserves ``cache`` numbers with one UpdateItem (``ADD value :cache``,
``ReturnValues=UPDATED_NEW``). DynamoDB applies the ADDs to one item one after
another, so two reservations never overlap: no number is handed out twice, by
any process or thread. The block is then handed out from memory, under a lock
per sequence. ``cache=1`` costs a request per number and numbers are taken in
order across processes; a larger cache costs one request per block, but
processes interleave their blocks (one writes 101 before another writes 2), and
the unused rest of a block is lost when its process stops (gaps).

A forked child forgets its parent's blocks (else both would hand out the same
numbers); so does ``TestStore.empty()``, which empties the table.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

from .app_tables import SEQUENCE_NAME, SEQUENCE_VALUE, SEQUENCES
from .client.handle import Handle, get_handle
from .exceptions import ConditionFailed, OutcomeUnknown, SequenceError

__all__ = ["Sequence", "forget_blocks"]

MAX_NAME_BYTES = 2048  # DynamoDB's limit for a partition key value


@dataclass
class _Block:
    next: int
    last: int


_blocks: dict[tuple[str, str], _Block] = {}  # by (deployed table, sequence name)
_locks: dict[tuple[str, str], threading.Lock] = {}
_guard = threading.Lock()


def forget_blocks() -> None:
    """Drop every block this process holds: the next number of each sequence is
    reserved anew. For a child after a fork, and after the table was emptied."""
    global _guard
    _blocks.clear()
    _locks.clear()
    _guard = threading.Lock()


os.register_at_fork(after_in_child=forget_blocks)


def check_cache(cache: object, where: str) -> None:
    """Refuse a cache size that is not a whole number of 1 or more."""
    if isinstance(cache, bool) or not isinstance(cache, int) or cache < 1:
        raise SequenceError(
            f"{where}: cache={cache!r}; give a whole number, 1 or more (1: strictly "
            "increasing, one request per number; 65536: one request per 65,536 numbers, "
            "not in order across processes)."
        )


class Sequence:
    """One named sequence, handing out numbers from blocks of ``cache``."""

    def __init__(self, name: str, cache: int = 1) -> None:
        if not name or len(name.encode()) > MAX_NAME_BYTES:
            raise SequenceError(
                f"A sequence name must be 1 to {MAX_NAME_BYTES} bytes; got {name[:80]!r}."
            )
        check_cache(cache, f"Sequence {name!r}")
        self.name = name
        self.cache = cache

    def __repr__(self) -> str:
        return f"<Sequence {self.name!r} cache={self.cache}>"

    def _table(self) -> str:
        return get_handle().table_name(SEQUENCES.declared_name)

    def _key(self) -> dict[str, dict[str, str]]:
        return {SEQUENCE_NAME: {"S": self.name}}

    def _block_lock(self, key: tuple[str, str]) -> threading.Lock:
        with _guard:
            return _locks.setdefault(key, threading.Lock())

    def next(self) -> int:
        """The next number of this process's block; a new block (one UpdateItem) when spent."""
        key = (self._table(), self.name)
        with self._block_lock(key):
            block = _blocks.get(key)
            if block is None or block.next > block.last:
                block = _blocks[key] = self._reserve()
            number = block.next
            block.next += 1
            return number

    def _reserve(self) -> _Block:
        """One UpdateItem ADD; sent again when its answer is lost
        (``OutcomeUnknown``): a reservation applied twice only leaves a block
        unused (a gap), never a number handed out twice, so the write that needs
        the number goes on rather than failing over a write that was not its own."""
        handle = get_handle()
        for _ in range(handle.retry.settings.max_attempts - 1):
            try:
                return self._reserve_once(handle)
            except OutcomeUnknown:
                continue
        return self._reserve_once(handle)

    def _reserve_once(self, handle: Handle) -> _Block:
        response = handle.call(
            "update_item",
            TableName=self._table(),
            Key=self._key(),
            UpdateExpression="ADD #v :n",
            ExpressionAttributeNames={"#v": SEQUENCE_VALUE},
            ExpressionAttributeValues={":n": {"N": str(self.cache)}},
            ReturnValues="UPDATED_NEW",
        )
        last = int(response["Attributes"][SEQUENCE_VALUE]["N"])
        return _Block(next=last - self.cache + 1, last=last)

    def current(self) -> int:
        """The highest number reserved so far by any process (0: none yet); one
        strongly consistent GetItem."""
        item = (
            get_handle()
            .call("get_item", TableName=self._table(), Key=self._key(), ConsistentRead=True)
            .get("Item")
        )
        return int(item[SEQUENCE_VALUE]["N"]) if item else 0

    def advance(self, to: int) -> None:
        """Make ``to`` the highest number reserved, so the next block starts
        above it (after loading items that carry their own numbers). Refused,
        changing nothing stored, if the sequence is past ``to``. Either way this
        process drops its block if the block would hand out a number up to ``to``;
        blocks other processes hold are theirs: restart them after an advance."""
        if isinstance(to, bool) or not isinstance(to, int) or to < 0:
            raise SequenceError(f"Sequence {self.name!r}: advance to a whole number, not {to!r}.")
        try:
            get_handle().call(
                "update_item",
                TableName=self._table(),
                Key=self._key(),
                UpdateExpression="SET #v = :to",
                ConditionExpression="attribute_not_exists(#v) OR #v <= :to",
                ExpressionAttributeNames={"#v": SEQUENCE_VALUE},
                ExpressionAttributeValues={":to": {"N": str(to)}},
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
            )
        except ConditionFailed as exc:
            now = exc.raw_item[SEQUENCE_VALUE]["N"] if exc.raw_item else "?"
            raise SequenceError(
                f"Sequence {self.name!r} is at {now}, past {to}: moving it back would hand "
                "out numbers again; nothing was changed."
            ) from None
        finally:
            self._drop_block_up_to(to)

    def _drop_block_up_to(self, to: int) -> None:
        """Forget this process's block if its next number is ``to`` or below (a
        loaded item may hold it): the next number starts a new block."""
        key = (self._table(), self.name)
        with self._block_lock(key):
            block = _blocks.get(key)
            if block is not None and block.next <= to:
                del _blocks[key]
