"""``Model._meta``: everything the app knows about a model, built once by the metaclass.

The request path, the codec, the table registry, the query builder and the
system checks all read this one object. It precomputes the per-field
encoder and decoder lists the codec loops over, and it knows how to turn a
Python attribute path into stored names and an operand into wire form (the
two hooks of :class:`~dynamo_app.expressions.Compiler`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured
from django.utils.text import camel_case_to_spaces

from ..client import wire
from ..exceptions import DynamoError, ItemTooLarge, QueryError, ValidationError
from ..expressions import Compiler, Path, parse_path
from ..tables import IndexDefinition, KeyAttribute, TableDefinition, snake_case
from ..unique import Unique
from .codec import compile_codec
from .fields import (
    DateTimeField,
    Field,
    ListField,
    MapField,
    SequenceField,
    VersionField,
)
from .habits import orm_form
from .templates import KeyTemplate

if TYPE_CHECKING:
    from django.apps import AppConfig

    from .base import Model
    from .declared import DeclaredQuery
    from .table import TableOptions

# Meta options and their defaults: an unknown option is an error, never a silent no-op.
META_OPTIONS: dict[str, Any] = {
    "table_name": None,
    "indexes": (),
    "ttl": None,
    "abstract": False,
    "owner": None,
    "unique": (),
    "stream": None,
    # Django's names, read by its admin, auth and content types (see ``app_label``).
    "app_label": None,
    "verbose_name": None,
    "verbose_name_plural": None,
    # single-table design (see table.py and templates.py)
    "table": None,
    "keys": None,
    "entity": None,
}

# ``Meta.stream`` values: what each change record of the table's stream carries.
STREAM_VIEW_TYPES = ("keys_only", "new_image", "old_image", "new_and_old_images")


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a model declaration: a system-check id and a message."""

    id: str
    message: str
    hint: str = ""

    def __str__(self) -> str:
        return f"{self.message} {self.hint}".strip()


class _Index:
    kind: str = ""

    def __init__(
        self,
        name: str,
        *,
        partition_key: str | None,
        sort_key: str | None,
        projection: str | Sequence[str],
    ) -> None:
        self.name = name
        self.partition_key = partition_key
        self.sort_key = sort_key
        self.projection = projection if isinstance(projection, str) else tuple(projection)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class GlobalIndex(_Index):
    """A global secondary index: its own partition key (and optional sort key).

    ``projection``: "ALL" (default), "KEYS_ONLY", or a list of field names to copy.
    Reads from it are eventually consistent.
    """

    kind = "global"

    def __init__(
        self,
        name: str,
        *,
        partition_key: str,
        sort_key: str | None = None,
        projection: str | Sequence[str] = "ALL",
    ) -> None:
        super().__init__(
            name, partition_key=partition_key, sort_key=sort_key, projection=projection
        )


class LocalIndex(_Index):
    """A local secondary index: the table's partition key with another sort key."""

    kind = "local"

    def __init__(
        self, name: str, *, sort_key: str, projection: str | Sequence[str] = "ALL"
    ) -> None:
        super().__init__(name, partition_key=None, sort_key=sort_key, projection=projection)


class KeySchema:
    """The key of the table or of one index, as fields."""

    templated = False

    def __init__(
        self,
        name: str | None,
        partition: Field,
        sort: Field | None,
        projection: Any = "ALL",
        kind: str = "table",
    ) -> None:
        self.index = name
        self.kind = kind
        self.partition = partition
        self.sort = sort
        self.projection = projection

    @property
    def where(self) -> str:
        return f"index {self.index!r}" if self.index else "the table"

    @property
    def fields(self) -> tuple[Field, ...]:
        """The fields a query names to use this key."""
        return (self.partition, self.sort) if self.sort else (self.partition,)

    @property
    def partition_fields(self) -> tuple[Field, ...]:
        return (self.partition,)

    @property
    def sort_fields(self) -> tuple[Field, ...]:
        return (self.sort,) if self.sort else ()

    @property
    def attribute_fields(self) -> tuple[Field, ...]:
        """The fields stored as the key attributes themselves (a filter may not name them)."""
        return self.fields

    @property
    def attributes(self) -> tuple[str, ...]:
        """The stored key attributes."""
        return tuple(f.db_name for f in self.fields)


class TemplateKeySchema(KeySchema):
    """The key of a shared table or of one of its indexes, as one model fills it:
    a template per key attribute, built from fields (see templates.py)."""

    templated = True

    def __init__(
        self,
        name: str | None,
        partition: KeyTemplate,
        sort: KeyTemplate | None,
        fields_by_name: dict[str, Field],
        projection: Any = "ALL",
        kind: str = "table",
    ) -> None:
        self.index = name
        self.kind = kind
        self.projection = projection
        self.partition_template = partition
        self.sort_template = sort
        self._partition = tuple(fields_by_name[n] for n in partition.field_names)
        self._sort = tuple(fields_by_name[n] for n in sort.field_names) if sort else ()

    @property
    def fields(self) -> tuple[Field, ...]:
        return tuple(dict.fromkeys(self._partition + self._sort))

    @property
    def partition_fields(self) -> tuple[Field, ...]:
        return self._partition

    @property
    def sort_fields(self) -> tuple[Field, ...]:
        return self._sort

    @property
    def attribute_fields(self) -> tuple[Field, ...]:
        return ()

    @property
    def attributes(self) -> tuple[str, ...]:
        templates = (self.partition_template, self.sort_template)
        return tuple(t.attribute for t in templates if t is not None)


class Options:
    """The parsed ``Meta`` and fields of one model: a description, built without
    judging it. What is wrong with a declaration is said by the checks in
    ``checks.py``, which read this object (class creation raises them, and
    ``manage.py check`` reports them)."""

    def __init__(
        self,
        model: type[Model],
        meta: type | None,
        fields: list[Field],
        declared_queries: dict[str, DeclaredQuery[Any]],
    ) -> None:
        self.model = model
        self.object_name = model.__name__
        self.label = f"{model.__module__}.{model.__qualname__}"
        self.meta = meta
        values = dict(META_OPTIONS)  # an unknown option is left to checks.py (dynamo.E101)
        if meta is not None:
            values.update((n, getattr(meta, n)) for n in META_OPTIONS if hasattr(meta, n))
        self._read_table_options(values)
        self._read_names(values)
        self._read_shared_table(values)
        self._read_fields(fields)
        self.declared_queries = declared_queries
        self.unique: tuple[Unique, ...] = self._bind_unique()
        # The stored attributes a shared table's model derives (keys, entity type).
        self.derived: frozenset[str] = frozenset()
        if self.shared is not None:
            self.derived = frozenset([*self.templates, self.shared.type_attribute])
        self.indexes: dict[str, KeySchema] = {} if self.abstract else self._indexes()
        self.ttl: Field | None = None if self.abstract else self._ttl()
        self.key_limits = self._key_limits()
        self._build_codec()

    def _read_table_options(self, values: dict[str, Any]) -> None:
        """The options that describe the model's own table, as declared."""
        self.abstract: bool = bool(values["abstract"])
        self.table_name: str = values["table_name"] or snake_case(self.object_name)
        self.owner: str = values["owner"] or self.label
        self.index_declarations: tuple[_Index, ...] = tuple(values["indexes"] or ())
        unique = values["unique"]
        self.unique_declarations: tuple[Unique, ...] = (
            (unique,) if isinstance(unique, Unique) else tuple(unique or ())
        )
        self.ttl_name: str | None = values["ttl"]
        # None, or one of STREAM_VIEW_TYPES (checks.py refuses anything else).
        self.stream: str | None = values["stream"]

    def _read_names(self, values: dict[str, Any]) -> None:
        """The names Django's admin and messages show (as Django's ``Options``)."""
        self.model_name = self.object_name.lower()
        self.verbose_name: str = values["verbose_name"] or camel_case_to_spaces(self.object_name)
        self.verbose_name_plural: str = values["verbose_name_plural"] or f"{self.verbose_name}s"
        self._app_label: str | None = values["app_label"]

    def _read_shared_table(self, values: dict[str, Any]) -> None:
        """A model in a shared table: the table, its key templates, its entity name
        (the table's name replaces the model's own)."""
        self.shared: TableOptions | None = getattr(values["table"], "_table", None)
        self.table_declaration = values["table"]
        self.keys_declaration = values["keys"]
        self.entity: str = values["entity"] or self.object_name
        self.templates: dict[str, KeyTemplate] = {}
        if isinstance(values["keys"], dict):
            self.templates = {
                attribute: KeyTemplate(attribute, text)
                for attribute, text in values["keys"].items()
                if isinstance(attribute, str) and isinstance(text, str)
            }
        if self.shared is not None:
            self.table_name = self.shared.table_name

    def _read_fields(self, fields: list[Field]) -> None:
        """The fields, by name and by stored name, and the ones with a role."""
        self.fields = fields
        self.fields_by_name = {f.name: f for f in fields}
        self.fields_by_db_name: dict[str, Field] = {}
        for field in fields:
            self.fields_by_db_name.setdefault(field.db_name, field)
        self.partition_key: Field = next((f for f in fields if f.partition_key), None)  # type: ignore[arg-type]
        self.sort_key: Field | None = next((f for f in fields if f.sort_key), None)
        self.version: Field | None = next((f for f in fields if isinstance(f, VersionField)), None)
        self.sequences = [f for f in fields if isinstance(f, SequenceField)]
        self.fillers = [f for f in fields if f.fills_itself]  # asked by every whole-item write
        self.auto_now = [f for f in self.fillers if f.auto_now]  # and by update_or_create()

    def _bind_unique(self) -> tuple[Unique, ...]:
        """``Meta.unique``'s constraints, each bound to this model (a copy: an
        abstract parent's entry serves each child)."""
        constraints = []
        for constraint in self.unique_declarations:
            if isinstance(constraint, Unique):
                constraint = copy.copy(constraint)
                constraint.bind(self)
                constraints.append(constraint)
        return tuple(constraints)

    def _indexes(self) -> dict[str, KeySchema]:
        """The key schema of each declared index whose keys are fields of a key type
        (in a shared table: each index of the table this model's templates fill)."""
        if self.shared is not None:
            return self._shared_indexes(self.shared)
        indexes = {}
        for index in self.index_declarations:
            if not isinstance(index, _Index) or index.name in indexes:
                continue
            if index.kind == "local":
                partition: Field | None = self.partition_key
            else:
                partition = self.fields_by_name.get(index.partition_key)  # type: ignore[arg-type]
            sort = self.fields_by_name.get(index.sort_key) if index.sort_key else None
            keys = (partition, sort) if index.sort_key else (partition,)
            if all(f is not None and f.key_type is not None for f in keys):
                indexes[index.name] = KeySchema(
                    index.name, partition, sort, index.projection, index.kind  # type: ignore[arg-type]
                )
        return indexes

    def _shared_indexes(self, shared: TableOptions) -> dict[str, KeySchema]:
        indexes: dict[str, KeySchema] = {}
        for name, index in shared.indexes.items():
            schema = self._template_schema(shared, name, index.kind, index.projection)
            if schema is not None:
                indexes[name] = schema
        return indexes

    def _template_schema(
        self, shared: TableOptions, index: str | None, kind: str, projection: Any = "ALL"
    ) -> TemplateKeySchema | None:
        """The key schema of the table or an index as this model's templates fill it,
        None when they do not fill it (or name a field that does not exist)."""
        partition, sort = shared.index_keys(index)
        templates = [self.templates.get(partition), self.templates.get(sort) if sort else None]
        if templates[0] is None or (sort is not None and templates[1] is None):
            return None
        names = [n for t in templates if t is not None for n in t.field_names]
        if any(t is not None and t.error for t in templates) or not all(
            n in self.fields_by_name for n in names
        ):
            return None
        return TemplateKeySchema(
            index, templates[0], templates[1], self.fields_by_name, projection, kind
        )

    def _ttl(self) -> Field | None:
        field = self.fields_by_name.get(self.ttl_name) if self.ttl_name else None
        return field if isinstance(field, DateTimeField) and field.epoch else None

    def _key_limits(self) -> dict[str, int]:
        """Each field's size limit as a key value, in bytes: DynamoDB allows 2048 in a
        partition key (of the table or a global index) and 1024 in a sort key; other
        fields take the lower one (a unique constraint's value is checked as a key)."""
        partitions = {f.name for f in self.fields if f.partition_key}
        partitions.update(
            index.partition_key
            for index in self.index_declarations
            if isinstance(index, _Index) and index.kind == "global" and index.partition_key
        )
        high, low = wire.MAX_PARTITION_KEY_BYTES, wire.MAX_SORT_KEY_BYTES
        return {f.name: high if f.name in partitions else low for f in self.fields}

    # --- Django's names: what its admin, auth and content types read of ``_meta``

    # A DynamoDB model is its own concrete model, never swapped out (AUTH_USER_MODEL style),
    # and has no ORM CompositePrimaryKey (which Django's admin refuses): a (partition, sort)
    # key goes into admin URLs through dynamo_app.admin's object ids instead.
    swapped = None
    is_composite_pk = False

    @property
    def concrete_model(self) -> type[Model]:
        return self.model

    @property
    def private_fields(self) -> list[Any]:
        """The first attribute ``django.forms.ModelForm`` reads: refused, naming
        ``dynamo_app.forms.ModelForm``."""
        raise orm_form(self)

    @property
    def app_config(self) -> AppConfig:
        """The installed app the model belongs to: ``Meta.app_label``, else the app
        whose package holds the model's module (Django's rule for ORM models)."""
        from django.apps import apps

        if self._app_label is not None:
            return apps.get_app_config(self._app_label)
        config = apps.get_containing_app_config(self.model.__module__)
        if config is None:
            raise ImproperlyConfigured(
                f"{self.label} is in no installed app, so Django's admin and permissions cannot "
                "place it: declare Meta.app_label, or move it into an app of INSTALLED_APPS."
            )
        return config

    @property
    def app_label(self) -> str:
        return self._app_label or self.app_config.label

    # --- the table

    def table(self) -> KeySchema:
        if self.shared is not None:
            schema = self._template_schema(self.shared, None, "table")
            if schema is None:
                raise QueryError(
                    f"{self.object_name}: Meta.keys does not fill the key of table "
                    f"{self.table_name!r} (see manage.py check)."
                )
            return schema
        return KeySchema(None, self.partition_key, self.sort_key)

    def key_schema(self, index: str | None) -> KeySchema:
        if index is None:
            return self.table()
        try:
            return self.indexes[index]
        except KeyError:
            declared = ", ".join(self.indexes) or "none"
            raise QueryError(
                f"{self.object_name} has no index {index!r} (declared: {declared}). Declare it "
                "in Meta.indexes."
            ) from None

    def table_definition(self) -> TableDefinition:
        if self.shared is not None:
            return self.shared.definition()

        def key(field: Field | None) -> KeyAttribute | None:
            return KeyAttribute(field.db_name, field.key_type) if field else None  # type: ignore[arg-type]

        indexes = []
        for schema in self.indexes.values():
            projection = schema.projection
            if isinstance(projection, tuple):
                projection = tuple(self.fields_by_name[n].db_name for n in projection)
            indexes.append(
                IndexDefinition(
                    name=schema.index or "",
                    kind=schema.kind,  # type: ignore[arg-type]
                    partition_key=key(schema.partition),  # type: ignore[arg-type]
                    sort_key=key(schema.sort),
                    projection=projection,
                )
            )
        return TableDefinition(
            declared_name=self.table_name,
            partition_key=key(self.partition_key),  # type: ignore[arg-type]
            sort_key=key(self.sort_key),
            indexes=tuple(indexes),
            ttl_attribute=self.ttl.db_name if self.ttl else None,
            stream=self.stream.upper() if self.stream in STREAM_VIEW_TYPES else None,
            owner=self.owner,
        )

    # --- the codec

    def _build_codec(self) -> None:
        index_keys = {f.name for schema in self.indexes.values() for f in schema.attribute_fields}
        # The fields that name an item: its key fields, or (in a shared table) the
        # fields its key templates are built from.
        self.key_fields: tuple[Field, ...] = tuple(
            f for f in (self.partition_key, self.sort_key) if f is not None
        )
        # The stored key attributes, in key order.
        self.key_attributes: tuple[str, ...] = tuple(f.db_name for f in self.key_fields)
        if self.shared is not None:
            partition, sort = self.shared.index_keys(None)
            self.key_attributes = (partition, *([sort] if sort else []))
            names = [
                n
                for a in self.key_attributes
                if a in self.templates
                for n in self.templates[a].field_names
            ]
            self.key_fields = tuple(
                self.fields_by_name[n] for n in dict.fromkeys(names) if n in self.fields_by_name
            )
        # Whether an item found by its key may belong to other field values (see
        # held_under_own_key): a table key template with a delimited field.
        self.delimited_key = any(
            self.templates[a].delimited_names
            for a in (self.key_attributes if self.shared is not None else ())
            if a in self.templates
        )
        keys = {f.name for f in self.fields if f.is_key} | index_keys
        self.encode, self.encode_checked, self.decode = compile_codec(self, keys)

    @property
    def key_path(self) -> str:
        """A path the compiler resolves to the partition key attribute (for
        ``attribute_exists`` conditions)."""
        return self.key_attributes[0] if self.shared is not None else self.partition_key.name

    @property
    def lock_scope(self) -> str:
        """What a unique lock's id starts with: the table, and in a shared table the entity
        (two models there may declare constraints of the same name)."""
        return f"{self.table_name}#{self.entity}" if self.shared is not None else self.table_name

    def derive(self, values: dict[str, Any], item: dict[str, dict[str, Any]]) -> None:
        """Write a shared table's model's derived attributes into ``item``: each key
        template rendered (an index key is left out when a field of it is None: the
        item is then not in that index) and the entity type."""
        assert self.shared is not None
        table_keys = self.key_attributes
        for attribute, template in self.templates.items():
            if attribute not in table_keys and any(
                values.get(n) is None for n in template.field_names
            ):
                continue
            item[attribute] = {"S": self.render(template, values)}
        item[self.shared.type_attribute] = {"S": self.entity}

    def render(self, template: KeyTemplate, values: dict[str, Any]) -> str:
        """A key template's text, checked by DynamoDB's key rules (1 byte up to the limit)."""
        text = template.render(values, self.fields_by_name, self.object_name)
        assert self.shared is not None
        partitions = {self.shared.partition_key} | {
            i.partition_key for i in self.shared.indexes.values() if i.partition_key
        }
        limit = (
            wire.MAX_PARTITION_KEY_BYTES
            if template.attribute in partitions
            else (wire.MAX_SORT_KEY_BYTES)
        )
        size = wire.text_size(text)
        if not 0 < size <= limit:
            raise ValidationError(
                f"{self.object_name}: key attribute {template.attribute!r} = {text[:80]!r} "
                f"is {size} bytes; DynamoDB takes 1 to {limit}.",
                model=self.object_name,
            )
        return text

    # ``encode(obj) -> item``: the whole item in wire form, every field plus the
    # unknown attributes read. ``encode_checked(obj) -> item``: the same, with
    # ``check_size`` applied in the same pass (what a write sends). ``decode(item,
    # partial=False) -> obj``: missing attributes get their default, unknown ones
    # are kept (``_state.extra``) and written back by ``save()``. All generated per
    # model: see codec.py.
    encode: Callable[[Model], dict[str, dict[str, Any]]]
    encode_checked: Callable[[Model], dict[str, dict[str, Any]]]
    decode: Callable[..., Model]

    def decode_values_slow(self, item: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """Field values of an item the fast decoder could not read (NULL, other forms),
        or ``StoredValueError`` naming the field."""
        values = {}
        for field in self.fields:
            raw = item.get(field.db_name)
            values[field.name] = (
                field.missing() if raw is None else field.decode_slow(raw, self.table_name)
            )
        return values

    def check_size(self, item: dict[str, dict[str, Any]]) -> None:
        """DynamoDB's item limits: text must be valid Unicode (UTF-8), maps and lists
        nested at most 32 levels, the item at most 400 KB."""
        try:
            size = wire.item_size(item)
        except UnicodeEncodeError:
            raise self._not_unicode(item) from None
        except wire.NestingTooDeep as exc:
            field = self.fields_by_db_name.get(exc.attribute)
            name = field.name if field is not None else exc.attribute
            raise ValidationError(
                f"{self.object_name}.{name}: {exc}; DynamoDB stores at most 32 levels "
                "(the attribute itself counts as one). Nothing was sent.",
                model=self.object_name,
                field=name,
            ) from None
        if size > wire.MAX_ITEM_BYTES:
            raise ItemTooLarge(
                f"{self.object_name} item {self._key_values(item)} is {size} bytes; DynamoDB's "
                f"limit for one item in table {self.table_name!r} is {wire.MAX_ITEM_BYTES} bytes "
                "(400 KB). Nothing was sent. Store large payloads elsewhere (e.g. S3) and keep a "
                "reference.",
                model=self.object_name,
            )

    def check_update_size(
        self, key: dict[str, dict[str, Any]], stored: Iterable[tuple[str, dict[str, Any]]]
    ) -> None:
        """An update's SET, ADD and appended values (``(path, wire value)``) land in
        the item: if they and the key alone exceed 400 KB, no item can hold them."""
        sizes: dict[str, int] = {}
        for path, value in stored:
            if path in self.derived:
                continue  # a shared table's index key: counted with the key, roughly
            name = path.split(".", 1)[0].split("[", 1)[0]  # the field the path is in
            sizes[name] = sizes.get(name, 0) + wire.value_size(value)
        size = wire.item_size(key) + sum(
            wire.text_size(self.fields_by_name[name].db_name) + n for name, n in sizes.items()
        )
        if size > wire.MAX_ITEM_BYTES:
            largest = max(sizes, key=sizes.__getitem__)
            raise ItemTooLarge(
                f"{self.object_name}.{largest}: the update writes at least {size} bytes into "
                f"item {self._key_values(key)}; DynamoDB's limit for one item in table "
                f"{self.table_name!r} is {wire.MAX_ITEM_BYTES} bytes (400 KB). Nothing was "
                "sent. Store large payloads elsewhere (e.g. S3) and keep a reference.",
                model=self.object_name,
                field=largest,
            )

    def _key_values(self, item: dict[str, dict[str, Any]]) -> dict[str, Any]:
        return {f.name: wire.decode(item[f.db_name]) for f in self.key_fields if f.db_name in item}

    def _not_unicode(self, item: dict[str, dict[str, Any]]) -> ValidationError:
        """The error for text with a lone surrogate (no UTF-8 form), naming its field."""
        name = next(n for n, v in item.items() if not _encodable({n: v}))
        field = self.fields_by_db_name.get(name)
        label = field.name if field is not None else name
        return ValidationError(
            f"{self.object_name}.{label}: a string in it is not valid Unicode (it holds a lone "
            "surrogate, which has no UTF-8 form); DynamoDB stores only UTF-8 text.",
            model=self.object_name,
            field=label,
        )

    # --- keys

    def key_of(self, values: dict[str, Any]) -> dict[str, dict[str, Any]]:
        """Wire key from Python values by field name; every key field is required."""
        key = {}
        for field in self.key_fields:
            if field.name not in values:
                raise QueryError(
                    f"{self.object_name} key needs {', '.join(f.name for f in self.key_fields)}; "
                    f"{field.name!r} is missing."
                )
            if self.shared is None:
                key[field.db_name] = field.encode_key(
                    values[field.name], self.key_limits[field.name]
                )
        for attribute in self.key_attributes if self.shared is not None else ():
            key[attribute] = {"S": self.render(self.templates[attribute], values)}
        return key

    def held_under_own_key(self, item: dict[str, dict[str, Any]]) -> bool:
        """Whether ``item``'s stored key is the one its fields render. Not so for an item
        whose key was rendered before field values were escaped (``day="mon#am"``): a
        read by another value's key (``day="mon", slot="am#..."``) finds it, and must
        not take it for that value's item."""
        if not self.delimited_key:
            return True
        try:
            values = {f.name: f.decode_slow(item[f.db_name]) for f in self.key_fields}
            key = self.key_of(values)
        except (KeyError, DynamoError):  # a key field missing or unreadable
            return False
        return all(item.get(attribute) == value for attribute, value in key.items())

    def key_from_any(self, key: Any) -> dict[str, dict[str, Any]]:
        """A key given as a dict, a (partition, sort) tuple, a partition value or an instance."""
        if isinstance(key, self.model):
            return self.key_of(key.__dict__)
        if isinstance(key, dict):
            unknown = set(key) - {f.name for f in self.key_fields}
            if unknown:
                raise QueryError(
                    f"{self.object_name} key takes {', '.join(f.name for f in self.key_fields)}, "
                    f"not {', '.join(sorted(unknown))}."
                )
            return self.key_of(key)
        if not isinstance(key, tuple):
            key = (key,)
        if len(key) != len(self.key_fields):
            raise QueryError(
                f"{self.object_name} key is ({', '.join(f.name for f in self.key_fields)}); "
                f"got {key!r}."
            )
        return self.key_of({f.name: v for f, v in zip(self.key_fields, key, strict=True)})

    def key_id(self, item: dict[str, dict[str, Any]]) -> tuple[Any, ...]:
        """A hashable identity of an item's key (numbers compared by value)."""
        out = []
        for name in self.key_attributes:
            ((kind, value),) = item[name].items()
            out.append(wire.parse_number(value) if kind == "N" else value)
        return tuple(out)

    # --- expressions

    def field_for_path(self, path: str) -> tuple[Field, Path]:
        parts = parse_path(path)
        field = self.fields_by_name.get(parts[0])  # type: ignore[arg-type]
        if field is None:
            known = ", ".join(self.fields_by_name)
            raise QueryError(f"{self.object_name} has no field {parts[0]!r} (fields: {known}).")
        return field, parts

    def key_values(self, key: dict[str, dict[str, Any]]) -> dict[str, Any]:
        """A wire key as Python values by field name (by attribute in a shared table)."""
        if self.shared is not None:
            return {name: wire.decode(value) for name, value in key.items()}
        return {f.name: f.decode(key[f.db_name]) for f in self.key_fields}

    def resolve_path(self, path: str) -> Path:
        if path in self.derived:  # a shared table's key attribute (conditions and queries)
            return (path,)
        field, parts = self.field_for_path(path)
        return (field.db_name, *parts[1:])

    def encode_operand(self, path: str, value: Any, kind: str) -> dict[str, Any]:
        """An expression operand in wire form, checked as a stored value would be
        (Unicode text, nesting depth counted from the path it goes to)."""
        if path in self.derived:
            return {"S": value}
        field, parts = self.field_for_path(path)
        name = field.name
        try:
            if kind == "size":
                return {"N": wire.number_text(value)}
            if len(parts) == 2 and isinstance(field, (ListField, MapField)) and field.of:
                field = field.of
            if value is None:
                return {"NULL": True}
            encoded: dict[str, Any] | None
            if len(parts) > 1 and field.name == name:
                encoded = wire.encode(value)
            elif kind == "element":
                encoded = field.encode_element(value)
            else:
                encoded = field.encode(value)
            if encoded is not None:
                wire.value_size(encoded, depth=len(parts))
        except UnicodeEncodeError:
            raise ValidationError(
                f"{self.object_name}.{path}: text with a lone surrogate has no UTF-8 form.",
                model=self.object_name,
                field=name,
            ) from None
        except wire.WireError as exc:
            raise ValidationError(
                f"{self.object_name}.{path}: {exc}.", model=self.object_name, field=name
            ) from None
        if encoded is None:
            raise field.invalid(value, "a non-empty set (DynamoDB stores no empty sets)")
        return encoded

    def compiler(self) -> Compiler:
        return Compiler(resolve=self.resolve_path, encode=self.encode_operand)

    def projection_names(self, names: Iterable[str]) -> list[str]:
        """Field names to project, always with the table's key (needed to save or page)."""
        wanted = list(dict.fromkeys([*(f.name for f in self.key_fields), *names]))
        for name in wanted:
            self.field_for_path(name)
        return wanted


def _encodable(item: dict[str, dict[str, Any]]) -> bool:
    try:
        wire.item_size(item)
    except UnicodeEncodeError:
        return False
    return True
