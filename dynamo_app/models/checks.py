"""The declaration checks of a model: functions that read ``_meta`` and return problems.

As Django's ``Model.check()``, the rules live apart from the description they
judge (:class:`~.options.Options` only records what ``Meta`` and the fields
say). Class creation raises every problem at once (``ModelDefinitionError``);
``manage.py check`` (tag ``dynamo``, ``dynamo_app/checks.py``) runs the same
functions again on the live classes, so a model changed after creation (a
query or index added at runtime, a field swapped in a test) is reported with
a check id that ``SILENCED_SYSTEM_CHECKS`` knows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from django.db import models as orm

from ..tables import index_name_problem
from ..unique import Unique
from . import fields as fields_module
from . import templates
from .declared import DeclaredQuery
from .fields import DateTimeField, Field, VersionField
from .habits import META_HINTS, orm_fields
from .manager import Manager
from .options import META_OPTIONS, STREAM_VIEW_TYPES, Options, Problem, _Index

if TYPE_CHECKING:
    from .base import Model
    from .table import TableOptions

MAX_GLOBAL_INDEXES = 20
MAX_LOCAL_INDEXES = 5
PROJECTIONS = ("ALL", "KEYS_ONLY")


def model_problems(model: type[Model]) -> list[Problem]:
    """Every problem of the model's declaration, in the order they are listed."""
    meta = model._meta
    problems = [
        *meta_option_problems(meta),
        *orm_field_problems(meta),
        *field_problems(meta),
        *key_problems(meta),
        *version_problems(meta),
        *unique_problems(meta),
    ]
    if not meta.abstract:
        problems += [
            *shared_table_problems(meta),
            *index_problems(meta),
            *ttl_problems(meta),
            *stream_problems(meta),
            *declared_query_problems(meta),
        ]
    return problems


def declared_query_problems(meta: Options) -> list[Problem]:
    """Each declared query's own problems, after a name that hides something else."""
    problems: list[Problem] = []
    for query in meta.declared_queries.values():
        clash = "a field" if query.name in meta.fields_by_name else None
        clash = clash or attribute_clash(meta.model, query.name)
        if clash:
            problems.append(
                Problem(
                    "dynamo.E211",
                    f"{query.label()}: the query name clashes with {clash}.",
                    "Rename the query.",
                )
            )
        problems += query.problems()
    return problems


def meta_option_problems(meta: Options) -> list[Problem]:
    """An unknown ``Meta`` option is an error, never a silent no-op."""
    if meta.meta is None:
        return []
    valid = f"Valid options: {', '.join(sorted(META_OPTIONS))}."
    return [
        Problem(
            "dynamo.E101",
            f"{meta.object_name}.Meta has unknown option {name!r}.",
            f"It is a Django ORM option: {META_HINTS[name]}." if name in META_HINTS else valid,
        )
        for name in dir(meta.meta)
        if not name.startswith("_") and name not in META_OPTIONS
    ]


def orm_field_problems(meta: Options) -> list[Problem]:
    """A ``django.db.models`` field in a DynamoDB model would be a plain class
    attribute, never stored: refused, naming the field class to use."""
    return [
        Problem(
            "dynamo.E120",
            f"{meta.object_name}.{name} is a django.db.models.{type(field).__name__}, a field "
            "of Django's ORM: a DynamoDB model neither stores nor validates it.",
            f"Declare it with {field_for(field)}.",
        )
        for name, field in orm_fields(meta.model)
    ]


def field_problems(meta: Options) -> list[Problem]:
    """Stored names taken twice, field options, and names the model class already uses."""
    problems = []
    stored_as: dict[str, Field] = {}
    for field in meta.fields:
        other = stored_as.setdefault(field.db_name, field)
        if other is not field:
            problems.append(
                Problem(
                    "dynamo.E103",
                    f"{meta.object_name}: fields {other.name!r} and {field.name!r} are both "
                    f"stored as attribute {field.db_name!r}.",
                    "Give one of them another db_name.",
                )
            )
    for field in meta.fields:
        for problem in field.option_problems():
            problems.append(Problem("dynamo.E113", f"{field.label}: {problem}"))
    for field in meta.fields:
        clash = attribute_clash(meta.model, field.name)
        if clash:
            problems.append(
                Problem(
                    "dynamo.E114",
                    f"{field.label}: the field name clashes with {clash}, which the field "
                    "would hide on every instance.",
                    f"Rename the field; db_name={field.db_name!r} keeps the stored attribute name.",
                )
            )
    return problems


def key_problems(meta: Options) -> list[Problem]:
    """One partition key, at most one sort key, each of a key type and never null."""
    problems = []
    for field in meta.fields:
        if field.partition_key and field.sort_key:
            problems.append(
                Problem("dynamo.E104", f"{field.label} is both partition_key and sort_key.")
            )
        if field.is_key and field.key_type is None:
            problems.append(
                Problem(
                    "dynamo.E105",
                    f"{field.label} is a key, but {type(field).__name__} is not a DynamoDB key "
                    "type.",
                    "Keys must be stored as a string, number or binary (StringField, "
                    "IntegerField, DecimalField, BinaryField, UUIDField, DateTimeField, "
                    "DateField).",
                )
            )
        if field.is_key and field.null:
            problems.append(
                Problem("dynamo.E106", f"{field.label} is a key and cannot be null=True.")
            )
    partitions = [f for f in meta.fields if f.partition_key]
    sorts = [f for f in meta.fields if f.sort_key]
    if meta.table_declaration is not None or meta.keys_declaration is not None:
        return problems  # keys built by templates: shared_table_problems()
    if not meta.abstract and len(partitions) != 1:
        found = ", ".join(f.name for f in partitions) or "none"
        problems.append(
            Problem(
                "dynamo.E102",
                f"{meta.object_name} must have exactly one field with partition_key=True "
                f"(found: {found}).",
            )
        )
    if len(sorts) > 1:
        problems.append(
            Problem(
                "dynamo.E102",
                f"{meta.object_name} has more than one sort key: "
                f"{', '.join(f.name for f in sorts)}.",
            )
        )
    return problems


# Meta options a model in a shared table takes from its models.Table instead.
TABLE_LEVEL = ("table_name", "indexes", "stream")


def shared_table_problems(meta: Options) -> list[Problem]:
    """``Meta.table`` and ``Meta.keys``: a ``models.Table``, templates that fill its
    key (and fill an index whole or not at all) from fields, that keep sort order,
    and that no other model of the table could render to the same key."""
    if meta.table_declaration is None and meta.keys_declaration is None:
        return []
    shared = meta.shared
    if shared is None or not isinstance(meta.keys_declaration, dict) or not meta.keys_declaration:
        return [
            Problem(
                "dynamo.E116",
                f"{meta.object_name}: a model in a shared table declares both Meta.table (a "
                "models.Table subclass) and Meta.keys (a dict of key attribute to template), "
                f"got table={meta.table_declaration!r}, keys={meta.keys_declaration!r}.",
                'E.g. table = Roster, keys = {"pk": "TEAM#{team_id}", "sk": "PLAYER#{player_id}"}.',
            )
        ]
    problems = [problem for check in SHARED_TABLE_CHECKS for problem in check(meta, shared)]
    return problems or _overlap_problems(meta, shared)


def _table_level_option_problems(meta: Options, shared: TableOptions) -> list[Problem]:
    """The table's own options belong to its ``models.Table``, not to one model of it."""
    return [
        Problem(
            "dynamo.E119",
            f"{meta.object_name}.Meta.{option}: a model in a shared table takes it from "
            f"{shared.label}.",
            f"Declare it on {shared.table.__name__}.Meta.",
        )
        for option in TABLE_LEVEL
        if meta.meta is not None and hasattr(meta.meta, option)
    ]


def _shared_field_problems(meta: Options, shared: TableOptions) -> list[Problem]:
    """No key fields (templates build the keys), and no field stored under an
    attribute the table derives."""
    problems = []
    for field in meta.fields:
        if field.is_key:
            problems.append(
                Problem(
                    "dynamo.E119",
                    f"{field.label}: a model in a shared table has no key fields; Meta.keys "
                    "builds the key attributes from fields.",
                    "Drop partition_key/sort_key and name the field in a template.",
                )
            )
        if field.db_name in meta.derived:
            problems.append(
                Problem(
                    "dynamo.E119",
                    f"{field.label} is stored as {field.db_name!r}, which {shared.label} uses "
                    "for its keys or the entity type.",
                    "Give the field another db_name.",
                )
            )
    return problems


def _keys_entry_problems(meta: Options, shared: TableOptions) -> list[Problem]:
    """Each ``Meta.keys`` entry names a key attribute of the table and holds a string."""
    problems = []
    attributes = shared.key_attributes
    for attribute, text in meta.keys_declaration.items():
        if attribute not in attributes:
            problems.append(
                Problem(
                    "dynamo.E116",
                    f"{meta.object_name}.Meta.keys names {attribute!r}, which is not a key "
                    f"attribute of {shared.label} ({', '.join(attributes)}).",
                )
            )
        elif not isinstance(text, str):
            problems.append(
                Problem(
                    "dynamo.E116", f"{meta.object_name}.Meta.keys[{attribute!r}] is not a string."
                )
            )
    return problems


def _key_template_problems(meta: Options, shared: TableOptions) -> list[Problem]:
    """Each template of a key attribute, judged by the template rules (fields it
    names, sort order kept where the attribute sorts)."""
    table_keys = shared.index_keys(None)
    sorts = {table_keys[1], *(i.sort_key for i in shared.indexes.values())}
    return [
        Problem(check_id, f"{meta.object_name}.{text}")
        for attribute, template in meta.templates.items()
        if attribute in shared.key_attributes
        for check_id, text in templates.key_problems(
            template,
            meta.fields_by_name,
            sort=attribute in sorts,
            table_key=attribute in table_keys,
        )
    ]


def _filled_key_problems(meta: Options, shared: TableOptions) -> list[Problem]:
    """The table's key filled whole, and each index's whole or not at all: a half
    key is an item DynamoDB refuses, or one the index never shows."""
    problems = []
    table_keys = shared.index_keys(None)
    for index in (None, *shared.indexes):
        keys = [a for a in shared.index_keys(index) if a is not None]
        if index is not None:  # a local index's partition key is the table's
            keys = [a for a in keys if a not in table_keys or a == keys[-1]]
        filled = [a for a in keys if a in meta.templates]
        if (index is None or filled) and filled != keys:
            where = f"index {index!r}" if index else "the table"
            problems.append(
                Problem(
                    "dynamo.E116",
                    f"{meta.object_name}.Meta.keys fills {', '.join(filled) or 'nothing'} of "
                    f"{where}'s key ({', '.join(keys)}): no template fills "
                    f"{', '.join(set(keys) - set(filled))}.",
                    "Give a template for each key attribute of the table, and for an index "
                    "either all or none.",
                )
            )
    return problems


def _shared_ttl_problems(meta: Options, shared: TableOptions) -> list[Problem]:
    """A model's TTL field is stored under the table's one TTL attribute."""
    if meta.ttl_name is None or meta.ttl is None or meta.ttl.db_name == shared.ttl:
        return []
    return [
        Problem(
            "dynamo.E119",
            f"{meta.object_name}.Meta.ttl: {meta.ttl.label} is stored as {meta.ttl.db_name!r}, "
            f"but {shared.label}'s TTL attribute is {shared.ttl!r}.",
            "Set the table's Meta.ttl, and db_name on the field to match it.",
        )
    ]


# The checks of a model in a shared table, in the order their problems are listed;
# the overlap with the table's other models is judged only when these all pass.
SHARED_TABLE_CHECKS = (
    _table_level_option_problems,
    _shared_field_problems,
    _keys_entry_problems,
    _key_template_problems,
    _filled_key_problems,
    _shared_ttl_problems,
)


def _overlap_problems(meta: Options, shared: TableOptions) -> list[Problem]:
    """Two models of one table whose templates could render the same key (of the
    table or an index they both fill) would overwrite, or read, each other's items."""
    problems = []
    for entity, other in shared.models.items():
        theirs = other._meta
        if theirs.label == meta.label:
            continue
        if entity == meta.entity:
            problems.append(
                Problem(
                    "dynamo.E117",
                    f"{meta.object_name}: entity name {entity!r} is taken in {shared.label} "
                    f"by {theirs.label}.",
                    "Set Meta.entity to another name.",
                )
            )
        for index in (None, *shared.indexes):
            keys = [a for a in shared.index_keys(index) if a is not None]
            if not all(a in meta.templates and a in theirs.templates for a in keys):
                continue
            mine = [meta.templates[a] for a in keys]
            if all(
                t.can_share_keys_with(theirs.templates[a]) for t, a in zip(mine, keys, strict=True)
            ):
                where = f"index {index!r}" if index else "the table"
                texts = " / ".join(t.text for t in mine)
                problems.append(
                    Problem(
                        "dynamo.E117",
                        f"{meta.object_name} ({texts}) and {theirs.label} could write the same "
                        f"key of {where} in {shared.label}: neither's literal prefix tells "
                        "them apart.",
                        "Start the sort key template with a prefix of its own (e.g. "
                        f"'{meta.entity.upper()}#').",
                    )
                )
    return problems


def version_problems(meta: Options) -> list[Problem]:
    versions = [f for f in meta.fields if isinstance(f, VersionField)]
    if len(versions) > 1:
        return [
            Problem(
                "dynamo.E110",
                f"{meta.object_name} has more than one VersionField: "
                f"{', '.join(f.name for f in versions)}.",
            )
        ]
    return []


def unique_problems(meta: Options) -> list[Problem]:
    """``Meta.unique`` holds ``Unique`` entries over fields of a key type, each named once."""
    problems = []
    bound = iter(meta.unique)
    for declared in meta.unique_declarations:
        if not isinstance(declared, Unique):
            problems.append(
                Problem(
                    "dynamo.E111",
                    f"{meta.object_name}.Meta.unique takes models.Unique(...) entries, got "
                    f"{declared!r}.",
                )
            )
            continue
        for problem in next(bound).problems():
            problems.append(Problem("dynamo.E112", f"{meta.object_name}: {problem}"))
    names = [c.name for c in meta.unique]
    for name in {n for n in names if names.count(n) > 1}:
        problems.append(
            Problem(
                "dynamo.E112",
                f"{meta.object_name}.Meta.unique declares {name!r} twice; give one a name=.",
            )
        )
    return problems


def index_problems(meta: Options) -> list[Problem]:
    """``Meta.indexes``: valid, distinct names, keys that are fields of a key type,
    a known projection, and no more indexes than DynamoDB allows."""
    problems = []
    counts = {"global": 0, "local": 0}
    names: set[str] = set()
    name = meta.object_name
    for index in meta.index_declarations:
        if not isinstance(index, _Index):
            problems.append(
                Problem(
                    "dynamo.E107",
                    f"{name}.Meta.indexes holds {index!r}; use models.GlobalIndex "
                    "or models.LocalIndex.",
                )
            )
            continue
        problem = index_name_problem(index.name)
        if problem or index.name in names:
            problems.append(
                Problem(
                    "dynamo.E107",
                    f"{name}: index name {index.name!r} {problem or 'is declared twice'}.",
                )
            )
            continue
        names.add(index.name)
        counts[index.kind] += 1
        if index.kind == "local" and meta.sort_key is None:
            problems.append(
                Problem(
                    "dynamo.E107",
                    f"{name}: local index {index.name!r} needs a table with a sort key.",
                    "Declare a GlobalIndex instead.",
                )
            )
        if index.kind == "global":
            problems += _index_key_problems(meta, index, "partition_key", index.partition_key)
        problems += _index_key_problems(meta, index, "sort_key", index.sort_key)
        if isinstance(index.projection, tuple):
            for field_name in index.projection:
                if field_name not in meta.fields_by_name:
                    problems.append(
                        Problem(
                            "dynamo.E108",
                            f"{name}: index {index.name!r} projects {field_name!r}, "
                            "which is not a field of the model.",
                        )
                    )
        elif index.projection not in PROJECTIONS:
            problems.append(
                Problem(
                    "dynamo.E107",
                    f"{name}: index {index.name!r} has projection {index.projection!r}.",
                    'Use "ALL", "KEYS_ONLY" or a list of field names.',
                )
            )
    if counts["global"] > MAX_GLOBAL_INDEXES or counts["local"] > MAX_LOCAL_INDEXES:
        problems.append(
            Problem(
                "dynamo.E107",
                f"{name} declares {counts['global']} global and {counts['local']} local "
                f"indexes; DynamoDB allows {MAX_GLOBAL_INDEXES} and {MAX_LOCAL_INDEXES}.",
            )
        )
    return problems


def _index_key_problems(
    meta: Options, index: _Index, role: str, field_name: str | None
) -> list[Problem]:
    if field_name is None:
        return []
    field = meta.fields_by_name.get(field_name)
    if field is None:
        return [
            Problem(
                "dynamo.E108",
                f"{meta.object_name}: index {index.name!r} has {role} {field_name!r}, which is "
                "not a field of the model.",
            )
        ]
    if field.key_type is None:
        return [
            Problem(
                "dynamo.E108",
                f"{meta.object_name}: index {index.name!r} has {role} {field_name!r}, a "
                f"{type(field).__name__}, which is not a DynamoDB key type (S, N or B).",
            )
        ]
    return []


def ttl_problems(meta: Options) -> list[Problem]:
    """``Meta.ttl`` names a ``DateTimeField(epoch=True)``: DynamoDB's TTL reads seconds."""
    if meta.ttl_name is None:
        return []
    field = meta.fields_by_name.get(meta.ttl_name)
    if isinstance(field, DateTimeField) and field.epoch:
        return []
    return [
        Problem(
            "dynamo.E109",
            f"{meta.object_name}.Meta.ttl = {meta.ttl_name!r} must name a "
            "DateTimeField(epoch=True) of the model.",
            "DynamoDB's TTL reads a number of seconds since 1970.",
        )
    ]


def stream_problems(meta: Options) -> list[Problem]:
    """``Meta.stream`` is one of DynamoDB's stream view types, spelt in lower case."""
    if meta.stream is None or meta.stream in STREAM_VIEW_TYPES:
        return []
    return [
        Problem(
            "dynamo.E115",
            f"{meta.object_name}.Meta.stream = {meta.stream!r} is not a stream view type.",
            f"Use one of {', '.join(map(repr, STREAM_VIEW_TYPES))} (what each change record "
            "carries: the key only, the item after, before, or both), or None for no stream.",
        )
    ]


def attribute_clash(model: type, name: str) -> str | None:
    """What ``name`` already is on ``model``'s bases (``"Model.update (a method)"``),
    or None when it is free. A field or declared query of that name would hide it
    on every instance (``obj.update(...)`` would call the field's value), so the
    names are read from the classes themselves, not kept in a list. Another field
    or declared query of that name is no clash: a subclass may declare it again."""
    for base in model.__mro__[1:]:
        if name in vars(base):
            value = vars(base)[name]
            if isinstance(value, (Field, DeclaredQuery)):
                return None
            return f"{base.__qualname__}.{name} ({_kind(value)})"
        if _is_root_model(base) and name in vars(base).get("__annotations__", {}):
            return f"{base.__qualname__}.{name} (every model has it)"
    return None


def _is_root_model(cls: type) -> bool:
    """Whether ``cls`` is ``Model`` itself: made by a model metaclass, from no model."""
    metaclass = type(cls)
    return metaclass is not type and not any(isinstance(b, metaclass) for b in cls.__bases__)


def _kind(value: Any) -> str:
    if isinstance(value, property):
        return "a property"
    if isinstance(value, Manager):
        return "a manager"
    if isinstance(value, type):
        return "a class"
    if callable(value) or isinstance(value, (classmethod, staticmethod)):
        return "a method"
    return "an attribute"


def field_for(orm_field: orm.Field[Any, Any]) -> str:
    """The ``dynamo_app.models`` field class that stores what ``orm_field`` would."""
    kind = type(orm_field).__name__
    if isinstance(orm_field, orm.CharField | orm.TextField):
        kind = "StringField"
    elif isinstance(orm_field, orm.IntegerField):
        kind = "IntegerField"
    elif not isinstance(getattr(fields_module, kind, None), type):
        return "a field of dynamo_app.models (StringField, IntegerField, DateTimeField, ...)"
    return f"dynamo_app.models.{kind}"
