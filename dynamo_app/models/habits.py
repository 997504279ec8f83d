"""What a Django developer types first, and the DynamoDB way to say it.

Each Django ORM habit that a DynamoDB model has no equivalent for is refused
where it is written (a class definition, an attribute lookup) with a message
naming what to write instead, rather than a bare ``AttributeError`` later.
"""

from __future__ import annotations

import difflib
import inspect
from typing import TYPE_CHECKING, Any

from django.db import models as orm
from django.db.models.query import QuerySet as OrmQuerySet

from ..exceptions import NotSupported

if TYPE_CHECKING:
    from .base import Model
    from .options import Options

# Django ``Meta`` options a DynamoDB model does not take, and what does their job.
META_HINTS = {
    "ordering": "a query returns items in sort-key order: make the order the sort key, "
    "and reverse it with order_by('-<sort key>')",
    "unique_together": "declare Meta.unique = [Unique('a', 'b')], or "
    "Unique('b', within='a') for a value unique within a partition "
    "(from dynamo_app.models import Unique)",
    "constraints": "declare Meta.unique = [Unique(...)] (from dynamo_app.models import Unique); "
    "DynamoDB checks no other constraint",
    "index_together": "declare Meta.indexes = [GlobalIndex(...)]",
    "db_table": "name the table with Meta.table_name",
}


# Django's bulk writes of a queryset, and the per-item write that does their job.
WRITES_PER_ITEM = {
    "update": "for obj in query: obj.update(set={...}), one UpdateItem each",
    "delete": "for obj in query: obj.delete(), one DeleteItem each; "
    "or Model.objects.bulk_delete(query), a BatchWriteItem per 25",
}


# Django field options a DynamoDB field does not take, and what does their job.
FIELD_OPTION_HINTS = {
    "unique": "declare Meta.unique = [Unique('<field>')] (from dynamo_app.models import "
    "Unique): DynamoDB keeps a value unique by a lock item written in the same transaction",
    "primary_key": "the key is partition_key=True, plus sort_key=True on a second field for "
    "a two-part key",
    "db_index": "declare Meta.indexes = [GlobalIndex(...)] (from dynamo_app.models import "
    "GlobalIndex)",
    "db_column": "db_name='...' names the stored attribute",
    "db_default": "default=... (DynamoDB has no server-side defaults)",
    "error_messages": "a form's messages are ModelForm Meta.error_messages",
    "unique_for_date": "declare Meta.unique = [Unique('<field>', within=...)]",
    "on_delete": "DynamoDB has no foreign keys: store the other item's key in a StringField",
}


def option_problem(field_class: type, names: list[str]) -> str:
    """What to write instead of the keyword options ``field_class()`` does not
    take: a Django habit's hint, else the nearest option it has."""
    options = sorted(
        {
            name
            for klass in field_class.__mro__
            if "__init__" in vars(klass)
            for name, parameter in inspect.signature(vars(klass)["__init__"]).parameters.items()
            if parameter.kind is parameter.KEYWORD_ONLY
        }
    )
    label = field_class.__name__
    parts = []
    for name in names:
        if name in FIELD_OPTION_HINTS:
            parts.append(f"{label}() takes no {name}=: {FIELD_OPTION_HINTS[name]}.")
            continue
        near = difflib.get_close_matches(name, options, n=1)
        guess = f" Did you mean {near[0]}=?" if near else ""
        parts.append(f"{label}() takes no {name}=.{guess} Its options: {', '.join(options)}.")
    return " ".join(parts)


def _partition(model: type[Model]) -> str:
    return ", ".join(f"{f.name}=..." for f in model._meta.table().partition_fields)


def orm_method(
    model: type[Model] | None, owner: str, name: str, *, query_has: bool = False
) -> NotSupported | None:
    """The error for ``objects.<name>`` or ``<query>.<name>`` when ``name`` is a
    Django queryset method (None for any other name); ``query_has``: this app's
    queries have the method, so the fix is to start a query."""
    if name.startswith("_") or not hasattr(OrmQuerySet, name) or model is None:
        return None
    label = model.__name__
    query = f"{label}.objects.filter({_partition(model)})"
    if name == "all":
        fix = (
            f"DynamoDB reads a table one partition at a time: {query} is one Query per "
            f"page, and {label}.objects.scan() reads every item of the table (and is "
            "billed for all of them)"
        )
    elif name == "count" and owner == "objects":
        fix = (
            f"DynamoDB keeps no count of a table: {query}.count() counts one partition, "
            f"{label}.objects.scan().count() reads the whole table to count it"
        )
    elif name in WRITES_PER_ITEM:
        fix = (
            "queries only read: DynamoDB writes one item per request, so write each item "
            f"it returns ({WRITES_PER_ITEM[name]}), or several in one dynamo_app.transaction()"
        )
    elif query_has:
        fix = f"it is a method of a query: {query}.{name}(...), or {label}.objects.scan().{name}()"
    else:
        fix = (
            "it is a Django ORM queryset method; a DynamoDB query has filter(), where(), "
            "order_by() on the sort key, limit(), only(), first(), exists(), count() and "
            "page() (see docs/reference/models.md, Queries)"
        )
    where = f"{label}.objects" if owner == "objects" else f"A query of {label}"
    return NotSupported(f"{where} has no {name}(): {fix}.")


def slicing(model: type[Model]) -> TypeError:
    """``qs[20:30]``: DynamoDB has no offsets; pages continue from a cursor."""
    return TypeError(
        f"A QuerySet of {model.__name__} cannot be indexed or sliced: DynamoDB has no "
        "offsets, a page continues from where the last one ended. Use .first() or "
        ".limit(n) for the first items, and .page(size, cursor) for a page: each page "
        "returns next_cursor, the cursor of the page after it."
    )


def orm_form(meta: Options) -> NotSupported:
    """``django.forms.ModelForm`` reads ``_meta.private_fields`` first: the point
    where a form built for the ORM meets a DynamoDB model."""
    return NotSupported(
        f"{meta.object_name} is a DynamoDB model, and django.forms.ModelForm builds "
        "forms for Django ORM models: subclass dynamo_app.forms.ModelForm instead "
        "(the same Meta: model, fields, exclude, labels, widgets, error_messages)."
    )


def orm_fields(model: type) -> list[tuple[str, orm.Field[Any, Any]]]:
    """The ``django.db.models`` fields declared on a DynamoDB model class: never
    stored, so refused when the class is created."""
    return [(name, value) for name, value in vars(model).items() if isinstance(value, orm.Field)]
