"""Backfills: a function applied to every item of a table, at any size.

``run(Model, fn)`` reads the table with a parallel Scan (``Segment`` /
``TotalSegments``), calls ``fn(obj)`` on each instance, and writes back the
items ``fn`` changed:

* **Never over a concurrent edit.** A model with a ``VersionField`` is saved
  conditioned on the version read; any other model is updated in the fields
  ``fn`` changed, conditioned on every field still holding the value read.
  When the item moved in between (or was deleted), nothing is written and the
  item counts as a conflict (run the backfill again to pick it up).
* **Exactly once, across kills.** Each segment's position lives in the app's
  checkpoint table (``dynamo_backfill``): the checkpoint moves in the same
  transaction as each item written, and to the page's ``LastEvaluatedKey``
  after each page. A run killed at any point resumes where it stopped, and
  ``fn`` never changes one item twice. A transaction whose outcome stayed
  unknown (its answers lost) is settled by reading the checkpoint it carried:
  there, the item was written; not there, the run stops with ``OutcomeUnknown``
  and a rerun resumes before that item.
* **Any number of workers.** ``segment=i, total_segments=n`` runs one slice,
  so n processes (or machines, Lambda invocations, a Kubernetes Job with n
  completions) split a table with no coordinator beyond the checkpoint table.
* **A capacity budget.** ``max_capacity`` caps the read and write capacity
  units a second this process spends (estimated for writes: 2 per action per
  KB, as transactions cost).
"""

from __future__ import annotations

import inspect
import json
import threading
import time
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TextIO

from ..actions import Action
from ..app_tables import CHECKPOINT_ID, CHECKPOINTS
from ..client import wire
from ..client.handle import Handle, get_handle
from ..deploy.schema import create_table
from ..exceptions import (
    ConditionFailed,
    DoesNotExist,
    OutcomeUnknown,
    TableNotFound,
    UniqueViolation,
)
from ..expressions import Attr, Condition
from ..models import writes
from .dumpload import approximate_count, in_threads
from .progress import Progress
from .serialization import wire_from_json, wire_to_json

if TYPE_CHECKING:
    from ..models.base import Model

__all__ = ["Result", "model_of", "run"]

PAGE_SIZE = 100  # items a Scan request asks for: the unit of checkpoints and progress
COUNTS = ("seen", "changed", "skipped", "conflicts")


@dataclass
class Result:
    """What a backfill did: items ``seen``, ``changed`` (written), ``skipped``
    (``fn`` left them as they were) and ``conflicts`` (changed by someone else
    since read, or a unique value taken: not written)."""

    seen: int = 0
    changed: int = 0
    skipped: int = 0
    conflicts: int = 0
    segments_done: int = 0

    def add(self, other: Result) -> None:
        for name in (*COUNTS, "segments_done"):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def __str__(self) -> str:
        return (
            f"{self.seen:,} seen, {self.changed:,} changed, {self.skipped:,} skipped, "
            f"{self.conflicts:,} conflicts"
        )


def model_of(fn: Callable[..., Any]) -> type[Model] | None:
    """The model named by the annotation of ``fn``'s first parameter
    (``def fill(player: Player)``), or None."""
    from ..models.base import Model

    try:
        first = next(iter(inspect.signature(fn).parameters))
        hint = typing.get_type_hints(fn).get(first)
    except (StopIteration, NameError, TypeError, ValueError):
        return None
    return hint if isinstance(hint, type) and issubclass(hint, Model) else None


def run(
    model: type[Model],
    fn: Callable[[Any], Any],
    *,
    segments: int = 1,
    segment: int | None = None,
    total_segments: int | None = None,
    name: str | None = None,
    max_capacity: float | None = None,
    restart: bool = False,
    progress: TextIO | None = None,
) -> Result:
    """Apply ``fn`` to every item of ``model``'s table; see the module docstring.

    ``fn(obj)`` changes ``obj`` in place (its return value is ignored); an item
    it leaves as it was is not written. ``segments``: parallel Scan segments in
    this process (threads). ``segment``/``total_segments``: run only that slice
    of a scan split ``total_segments`` ways (another process runs each other
    slice). ``name`` identifies the run's checkpoints (default: the function's
    and model's dotted names); ``restart`` forgets them first. Returns the
    counts of the slices run, including what earlier runs of them did.
    """
    if (segment is None) != (total_segments is None):
        raise ValueError("segment and total_segments go together: segment=i, total_segments=n.")
    if segment is not None and total_segments is not None:
        if not 0 <= segment < total_segments:
            raise ValueError(f"segment must be in 0..{total_segments - 1}, got {segment}.")
        mine, total = [segment], total_segments
    else:
        if segments < 1:
            raise ValueError(f"segments must be at least 1, got {segments}.")
        mine, total = list(range(segments)), segments
    label = model._meta.label
    name = name or f"{fn.__module__}.{fn.__qualname__}:{label}"
    handle = get_handle()
    checkpoints = _Checkpoints(handle, name, total)
    meter = None
    if progress is not None:
        count = approximate_count(model)
        meter = Progress(progress, name, total=count * len(mine) // total)
    budget = _Budget(max_capacity)
    result = Result()
    lock = threading.Lock()

    def work(i: int) -> None:
        done = _Segment(model, fn, mine[i], total, checkpoints, budget, meter).run(restart)
        with lock:
            result.add(done)

    in_threads(work, len(mine))
    if meter is not None:
        meter.close()
    return result


class _Budget:
    """Capacity units a second, shared by this process's segments: sleeps when
    spent ahead of the rate."""

    def __init__(self, per_second: float | None) -> None:
        self.per_second = per_second
        self.spent = 0.0
        self.start = time.monotonic()
        self.lock = threading.Lock()

    def spend(self, units: float) -> None:
        if not self.per_second:
            return
        with self.lock:
            self.spent += units
            ahead = self.spent / self.per_second - (time.monotonic() - self.start)
        if ahead > 0:
            time.sleep(ahead)


class _Checkpoints:
    """One item per segment in the checkpoint table: where its scan stands
    (``last_key``, DynamoDB JSON), whether it is ``done``, and its counts."""

    def __init__(self, handle: Handle, name: str, total: int) -> None:
        self.handle = handle
        self.name = name
        self.total = total
        self.table = handle.table_name(CHECKPOINTS.declared_name)

    def key(self, segment: int) -> dict[str, Any]:
        return {CHECKPOINT_ID: {"S": f"{self.name}#{segment}/{self.total}"}}

    def read(self, segment: int) -> dict[str, Any] | None:
        try:
            response = self.handle.call(
                "get_item", TableName=self.table, Key=self.key(segment), ConsistentRead=True
            )
        except TableNotFound:
            # The first backfill of a project: its own table, created as migrate would.
            create_table(CHECKPOINTS, handle=self.handle)
            return None
        item = response.get("Item")
        if item is None:
            return None
        return {
            "last_key": (
                {k: wire_from_json(v) for k, v in json.loads(item["last_key"]["S"]).items()}
                if "last_key" in item
                else None
            ),
            "done": item["done"]["BOOL"],
            "counts": Result(**{c: int(item[c]["N"]) for c in COUNTS}),
        }

    def records(self, segment: int, last_key: dict[str, Any], counts: Result) -> bool:
        """Whether the stored checkpoint is the one written with the item at
        ``last_key`` (one consistent GetItem)."""
        state = self.read(segment)
        return (
            state is not None
            and state["last_key"] == last_key
            and state["counts"].changed == counts.changed
        )

    def forget(self, segment: int) -> None:
        self.handle.call("delete_item", TableName=self.table, Key=self.key(segment))

    def action(
        self, segment: int, last_key: dict[str, Any] | None, counts: Result, done: bool
    ) -> Action:
        """A Put of the segment's checkpoint, for a transaction or on its own."""
        item = {**self.key(segment), "done": {"BOOL": done}}
        item.update({c: {"N": str(getattr(counts, c))} for c in COUNTS})
        if last_key is not None:
            item["last_key"] = {
                "S": json.dumps({k: wire_to_json(v) for k, v in last_key.items()}, sort_keys=True)
            }
        return Action(
            "Put",
            {"TableName": self.table, "Item": item},
            f"checkpoint {self.name} segment {segment}",
            key=self.key(segment),
        )

    def save(
        self, segment: int, last_key: dict[str, Any] | None, counts: Result, done: bool
    ) -> None:
        self.handle.call("put_item", **self.action(segment, last_key, counts, done).params)


@dataclass
class _Segment:
    model: type[Model]
    fn: Callable[[Any], Any]
    segment: int
    total: int
    checkpoints: _Checkpoints
    budget: _Budget
    meter: Progress | None
    counts: Result = field(default_factory=Result)

    def run(self, restart: bool) -> Result:
        if restart:
            self.checkpoints.forget(self.segment)
        state = self.checkpoints.read(self.segment)
        start = None
        if state is not None:
            self.counts = state["counts"]
            if state["done"]:
                self.counts.segments_done = 1
                return self.counts
            start = state["last_key"]
        for items, last in self._pages(start):
            for item in items:
                self._one(item)
            self.checkpoints.save(self.segment, last, self.counts, done=last is None)
            if self.meter is not None:
                self.meter.add(len(items))
        self.counts.segments_done = 1
        return self.counts

    def _pages(self, start: dict[str, Any] | None) -> Iterator[tuple[list[Any], Any]]:
        handle = self.checkpoints.handle
        params: dict[str, Any] = {
            "TableName": handle.table_name(self.model._meta.table_name),
            "Limit": PAGE_SIZE,
            "ReturnConsumedCapacity": "TOTAL",
        }
        if self.total > 1:
            params["Segment"], params["TotalSegments"] = self.segment, self.total
        if start is not None:
            params["ExclusiveStartKey"] = start
        meta = self.model._meta
        if meta.shared is not None:  # a shared table: this model's items only (all are read)
            c = meta.compiler()
            params["FilterExpression"] = (Attr(meta.shared.type_attribute) == meta.entity).compile(
                c
            )
            params.update(c.params())
        for page in handle.paginate("scan", **params):
            units = page.get("ConsumedCapacity", {}).get("CapacityUnits")
            self.budget.spend(units if units is not None else page.get("ScannedCount", 0) / 2)
            yield page.get("Items", []), page.get("LastEvaluatedKey")

    def _one(self, item: dict[str, Any]) -> None:
        meta = self.model._meta
        obj, read = meta.decode(item), meta.decode(item)
        self.fn(obj)
        self.counts.seen += 1
        changed = [f.name for f in meta.fields if obj.__dict__[f.name] != read.__dict__[f.name]]
        if not changed:
            self.counts.skipped += 1
            return
        tx = writes.ModelTransaction()
        if meta.version is not None:
            tx.save(obj)  # conditioned on the version read
        else:
            tx.update(
                obj, set={name: obj.__dict__[name] for name in changed}, condition=_as_read(read)
            )
        counts = replace(self.counts, changed=self.counts.changed + 1)
        tx.add(self.checkpoints.action(self.segment, writes.item_key(meta, item), counts, False))
        try:
            tx.commit()
        except (ConditionFailed, UniqueViolation, DoesNotExist):  # DoesNotExist: deleted since
            self.counts.conflicts += 1
        except OutcomeUnknown:
            if not self.checkpoints.records(self.segment, writes.item_key(meta, item), counts):
                raise
            self.counts = counts  # the checkpoint moved with the item: written
        else:
            self.counts = counts
        self.budget.spend(2 * len(tx.actions) * -(-wire.item_size(item) // 1024))


def _as_read(read: Model) -> Condition | None:
    """Every non-key field still holds the value read (absent where it was None)."""
    values = {}
    for f in read._meta.fields:
        if not f.is_key:
            value = read.__dict__[f.name]
            values[f.name] = None if f.is_set and not value else value
    return writes.holds(values)
