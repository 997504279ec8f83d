"""Write requests built as parameter dicts, separately from sending them.

Each builder returns exactly the parameters of one ``Put`` / ``Update`` /
``Delete`` / ``ConditionCheck`` action - the shape ``PutItem`` & co. take
and the shape a ``TransactWriteItems`` entry takes - so single-item writes
and transactions share one validated path. Senders add only what a
transaction cannot carry (``ReturnValues``).

The ``*_actions`` functions go one step further: a model write becomes the
list of actions it needs - the entity itself, plus unique-lock claims and
releases, each with the conditions that keep locks and owners in step and the
error its failure means (``EntityFailure``, ``KeyTaken``) and what the
instance learns when it succeeds (``Written``, ``Follow``). ``send()`` makes
one action one request and several one transaction, so ``save()`` costs a
PutItem unless a unique value changes. ``transaction()`` collects model writes
into one ``ModelTransaction``.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from django.utils.translation import ngettext

from .. import signals
from ..actions import Action
from ..client.handle import get_handle
from ..exceptions import (
    AlreadyExists,
    ConditionFailed,
    StaleObjectError,
    ValidationError,
    WriteError,
)
from ..expressions import Attr, Compiler, Condition, Update, all_of
from ..transactions import Transaction, TransactionBlock

if TYPE_CHECKING:
    from django.dispatch import Signal

    from .base import Model
    from .options import Options

M = TypeVar("M", bound="Model")


def _table(obj: Model) -> str:
    return get_handle().table_name(obj._meta.table_name)


def _with_condition(
    params: dict[str, Any], meta: Options, condition: Condition | None, c: Compiler | None = None
) -> None:
    """Add ``condition`` (asking for the stored item when it fails) and the
    placeholders of ``c`` (a new compiler when None: a plain write compiles nothing)."""
    if condition is not None:
        c = c or meta.compiler()
        params["ConditionExpression"] = condition.compile(c)
        params["ReturnValuesOnConditionCheckFailure"] = "ALL_OLD"
    if c is not None:
        params.update(c.params())


def exists(obj: Model) -> Condition:
    return Attr(obj._meta.key_path).exists()


def not_exists(obj: Model) -> Condition:
    return Attr(obj._meta.key_path).not_exists()


def all_present(*conditions: Condition | None) -> Condition | None:
    """Every given condition (None ones skipped), or None."""
    present = [c for c in conditions if c is not None]
    return all_of(present) if present else None


def _put_params(
    obj: Model, condition: Condition | None = None, *, version: int | None = None
) -> dict[str, Any]:
    """The whole item as a Put; refuses an instance read with ``only()``. The
    fields that fill themselves (``auto_now``, ``SequenceField``) do it here, the
    one step every create, save, batch and transaction takes; not for a raw
    instance (a loaded line keeps its values, as Django's ``loaddata``).
    ``version``: the VersionField value to write (the instance keeps its own
    until the write succeeds)."""
    meta = obj._meta
    if obj._state.partial:
        raise WriteError(
            f"{meta.object_name} {obj.key} was read with only some attributes (only() or an "
            "index projection); a whole-item save would erase the others. Use "
            "save(update_fields=[...]), or refresh_from_db() first."
        )
    if meta.fillers and not obj._state.raw:
        add = obj._state.stored is None
        for field in meta.fillers:
            obj.__dict__[field.name] = field.pre_save(obj, add)
    source = obj
    if version is not None and meta.version is not None:
        # The item carries the version the instance will have, not the one it has:
        # encoded (and sized in the same pass) from a copy of its values.
        source = object.__new__(type(obj))
        source.__dict__ = {**obj.__dict__, meta.version.name: version}
    params: dict[str, Any] = {"TableName": _table(obj), "Item": meta.encode_checked(source)}
    _with_condition(params, meta, condition)
    return params


def _update_params(
    obj: Model, update: Update, condition: Condition | None = None
) -> dict[str, Any]:
    meta = obj._meta
    keys = {f.name for f in meta.key_fields}
    for path in update.paths():
        if path in meta.derived:
            continue  # an index key of a shared table, following its fields
        field, _ = meta.field_for_path(path)
        if field.name in keys:
            raise ValidationError(
                f"{meta.object_name}.{field.name} is part of the key and cannot be updated; "
                "delete the item and save it under the new key.",
                model=meta.object_name,
                field=field.name,
            )
    if not update:
        raise ValueError(f"{meta.object_name}: an update needs at least one action.")
    c = meta.compiler()
    params: dict[str, Any] = {
        "TableName": _table(obj),
        "Key": meta.key_of(obj.__dict__),
        "UpdateExpression": update.compile(c),
    }
    meta.check_update_size(params["Key"], [(path, c.values[v]) for path, v in c.stored])
    _with_condition(params, meta, condition, c)
    return params


def _follow_index_keys(obj: Model, update: Update, actions: dict[str, Any]) -> None:
    """In a shared table, an index key is built from fields: an update that sets or
    removes one of them sets (or removes) the key too, from the update's values and
    the instance's (which must then have been read: a blind instance's would be
    defaults). Arithmetic on such a field cannot say the new text, so it is refused."""
    meta = obj._meta
    set_values = {
        **{p: None for p in actions.get("remove") or ()},
        **(actions.get("set") or {}),
    }
    arithmetic = [p for k in ("add", "append", "discard") for p in actions.get(k) or {}]
    for attribute, template in meta.templates.items():
        names = set(template.field_names)
        if attribute in meta.key_attributes or not names & {*set_values, *arithmetic}:
            continue
        if not _index_key_can_follow(obj, names, set_values, arithmetic):
            raise ValidationError(
                f"{meta.object_name}: {', '.join(sorted(names))} "
                f"{ngettext('builds', 'build', len(names))} the index key "
                f"{attribute!r} ({template.text!r}); an update changes them with set= of whole "
                "fields, on an instance read from the table (or setting all of them), so the "
                "key can follow.",
                model=meta.object_name,
            )
        values = {**obj.__dict__, **set_values}
        if any(values.get(n) is None for n in names):
            update.remove(attribute)
        else:
            update.set(attribute, meta.render(template, values))


def _index_key_can_follow(
    obj: Model, names: set[str], set_values: dict[str, Any], arithmetic: list[str]
) -> bool:
    """The new key text is known: its fields are set whole (no arithmetic, no
    nested path), or known from the key, or from a read."""
    known = {*set_values, *(f.name for f in obj._meta.key_fields)}
    unread = obj._state.stored is None and bool(names - known)
    return not (
        any(p in names for p in arithmetic)
        or unread
        or any(p.split(".")[0] in names for p in set_values if "." in p)
    )


def _key_params(obj: Model, condition: Condition | None = None) -> dict[str, Any]:
    """The item's key and an optional condition: a Delete, or a ConditionCheck."""
    meta = obj._meta
    params: dict[str, Any] = {"TableName": _table(obj), "Key": meta.key_of(obj.__dict__)}
    _with_condition(params, meta, condition)
    return params


def _build_update(
    obj: Model,
    *,
    set: dict[str, Any] | None = None,
    add: dict[str, Any] | None = None,
    remove: tuple[str, ...] | list[str] = (),
    append: dict[str, list[Any]] | None = None,
    discard: dict[str, Any] | None = None,
) -> Update:
    """An ``Update`` from keyword actions; ``None`` or an empty set in ``set`` removes."""
    update = Update()
    removals = list(remove)
    for path, value in (set or {}).items():
        if value is None or (isinstance(value, (frozenset, builtins.set)) and not value):
            removals.append(path)
        else:
            update.set(path, value)
    for path in removals:
        field, parts = obj._meta.field_for_path(path)
        if len(parts) == 1 and not field.null and not field.is_set:
            raise field.invalid(None, f"{field.description} (the field is not null=True)")
        update.remove(path)
    for path, value in (add or {}).items():
        update.add(path, value)
    for path, values in (append or {}).items():
        update.append(path, list(values))
    for path, members in (discard or {}).items():
        update.discard(path, members)
    return update


# --- model writes as actions ---------------------------------------------------------------

OPERATIONS = {"Put": "put_item", "Update": "update_item", "Delete": "delete_item"}


def send(actions: list[Action], *, idempotency_key: str | None = None, **extra: Any) -> Any:
    """The one sender of model writes: one action as its own request (``extra``
    adds e.g. ReturnValues); several, or any with an ``idempotency_key``, as one
    TransactWriteItems. Failures raise the error each action defines."""
    if len(actions) > 1 or idempotency_key is not None:
        tx = Transaction(idempotency_key=idempotency_key)
        tx.extend(actions)
        tx.commit()
        return None
    (action,) = actions
    try:
        response = get_handle().call(OPERATIONS[action.kind], **action.params, **extra)
    except ConditionFailed as exc:
        if action.on_condition_failed is None:
            raise
        raise action.on_condition_failed(exc.raw_item, exc.attempts) from exc.__cause__
    if action.on_success is not None:
        action.on_success()
    return response


def stored_values(obj: Model, names: Iterable[str]) -> dict[str, Any] | None:
    """The values of ``names`` as last read or written, or None when unknown
    (a new instance, or a partial read that did not include them)."""
    stored = obj._state.stored
    if stored is None:
        return None
    meta = obj._meta
    values = {}
    for name in names:
        field = meta.fields_by_name[name]
        raw = stored.get(field.db_name)
        if raw is None and obj._state.partial:
            return None
        values[name] = None if raw is None else field.decode_slow(raw, meta.table_name)
    return values


def holds(values: dict[str, Any]) -> Condition | None:
    """The stored item still has ``values`` (absent where a value is None)."""
    if not values:
        return None
    return all_of(
        Attr(name) == value if value is not None else Attr(name).not_exists()
        for name, value in values.items()
    )


def _version_condition(obj: Model) -> Condition | None:
    version = obj._meta.version
    if version is None:
        return None
    current = obj.__dict__[version.name]
    return Attr(version.name).not_exists() if current is None else Attr(version.name) == current


def _next_version(obj: Model) -> int | None:
    version = obj._meta.version
    if version is None:
        return None
    return (obj.__dict__[version.name] or 0) + 1


def unique_fields(obj: Model | type[Model]) -> list[str]:
    """The fields of a model's unique constraints (values and scopes), each once."""
    return list(dict.fromkeys(n for c in obj._meta.unique for n in c.all_fields))


def _lock_changes(obj: Model, old: dict[str, Any], new: dict[str, Any]) -> list[Action]:
    """Release the locks of values given up and claim those of values taken;
    unchanged values cause no lock traffic."""
    moved = [c for c in obj._meta.unique if c.lock_id(old) != c.lock_id(new)]
    if not moved:
        return []
    owner = obj._meta.key_of(obj.__dict__)
    actions = (a for c in moved for a in (c.release(old, owner), c.claim(new, owner)))
    return [a for a in actions if a is not None]


@dataclass(frozen=True, repr=False)
class EntityFailure:
    """Which error a failed condition on the entity means, decided from the item
    as stored (``ALL_OLD``) and from the conditions the write carried: the item
    must exist (an update without upsert), the version the instance holds
    (``versioned``), the unique values it was read with (``expected``), and the
    caller's own. An error is named only when it is true: ``StaleObjectError``
    needs an instance that was read (``read``), ``DoesNotExist`` a condition of
    ours that a missing item fails; otherwise the caller's condition failed
    (``ConditionFailed``, with the stored item)."""

    obj: Model
    verb: str  # "save", "update", "delete" or "check"
    expected: dict[str, Any] | None
    versioned: bool = False
    must_exist: bool = False
    read: bool = False

    def __repr__(self) -> str:
        expecting = f" expecting {self.expected}" if self.expected else ""
        return f"EntityFailure({self.verb} {self.obj!r}{expecting})"

    def __call__(self, raw_item: dict[str, Any] | None, attempts: int) -> Exception:
        obj, verb = self.obj, self.verb
        meta = obj._meta
        old = meta.decode(raw_item) if raw_item else None
        name = f"{meta.object_name} {obj.key}"
        stored: dict[str, Any] = {"item": old, "raw_item": raw_item, "attempts": attempts}
        if verb == "check":
            return ConditionFailed(f"The condition on {name} did not hold.", **stored)
        version = meta.version.name if self.versioned and meta.version is not None else ""
        held = obj.__dict__[version] if version else None
        if old is None:
            return self._missing(name, held, attempts)
        if version and old.__dict__[version] != held:
            if held is None and not self.read:
                return AlreadyExists(
                    f"{name} already exists (version {old.__dict__[version]}); nothing was "
                    "written. Use save() on an instance read with objects.get() to change it.",
                    **stored,
                )
            return StaleObjectError(
                f"{name} was changed since it was {'read' if self.read else 'given'} (version "
                f"{held} {'read' if self.read else 'given'}, {old.__dict__[version]} stored); "
                "nothing was written. Reload it and apply the change again.",
                **stored,
            )
        expected = self.expected or {}
        if any(old.__dict__[n] != v for n, v in expected.items()):
            if self.read:
                return StaleObjectError(
                    f"{name}: its unique values changed since it was read; nothing was "
                    "written. Reload it and apply the change again.",
                    **stored,
                )
            return ConditionFailed(
                f"{name} holds other unique values than this instance, which was never read; "
                "nothing was written. Read it with objects.get() first.",
                **stored,
            )
        return ConditionFailed(f"The condition of {verb} {name} did not hold.", **stored)

    def _missing(self, name: str, held: Any, attempts: int) -> Exception:
        """The item is not there: which of the write's conditions that fails."""
        if self.must_exist:
            return self.obj.DoesNotExist(
                f"{name} does not exist (nothing was updated). Pass upsert=True to create it.",
                attempts=attempts,
            )
        ours = held is not None or any(v is not None for v in (self.expected or {}).values())
        if not ours:  # only the caller's condition can fail on a missing item
            return ConditionFailed(
                f"The condition of {self.verb} {name} did not hold: there is no such item.",
                attempts=attempts,
            )
        if self.read:
            return StaleObjectError(
                f"{name} was deleted since it was read; nothing was written.", attempts=attempts
            )
        return self.obj.DoesNotExist(
            f"{name} does not exist; nothing was written.", attempts=attempts
        )


@dataclass(frozen=True, repr=False)
class KeyTaken:
    """An insert's failure: an item with the key exists (``AlreadyExists``), or,
    when none does, the caller's own condition did not hold (``ConditionFailed``)."""

    obj: Model

    def __repr__(self) -> str:
        return f"KeyTaken({self.obj!r}: AlreadyExists)"

    def __call__(self, raw_item: dict[str, Any] | None, attempts: int) -> Exception:
        meta = self.obj._meta
        if raw_item is None:  # no item: the key was free, so the caller's condition failed
            return ConditionFailed(
                f"The condition of create {meta.object_name} {self.obj.key} did not hold: "
                "there is no such item.",
                attempts=attempts,
            )
        return AlreadyExists(
            f"{meta.object_name} {self.obj.key} already exists; nothing was written. Use save() "
            "on an instance read with objects.get() to change it.",
            item=meta.decode(raw_item),
            raw_item=raw_item,
            attempts=attempts,
        )


def item_key(meta: Any, item: dict[str, Any]) -> dict[str, Any]:
    """The key attributes of an item in wire form (already encoded in it)."""
    return {name: item[name] for name in meta.key_attributes}


@dataclass(frozen=True, repr=False)
class Written:
    """On success: the instance records the item as now stored (None: deleted)
    and the version it was written with."""

    obj: Model
    stored: dict[str, Any] | None
    version: int | None

    def __repr__(self) -> str:
        if self.stored is None:
            return f"Written({self.obj!r} deleted)"
        version = f", version {self.version}" if self.version is not None else ""
        return f"Written({self.obj!r} stored with {len(self.stored)} attributes{version})"

    def __call__(self) -> None:
        self.obj._state.stored = self.stored
        if self.version is not None:
            self.obj.__dict__[self.obj._meta.version.name] = self.version  # type: ignore[union-attr]


def create_actions(obj: Model, condition: Condition | None = None) -> list[Action]:
    """An insert conditioned on the key being free, and a claim per unique value."""
    meta = obj._meta
    version = 1 if meta.version is not None else None
    params = _put_params(obj, all_present(not_exists(obj), condition), version=version)

    entity = Action(
        "Put",
        params,
        f"create {meta.object_name} {obj.key}",
        KeyTaken(obj),
        Written(obj, params["Item"], version),
        key=item_key(meta, params["Item"]),
    )
    if not meta.unique:
        return [entity]
    owner = meta.key_of(obj.__dict__)
    claims = [c.claim(obj.__dict__, owner) for c in meta.unique]
    return [entity, *(a for a in claims if a is not None)]


def save_actions(obj: Model, condition: Condition | None = None) -> list[Action]:
    """The whole item, conditioned on the version and unique values it was read
    with, plus the lock changes; an instance never read is saved insert-only
    when the model has unique constraints (an overwrite could strand locks)."""
    meta = obj._meta
    if meta.unique and obj._state.stored is None:
        return create_actions(obj, condition)
    names = unique_fields(obj)
    old = stored_values(obj, names) or {}
    read = obj._state.stored is not None
    version = _next_version(obj)
    params = _put_params(
        obj, all_present(condition, _version_condition(obj), holds(old)), version=version
    )
    entity = Action(
        "Put",
        params,
        f"save {meta.object_name} {obj.key}",
        EntityFailure(obj, "save", old, meta.version is not None, read=read),
        Written(obj, params["Item"], version),
        key=item_key(meta, params["Item"]),
    )
    new = {name: obj.__dict__[name] for name in names}
    return [entity, *_lock_changes(obj, old, new)]


def _upsert_defaults(obj: Model, written: set[str], defaults: dict[str, Any]) -> dict[str, Any]:
    """What an upsert writes where the item lacks it, so that an item it creates
    is whole: the ``defaults`` given, else each field's own default. A required
    field left out, or a unique value (an update cannot claim its lock), is
    refused before any request."""
    meta = obj._meta
    fields = meta.fields_by_name
    wrong = [n for n in defaults if n not in fields or fields[n].is_key or n in written]
    if wrong:
        raise ValueError(
            f"{meta.object_name}: defaults= takes fields that are neither part of the key nor "
            f"written by the update itself; got {', '.join(wrong)}."
        )
    fill, missing = _created_values(meta, written, defaults)
    _refuse_created_unique(obj, fill, missing)
    if missing:
        required = "is required" if len(missing) == 1 else "are required"
        raise ValidationError(
            f"{meta.object_name} {obj.key}: an upsert (objects.increment(), update(upsert=True)) "
            f"that creates the item would leave out {', '.join(missing)}, which {required} (not "
            "null=True, no default). Pass defaults="
            f"{{{', '.join(repr(n) + ': ...' for n in missing)}}}: "
            "defaults are written only when the item is created.",
            model=meta.object_name,
            field=missing[0],
        )
    return fill


def _created_values(
    meta: Options, written: set[str], defaults: dict[str, Any]
) -> tuple[dict[str, Any], list[str]]:
    """The values of the fields an upsert leaves out (a default given, else the
    field's own), and the required ones that would be left without a value."""
    fill: dict[str, Any] = {}
    missing = []
    for field in meta.fields:
        if field.is_key or field.name in written or field is meta.version:
            continue
        value = defaults[field.name] if field.name in defaults else field.created_value()
        if value is not None and not (isinstance(value, (frozenset, builtins.set)) and not value):
            fill[field.name] = value
        elif not field.null and not field.is_set:
            missing.append(field.name)
    return fill, missing


def _refuse_created_unique(obj: Model, fill: dict[str, Any], missing: list[str]) -> None:
    """An item the upsert creates would hold a unique value without its lock."""
    meta = obj._meta
    fields = meta.fields_by_name
    for unique in meta.unique:
        if all(fields[n].is_key or n in fill or n in missing for n in unique.all_fields):
            raise ValidationError(
                f"{meta.object_name} {obj.key}: an upsert (objects.increment(), "
                "update(upsert=True)) may create the item, and it would then hold a value of the "
                f"unique constraint {unique.name!r} without claiming its lock. Create the item "
                "with objects.create() first, then update(add=...) it.",
                model=meta.object_name,
                field=unique.fields[0],
            )


@dataclass(frozen=True, repr=False)
class Follow:
    """On success of an update that moved locks (only ``set``/``remove`` of whole
    fields, so no read is needed): the instance takes the values it sent, the
    next version, and records them as stored."""

    obj: Model
    set_values: dict[str, Any]
    removed: tuple[str, ...]
    version: int | None

    def __repr__(self) -> str:
        removed = f", removing {list(self.removed)}" if self.removed else ""
        return f"Follow({self.obj!r} setting {sorted(self.set_values)}{removed})"

    def __call__(self) -> None:
        obj, meta = self.obj, self.obj._meta
        for name, value in self.set_values.items():
            obj.__dict__[name] = value
        for name in self.removed:
            obj.__dict__[name] = None
        if self.version is not None:
            obj.__dict__[meta.version.name] = self.version  # type: ignore[union-attr]
        stored = dict(obj._state.stored or {})
        for name in [*self.set_values, *self.removed]:
            field = meta.fields_by_name[name]
            value = obj.__dict__[name]
            encoded = field.encode(value) if value is not None else None
            if encoded is None:
                stored.pop(field.db_name, None)
            else:
                stored[field.db_name] = encoded
        obj._state.stored = stored


def update_actions(
    obj: Model,
    *,
    condition: Condition | None = None,
    upsert: bool = False,
    defaults: dict[str, Any] | None = None,
    **actions: Any,
) -> list[Action]:
    """An UpdateItem; when it changes unique values (only by ``set``/``remove``,
    so the instance can follow without a read), the lock changes too. An upsert
    also writes, where the item lacks them, the values an item it creates needs
    (``_upsert_defaults``)."""
    meta = obj._meta
    update = _model_update(obj, upsert, defaults, actions)
    old, locks = _update_lock_moves(obj, actions)
    # An upsert of an instance never read (a counter) is based on no read: no version to check.
    blind = upsert and obj._state.stored is None
    conditions = all_present(
        None if upsert else exists(obj),
        condition,
        None if blind else _version_condition(obj),
        holds(old),
    )
    params = _update_params(obj, update, conditions)
    new_version = _next_version(obj)
    follow = None
    if locks:
        set_values = dict(actions.get("set") or {})
        follow = Follow(obj, set_values, tuple(actions.get("remove") or ()), new_version)
    entity = Action(
        "Update",
        params,
        f"update {meta.object_name} {obj.key}",
        EntityFailure(
            obj,
            "update",
            old,
            versioned=not blind and meta.version is not None,
            must_exist=not upsert,
            read=obj._state.stored is not None,
        ),
        follow,
    )
    return [entity, *locks]


def _model_update(
    obj: Model, upsert: bool, defaults: dict[str, Any] | None, actions: dict[str, Any]
) -> Update:
    """The update expression of a model update: the keyword actions, the index keys
    of a shared table that follow them, an upsert's defaults, the version's step."""
    meta = obj._meta
    update = _build_update(obj, **actions)
    if meta.shared is not None:
        _follow_index_keys(obj, update, actions)
    if defaults and not upsert:
        raise ValueError(f"{meta.object_name}: defaults= is written by upsert=True only.")
    if upsert:
        written = {meta.field_for_path(p)[0].name for p in update.paths()}
        for name, value in _upsert_defaults(obj, written, defaults or {}).items():
            update.set_if_missing(name, value)
    if meta.version is not None:
        update.add(meta.version.name, 1)
    return update


def _update_lock_moves(obj: Model, actions: dict[str, Any]) -> tuple[dict[str, Any], list[Action]]:
    """The unique values an update replaces (which the item must still hold) and
    the lock releases and claims that move them, after the refusals that keep an
    instance able to follow its locks without a read."""
    names = unique_fields(obj)
    _refuse_arithmetic_on_unique(obj, names, actions)
    set_values = actions.get("set") or {}
    changed = {*set_values, *(actions.get("remove") or ())}
    touched = [n for n in names if n in changed]
    if not touched:
        return {}, []
    old = _replaced_unique_values(obj, names)
    locks = _lock_changes(obj, old, {**old, **{n: set_values.get(n) for n in touched}})
    if locks:
        _refuse_partial_lock_update(obj, changed, actions)
    return old, locks


def _refuse_arithmetic_on_unique(obj: Model, names: list[str], actions: dict[str, Any]) -> None:
    """add/append/discard cannot say the new value, so no lock could follow it."""
    meta = obj._meta
    arithmetic = [*(actions.get("add") or {}), *(actions.get("append") or {})]
    for path in [*arithmetic, *(actions.get("discard") or {})]:
        if path.split(".")[0].split("[")[0] in names:
            raise ValidationError(
                f"{meta.object_name}.{path} is part of a unique constraint: change it with "
                "set= (or remove=), so its lock can follow.",
                model=meta.object_name,
                field=path,
            )


def _replaced_unique_values(obj: Model, names: list[str]) -> dict[str, Any]:
    """The unique values as stored: the locks to release, known only from a read."""
    known = stored_values(obj, names)
    if known is None:
        raise WriteError(
            f"{obj._meta.object_name} {obj.key}: changing a unique value needs the values it "
            "replaces; read the instance with objects.get() (not only()) first."
        )
    return known


def _refuse_partial_lock_update(obj: Model, changed: set[str], actions: dict[str, Any]) -> None:
    """An update that moves locks sets or removes whole fields and nothing else, so
    the instance can take the values it sent (``Follow``) without a read."""
    meta = obj._meta
    if any("." in p or "[" in p for p in changed):
        raise ValidationError(
            f"{meta.object_name}: an update that changes a unique value may only set or "
            "remove whole fields.",
            model=meta.object_name,
        )
    if any(actions.get(k) for k in ("add", "append", "discard")):
        raise ValidationError(
            f"{meta.object_name}: change unique values in an update of their own "
            "(set= / remove= only), so the instance can follow without a read.",
            model=meta.object_name,
        )


def delete_actions(obj: Model, condition: Condition | None = None) -> list[Action]:
    """The item and every lock it holds, conditioned on still holding them."""
    meta = obj._meta
    names = unique_fields(obj)
    read = obj._state.stored is not None
    old = stored_values(obj, names)
    if old is None:  # never read: the locks of the values it believes in
        old = {name: obj.__dict__[name] for name in names}
    params = _key_params(obj, all_present(condition, _version_condition(obj), holds(old)))
    owner = meta.key_of(obj.__dict__)
    releases = [c.release(old, owner) for c in meta.unique]
    entity = Action(
        "Delete",
        params,
        f"delete {meta.object_name} {obj.key}",
        EntityFailure(obj, "delete", old, meta.version is not None, read=read),
        Written(obj, None, None),
    )
    return [entity, *(a for a in releases if a is not None)]


def condition_check_action(obj: Model, condition: Condition) -> Action:
    meta = obj._meta
    return Action(
        "ConditionCheck",
        _key_params(obj, condition),
        f"check {meta.object_name} {obj.key}",
        EntityFailure(obj, "check", None),
    )


# --- model writes in one transaction --------------------------------------------------------


class ModelTransaction(Transaction):
    """A ``Transaction`` with the model verbs: each adds the actions the
    single-item write sends (unique locks and versions included), and sends
    ``pre_save``/``pre_delete`` at once; ``post_save``/``post_delete`` follow
    the commit, and a transaction that fails or is never sent sends none."""

    def __init__(self, *, idempotency_key: str | None = None) -> None:
        super().__init__(idempotency_key=idempotency_key)
        self.after_commit: list[tuple[Signal, Model, dict[str, Any]]] = []

    def create(self, obj: M) -> M:
        signals.pre_save.send(type(obj), instance=obj, update_fields=None)
        self.extend(create_actions(obj))
        self.after_commit.append((signals.post_save, obj, {"created": True, "update_fields": None}))
        return obj

    def save(self, obj: M, *, condition: Condition | None = None) -> M:
        created = obj._state.stored is None
        signals.pre_save.send(type(obj), instance=obj, update_fields=None)
        self.extend(save_actions(obj, condition))
        self.after_commit.append(
            (signals.post_save, obj, {"created": created, "update_fields": None})
        )
        return obj

    def update(self, obj: M, *, condition: Condition | None = None, **actions: Any) -> M:
        kinds = ("set", "add", "remove", "append", "discard")
        paths = [path for kind in kinds for path in actions.get(kind) or ()]
        names = frozenset(obj._meta.field_for_path(path)[0].name for path in paths)
        signals.pre_save.send(type(obj), instance=obj, update_fields=names)
        self.extend(update_actions(obj, condition=condition, **actions))
        self.after_commit.append(
            (signals.post_save, obj, {"created": False, "update_fields": names})
        )
        return obj

    def delete(self, obj: Model, *, condition: Condition | None = None) -> None:
        signals.pre_delete.send(type(obj), instance=obj)
        self.extend(delete_actions(obj, condition))
        self.after_commit.append((signals.post_delete, obj, {}))

    def condition_check(self, obj: Model, condition: Condition) -> None:
        """Require ``condition`` to hold on ``obj``'s stored item, writing nothing to it."""
        self.add(condition_check_action(obj, condition))

    def commit(self) -> None:
        super().commit()
        signals.send_after_write(self.after_commit)


def transaction(*, idempotency_key: str | None = None) -> TransactionBlock[ModelTransaction]:
    """Collect writes in the block; send them as ONE TransactWriteItems at its end.

    ``with`` or, in async code, ``async with``. An exception inside the block
    sends nothing. With ``idempotency_key``, a repeat of the same transaction
    raises ``AlreadyApplied`` and changes nothing.
    """
    return TransactionBlock(ModelTransaction(idempotency_key=idempotency_key))
