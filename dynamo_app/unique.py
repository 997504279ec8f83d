"""Unique constraints on non-key attributes, by lock items in one transaction.

DynamoDB guarantees only that primary keys are unique. A value is made unique
by a *lock item* in the app-owned table ``dynamo_unique`` whose key is the
value itself (with its model, constraint and scope): writing the entity and
its locks in one ``TransactWriteItems``, each conditioned on
``attribute_not_exists``, lets exactly one of two concurrent claims win.

A lock records its constraint, its value and its owner's key. It is released
only by a delete conditioned on that owner, so a stale instance can never free
or steal a lock that now belongs to someone else.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .actions import Action, canonical
from .app_tables import LOCK_ID, LOCKS
from .client.handle import get_handle
from .exceptions import ModelDefinitionError, StaleObjectError, UniqueViolation

if TYPE_CHECKING:
    from .models.options import Options

# Built once: json.dumps() with non-default options builds a new encoder per call.
_to_json = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=str).encode

LOCK_TABLE = LOCKS.declared_name


def owner_id(key: dict[str, dict[str, Any]]) -> str:
    """The owner's key as one canonical string, compared in lock conditions."""
    return _to_json({name: canonical(v) for name, v in sorted(key.items())})


class Unique:
    """``Unique("email")`` or ``Unique("uniform_number", within="team_id")``.

    ``fields``: one field name or several (the combination is unique).
    ``within``: field names that scope the constraint (unique per team, say).
    A ``None`` in any of the fields claims nothing, as NULL does in SQL.
    """

    def __init__(
        self,
        fields: str | Sequence[str],
        *,
        within: str | Sequence[str] | None = None,
        name: str | None = None,
    ) -> None:
        self.fields = (fields,) if isinstance(fields, str) else tuple(fields)
        self.within = (within,) if isinstance(within, str) else tuple(within or ())
        if not self.fields:
            raise ModelDefinitionError("Unique() needs at least one field name.")
        self.name = name or "+".join(self.fields)
        self.meta: Options | None = None

    def __repr__(self) -> str:
        within = f", within={self.within!r}" if self.within else ""
        return f"Unique({self.fields!r}{within})"

    def bind(self, meta: Options) -> None:
        """Attach to a model (``problems()`` then says what is wrong with the declaration)."""
        self.meta = meta

    def problems(self) -> list[str]:
        """What is wrong with this constraint on its model (checked by models/checks.py)."""
        assert self.meta is not None
        problems = []
        for name in (*self.fields, *self.within):
            field = self.meta.fields_by_name.get(name)
            if field is None:
                problems.append(f"Meta.unique {self.name!r} names {name!r}, which is not a field.")
            elif field.key_type is None:
                problems.append(
                    f"Meta.unique {self.name!r}: {field.label} is a {type(field).__name__}; "
                    "unique values must be strings, numbers or binary."
                )
            elif field.is_key and name in self.fields:
                problems.append(
                    f"Meta.unique {self.name!r}: {field.label} is part of the primary key, "
                    "which DynamoDB already keeps unique."
                )
        return problems

    @property
    def all_fields(self) -> tuple[str, ...]:
        return (*self.within, *self.fields)

    def values_of(self, values: dict[str, Any]) -> dict[str, Any]:
        """The values of this constraint's fields (scope first) among ``values``."""
        return {name: values.get(name) for name in self.all_fields}

    def describe(self, values: dict[str, Any]) -> str:
        """``Player.uniform_number=18 within team_id='t1'``, for messages and reprs."""
        assert self.meta is not None
        scope = ", ".join(f"{n}={values.get(n)!r}" for n in self.within)
        within = f" within {scope}" if scope else ""
        return f"{self.meta.object_name}.{self.name}={self.value(values)!r}{within}"

    def value(self, values: dict[str, Any]) -> Any:
        """The constrained value for messages: one value, or a tuple for several."""
        parts = tuple(values.get(name) for name in self.fields)
        return parts[0] if len(parts) == 1 else parts

    def lock_id(self, values: dict[str, Any]) -> str | None:
        """The lock's key for these Python values, or None when a value is null."""
        assert self.meta is not None
        fields = self.meta.fields_by_name
        encoded = []
        for name in self.all_fields:
            value = values.get(name)
            if value is None:
                return None
            encoded.append(canonical(fields[name].encode_key(value, self.meta.key_limits[name])))
        scope, claimed = encoded[: len(self.within)], encoded[len(self.within) :]
        return _to_json([self.meta.lock_scope, self.name, scope, claimed])

    # --- lock actions

    def claim(self, values: dict[str, Any], owner_key: dict[str, Any]) -> Action | None:
        """Put the lock for ``values``, conditioned on nobody holding it."""
        lock = self.lock_id(values)
        if lock is None:
            return None
        assert self.meta is not None
        meta, value = self.meta, self.value(values)
        item = {
            LOCK_ID: {"S": lock},
            "constraint": {"S": self.name},
            "model": {"S": meta.label},
            "owner": {"S": owner_id(owner_key)},
            "owner_key": {"M": owner_key},
            "value": {"S": _to_json(value)},
        }
        params = {
            "TableName": get_handle().table_name(LOCK_TABLE),
            "Item": item,
            "ConditionExpression": "attribute_not_exists(#id)",
            "ExpressionAttributeNames": {"#id": LOCK_ID},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
        }
        return Action(
            "Put",
            params,
            f"claim {meta.object_name}.{self.name}={value!r}",
            LockTaken(self, self.values_of(values)),
            key={LOCK_ID: item[LOCK_ID]},
        )

    def release(self, values: dict[str, Any], owner_key: dict[str, Any]) -> Action | None:
        """Delete the lock for ``values``, conditioned on ``owner_key`` holding it."""
        lock = self.lock_id(values)
        if lock is None:
            return None
        assert self.meta is not None
        meta, value = self.meta, self.value(values)
        params = {
            "TableName": get_handle().table_name(LOCK_TABLE),
            "Key": {LOCK_ID: {"S": lock}},
            "ConditionExpression": "#owner = :owner",
            "ExpressionAttributeNames": {"#owner": "owner"},
            "ExpressionAttributeValues": {":owner": {"S": owner_id(owner_key)}},
            "ReturnValuesOnConditionCheckFailure": "ALL_OLD",  # no item: released already
        }
        return Action(
            "Delete",
            params,
            f"release {meta.object_name}.{self.name}={value!r}",
            LockStale(self, self.values_of(values), owner_key),
        )


@dataclass(frozen=True)
class LockTaken:
    """A claim's failure: another item holds the value (``UniqueViolation``)."""

    constraint: Unique
    values: dict[str, Any]

    def __repr__(self) -> str:
        return f"LockTaken({self.constraint.describe(self.values)}: UniqueViolation)"

    def __call__(self, raw_item: dict[str, Any] | None, attempts: int) -> Exception:
        unique = self.constraint
        assert unique.meta is not None
        value = unique.value(self.values)
        scope = ", ".join(f"{n}={self.values.get(n)!r}" for n in unique.within)
        return UniqueViolation(
            f"{unique.meta.object_name}: {unique.name}={value!r} is already taken"
            f"{f' within {scope}' if scope else ''}; nothing was written. "
            "Choose another value (to swap values between items, save both in one "
            "dynamo_app.transaction()).",
            model=unique.meta.object_name,
            constraint=unique.name,
            value=value,
            attempts=attempts,
        )


@dataclass(frozen=True)
class LockStale:
    """A release's failure: the owner no longer holds the lock, so the instance
    was stale (``StaleObjectError``)."""

    constraint: Unique
    values: dict[str, Any]
    owner_key: dict[str, Any]

    def __repr__(self) -> str:
        owner = _owner_key_repr(self.owner_key)
        return f"LockStale({owner} releasing {self.constraint.describe(self.values)}: stale)"

    def __call__(self, raw_item: dict[str, Any] | None, attempts: int) -> Exception:
        unique = self.constraint
        assert unique.meta is not None
        return StaleObjectError(
            f"{unique.meta.object_name} {_owner_key_repr(self.owner_key)} no longer holds "
            f"{unique.name}={unique.value(self.values)!r}: the item changed since it was "
            "read. Reload it and try again; nothing was written.",
            attempts=attempts,
        )


def one_action_per_lock(actions: list[Action]) -> list[Action]:
    """A transaction's actions with each lock touched once, as DynamoDB requires.

    A release and a claim of one lock (a swap of values between two items, a
    rotation) become one Put that hands the lock to its new owner, conditioned
    on the releasing owner still holding it. Two claims of one value are a
    ``UniqueViolation`` before anything is sent. Lock actions carry no
    ``on_success``, so nothing is lost by the merge.
    """
    table = get_handle().table_name(LOCK_TABLE)
    groups: dict[Any, list[Action]] = {}
    for action in actions:
        if action.params["TableName"] == table:
            groups.setdefault(action.target, []).append(action)
    merged: dict[int, Action | None] = {}
    for group in groups.values():
        claims = [a for a in group if a.kind == "Put"]
        releases = [a for a in group if a.kind == "Delete"]
        if len(claims) > 1:
            assert claims[1].on_condition_failed is not None
            raise claims[1].on_condition_failed(None, 0)
        if len(group) == 2 and claims and releases:
            merged[id(group[0])] = _hand_over(releases[0], claims[0])
            merged[id(group[1])] = None
    if not merged:
        return actions
    out = (merged.get(id(a), a) for a in actions)
    return [a for a in out if a is not None]


def _hand_over(release: Action, claim: Action) -> Action:
    """The claim's Put under the release's condition (the old owner holds the
    lock); failing, it is the release's error: the old owner was stale."""
    condition = ("ConditionExpression", "ExpressionAttributeNames", "ExpressionAttributeValues")
    params = {**claim.params, **{k: release.params[k] for k in condition}}
    return Action(
        "Put",
        params,
        f"{release.describe}, {claim.describe}",
        release.on_condition_failed,
        key=claim.key,
    )


def _owner_key_repr(key: dict[str, dict[str, Any]]) -> str:
    return "{" + ", ".join(f"{k}={canonical(v)[1]!r}" for k, v in key.items()) + "}"
