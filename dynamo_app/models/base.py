"""``Model`` and its metaclass: the model class is the schema.

``ModelBase`` collects fields (inherited from parent models, as Django
users expect), reads ``Meta`` into ``_meta`` (:class:`Options`), binds the
``objects`` manager and declared queries, gives every model its own
``DoesNotExist``, refuses a wrong declaration (the rules of ``checks.py``)
with one error listing every problem, and registers the table of every
concrete model.

Every instance method that talks to DynamoDB makes exactly one request.
"""

from __future__ import annotations

import copy
from collections.abc import Collection, Iterator
from functools import partialmethod
from typing import TYPE_CHECKING, Any, ClassVar, Self, cast

from django.utils.translation import ngettext

from .. import app_tables, exceptions, signals
from ..client import wire
from ..conf import require_installed
from ..exceptions import ModelDefinitionError
from ..expressions import Condition
from ..tables import registry
from . import validation, writes
from .aio import in_thread
from .checks import model_problems
from .declared import DeclaredQuery
from .fields import Field
from .manager import Manager
from .options import Options
from .registry import register_model
from .state import ItemState

if TYPE_CHECKING:
    from .manager import ModelManager


class ModelBase(type):
    def __new__(
        mcs, name: str, bases: tuple[type, ...], attrs: dict[str, Any], **kw: Any
    ) -> ModelBase:
        parents = [b for b in bases if isinstance(b, ModelBase)]
        if not parents:
            return super().__new__(mcs, name, bases, attrs, **kw)
        meta = attrs.pop("Meta", None)
        own_fields = {k: v for k, v in attrs.items() if isinstance(v, Field)}
        own_queries = {k: v for k, v in attrs.items() if isinstance(v, DeclaredQuery)}
        new_class = super().__new__(mcs, name, bases, attrs, **kw)
        cls = cast("type[Model]", new_class)  # a type checker cannot know a Model is being made

        fields, queries, meta = _inherited(cls, meta)
        for field_name, field in sorted(own_fields.items(), key=lambda i: i[1].creation_order):
            fields.pop(field_name, None)
            fields[field_name] = field
        queries.update(own_queries)
        _contribute(cls, fields, queries)
        cls._meta = Options(cls, meta, list(fields.values()), queries)
        cls.DoesNotExist = type(
            "DoesNotExist",
            tuple(p.DoesNotExist for p in parents if hasattr(p, "DoesNotExist"))
            or (exceptions.DoesNotExist,),
            {"__module__": cls.__module__, "__qualname__": f"{cls.__qualname__}.DoesNotExist"},
        )
        _bind_managers(cls, attrs)
        problems = model_problems(cls)
        if problems:
            raise ModelDefinitionError(
                f"{cls._meta.label} is declared wrongly:\n"
                + "\n".join(f"  - {p} [{p.id}]" for p in problems)
            )
        if not cls._meta.abstract:
            _register(cls)
        return new_class

    def __iter__(cls) -> Iterator[type[Model]]:
        """A model class is the one-model sequence of itself, for Django's
        ``admin.site.register(Player, DynamoModelAdmin)``. That call takes a model
        or an iterable of models and tells them apart by ``isinstance(...,
        django.db.models.base.ModelBase)``, the ORM's metaclass, which ours is not
        and must not claim to be (every other such check in Django would then treat
        the model as an SQL table). So the model class iterates as ``[cls]``, the
        iterable ``register()`` walks; ``@admin.register(Player)`` passes a tuple
        and needs nothing."""
        return iter((cast("type[Model]", cls),))


def _inherited_meta(meta: type | None) -> type | None:
    """An abstract parent's Meta, minus ``abstract`` (children are concrete by default)."""
    if meta is None:
        return None
    attrs = {k: v for k, v in vars(meta).items() if not k.startswith("_") and k != "abstract"}
    return type("Meta", (), attrs)


def _inherited(
    cls: type[Model], meta: type | None
) -> tuple[dict[str, Field], dict[str, DeclaredQuery[Any]], type | None]:
    """Copies of the parents' fields and declared queries (the nearest parent's
    win), and the Meta of an abstract parent when the class declares none."""
    fields: dict[str, Field] = {}
    queries: dict[str, DeclaredQuery[Any]] = {}
    for parent in reversed(cls.__mro__[1:]):
        parent_meta = getattr(parent, "_meta", None)
        if isinstance(parent, ModelBase) and parent_meta is not None:
            fields.update((f.name, f.clone()) for f in parent_meta.fields)
            queries.update((n, q.clone()) for n, q in parent_meta.declared_queries.items())
            if meta is None and parent_meta.abstract:
                meta = _inherited_meta(parent_meta.meta)
    return fields, queries, meta


def _contribute(
    cls: type[Model], fields: dict[str, Field], queries: dict[str, DeclaredQuery[Any]]
) -> None:
    """Each field and declared query bound to the class under its name (as Django's
    ``contribute_to_class``), with ``get_<field>_display()`` for a field with choices."""
    for field_name, field in fields.items():
        field.bind(cls, field_name)
        setattr(cls, field_name, field)
        display = f"get_{field_name}_display"
        if field.choices is not None and display not in cls.__dict__:
            setattr(cls, display, partialmethod(Model._get_field_display, field=field))
    for query_name, query in queries.items():
        query.bind(cls, query_name)
        setattr(cls, query_name, query)


def _register(cls: type[Model]) -> None:
    """A concrete model, in an installed app: its table (or its place in a shared
    one) registered for the migrator, and the model for the app's tables."""
    require_installed(f"The DynamoDB model {cls._meta.label}")
    if cls._meta.shared is not None:
        cls._meta.shared.attach(cls)
    else:
        registry.register(cls._meta.table_definition())
    app_tables.register(cls._meta)
    register_model(cls)


def _bind_managers(cls: type[Model], attrs: dict[str, Any]) -> None:
    declared = {k: v for k, v in attrs.items() if isinstance(v, Manager)}
    inherited = {
        k: v for base in cls.__mro__[1:] for k, v in vars(base).items() if isinstance(v, Manager)
    }
    managers = {**inherited, **declared} or {"objects": Manager()}
    managers.setdefault("objects", Manager())
    for name, manager in managers.items():
        setattr(cls, name, manager.bind(cls))


class Model(metaclass=ModelBase):
    """Base class of every DynamoDB model. See docs/reference/models.md."""

    _meta: ClassVar[Options]
    # Each model's own manager, bound by ModelBase (_bind_managers). To a type checker,
    # unannotated, so that a model's own ``objects = TeamManager()`` keeps its type; at
    # run time, annotated, as every model's attribute (checks.attribute_clash reads it).
    if TYPE_CHECKING:
        objects = ModelManager()
    else:
        objects: ClassVar[Manager[Any]]
    DoesNotExist: ClassVar[type[exceptions.DoesNotExist]]
    # In each instance's __dict__ beside the field values (see state.py).
    _state: ItemState

    def __init__(self, **values: Any) -> None:
        attrs = self.__dict__
        for field in self._meta.fields:
            if field.name in values:
                attrs[field.name] = values.pop(field.name)
            else:
                attrs[field.name] = field.missing()
        if values:
            unexpected = ngettext("unexpected field", "unexpected fields", len(values))
            raise TypeError(
                f"{type(self).__name__}() got {unexpected}: {', '.join(sorted(values))}. "
                f"Fields: {', '.join(f.name for f in self._meta.fields)}."
            )
        attrs["_state"] = ItemState()

    def __getstate__(self) -> dict[str, Any]:
        """A copy or pickle gets its own ``_state`` (a write to it must not move the original's)."""
        attrs = self.__dict__.copy()
        attrs["_state"] = copy.copy(attrs["_state"])
        return attrs

    # --- identity

    @property
    def key(self) -> dict[str, Any]:
        """The primary key as ``{field name: value}``."""
        return {f.name: self.__dict__[f.name] for f in self._meta.key_fields}

    @property
    def pk(self) -> Any:
        """The partition key value, or ``(partition, sort)`` for a composite key."""
        values = tuple(self.key.values())
        return values[0] if len(values) == 1 else values

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Model) or other._meta.label != self._meta.label:
            return NotImplemented
        return self.key == other.key

    def __hash__(self) -> int:
        return hash((self._meta.label, tuple(self.key.values())))

    def __repr__(self) -> str:
        key = ", ".join(f"{k}={v!r}" for k, v in self.key.items())
        return f"<{type(self).__name__}: {key}>"

    def _get_field_display(self, field: Field) -> Any:
        """``get_<field>_display()`` of a field with choices, as in Django."""
        return field.display(self.__dict__[field.name])

    @property
    def extra_attributes(self) -> dict[str, Any]:
        """Stored attributes the model does not declare (kept, and saved back)."""
        return {name: wire.decode(value) for name, value in self._state.extra.items()}

    # --- the typed JSON form (see dynamo_app.data.serialization). It is imported in the
    # methods: serialization imports the field classes, which runs this package's
    # __init__ and so this module, and importing serialization first must not meet
    # a half-built models package.

    def to_dict(self) -> dict[str, Any]:
        """Every field by name, JSON-safe and exact: ``json.dumps(obj.to_dict())``
        reads back with ``Model.from_dict()`` as the same values."""
        from ..data.serialization import to_dict

        return to_dict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """A new, unsaved instance from ``to_dict()``'s form, checked as a save
        would check it (``ValidationError`` naming the field)."""
        from ..data.serialization import from_dict

        return from_dict(cls, data)

    # --- validation, as Django's; save() does not call it (see validation.py)

    def clean_fields(self, exclude: Collection[str] | None = None) -> None:
        """Check every field's value (empty, storable, ``choices``, ``validators``);
        raise one ``ValidationError`` whose ``error_dict`` names every bad field."""
        validation.clean_fields(self, exclude)

    def clean(self) -> None:
        """A hook for checks across fields: raise ``ValidationError`` (Django's); a
        dict of field names to messages puts each on its field."""

    def validate_unique(self, exclude: Collection[str] | None = None) -> None:
        """Whether another item holds one of this instance's unique values: one
        strongly consistent BatchGetItem of its locks (none without ``Meta.unique``).
        Early news for a form; the transaction at save time is the guarantee."""
        validation.validate_unique(self, exclude)

    def full_clean(
        self, exclude: Collection[str] | None = None, validate_unique: bool = True
    ) -> None:
        """``clean_fields()``, ``clean()`` and ``validate_unique()``, every error at once."""
        validation.full_clean(self, exclude, validate_unique)

    # --- item operations: one request each (a transaction when locks must move)

    def save(
        self,
        *,
        condition: Condition | None = None,
        update_fields: list[str] | tuple[str, ...] | None = None,
        idempotency_key: str | None = None,
        force_insert: bool = False,
    ) -> None:
        """Write the whole item (PutItem), or with ``update_fields`` only those
        attributes of an existing item (UpdateItem).

        With a ``VersionField`` the write is conditioned on the version read;
        with unique constraints, on the unique values read, and a changed value
        moves its lock in the same transaction. ``force_insert``: insert only,
        ``AlreadyExists`` if the key is taken (what ``objects.create()`` asks).
        Sends ``pre_save`` and ``post_save`` (see ``dynamo_app.signals``).
        """
        if update_fields is not None:
            fields = self._meta.fields_by_name
            unknown = [name for name in update_fields if name not in fields]
            if unknown or not update_fields or force_insert:
                raise ValueError(
                    f"update_fields takes field names of {type(self).__name__} (and no "
                    f"force_insert); got {list(update_fields)!r} (fields: {', '.join(fields)})."
                )
            names = frozenset(update_fields)
            signals.pre_save.send(type(self), instance=self, update_fields=names)
            for field in self._meta.fillers:  # as Django's: auto_now moves when it is named
                if field.name in names:
                    self.__dict__[field.name] = field.pre_save(self, False)
            self._update(
                {"set": {name: self.__dict__[name] for name in update_fields}},
                condition=condition,
                idempotency_key=idempotency_key,
            )
            signals.send_after_write(
                [(signals.post_save, self, {"created": False, "update_fields": names})]
            )
            return
        created = force_insert or self._state.stored is None
        signals.pre_save.send(type(self), instance=self, update_fields=None)
        if force_insert:
            actions = writes.create_actions(self, condition)
        else:
            actions = writes.save_actions(self, condition)
        writes.send(actions, idempotency_key=idempotency_key)
        signals.send_after_write(
            [(signals.post_save, self, {"created": created, "update_fields": None})]
        )

    def update(
        self,
        *,
        set: dict[str, Any] | None = None,
        add: dict[str, Any] | None = None,
        remove: tuple[str, ...] | list[str] = (),
        append: dict[str, list[Any]] | None = None,
        discard: dict[str, Any] | None = None,
        condition: Condition | None = None,
        upsert: bool = False,
        defaults: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> dict[str, Any]:
        """Atomic update of the stored item (one UpdateItem); returns the new values.

        ``set``: new values (``None`` removes); ``add``: add to numbers or sets;
        ``remove``: attributes to delete; ``append``: extend lists;
        ``discard``: remove set members. Paths may reach into maps and lists
        (``"address.city"``). The item must exist unless ``upsert=True``; an
        upsert writes ``defaults`` (and field defaults) only where the item lacks
        them, so an item it creates is whole, and refuses to create one without a
        required field. The instance is refreshed with the item as stored after
        the update.

        A change of a unique value (``set``/``remove`` only) moves its lock in
        the same transaction. With ``idempotency_key`` the update is a
        transaction that applies once per key (``AlreadyApplied`` on a
        repeat); transactions return no values, so the item is then read back
        with one strongly consistent GetItem.
        """
        changes = {"set": set, "add": add, "remove": remove, "append": append, "discard": discard}
        touched = [*(set or {}), *(add or {}), *remove, *(append or {}), *(discard or {})]
        names = dict.fromkeys(self._meta.field_for_path(p)[0].name for p in touched)
        update_fields = frozenset(names)
        signals.pre_save.send(type(self), instance=self, update_fields=update_fields)
        self._update(
            changes,
            condition=condition,
            upsert=upsert,
            defaults=defaults,
            idempotency_key=idempotency_key,
        )
        signals.send_after_write(
            [(signals.post_save, self, {"created": False, "update_fields": update_fields})]
        )
        return {name: self.__dict__[name] for name in names}

    def _update(
        self,
        changes: dict[str, Any],
        *,
        condition: Condition | None = None,
        upsert: bool = False,
        defaults: dict[str, Any] | None = None,
        idempotency_key: str | None = None,
    ) -> None:
        """update()'s request, and the instance refreshed from it (no signals)."""
        actions = writes.update_actions(
            self, condition=condition, upsert=upsert, defaults=defaults, **changes
        )
        if idempotency_key is not None:
            writes.send(actions, idempotency_key=idempotency_key)
            self.refresh_from_db()
        elif len(actions) == 1:
            response = writes.send(actions, ReturnValues="ALL_NEW")
            self.__dict__.update(self._meta.decode(response["Attributes"]).__dict__)
        else:
            writes.send(actions)  # the instance follows the set/remove it sent

    def delete(
        self, *, condition: Condition | None = None, idempotency_key: str | None = None
    ) -> None:
        """Delete the item (DeleteItem) and release its unique locks; deleting a
        missing item is not an error unless a ``condition`` says it must hold.
        Sends ``pre_delete`` and ``post_delete`` (see ``dynamo_app.signals``)."""
        signals.pre_delete.send(type(self), instance=self)
        writes.send(writes.delete_actions(self, condition), idempotency_key=idempotency_key)
        signals.send_after_write([(signals.post_delete, self, {})])

    def refresh_from_db(self, *, consistent: bool = True) -> None:
        """Reload every attribute from the table (one strongly consistent GetItem)."""
        fresh = type(self).objects.get(consistent=consistent, **self.key)
        self.__dict__.update(fresh.__dict__)

    # --- async twins: the same calls, run in a worker thread (see aio.py)

    afull_clean = in_thread(full_clean)
    asave = in_thread(save)
    aupdate = in_thread(update)
    adelete = in_thread(delete)
    arefresh_from_db = in_thread(refresh_from_db)
