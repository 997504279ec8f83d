"""Tables out to JSON lines and back in: ``dynamo_dump`` / ``dynamo_load``, and
test fixtures (``load_fixture``).

A line is one item, in the typed JSON form of ``dynamo_app.data.serialization``::

    {"model": "shop.models.Player", "fields": {...obj.to_dict()...}}

plus ``"extra"`` (DynamoDB JSON) when the item holds attributes its model does
not declare, so nothing stored is lost on the way. Dumping reads with a Scan
the caller asked for by name, optionally in parallel segments. Loading reads
the lines twice: first it checks every line through its model (the checks a
save makes, so whatever the app stored loads back as it was dumped; with
``strict``, also ``full_clean()``), and writes nothing while any line is bad;
then it writes, in file order, as the model's own batch and transaction paths
do: whole-item batches for plain models, and for models with unique
constraints or a ``VersionField`` each item with its locks (and its version as
dumped) in transactions. A load that stops says which lines are loaded; run
again over the same file, it finds the items it wrote and goes on.
"""

from __future__ import annotations

import contextlib
import contextvars
import io
import json
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, cast

from django.core.exceptions import NON_FIELD_ERRORS
from django.utils.translation import ngettext

from .. import sequences
from ..actions import Action
from ..client import wire
from ..client.handle import get_handle
from ..exceptions import (
    AlreadyExists,
    BatchIncomplete,
    BatchOutcomeUnknown,
    DynamoError,
    LoadError,
    OutcomeUnknown,
    SequenceError,
    TransactionCanceled,
    UniqueViolation,
    ValidationError,
)
from ..models import writes
from ..models.registry import registered_models
from ..models.state import LoadedState
from ..transactions import MAX_ACTIONS, Transaction
from .progress import Progress
from .serialization import value_from_json, wire_from_json, wire_to_json

if TYPE_CHECKING:
    from ..models.base import Model

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
    advanced: dict[str, int] = field(default_factory=dict)  # sequence name -> moved up to


Numbered = tuple[int, "Model"]  # (line number, the instance it holds)
SHOWN = 20  # bad lines named in a message


def load(
    lines: Iterable[str],
    *,
    strict: bool = False,
    skip_invalid: bool = False,
    progress: TextIO | None = None,
    total: int | None = None,
    source: str = "input",
) -> LoadResult:
    """Check every line, then write the items (see the module docstring).

    A line is bad when it is not an item its model can store: not JSON, an
    unknown model or field, a value a save refuses. So a dump loads back
    identically by default, whatever wrote its items (``save()``, ``update()``,
    a form, an API). ``strict`` also refuses what ``full_clean()`` refuses
    (``choices``, ``validators``, the model's ``clean()``; an empty value is
    judged as ``save()`` judges it, by ``null``, since ``blank`` is what a form
    may leave empty): for data from elsewhere. While any line is bad nothing is
    written: ``LoadError`` names each (``source``, line, field, problem); with
    ``skip_invalid`` they are counted in ``invalid`` and the rest is written.

    A line the write itself refuses (a unique value another item holds, its
    key stored with other values) stops the load there, or is skipped too. A
    failed write (throttling that never eased, an answer lost) stops it with a
    ``LoadError`` saying which lines are loaded and which are not known to be.
    Items already stored exactly as in the file count as ``present``: running
    the load again resumes it.
    """
    with _replayable(lines) as replay:
        return _load(replay, strict, skip_invalid, progress, total, source)


def _load(
    replay: Callable[[], Iterable[str]],
    strict: bool,
    skip_invalid: bool,
    progress: TextIO | None,
    total: int | None,
    source: str,
) -> LoadResult:
    result = LoadResult()
    started = time.monotonic()
    models = {m._meta.label: m for m in registered_models()}
    problems: list[tuple[int, str]] = []
    good = 0
    highest = _Highest()
    for number, text in _numbered(replay()):
        try:
            highest.see(_parse(text, models, strict)[1])
        except (ValueError, ValidationError) as exc:
            problems.append((number, _problem(exc)))
        else:
            good += 1
    if problems and not skip_invalid:
        shown = " ".join(f"line {n}: {problem}" for n, problem in problems[:SHOWN])
        more = f" And {len(problems) - SHOWN} more." if len(problems) > SHOWN else ""
        cannot = ngettext(
            "%(n)d line cannot be loaded", "%(n)d lines cannot be loaded", len(problems)
        ) % {"n": len(problems)}
        raise LoadError(
            f"{source}: {cannot}, so nothing was written. "
            f"{shown}{more} Fix them, or pass --skip-invalid to load the other lines"
            f"{'' if not strict else ', or leave out --strict to load what the models store'}.",
            line=problems[0][0],
            problems=problems,
        )
    result.invalid = [n for n, _ in problems]
    result.advanced = highest.advance()
    meter = Progress(progress, "load", total=total or good) if progress is not None else None
    writer = _Loader(result, skip_invalid, source, meter)
    skip = set(result.invalid)
    for number, text in _numbered(replay()):
        if number not in skip:
            writer.add(number, *_parse(text, models, strict))
    writer.flush()
    if meter is not None:
        meter.close()
    result.seconds = time.monotonic() - started
    return result


class _Highest:
    """The highest number the checked lines give each sequence (``SequenceField``).

    A loaded item keeps the number it was dumped with, which its sequence may
    not have reached (a fresh table, a copy from another stage): as Django's
    ``loaddata`` resets SQL sequences, the load moves each sequence up to the
    highest number loaded, before the first write, so a later ``create()``
    never takes a loaded number. A sequence already past it is left alone."""

    def __init__(self) -> None:
        self.numbers: dict[str, tuple[sequences.Sequence, int]] = {}

    def see(self, obj: Model) -> None:
        for f in obj._meta.sequences:  # every line passes here: its sequence fields only
            number = obj.__dict__[f.name]
            if number is not None:
                name = f.sequence.name
                if name not in self.numbers or self.numbers[name][1] < number:
                    self.numbers[name] = (f.sequence, number)

    def advance(self) -> dict[str, int]:
        """Move each sequence up (one conditional UpdateItem each); the ones moved."""
        moved = {}
        for name, (sequence, number) in sorted(self.numbers.items()):
            try:
                sequence.advance(number)
            except SequenceError:  # already past it: nothing to do
                continue
            moved[name] = number
        return moved


@dataclass
class _Account:
    """The lines of the batch being written: those known written, those being sent."""

    written: list[int] = field(default_factory=list)
    sending: list[int] = field(default_factory=list)

    def sent(self) -> None:
        self.written += self.sending
        self.sending = []


class _Loader:
    """Writes checked lines in file order, a batch of one model at a time, so a
    load that stops can say exactly which lines are loaded."""

    def __init__(
        self, result: LoadResult, skip_invalid: bool, source: str, meter: Progress | None
    ) -> None:
        self.result = result
        self.skip_invalid = skip_invalid
        self.source = source
        self.meter = meter
        self.model: type[Model] | None = None
        self.batch: list[Numbered] = []

    def add(self, number: int, model: type[Model], obj: Model) -> None:
        if model is not self.model:
            self.flush()
            self.model = model
        self.batch.append((number, obj))
        if len(self.batch) >= (PLAIN_BATCH if not _guarded(model) else MAX_ACTIONS // 2):
            self.flush()

    def flush(self) -> None:
        batch, self.batch = self.batch, []
        if not batch or self.model is None:
            return
        result = self.result
        first, last = batch[0][0], batch[-1][0]
        account = _Account()
        try:
            for number, problem in _write(self.model, batch, result, account):
                if not self.skip_invalid:
                    raise LoadError(
                        f"{self.source} line {number}: {problem} It was not written, nor was "
                        f"any line after it; the lines before it are loaded ({self.done()}). "
                        "Fix it and run the load again: the items already loaded are "
                        "recognised.",
                        line=number,
                    )
                result.invalid.append(number)
        except LoadError:
            raise
        except DynamoError as exc:
            raise LoadError(
                f"{self.source}: writing lines {first}-{last} ({self.model.__name__}) failed: "
                f"{exc} The lines before line {first} are loaded ({self.done()}); "
                f"{_accounted(batch, account, exc)}; no line after {last} was sent. Run the "
                "load again to finish it: the items already loaded are recognised.",
                line=first,
            ) from exc
        if self.meter is not None:
            self.meter.add(len(batch))

    def done(self) -> str:
        return f"{self.result.loaded:,} written, {self.result.present:,} found already there"


def _accounted(batch: list[Numbered], account: _Account, exc: DynamoError) -> str:
    """Which lines of a batch that failed with ``exc`` are loaded, may be, and are not."""
    key_lines = [(obj.key, number) for number, obj in batch]
    written, unknown = set(account.written), set(account.sending)
    if isinstance(exc, BatchOutcomeUnknown):  # a bulk_save: it says which keys are which
        written |= {n for key, n in key_lines if key in exc.written}
        unknown = {n for key, n in key_lines if key in exc.unknown}
    elif isinstance(exc, BatchIncomplete):  # a bulk_save: the rest were written
        written |= {n for key, n in key_lines if key not in exc.unprocessed}
        unknown = set()
    elif not isinstance(exc, OutcomeUnknown):
        unknown = set()  # refused: the request being sent wrote nothing
    rest = [n for n, _ in batch if n not in written | unknown]
    parts = [
        f"{what} {_lines(numbers)}"
        for what, numbers in (
            ("loaded: lines", sorted(written)),
            ("not known to be loaded (an answer was lost): lines", sorted(unknown)),
            ("not loaded: lines", rest),
        )
        if numbers
    ]
    return "; ".join(parts)


def _lines(numbers: list[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``"1-3, 7"``."""
    runs: list[list[int]] = []
    for n in numbers:
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in runs)


def _numbered(lines: Iterable[str]) -> Iterator[tuple[int, str]]:
    """The non-blank lines with their 1-based numbers."""
    for number, text in enumerate(lines, 1):
        if text.strip():
            yield number, text


@contextmanager
def _replayable(lines: Iterable[str]) -> Iterator[Callable[[], Iterable[str]]]:
    """A way to read ``lines`` again from where they start: a list as is, a
    seekable file by seeking back, anything else (stdin) kept in a temporary file."""
    if isinstance(lines, Sequence):
        yield lambda: lines
        return
    with contextlib.ExitStack() as stack:
        if not (isinstance(lines, io.IOBase) and lines.seekable()):
            spool = stack.enter_context(tempfile.TemporaryFile("w+", encoding="utf-8"))
            spool.writelines(line if line.endswith("\n") else line + "\n" for line in lines)
            spool.seek(0)
            lines = spool
        file = cast(TextIO, lines)
        start = file.tell()

        def again() -> Iterable[str]:
            file.seek(start)
            return file

        yield again


def load_fixture(
    *paths: str | Path, strict: bool = False, skip_invalid: bool = False
) -> LoadResult:
    """Load dump files, e.g. in a ``TestCase.setUp`` or a pytest fixture after
    ``dynamo_db`` has made the tables (Django's ``loaddata``, for DynamoDB)."""
    result = LoadResult()
    for path in paths:
        with open(path, encoding="utf-8") as lines:
            done = load(lines, strict=strict, skip_invalid=skip_invalid, source=str(path))
        result.loaded += done.loaded
        result.present += done.present
        result.invalid += done.invalid
        result.seconds += done.seconds
        for name, number in done.advanced.items():  # a later file may move one further
            result.advanced[name] = max(number, result.advanced.get(name, number))
    return result


def _problem(exc: Exception) -> str:
    """What is wrong with a line, each bad field named."""
    if isinstance(exc, ValidationError) and hasattr(exc, "error_dict"):
        parts = []
        for name, errors in exc.error_dict.items():
            where = "" if name == NON_FIELD_ERRORS else f"field {name}: "
            parts.append(where + " ".join(m for e in errors for m in e.messages).rstrip("."))
        text = "; ".join(parts)  # "field a: Enter a valid email address; field b: ..."
    elif isinstance(exc, ValidationError):
        text = str(exc.messages[0])
    else:
        text = str(exc)
    return text if text.endswith(".") else text + "."


def _parse(
    text: str, models: dict[str, type[Model]], strict: bool
) -> tuple[type[Model], Model]:
    """The model and the unsaved instance of one line, checked as a save checks it
    and, if ``strict``, by ``full_clean()`` (empty values left to ``null``, unique
    values to the write)."""
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
    wire_extra = {name: _checked(name, wire_from_json(value)) for name, value in extra.items()}
    declared = set(model._meta.fields_by_db_name)
    if declared & set(wire_extra):
        clash = sorted(declared & set(wire_extra))
        raise ValueError(f'"extra" holds declared attributes {clash}; they belong in "fields"')
    fields = model._meta.fields_by_name
    unknown = [name for name in line["fields"] if name not in fields]
    if unknown:
        fields_text = ngettext("field", "fields", len(unknown))
        raise ValueError(f"{model.__name__} has no {fields_text} {', '.join(unknown)}")
    values = {name: value_from_json(fields[name], v) for name, v in line["fields"].items()}
    obj = model(**values)
    obj._state = LoadedState(extra=wire_extra)
    model._meta.encode_checked(obj)
    if strict:
        empty = [f.name for f in model._meta.fields if f.is_empty(obj.__dict__[f.name])]
        obj.full_clean(exclude=empty, validate_unique=False)
    return model, obj


def _checked(name: str, value: dict[str, Any]) -> dict[str, Any]:
    """An undeclared attribute's wire value, as DynamoDB would take it: read and written
    again (a number's text, a set's members, nesting), else ``ValueError`` naming it."""
    try:
        wire.encode(wire.decode(value))
    except (ValueError, ArithmeticError, TypeError) as exc:
        raise ValueError(f'"extra" attribute {name!r} holds {value!r}: {exc}') from None
    return value


def _guarded(model: type[Model]) -> bool:
    """Whether a write of this model must carry conditions (locks, versions)."""
    return bool(model._meta.unique) or model._meta.version is not None


def _write(
    model: type[Model], batch: list[Numbered], result: LoadResult, account: _Account
) -> Iterator[tuple[int, str]]:
    """Write one batch; yield ``(line number, problem)`` for each line refused.
    ``account`` follows which lines are written and which are being sent."""
    if not batch:
        return
    if not _guarded(model):
        account.sending = [number for number, _ in batch]
        model.objects.bulk_save(obj for _, obj in batch)  # a put overwrites: repeatable
        account.sent()
        result.loaded += len(batch)
        return
    plans = [(number, obj, _restore_actions(obj)) for number, obj in batch]
    for group in _packed(plans):
        tx = Transaction()
        for _, _, actions in group:
            tx.extend(actions)
        account.sending = [number for number, _, _ in group]
        try:
            tx.commit()
        except (TransactionCanceled, AlreadyExists, UniqueViolation):
            # One of them is already there (a resumed load) or refused: one by one.
            for number, obj, actions in group:
                account.sending = [number]
                problem = _restore_one(obj, actions, result)
                if problem is not None:
                    account.sending = []
                    yield number, problem
                account.sent()
            continue
        account.sent()
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
