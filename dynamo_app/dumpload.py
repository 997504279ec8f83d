"""Tables out to JSON lines and back in: ``dynamo_dump`` / ``dynamo_load``, and
test fixtures (``load_fixture``).

A line is one item, in the typed JSON form of ``dynamo_app.serialization``::

    {"model": "shop.models.Player", "fields": {...obj.to_dict()...}}

plus ``"extra"`` (DynamoDB JSON) when the item holds attributes its model does
not declare, so nothing stored is lost on the way. Dumping reads with a Scan
the caller asked for by name, optionally in parallel segments; loading decodes
every line through its model (the same checks a save makes) before anything is
written, and writes as the model's own batch and transaction paths do:
whole-item batches for plain models, and for models with unique constraints or
a ``VersionField`` each item with its locks (and its version as dumped) in
transactions. A load run again over the same file finds the items it wrote
and goes on, so an interrupted load is resumed by running it again.
"""

from __future__ import annotations

import contextvars
import json
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from .actions import Action
from .exceptions import (
    AlreadyExists,
    LoadError,
    TransactionCanceled,
    UniqueViolation,
    ValidationError,
)
from .handle import get_handle
from .models import writes
from .models.registry import registered_models
from .progress import Progress
from .serialization import value_from_json, wire_from_json, wire_to_json
from .transactions import MAX_ACTIONS, Transaction

if TYPE_CHECKING:
    from .models.base import Model

__all__ = [
    "DumpResult",
    "LoadResult",
    "approximate_count",
    "dump",
    "load",
    "load_fixture",
    "record",
]

PLAIN_BATCH = 100  # items of a plain model written per bulk_save() (4 BatchWriteItems)
PAGE_SIZE = 1000  # items asked for per Scan request (DynamoDB stops at 1 MB anyway)


def record(obj: Model) -> dict[str, Any]:
    """The dump line of an instance, as a dict."""
    line: dict[str, Any] = {"model": obj._meta.label, "fields": obj.to_dict()}
    extra = obj._state.extra
    if extra:
        line["extra"] = {name: wire_to_json(value) for name, value in extra.items()}
    return line


def approximate_count(model: type[Model]) -> int:
    """DynamoDB's ``ItemCount`` of the model's table (refreshed about every six
    hours): one DescribeTable, for a progress estimate only."""
    handle = get_handle()
    table = handle.call("describe_table", TableName=handle.table_name(model._meta.table_name))
    return int(table["Table"].get("ItemCount", 0))


# --- dump ----------------------------------------------------------------------------------


@dataclass
class DumpResult:
    counts: dict[str, int] = field(default_factory=dict)  # model label -> items written
    seconds: float = 0.0

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def dump(
    models: Sequence[type[Model]],
    out: TextIO,
    *,
    segments: int = 1,
    progress: TextIO | None = None,
) -> DumpResult:
    """Write every item of ``models`` to ``out``, one JSON line each: a Scan of
    each table in ``segments`` parallel slices (threads sharing the handle)."""
    result = DumpResult()
    started = time.monotonic()
    for model in models:
        meter = None
        if progress is not None:
            meter = Progress(progress, model._meta.label, total=approximate_count(model))
        result.counts[model._meta.label] = _dump_model(model, out, segments, meter)
        if meter is not None:
            meter.close()
    out.flush()
    result.seconds = time.monotonic() - started
    return result


def _dump_model(model: type[Model], out: TextIO, segments: int, meter: Progress | None) -> int:
    lock = threading.Lock()
    count = 0

    def dump_segment(segment: int) -> None:
        nonlocal count
        scan = model.objects.scan()
        if segments > 1:
            scan = scan.segment(segment, segments)
        cursor: str | None = None
        while True:
            page = scan.page(PAGE_SIZE, cursor)
            lines = "".join(_json(record(obj)) + "\n" for obj in page)
            with lock:
                if lines:
                    out.write(lines)
                count += len(page)
            if meter is not None:
                meter.add(len(page))
            cursor = page.next_cursor
            if cursor is None:
                return

    in_threads(dump_segment, segments)
    return count


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def in_threads(work: Callable[[int], None], count: int) -> None:
    """``work(i)`` for i in range(count), in that many threads; the first error raised."""
    if count == 1:
        work(0)
        return
    with ThreadPoolExecutor(count, thread_name_prefix="dynamo-segment") as pool:
        # Each in a copy of the caller's context: its requests count for the caller.
        for future in [pool.submit(contextvars.copy_context().run, work, i) for i in range(count)]:
            future.result()


# --- load ----------------------------------------------------------------------------------


@dataclass
class LoadResult:
    loaded: int = 0  # items written
    present: int = 0  # items found already loaded (a resumed load)
    invalid: list[int] = field(default_factory=list)  # line numbers skipped (skip_invalid)
    seconds: float = 0.0


Numbered = tuple[int, "Model"]  # (line number, the instance it holds)


def load(
    lines: Iterable[str],
    *,
    skip_invalid: bool = False,
    progress: TextIO | None = None,
    total: int | None = None,
) -> LoadResult:
    """Validate every line through its model and write the items.

    A line that is not an item its model accepts raises ``LoadError`` with its
    number (the lines before it are written), or with ``skip_invalid`` is
    counted in ``invalid``. A unique value already held by another item is
    such a line too. Items already stored exactly as in the file are counted
    in ``present``: running a load again resumes it.
    """
    result = LoadResult()
    started = time.monotonic()
    meter = Progress(progress, "load", total=total) if progress is not None else None
    models = {m._meta.label: m for m in registered_models()}
    pending: dict[type[Model], list[Numbered]] = {}

    def bad(number: int, problem: str) -> None:
        if not skip_invalid:
            raise LoadError(
                f"line {number}: {problem} Nothing of this line was written (the lines before "
                "it were). Fix it, or pass --skip-invalid to count and skip such lines.",
                line=number,
            )
        result.invalid.append(number)

    def flush(model: type[Model]) -> None:
        batch = pending.pop(model, [])
        for number, problem in _write(model, batch, result):
            bad(number, problem)
        if meter is not None:
            meter.add(len(batch))

    for number, text in enumerate(lines, 1):
        if not text.strip():
            continue
        try:
            model, obj = _parse(text, models)
        except (ValueError, ValidationError) as exc:
            bad(number, _problem(exc))
            continue
        batch = pending.setdefault(model, [])
        batch.append((number, obj))
        if len(batch) >= (PLAIN_BATCH if not _guarded(model) else MAX_ACTIONS // 2):
            flush(model)
    for model in list(pending):
        flush(model)
    if meter is not None:
        meter.close()
    result.seconds = time.monotonic() - started
    return result


def load_fixture(*paths: str | Path, skip_invalid: bool = False) -> LoadResult:
    """Load dump files, e.g. in a ``TestCase.setUp`` or a pytest fixture after
    ``dynamo_db`` has made the tables (Django's ``loaddata``, for DynamoDB)."""
    result = LoadResult()
    for path in paths:
        with open(path, encoding="utf-8") as lines:
            done = load(lines, skip_invalid=skip_invalid)
        result.loaded += done.loaded
        result.present += done.present
        result.invalid += done.invalid
    return result


def _problem(exc: Exception) -> str:
    text = str(exc.messages[0]) if isinstance(exc, ValidationError) else str(exc)
    return text if text.endswith(".") else text + "."


def _parse(text: str, models: dict[str, type[Model]]) -> tuple[type[Model], Model]:
    """The model and the unsaved instance of one line, checked as a save checks it."""
    try:
        line = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(line, dict) or not isinstance(line.get("fields"), dict):
        raise ValueError('expected {"model": ..., "fields": {...}}')
    model = models.get(line.get("model"))  # type: ignore[arg-type]
    if model is None:
        raise ValueError(
            f"no model {line.get('model')!r} is defined in this project (import the module "
            "that declares it, e.g. list it in INSTALLED_APPS)"
        )
    extra = line.get("extra") or {}
    if not isinstance(extra, dict):
        raise ValueError('"extra" must map attribute names to DynamoDB JSON')
    wire_extra = {name: wire_from_json(value) for name, value in extra.items()}
    declared = set(model._meta.fields_by_db_name)
    if declared & set(wire_extra):
        clash = sorted(declared & set(wire_extra))
        raise ValueError(f'"extra" holds declared attributes {clash}; they belong in "fields"')
    fields = model._meta.fields_by_name
    unknown = [name for name in line["fields"] if name not in fields]
    if unknown:
        raise ValueError(f"{model.__name__} has no field(s) {unknown}")
    values = {name: value_from_json(fields[name], v) for name, v in line["fields"].items()}
    obj = model(**values)
    obj._state.extra = wire_extra
    model._meta.check_size(model._meta.encode(obj))
    return model, obj


def _guarded(model: type[Model]) -> bool:
    """Whether a write of this model must carry conditions (locks, versions)."""
    return bool(model._meta.unique) or model._meta.version is not None


def _write(
    model: type[Model], batch: list[Numbered], result: LoadResult
) -> Iterator[tuple[int, str]]:
    """Write one batch; yield ``(line number, problem)`` for each line refused."""
    if not batch:
        return
    if not _guarded(model):
        model.objects.bulk_save(obj for _, obj in batch)  # a put overwrites: repeatable
        result.loaded += len(batch)
        return
    plans = [(number, obj, _restore_actions(obj)) for number, obj in batch]
    for group in _packed(plans):
        tx = Transaction()
        for _, _, actions in group:
            tx.extend(actions)
        try:
            tx.commit()
        except (TransactionCanceled, AlreadyExists, UniqueViolation):
            # One of them is already there (a resumed load) or refused: one by one.
            for number, obj, actions in group:
                problem = _restore_one(obj, actions, result)
                if problem is not None:
                    yield number, problem
            continue
        result.loaded += len(group)


def _restore_actions(obj: Model) -> list[Action]:
    """The item as dumped - its version included - and the claims of its
    unique values: a create, conditioned on the key and each value being free."""
    actions = writes.create_actions(obj)
    version = obj._meta.version
    if version is not None and obj.__dict__[version.name] is not None:
        # create_actions starts a new item at version 1; a restored item keeps its own.
        item = actions[0].params["Item"]
        item[version.db_name] = {"N": str(obj.__dict__[version.name])}
    return actions


def _packed(plans: list[tuple[int, Model, list[Action]]]) -> Iterator[list[Any]]:
    """Plans in order, as many per transaction as DynamoDB's action limit allows."""
    group: list[Any] = []
    size = 0
    for plan in plans:
        if group and size + len(plan[2]) > MAX_ACTIONS:
            yield group
            group, size = [], 0
        group.append(plan)
        size += len(plan[2])
    if group:
        yield group


def _restore_one(obj: Model, actions: list[Action], result: LoadResult) -> str | None:
    """Write one item with its locks; None when written or found already loaded,
    else what is wrong with its line."""
    try:
        writes.send(actions)
    except AlreadyExists as exc:
        stored = (
            exc.item if exc.item is not None else type(obj).objects.get(consistent=True, **obj.key)
        )
        if record(stored) == record(obj):
            result.present += 1
            return None
        return f"{obj._meta.object_name} {obj.key} already exists with other values."
    except UniqueViolation as exc:
        return str(exc)
    result.loaded += 1
    return None
