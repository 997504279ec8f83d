"""The schema workflow: desired tables (the registry) against deployed ones.

There are no migration files and no version table. The desired state is
``tables.registry``; the observed state is ``DescribeTable``; ``plan()`` is the
difference, ``migrate()`` applies the part that is safe to apply (create a
missing table, add a missing global index) and ``verify()`` refuses a
difference. Re-applying is a no-op by construction: a table that exists is
described, not re-created.

Compared: key attribute names by position (HASH, then RANGE) and their types
from ``AttributeDefinitions``; each declared secondary index (kind, keys,
projection); the stream's view type when a model declares ``Meta.stream``
(its receivers rely on it). Never compared, because they belong to whoever owns
the table in each environment: billing mode, TTL, autoscaling, tags, a stream
no model declares, retention (PITR), replication, and indexes the deployed
table has but no model declares.

Never done: deleting a table or an index, changing a key, changing a stream's
view type (that disables the stream and enables a new one, under a new ARN
that every consumer must be moved to). Those are reported.
"""

from __future__ import annotations

import contextvars
import enum
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

from ..client.handle import Handle, get_handle
from ..exceptions import MigrationTimeout, SchemaMismatch, ServiceError, TableNotFound
from ..tables import (
    INDEX_ENTRIES,
    IndexDefinition,
    KeyAttribute,
    KeyType,
    TableDefinition,
    TableResolver,
    registry,
)

logger = logging.getLogger("dynamo_app.schema")

# DescribeTable requests in flight at once. Latency-bound (each is one round
# trip), so more threads than cores pays; DynamoDB's control plane allows
# thousands of DescribeTable calls per second per account. Never more than the
# client keeps connections (DYNAMO['MAX_IDLE_CONNS']): a connection opened
# only to be discarded costs a handshake, and urllib3 warns of each.
MAX_WORKERS = 16
# How long migrate() waits for a table or index to become ACTIVE, in seconds.
DEFAULT_TIMEOUT = 600.0
# Polling while waiting: first delay, doubled up to the cap.
POLL_FIRST = 0.25
POLL_MAX = 5.0

T = TypeVar("T")
R = TypeVar("R")
WORKER_PREFIX = "dynamo-schema"


class ChangeKind(enum.StrEnum):
    CREATE = "create"
    IN_SYNC = "in_sync"
    KEY_MISMATCH = "key_mismatch"
    ADD_INDEX = "add_index"
    INDEX_MISMATCH = "index_mismatch"
    MISSING_LOCAL_INDEX = "missing_local_index"
    ENABLE_STREAM = "enable_stream"
    STREAM_MISMATCH = "stream_mismatch"
    UNDECLARED = "undeclared"

    @property
    def label(self) -> str:
        return self.value.replace("_", " ")


EXECUTABLE = frozenset({ChangeKind.CREATE, ChangeKind.ADD_INDEX, ChangeKind.ENABLE_STREAM})
MISMATCHES = frozenset(
    {
        ChangeKind.KEY_MISMATCH,
        ChangeKind.INDEX_MISMATCH,
        ChangeKind.MISSING_LOCAL_INDEX,
        ChangeKind.STREAM_MISMATCH,
    }
)


@dataclass(frozen=True)
class TableChange:
    """One difference between a declared table and what is deployed (or the
    absence of one: ``IN_SYNC``). ``detail`` is the sentence shown to people."""

    kind: ChangeKind
    declared_name: str
    deployed_name: str
    detail: str
    desired: str = ""  # the declared shape, "" for an undeclared table
    observed: str = ""  # the deployed shape, "" for a missing table
    index_name: str = ""
    definition: TableDefinition | None = field(default=None, repr=False, compare=False)
    index: IndexDefinition | None = field(default=None, repr=False, compare=False)
    description: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)

    @property
    def executable(self) -> bool:
        """Whether ``migrate()`` applies this change."""
        return self.kind in EXECUTABLE

    @property
    def mismatch(self) -> bool:
        """A difference ``migrate()`` reports but will never apply."""
        return self.kind in MISMATCHES

    def __str__(self) -> str:
        return self.detail

    @property
    def done(self) -> str:
        """What applying this change did, said once it is done (``detail`` says
        what is missing, which is no longer true then)."""
        where = f"{self.deployed_name!r} (declared {self.declared_name!r})"
        if self.kind is ChangeKind.CREATE:
            return f"created table {where}: {self.desired}"
        if self.kind is ChangeKind.ENABLE_STREAM:
            return f"enabled {self.desired} on table {where}"
        return f"added {self.desired} to table {where}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "declared_name": self.declared_name,
            "deployed_name": self.deployed_name,
            "index_name": self.index_name or None,
            "executable": self.executable,
            "desired": self.desired or None,
            "observed": self.observed or None,
            "detail": self.detail,
            # the models in a shared table (models.Table), [] for a model's own table
            "shared_by": list(self.definition.shared_by) if self.definition else [],
        }


@dataclass
class MigrationResult:
    """What ``migrate()`` did and what it reports but will not do."""

    applied: list[TableChange] = field(default_factory=list)
    reported: list[TableChange] = field(default_factory=list)
    in_sync: list[TableChange] = field(default_factory=list)

    @property
    def mismatches(self) -> list[TableChange]:
        """Declared tables still differing from their deployed shape."""
        return [c for c in self.reported if c.mismatch]


# --- observing -------------------------------------------------------------------


def _in_parallel(handle: Handle, func: Callable[[T], R], items: list[T]) -> list[R]:
    """``[func(i) for i in items]``, run by a thread pool when there are several,
    each thread with a connection of ``handle``'s pool to itself."""
    if len(items) <= 1:
        return [func(i) for i in items]
    workers = min(len(items), MAX_WORKERS, handle.settings.max_idle_conns)
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix=WORKER_PREFIX) as pool:
        # Each in a copy of the caller's context: its requests count for the caller
        # (dynamo_app.client.requests' counters), as if it had sent them itself.
        futures = [pool.submit(contextvars.copy_context().run, func, item) for item in items]
        try:
            return [future.result() for future in futures]
        except BaseException:
            # Fail fast (an unreachable endpoint at startup): drop the queued calls.
            pool.shutdown(wait=False, cancel_futures=True)
            raise


def _describe(handle: Handle, deployed_name: str) -> dict[str, Any] | None:
    """The table's description, or None when it does not exist."""
    try:
        table: dict[str, Any] = handle.call("describe_table", TableName=deployed_name)["Table"]
    except TableNotFound:
        return None
    return table


def observed_definition(description: Mapping[str, Any]) -> TableDefinition:
    """A ``DescribeTable`` answer as a ``TableDefinition`` (named by its deployed
    name), so desired and observed shapes compare and print the same way."""
    attributes = description.get("AttributeDefinitions", [])
    types = {a["AttributeName"]: a["AttributeType"] for a in attributes}

    def keys(schema: list[dict[str, str]]) -> tuple[KeyAttribute, KeyAttribute | None]:
        by_role = {k["KeyType"]: k["AttributeName"] for k in schema}
        found = [
            KeyAttribute(name, cast(KeyType, types.get(name, "?"))) if name else None
            for name in (by_role.get("HASH"), by_role.get("RANGE"))
        ]
        return cast(KeyAttribute, found[0]), found[1]

    def projection(spec: Mapping[str, Any]) -> str | tuple[str, ...]:
        if spec.get("ProjectionType") == "INCLUDE":
            return tuple(sorted(spec.get("NonKeyAttributes", [])))
        return str(spec.get("ProjectionType", "ALL"))

    indexes = [
        IndexDefinition(i["IndexName"], kind, *keys(i["KeySchema"]), projection(i["Projection"]))
        for kind, entry in INDEX_ENTRIES
        for i in description.get(entry, [])
    ]
    partition, sort = keys(description["KeySchema"])
    return TableDefinition(
        declared_name=description["TableName"],
        partition_key=partition,
        sort_key=sort,
        indexes=tuple(indexes),
    )


def _projection_text(projection: str | tuple[str, ...]) -> str:
    if isinstance(projection, tuple):
        return f"INCLUDE {', '.join(sorted(projection))}"
    return projection


def _index_shape(index: IndexDefinition) -> str:
    return f"{index.shape()}, projection {_projection_text(index.projection)}"


def _same_index(a: IndexDefinition, b: IndexDefinition) -> bool:
    def projection(p: str | tuple[str, ...]) -> object:
        return frozenset(p) if isinstance(p, tuple) else p

    return (a.kind, a.partition_key, a.sort_key, projection(a.projection)) == (
        b.kind,
        b.partition_key,
        b.sort_key,
        projection(b.projection),
    )


# --- comparing -------------------------------------------------------------------


def compare(
    definition: TableDefinition, deployed_name: str, description: Mapping[str, Any] | None
) -> list[TableChange]:
    """The changes that take the deployed table (None: missing) to the declared one.

    A key mismatch is the only change listed for its table: indexes of a table
    that must be replaced anyway are not worth adding.
    """
    table = f"Table {definition.declared_name!r} (deployed as {deployed_name!r})"
    desired = definition.shape()

    def change(kind: ChangeKind, detail: str, **kwargs: Any) -> TableChange:
        return TableChange(
            kind,
            definition.declared_name,
            deployed_name,
            detail,
            definition=definition,
            description=description,
            **{"desired": desired, **kwargs},
        )

    if description is None:
        extras = [f"{i.kind} index {i.name}" for i in definition.indexes]
        if definition.ttl_attribute:
            extras.append(f"TTL on {definition.ttl_attribute}")
        if definition.stream:
            extras.append(f"stream {definition.stream}")
        with_ = f"; with {', '.join(extras)}" if extras else ""
        return [
            change(
                ChangeKind.CREATE,
                f"{table} does not exist: run `python manage.py dynamo_migrate` to create it "
                f"({desired}{with_}), or create it with your infrastructure tool.",
            )
        ]

    observed = observed_definition(description)
    observed_shape = observed.shape()
    desired_keys = (definition.partition_key, definition.sort_key)
    if (observed.partition_key, observed.sort_key) != desired_keys:
        return [
            change(
                ChangeKind.KEY_MISMATCH,
                f"{table} has a different key: declared {desired}; deployed {observed_shape}. "
                "A key cannot be changed in place and dynamo_migrate never does it: change the "
                "model back, or create a new table (and copy the data) with your "
                "infrastructure tool.",
                observed=observed_shape,
            )
        ]

    deployed_indexes = {i.name: i for i in observed.indexes}
    changes: list[TableChange] = []
    for index in definition.indexes:
        found = deployed_indexes.get(index.name)
        want = _index_shape(index)
        if found is None and index.kind == "global":
            changes.append(
                change(
                    ChangeKind.ADD_INDEX,
                    f"{table} has no {want}: run `python manage.py dynamo_migrate` to add it "
                    "(UpdateTable; on AWS the index back-fills for minutes or longer before "
                    "queries can use it).",
                    desired=want,
                    observed="(no such index)",
                    index_name=index.name,
                    index=index,
                )
            )
        elif found is None:
            changes.append(
                change(
                    ChangeKind.MISSING_LOCAL_INDEX,
                    f"{table} has no {want}. A local index can only be created with its "
                    "table, so dynamo_migrate cannot add it: recreate the table, or declare a "
                    "global index instead.",
                    desired=want,
                    observed="(no such index)",
                    index_name=index.name,
                    index=index,
                )
            )
        elif not _same_index(index, found):
            got = _index_shape(found)
            changes.append(
                change(
                    ChangeKind.INDEX_MISMATCH,
                    f"{table} has a different index {index.name!r}: declared {want}; deployed "
                    f"{got}. dynamo_migrate never changes or deletes an index: change the model, "
                    "or replace the index with your infrastructure tool.",
                    desired=want,
                    observed=got,
                    index_name=index.name,
                    index=index,
                )
            )
    changes += _stream_changes(definition, description, change, table)
    return changes or [
        change(ChangeKind.IN_SYNC, f"{table} matches: {desired}.", observed=observed_shape)
    ]


def deployed_stream(description: Mapping[str, Any]) -> str | None:
    """The deployed stream's view type, None when the table has no enabled stream."""
    spec = description.get("StreamSpecification") or {}
    return cast(str, spec.get("StreamViewType")) if spec.get("StreamEnabled") else None


def _stream_changes(
    definition: TableDefinition,
    description: Mapping[str, Any],
    change: Callable[..., TableChange],
    table: str,
) -> list[TableChange]:
    """The declared stream against the deployed one (a stream no model declares is
    not ours to judge)."""
    want = definition.stream
    got = deployed_stream(description)
    if want is None or want == got:
        return []
    if got is None:
        return [
            change(
                ChangeKind.ENABLE_STREAM,
                f"{table} has no stream: run `python manage.py dynamo_migrate` to enable it "
                f"with view type {want} (UpdateTable).",
                desired=f"stream {want}",
                observed="no stream",
            )
        ]
    return [
        change(
            ChangeKind.STREAM_MISMATCH,
            f"{table} streams {got}, declared {want}. A stream's view type cannot be changed "
            "in place and dynamo_migrate never does it: disabling the stream and enabling a new "
            "one gives it a new ARN, so every consumer (a Lambda event source mapping, "
            "dynamo_stream's checkpoints) must move to it, and changes written between the two "
            "reach neither. Change the model back, or replace the stream with your "
            "infrastructure tool and move its consumers.",
            desired=f"stream {want}",
            observed=f"stream {got}",
        )
    ]


def lists_undeclared(resolver: TableResolver) -> bool:
    """Whether plan() can tell this project's tables apart: only by TABLE_PREFIX."""
    return bool(resolver.prefix) and resolver.custom is None


def table_names(handle: Handle) -> list[str]:
    """Every table in the handle's account and region (ListTables, every page)."""
    return [name for page in handle.paginate("list_tables") for name in page.get("TableNames", [])]


def _undeclared(handle: Handle, declared_deployed: set[str]) -> list[TableChange]:
    """Tables under this project's prefix that nothing declares."""
    prefix = handle.resolver.prefix
    return [
        TableChange(
            ChangeKind.UNDECLARED,
            name[len(prefix) :],
            name,
            f"Table {name!r} starts with TABLE_PREFIX {prefix!r} but no model or app table "
            f"declares {name[len(prefix) :]!r}: reported only, dynamo_migrate never deletes a "
            f"table (in development, `python manage.py dynamo_drop_table {name[len(prefix) :]}` "
            "does).",
        )
        for name in sorted(table_names(handle))
        if name.startswith(prefix) and name not in declared_deployed
    ]


def _observe(
    handle: Handle, definitions: Iterable[TableDefinition]
) -> list[tuple[TableDefinition, str, dict[str, Any] | None]]:
    """Each declared table with its deployed name and description, described concurrently."""
    named = [(d, handle.table_name(d.declared_name)) for d in definitions]
    descriptions = _in_parallel(handle, lambda item: _describe(handle, item[1]), named)
    return [(d, name, desc) for (d, name), desc in zip(named, descriptions, strict=True)]


# --- the three verbs ---------------------------------------------------------------


def plan(*, handle: Handle | None = None) -> list[TableChange]:
    """Every declared table compared with its deployed table, then the undeclared
    tables under TABLE_PREFIX (listed only when a prefix is set and no
    TABLE_RESOLVER replaces it: without one, nothing marks a table as ours)."""
    handle = handle or get_handle()
    observed = _observe(handle, registry.definitions())
    changes = [c for d, name, desc in observed for c in compare(d, name, desc)]
    if lists_undeclared(handle.resolver):
        changes += _undeclared(handle, {name for _, name, _ in observed})
    return changes


def verify(*, handle: Handle | None = None) -> None:
    """Describe every declared table once (concurrently); raise ``SchemaMismatch``
    listing every difference, or return quietly when all match."""
    handle = handle or get_handle()
    problems: list[str] = []
    for definition, name, description in _observe(handle, registry.definitions()):
        for change in compare(definition, name, description):
            if change.kind is not ChangeKind.IN_SYNC:
                problems.append(change.detail)
    if problems:
        raise SchemaMismatch(problems)


Progress = Callable[[TableChange, str], None]


def _log_progress(change: TableChange, message: str) -> None:
    logger.info("%s: %s", change.deployed_name, message)


def migrate(
    *,
    timeout: float = DEFAULT_TIMEOUT,
    progress: Progress | None = None,
    handle: Handle | None = None,
) -> MigrationResult:
    """Apply the executable part of ``plan()``: create missing tables (with their
    indexes, then TTL) and add missing global indexes, one UpdateTable each;
    wait until ACTIVE, tables in parallel, at most ``timeout`` seconds.

    Raises ``MigrationTimeout`` naming every table still not ACTIVE; whatever
    finished stays done, and a re-run picks up where this one stopped.
    """
    handle = handle or get_handle()
    report = _locked(progress or _log_progress)
    changes = plan(handle=handle)
    result = MigrationResult(
        reported=[c for c in changes if c.kind is not ChangeKind.IN_SYNC and not c.executable],
        in_sync=[c for c in changes if c.kind is ChangeKind.IN_SYNC],
    )
    by_table: dict[str, list[TableChange]] = {}
    for c in changes:
        if c.executable:
            by_table.setdefault(c.deployed_name, []).append(c)
    deadline = time.monotonic() + timeout

    def apply(table_changes: list[TableChange]) -> tuple[list[TableChange], Exception | None]:
        done: list[TableChange] = []
        description = table_changes[0].description
        try:
            for c in table_changes:
                description = _apply(handle, c, description, deadline, report)
                done.append(c)
        except MigrationTimeout as exc:
            return done, exc
        return done, None

    timeouts: list[str] = []
    for done, error in _in_parallel(handle, apply, list(by_table.values())):
        result.applied += done
        if error is not None:
            timeouts.append(str(error))
    if timeouts:
        raise MigrationTimeout("\n".join(timeouts))
    return result


def create_table(
    definition: TableDefinition, *, handle: Handle | None = None, timeout: float = DEFAULT_TIMEOUT
) -> Mapping[str, Any]:
    """Create one declared table as ``migrate()`` does (indexes, wait until ACTIVE,
    then TTL), without planning: for a caller that knows it is missing (a test
    run's fresh tables). Returns its description."""
    handle = handle or get_handle()
    (change,) = compare(definition, handle.table_name(definition.declared_name), None)
    return _create_table(handle, change, time.monotonic() + timeout, lambda c, m: None)


def _locked(progress: Progress) -> Progress:
    """Progress callbacks come from worker threads; call them one at a time."""
    lock = threading.Lock()

    def call(change: TableChange, message: str) -> None:
        with lock:
            progress(change, message)

    return call


def _apply(
    handle: Handle,
    change: TableChange,
    description: Mapping[str, Any] | None,
    deadline: float,
    report: Progress,
) -> Mapping[str, Any]:
    """Apply one change; return the table's description after it (the next
    change of the same table starts from there, not from the plan's)."""
    if change.kind is ChangeKind.CREATE:
        return _create_table(handle, change, deadline, report)
    if change.kind is ChangeKind.ENABLE_STREAM:
        return _enable_stream(handle, change, description, deadline, report)
    return _add_index(handle, change, description, deadline, report)


def _create_table(
    handle: Handle, change: TableChange, deadline: float, report: Progress
) -> Mapping[str, Any]:
    """CreateTable (indexes included), wait until ACTIVE, then turn TTL on."""
    definition = cast(TableDefinition, change.definition)
    name = change.deployed_name
    report(change, "creating table")
    try:
        created = handle.call("create_table", **definition.create_request(name))
        first: Mapping[str, Any] | None = created["TableDescription"]
    except ServiceError as exc:
        if exc.code != "ResourceInUseException":
            raise
        report(change, "already being created by another process; waiting for it")
        first = None
    created_description = _wait(handle, change, deadline, report, first, _table_ready)
    if definition.ttl_attribute:
        _enable_ttl(handle, name, definition.ttl_attribute)
        report(change, f"TTL enabled on {definition.ttl_attribute!r}")
    report(change, "created, ACTIVE")
    return created_description


def _add_index(
    handle: Handle,
    change: TableChange,
    description: Mapping[str, Any] | None,
    deadline: float,
    report: Progress,
) -> Mapping[str, Any]:
    """UpdateTable with one new global index; wait until the index is ACTIVE."""
    name = change.deployed_name
    index = cast(IndexDefinition, change.index)
    if description is None or description.get("TableStatus") != "ACTIVE":
        # UpdateTable needs an ACTIVE table
        description = _wait(handle, change, deadline, report, None, _table_ready)
    create: dict[str, Any] = index.request()
    throughput = description.get("ProvisionedThroughput", {})
    billing = description.get("BillingModeSummary", {}).get("BillingMode", "PROVISIONED")
    if billing == "PROVISIONED" and throughput.get("ReadCapacityUnits"):
        # A provisioned table's new index needs capacity: give it the table's.
        create["ProvisionedThroughput"] = {
            "ReadCapacityUnits": throughput["ReadCapacityUnits"],
            "WriteCapacityUnits": throughput["WriteCapacityUnits"],
        }
    # Send the table's attribute definitions too: DynamoDB merges them with the
    # new index's, while moto replaces the table's with whatever is sent.
    attributes = {
        a["AttributeName"]: a["AttributeType"] for a in description.get("AttributeDefinitions", [])
    }
    for key in (index.partition_key, index.sort_key):
        if key is not None:
            attributes[key.name] = key.type
    report(change, f"adding global index {index.name!r}")
    updated = handle.call(
        "update_table",
        TableName=name,
        AttributeDefinitions=[
            {"AttributeName": n, "AttributeType": t} for n, t in attributes.items()
        ],
        GlobalSecondaryIndexUpdates=[{"Create": create}],
    )
    ready = _index_ready(index.name)
    description = _wait(handle, change, deadline, report, updated["TableDescription"], ready)
    report(change, f"global index {index.name!r} ACTIVE")
    return description


def _enable_stream(
    handle: Handle,
    change: TableChange,
    description: Mapping[str, Any] | None,
    deadline: float,
    report: Progress,
) -> Mapping[str, Any]:
    """UpdateTable turning the declared stream on; wait until the table is ACTIVE."""
    view = cast(TableDefinition, change.definition).stream
    if description is None or description.get("TableStatus") != "ACTIVE":
        description = _wait(handle, change, deadline, report, None, _table_ready)
    report(change, f"enabling stream {view}")
    updated = handle.call(
        "update_table",
        TableName=change.deployed_name,
        StreamSpecification={"StreamEnabled": True, "StreamViewType": view},
    )
    description = _wait(handle, change, deadline, report, updated["TableDescription"], _table_ready)
    report(change, f"stream {view} enabled")
    return description


def _table_ready(description: Mapping[str, Any]) -> str | None:
    """None when the table is ACTIVE, else what we are waiting for."""
    status = description.get("TableStatus")
    return None if status == "ACTIVE" else f"table {status}"


def _index_ready(index_name: str) -> Callable[[Mapping[str, Any]], str | None]:
    def ready(description: Mapping[str, Any]) -> str | None:
        indexes = {i["IndexName"]: i for i in description.get("GlobalSecondaryIndexes", [])}
        status = indexes.get(index_name, {}).get("IndexStatus", "not listed yet")
        if status != "ACTIVE":
            backfill = " (back-filling)" if indexes.get(index_name, {}).get("Backfilling") else ""
            return f"index {index_name!r} {status}{backfill}"
        return _table_ready(description)

    return ready


def _wait(
    handle: Handle,
    change: TableChange,
    deadline: float,
    report: Progress,
    first: Mapping[str, Any] | None,
    ready: Callable[[Mapping[str, Any]], str | None],
) -> Mapping[str, Any]:
    """Poll DescribeTable until ``ready`` says so; ``first`` (the response of the
    call that started the work) saves a request when it is already ACTIVE."""
    started = time.monotonic()
    delay = POLL_FIRST
    description = first
    while True:
        if description is None:
            description = _describe(handle, change.deployed_name)
        waiting_for = ready(description) if description is not None else "table not visible yet"
        if waiting_for is None:
            return cast(Mapping[str, Any], description)
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise MigrationTimeout(
                f"Table {change.declared_name!r} (deployed as {change.deployed_name!r}): "
                f"{waiting_for} after {time.monotonic() - started:.0f}s of waiting. DynamoDB "
                "goes on with it: run `python manage.py dynamo_migrate` again later, or give "
                "it more time with --timeout."
            )
        report(change, f"waiting: {waiting_for} ({time.monotonic() - started:.0f}s)")
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, POLL_MAX)
        description = None


def _enable_ttl(handle: Handle, deployed_name: str, attribute: str) -> None:
    """Turn TTL on; AWS refuses to enable it twice, which here means "done"."""
    try:
        handle.call(
            "update_time_to_live",
            TableName=deployed_name,
            TimeToLiveSpecification={"Enabled": True, "AttributeName": attribute},
        )
    except ServiceError as exc:
        if exc.code != "ValidationException" or "already enabled" not in str(exc):
            raise
