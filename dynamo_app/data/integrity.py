"""Finding (and safely repairing) unique locks out of step with their owners.

Locks and owners change together in one transaction, so they can only drift
apart through writes made outside the app: data written before a constraint
was declared, another program, a hand edit. ``check_unique()`` reads both
sides (explicit, paginated Scans of the constrained tables and the lock
table) and reports:

* missing locks - an owner holds a value but no lock records it;
* orphan locks - a lock whose owner no longer exists or no longer holds it;
* duplicates - two owners holding one unique value (a real conflict that no
  repair can decide; a person must change one of them).

With ``repair=True`` each fix is its own small transaction conditioned on what
was read (the owner still holds the value, the lock still has its owner), so
a repair racing a live write changes nothing rather than the wrong thing.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..actions import Action
from ..app_tables import LOCK_ID
from ..client.handle import get_handle
from ..exceptions import WriteError
from ..expressions import Attr, all_of
from ..models.registry import registered_models
from ..models.writes import ModelTransaction, unique_fields
from ..unique import LOCK_TABLE, Unique, owner_id

if TYPE_CHECKING:
    from ..models.base import Model


@dataclass
class Finding:
    kind: str  # "missing", "orphan" or "duplicate"
    model: str
    constraint: str
    value: Any
    detail: str
    repaired: bool = False

    def __str__(self) -> str:
        done = " [repaired]" if self.repaired else ""
        return f"{self.kind}: {self.model}.{self.constraint}={self.value!r}: {self.detail}{done}"


@dataclass
class Report:
    owners_checked: int = 0
    locks_checked: int = 0
    findings: list[Finding] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return all(f.repaired for f in self.findings)

    def count(self, kind: str) -> int:
        return sum(1 for f in self.findings if f.kind == kind)


def _constrained_models() -> list[type[Model]]:
    return [m for m in registered_models() if m._meta.unique]


def check_unique(*, repair: bool = False) -> Report:
    """Compare every owner's expected locks with the lock table."""
    report = Report()
    models = {m._meta.label: m for m in _constrained_models()}
    expected = _expected_locks(models.values(), report)
    locks = _scan_locks()
    report.locks_checked = len(locks)
    report.findings += _owner_findings(expected, locks, repair)
    report.findings += _orphan_findings(models, expected, locks, repair)
    return report


# Each lock id, with the owners (model, constraint, instance) whose values want it.
_Expected = dict[str, list[tuple["type[Model]", Unique, "Model"]]]


def _expected_locks(models: Iterable[type[Model]], report: Report) -> _Expected:
    """The lock each owner's unique values want, from a scan of each model."""
    expected: _Expected = defaultdict(list)
    for model in models:
        # Strongly consistent: a repair acts on what this scan finds, so it must see
        # every owner written so far (and DAX, which may hold older items, never answers it).
        for obj in model.objects.scan().only(*unique_fields(model)).consistent():
            report.owners_checked += 1
            for constraint in model._meta.unique:
                lock = constraint.lock_id(obj.__dict__)
                if lock is not None:
                    expected[lock].append((model, constraint, obj))
    return expected


def _owner_findings(
    expected: _Expected, locks: dict[str, dict[str, Any]], repair: bool
) -> list[Finding]:
    """A value held twice (duplicate), and a value whose lock is absent or names
    another owner (missing; an absent one claimed with ``repair``)."""
    findings = []
    for lock, owners in expected.items():
        model, constraint, obj = owners[0]
        value = constraint.value(obj.__dict__)
        if len(owners) > 1:
            keys = ", ".join(str(o.key) for _, _, o in owners)
            findings.append(
                Finding("duplicate", model.__name__, constraint.name, value, f"held by {keys}")
            )
            continue
        record = locks.get(lock)
        owner = owner_id(model._meta.key_of(obj.__dict__))
        if record is None or record["owner"]["S"] != owner:
            finding = Finding(
                "missing",
                model.__name__,
                constraint.name,
                value,
                f"{obj.key} holds it but "
                + ("no lock exists" if record is None else "the lock names another owner"),
            )
            if repair and record is None:
                finding.repaired = _claim(constraint, obj)
            findings.append(finding)
    return findings


def _orphan_findings(
    models: dict[str, type[Model]],
    expected: _Expected,
    locks: dict[str, dict[str, Any]],
    repair: bool,
) -> list[Finding]:
    """A lock of a constrained model that no owner's values want (released with
    ``repair``, when its constraint is still declared)."""
    findings = []
    for lock, record in locks.items():
        holder = models.get(record.get("model", {}).get("S"))
        if holder is None or lock in expected:
            continue
        declared = next(
            (c for c in holder._meta.unique if c.name == record["constraint"]["S"]), None
        )
        value = json.loads(record.get("value", {}).get("S", "null"))
        finding = Finding(
            "orphan",
            holder.__name__,
            record["constraint"]["S"],
            value,
            f"lock owned by {record['owner']['S']}, which does not hold it",
        )
        if repair and declared is not None:
            finding.repaired = _release_orphan(holder, declared, record)
        findings.append(finding)
    return findings


def _scan_locks() -> dict[str, dict[str, Any]]:
    handle = get_handle()
    locks: dict[str, dict[str, Any]] = {}
    for page in handle.paginate("scan", TableName=handle.table_name(LOCK_TABLE)):
        for item in page.get("Items", []):
            locks[item[LOCK_ID]["S"]] = item
    return locks


def _holds(obj: Model, constraint: Unique) -> Any:
    """A condition: the stored owner still holds the values it was read with."""
    return all_of(Attr(name) == obj.__dict__[name] for name in constraint.all_fields)


def _claim(constraint: Unique, obj: Model) -> bool:
    tx = ModelTransaction()
    action = constraint.claim(obj.__dict__, obj._meta.key_of(obj.__dict__))
    assert action is not None
    tx.add(action)
    tx.condition_check(obj, _holds(obj, constraint))
    return _commit(tx)


def _release_orphan(model: type[Model], constraint: Unique, record: dict[str, Any]) -> bool:
    """Delete a lock whose owner does not hold it - conditioned on both still being so."""
    owner = model._meta.decode(record["owner_key"]["M"], partial=True)
    tx = ModelTransaction()
    tx.add(
        Action(
            "Delete",
            {
                "TableName": get_handle().table_name(LOCK_TABLE),
                "Key": {LOCK_ID: record[LOCK_ID]},
                "ConditionExpression": "#owner = :owner",
                "ExpressionAttributeNames": {"#owner": "owner"},
                "ExpressionAttributeValues": {":owner": record["owner"]},
            },
            f"release orphan lock {record[LOCK_ID]['S']}",
        )
    )
    pk = model._meta.key_path
    still_holds = all_of(Attr(n) == v for n, v in _lock_values(constraint, record).items())
    assert still_holds is not None  # a constraint names at least one field
    tx.condition_check(owner, Attr(pk).not_exists() | ~still_holds)
    return _commit(tx)


def _lock_values(constraint: Unique, record: dict[str, Any]) -> dict[str, Any]:
    """The Python values a lock was claimed for, from its key."""
    meta = constraint.meta
    assert meta is not None
    _, _, scope, values = json.loads(record[LOCK_ID]["S"])
    out = {}
    for name, (kind, raw) in zip(constraint.all_fields, [*scope, *values], strict=True):
        out[name] = meta.fields_by_name[name].decode({kind: raw})
    return out


def _commit(tx: Any) -> bool:
    try:
        tx.commit()
    except WriteError:
        return False  # the data moved under us: leave it for the next run
    return True
