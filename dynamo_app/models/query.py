"""Queries: ``Model.objects.filter(...)`` is a DynamoDB Query, ``scan()`` a Scan.

A QuerySet is lazy and immutable (each method returns a new one). It sends
nothing until iterated, paged or counted, and then one request per page:

* ``filter(**lookups)`` - the key condition: partition-key equality plus at
  most one sort-key lookup (exact, lt, lte, gt, gte, between, begins_with).
* ``where(*conditions, **lookups)`` - a FilterExpression, applied by DynamoDB
  *after* the read: it saves transfer, not read capacity.
* ``order_by("-at")``, ``limit(n)``, ``only(...)``, ``consistent()``,
  ``using_index(name)``, and for a scan ``segment(i, n)`` (a parallel scan's slice).

Iteration fetches page after page lazily (constant memory) and does not
cache: iterating twice queries twice. ``page()`` makes exactly one request
and returns a cursor for the next one.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from django.utils.translation import ngettext

from ..client.handle import get_handle
from ..exceptions import QueryError
from ..expressions import (
    KEY_LOOKUPS,
    LOOKUPS,
    Attr,
    Condition,
    all_of,
    lookup_condition,
    split_lookup,
)
from . import cursors, templates
from .aio import in_thread, next_in_thread
from .habits import orm_method, slicing
from .keyrules import KeyProblem, Term, filter_problems, key_problems
from .options import TemplateKeySchema

if TYPE_CHECKING:
    from .base import Model
    from .options import KeySchema

M = TypeVar("M", bound="Model")
logger = logging.getLogger("dynamo_app")

MAX_LIMIT = 2**31 - 1  # a request's Limit is a 32-bit Integer in DynamoDB's API
MAX_SEGMENTS = 1_000_000  # a parallel scan's TotalSegments


@dataclass
class Page(Generic[M]):
    """One page of results. ``next_cursor`` is None on the last page; a cursor can
    also lead to an empty page (DynamoDB cannot always tell the end in advance)."""

    items: list[M]
    count: int
    scanned_count: int
    next_cursor: str | None = None

    def __iter__(self) -> Iterator[M]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


def own_items(model: type[Model], items: list[dict[str, Any]], read: str) -> list[dict[str, Any]]:
    """The items of ``model`` among those a read returned: in a shared table another
    entity's item (in a key range, or a PartiQL statement's WHERE) would be decoded
    wrong or not at all, so it is skipped, with a WARNING naming the ``read``. One
    rule for queries, scans and PartiQL; an item whose entity type was not
    projected is kept."""
    meta = model._meta
    if meta.shared is None:
        return items
    kind, own = meta.shared.type_attribute, {"S": meta.entity}
    kept = [item for item in items if item.get(kind, own) == own]
    if len(kept) < len(items):
        others = sorted({str(i[kind].get("S", i[kind])) for i in items if i.get(kind, own) != own})
        skipped = len(items) - len(kept)
        logger.warning(
            ngettext(
                "%(model)s %(read)s read %(n)d item of another entity type (%(types)s), "
                "written by other code: skipped.",
                "%(model)s %(read)s read %(n)d items of other entity types (%(types)s), "
                "written by other code: skipped.",
                skipped,
            ),
            {"model": meta.object_name, "read": read, "n": skipped, "types": ", ".join(others)},
        )
    return kept


class QuerySet(Generic[M]):
    def __init__(self, model: type[M], *, scan: bool = False) -> None:
        self.model = model
        self._scan = scan
        self._key: list[tuple[str, str, Any]] = []
        self._where: list[Condition] = []
        self._index: str | None = None
        self._forward = True
        self._order_field: str | None = None
        self._limit: int | None = None
        self._only: tuple[str, ...] | None = None
        self._consistent = False
        self._segment: tuple[int, int] | None = None

    def __repr__(self) -> str:
        kind = "scan" if self._scan else "query"
        return f"<QuerySet {kind} of {self.model.__name__}>"

    def _clone(self) -> QuerySet[M]:
        clone = copy.copy(self)
        clone._key = list(self._key)
        clone._where = list(self._where)
        return clone

    # --- building

    def filter(self, **lookups: Any) -> QuerySet[M]:
        """Key conditions (the KeyConditionExpression); see the module docstring."""
        if self._scan:
            raise QueryError(
                "scan() reads the whole table: use .where(...) to filter what it returns."
            )
        clone = self._clone()
        for key, value in lookups.items():
            path, lookup = self._lookup(key, "filter")
            clone._key.append((path, lookup, value))
        clone._check_key_terms()
        return clone

    def where(self, *conditions: Condition, **lookups: Any) -> QuerySet[M]:
        """Filter after the read (a FilterExpression): ``where(Attr("n") > 3, status="open")``.

        DynamoDB still reads (and bills) every item the key condition selects.
        """
        clone = self._clone()
        for condition in conditions:
            if not isinstance(condition, Condition):
                raise TypeError(f"where() takes conditions (models.Attr(...)), got {condition!r}")
            clone._where.append(condition)
        for key, value in lookups.items():
            self._lookup(key, "where")
            clone._where.append(lookup_condition(key, value))
        all_of(clone._where).compile(self.model._meta.compiler())  # type: ignore[union-attr]
        return clone

    def using_index(self, name: str) -> QuerySet[M]:
        self.model._meta.key_schema(name)
        clone = self._clone()
        clone._index = name
        return clone

    def order_by(self, *field_names: str) -> QuerySet[M]:
        """Order by the sort key: ``"at"`` ascending, ``"-at"`` descending."""
        schema = self._schema()
        sort = ", ".join(f.name for f in schema.sort_fields)
        if len(field_names) != 1 or not isinstance(field_names[0], str):
            raise QueryError(
                f"{self.model.__name__}: order_by() takes one field, the sort key of "
                f"{schema.where} ({sort or 'it has none'}), got {field_names!r}: DynamoDB "
                "orders a query by the sort key only. Sort by other fields in Python, or "
                "declare an index whose sort key is the field."
            )
        clone = self._clone()
        clone._forward = not field_names[0].startswith("-")
        clone._order_field = field_names[0].lstrip("-")
        if not clone._may_change_schema(clone._order_field):
            clone._check_order(schema)
        return clone

    def limit(self, n: int) -> QuerySet[M]:
        """Return at most ``n`` items in total (across pages; each request asks for
        what is left, up to DynamoDB's largest ``Limit``)."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise QueryError(f"limit() takes a positive integer, got {n!r}.")
        clone = self._clone()
        clone._limit = n
        return clone

    def only(self, *field_names: str) -> QuerySet[M]:
        """Read only these attributes (and the key). Instances read this way refuse a
        whole-item ``save()``, which would erase the attributes not read."""
        self.model._meta.projection_names(field_names)
        clone = self._clone()
        clone._only = field_names
        return clone

    def consistent(self, value: bool = True) -> QuerySet[M]:
        """Strongly consistent reads (not available on global indexes)."""
        clone = self._clone()
        clone._consistent = value
        return clone

    def segment(self, segment: int, total_segments: int) -> QuerySet[M]:
        """One slice of a parallel scan: DynamoDB splits the table into
        ``total_segments`` disjoint parts, and this reads part ``segment``
        (0-based). The parts together read every item once; each can run in its
        own thread, process or machine."""
        if not self._scan:
            raise QueryError("segment() slices a scan: Model.objects.scan().segment(i, n).")
        valid = all(type(v) is int for v in (segment, total_segments))
        if not valid or not 0 <= segment < total_segments <= MAX_SEGMENTS:
            raise QueryError(
                f"segment(segment, total_segments) takes 0 <= segment < total_segments <= "
                f"{MAX_SEGMENTS} (DynamoDB's limits), got ({segment!r}, {total_segments!r})."
            )
        clone = self._clone()
        clone._segment = (segment, total_segments)
        return clone

    def _as_scan(self) -> QuerySet[M]:
        """This queryset read as a Scan, keeping its ``where()``, index, ``only()``
        and consistency: what ``Manager.scan()`` makes of ``get_queryset()``."""
        if self._key or self._order_field is not None:
            raise QueryError(
                f"{self.model.__name__}: scan() reads the whole table, but get_queryset() "
                "returns a query with key conditions (filter() or order_by()), which a scan "
                "cannot keep. Give scan() a get_queryset() built with where(), or override "
                "scan() in the manager."
            )
        clone = self._clone()
        clone._scan = True
        return clone

    # --- checks made where the query is built (the rest when it is sent)

    def _lookup(self, key: str, method: str) -> tuple[str, str]:
        """``(path, lookup)`` of ``at__gte``; an unknown lookup, or one ``filter()``
        cannot take, is a ``QueryError`` naming the ones it can."""
        path, lookup = split_lookup(key)
        meta = self.model._meta
        if lookup == "exact" and "__" in key and key not in meta.fields_by_name:
            path, _, lookup = key.rpartition("__")
        meta.field_for_path(path)
        allowed = KEY_LOOKUPS if method == "filter" else tuple(LOOKUPS)
        if lookup not in allowed:
            hint = " Filter after the read with where()." if lookup in LOOKUPS else ""
            raise QueryError(
                f"{meta.object_name}: {key}: the lookup {lookup!r} is not supported by "
                f"{method}(); it takes {', '.join(allowed)}.{hint}"
            )
        return path, lookup

    def _may_change_schema(self, name: str) -> bool:
        """Whether a later ``using_index()`` could make ``name`` a key (so a
        problem with it is reported when the query is sent, not now)."""
        return self._index is None and any(
            name in (f.name for f in schema.fields) for schema in self.model._meta.indexes.values()
        )

    def _check_key_terms(self) -> None:
        """The key rules ``filter()`` can judge already (a missing partition key
        waits: another ``filter()`` may add it)."""
        meta = self.model._meta
        terms = []
        for path, lookup, _ in self._key:
            if not self._may_change_schema(path):
                text = path if lookup == "exact" else f"{path}__{lookup}"
                terms.append(Term(text, path, meta.field_for_path(path)[0], lookup))
        problems = key_problems(meta, self._schema(), terms)
        self._raise_first([p for p in problems if p.id != "dynamo.E208"])

    def _check_order(self, schema: KeySchema) -> None:
        names = [f.name for f in schema.sort_fields]
        if self._order_field not in names:
            raise QueryError(
                f"{self.model._meta.object_name}: order_by() takes the sort key of "
                f"{schema.where} ({', '.join(names) or 'it has none'}), not "
                f"{self._order_field!r}: DynamoDB orders a query by the sort key only."
            )

    def __bool__(self) -> bool:
        raise TypeError(
            f"A QuerySet of {self.model.__name__} has no truth value: finding one would "
            "send a request, and iterating it afterwards would send it again (querysets "
            "do not cache). Use .exists() (one request, Limit=1), or .first()."
        )

    def __getitem__(self, key: Any) -> Any:
        raise slicing(self.model)

    if not TYPE_CHECKING:  # hidden from type checkers, which would accept any attribute

        def __getattr__(self, name: str) -> Any:
            """``.values()``, ``.exclude()``: Django queryset methods, refused with the
            methods a DynamoDB query has."""
            error = orm_method(self.__dict__.get("model"), "query", name)
            if error is None:
                raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
            raise error

    # --- compiling

    def _schema(self) -> KeySchema:
        return self.model._meta.key_schema(self._index)

    def _key_condition(self, schema: KeySchema) -> tuple[Condition, Condition | None]:
        """The key condition, and (in a shared table) a filter it needs to be exact."""
        meta = self.model._meta
        terms = []
        for path, lookup, _ in self._key:
            field = meta.field_for_path(path)[0]
            text = path if lookup == "exact" else f"{path}__{lookup}"
            terms.append(Term(text, path, field, lookup))
        self._raise_first(key_problems(meta, schema, terms))
        if isinstance(schema, TemplateKeySchema):
            return templates.key_condition(meta, schema, self._key)
        for term, (_, _, value) in zip(terms, self._key, strict=True):
            if term.field is schema.partition:
                # DynamoDB's key rules (not empty, size limit), before sending
                term.field.encode_key(value, meta.key_limits[term.field.name])
        conditions = [LOOKUPS[lookup](Attr(path), value) for path, lookup, value in self._key]
        return all_of(conditions), None  # type: ignore[return-value]

    def _check_filter_paths(self, where: Condition, schema: KeySchema) -> None:
        meta = self.model._meta
        terms = [Term(path, path, meta.field_for_path(path)[0], "") for path in where.paths()]
        self._raise_first(filter_problems(schema, terms))

    def _raise_first(self, problems: list[KeyProblem]) -> None:
        """The first broken key rule, raised before anything is sent."""
        if problems:
            first = problems[0]
            said = f"{first.term.text}: " if first.term is not None else ""
            raise QueryError(
                f"{self.model._meta.object_name}: {said}{first.message} {first.hint}".strip()
            )

    def _params(self) -> tuple[dict[str, Any], str]:
        """Request parameters (without paging) and the query's identity (see cursors)."""
        meta = self.model._meta
        schema = self._schema()
        c = meta.compiler()
        params: dict[str, Any] = {"TableName": get_handle().table_name(meta.table_name)}
        parts: dict[str, Any] = {"model": meta.label, "index": self._index, "scan": self._scan}
        if self._index:
            params["IndexName"] = self._index
        if self._consistent:
            if schema.kind == "global":
                raise QueryError(
                    f"{meta.object_name}: index {self._index!r} is global; DynamoDB reads global "
                    "indexes only eventually consistently. Drop .consistent()."
                )
            params["ConsistentRead"] = True
        bound = None
        if not self._scan:
            condition, bound = self._key_condition(schema)
            params["KeyConditionExpression"] = condition.compile(c)
            if self._order_field:
                self._check_order(schema)
                params["ScanIndexForward"] = self._forward
        else:
            if self._order_field:
                raise QueryError(
                    "scan() returns items in no defined order; order_by() needs a query."
                )
            if meta.shared is not None:  # a shared table holds other models' items too
                bound = Attr(meta.shared.type_attribute) == meta.entity
        if self._segment is not None:
            params["Segment"], params["TotalSegments"] = self._segment
        where = all_of(self._where)
        if where is not None and not self._scan:
            self._check_filter_paths(where, schema)
        where = all_of([c for c in (bound, where) if c is not None])
        if where is not None:
            params["FilterExpression"] = where.compile(c)
        if self._only is not None:
            params["ProjectionExpression"] = c.projection(meta.projection_names(self._only))
        parts.update(
            (k, v) for k, v in params.items() if k not in ("TableName", "ProjectionExpression")
        )
        params.update(c.params())
        parts.update(c.params())
        return params, cursors.identity(parts)

    @property
    def _partial(self) -> bool:
        return self._only is not None or self._schema().projection != "ALL"

    def _key_names(self) -> set[str]:
        return {*self.model._meta.key_attributes, *self._schema().attributes}

    # --- running

    def _call(self, params: dict[str, Any]) -> dict[str, Any]:
        return get_handle().call("scan" if self._scan else "query", cacheable=True, **params)

    def _pages(self, select_count: bool = False) -> Iterator[dict[str, Any]]:
        params, _ = self._params()
        if select_count:
            params["Select"] = "COUNT"
        remaining = self._limit
        while True:
            if remaining is not None:
                params["Limit"] = min(remaining, MAX_LIMIT)
            response = self._call(params)
            yield response
            if remaining is not None:
                remaining -= response["Count"]
                if remaining <= 0:
                    return
            last = response.get("LastEvaluatedKey")
            if not last:
                return
            params["ExclusiveStartKey"] = last

    def _own(self, items: list[dict[str, Any]]) -> list[dict[str, Any]]:
        if self.model._meta.shared is None:
            return items
        read = f"query of table {self.model._meta.table_name!r}"
        if self._index:
            read += f" (index {self._index!r})"
        return own_items(self.model, items, read)

    def __iter__(self) -> Iterator[M]:
        decode = self.model._meta.decode
        partial = self._partial
        for response in self._pages():
            # pop: no reference to this page's items is left while the next page
            # is fetched, so iteration holds one page at a time, not two.
            for item in self._own(response.pop("Items")):
                yield decode(item, partial=partial)  # type: ignore[misc]

    async def __aiter__(self) -> AsyncIterator[M]:
        """``async for``: as ``for``, lazily page by page, each page fetched in a worker thread."""
        decode = self.model._meta.decode
        partial = self._partial
        pages = self._pages()
        while (response := await next_in_thread(pages)) is not None:
            for item in self._own(response.pop("Items")):
                yield decode(item, partial=partial)  # type: ignore[misc]

    def count(self) -> int:
        """How many items match (Select=COUNT, every page; filters applied)."""
        return sum(response["Count"] for response in self._pages(select_count=True))

    def first(self) -> M | None:
        """The first matching item, or None."""
        return next(iter(self.limit(1)), None)

    def exists(self) -> bool:
        return self.first() is not None

    def page(self, size: int = 25, cursor: str | None = None) -> Page[M]:
        """Exactly one request: up to ``size`` items and the cursor of the next page."""
        if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= MAX_LIMIT:
            raise QueryError(
                f"page(size=...) takes an integer from 1 to {MAX_LIMIT} (DynamoDB's Limit), "
                f"got {size!r}."
            )
        params, query = self._params()
        params["Limit"] = min(size, self._limit) if self._limit else size
        if cursor is not None:
            params["ExclusiveStartKey"] = cursors.decode(cursor, query, self._key_names())
        response = self._call(params)
        decode = self.model._meta.decode
        partial = self._partial
        last = response.get("LastEvaluatedKey")
        return Page(
            items=[decode(item, partial=partial) for item in self._own(response["Items"])],  # type: ignore[misc]
            count=response["Count"],
            scanned_count=response.get("ScannedCount", response["Count"]),
            next_cursor=cursors.encode(last, query) if last else None,
        )

    def cursor_after(self, obj: M) -> str:
        """The cursor of this query's page that starts right after ``obj`` (what a
        page ending at it hands out), with no request. Reversed with
        ``order_by("-...")``, it pages backwards from a page's first item: the
        "previous page" of keyset pagination."""
        meta = self.model._meta
        schema = self._schema()
        values = obj.__dict__
        if isinstance(schema, TemplateKeySchema):  # the stored key attributes, rendered
            last = meta.key_of(values)
            for template in (schema.partition_template, schema.sort_template):
                if template is not None:
                    last[template.attribute] = {"S": meta.render(template, values)}
        else:
            fields = {*meta.key_fields, *schema.fields}
            last = {
                f.db_name: f.encode_key(values[f.name], meta.key_limits[f.name]) for f in fields
            }
        return cursors.encode(last, self._params()[1])

    # --- async twins: the same calls, run in a worker thread (see aio.py)

    acount = in_thread(count)
    afirst = in_thread(first)
    aexists = in_thread(exists)
    apage = in_thread(page)
