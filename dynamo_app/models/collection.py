"""Item collections: models of one ``models.Table`` that share a partition, read together.

``Roster.collection("team", Team, Player, TeamEvent)`` declares that the
three build the same partition key (the same template), so a team, its
players and its events live in one partition. ``page(team_id=...)`` is one
Query: the partition, bounded to the sort-key range the members' prefixes
span, each item decoded into its model by the table's entity-type attribute,
in sort-key order, paged with the same signed cursors as a model's queries.

An item whose entity type is no member's (another model in that range, or a
writer that does not use these models) is never dropped: it is kept in
``Page.unknown`` as stored, and logged.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from django.utils.translation import ngettext

from ..client import wire
from ..client.handle import get_handle
from ..conf import MASK
from ..exceptions import ModelDefinitionError, QueryError
from ..expressions import Attr, Compiler, all_of
from . import cursors
from .aio import in_thread
from .query import MAX_LIMIT
from .templates import TOP, KeyTemplate

if TYPE_CHECKING:
    from .base import Model
    from .table import TableOptions

logger = logging.getLogger("dynamo_app.models")
M = TypeVar("M", bound="Model")


@dataclass
class CollectionPage:
    """One Query's items, in sort-key order, each an instance of its model.
    ``unknown``: items of no member model, as stored (wire form)."""

    items: list[Model]
    unknown: list[dict[str, Any]] = field(default_factory=list)
    count: int = 0
    scanned_count: int = 0
    next_cursor: str | None = None

    def of(self, model: type[M]) -> list[M]:
        """The items of one model, in the page's order."""
        return [item for item in self.items if isinstance(item, model)]

    def __iter__(self) -> Iterator[Model]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


class Collection:
    """Models of one shared table that fill one partition key (of the table or
    of ``index``) with the same template; see the module docstring."""

    def __init__(
        self,
        shared: TableOptions,
        name: str,
        models: Sequence[type[Model]],
        *,
        index: str | None = None,
    ) -> None:
        self.shared = shared
        self.name = name
        self.index = index
        self.models = {m._meta.entity: m for m in models}
        problem = self._problem(models)
        if problem:
            raise ModelDefinitionError(f"{shared.label}.collection({name!r}): {problem}")
        partition, sort = shared.index_keys(index)
        first = models[0]._meta
        self.partition: KeyTemplate = first.templates[partition]
        self.partition_fields = {n: first.fields_by_name[n] for n in self.partition.field_names}
        self.sort_attribute = sort
        prefixes = sorted(m._meta.templates[sort].prefix for m in models) if sort else []
        self.sort_range = (prefixes[0], prefixes[-1] + TOP) if prefixes else None

    def __repr__(self) -> str:
        return f"<Collection {self.name!r} of {', '.join(self.models)}>"

    def _problem(self, models: Sequence[type[Model]]) -> str | None:
        if not models:
            return "name at least one model."
        try:
            keys = self.shared.index_keys(self.index)
        except KeyError:
            return f"the table has no index {self.index!r}."
        texts = set()
        for model in models:
            meta = getattr(model, "_meta", None)
            if meta is None or meta.shared is not self.shared:
                return f"{model!r} is not a model of {self.shared.label} (Meta.table)."
            where = f"index {self.index!r}" if self.index else "the table"
            if any(k is not None and k not in meta.templates for k in keys):
                return f"{meta.object_name} does not fill the key of {where}."
            template = meta.templates[keys[0]]
            texts.add(
                (template.text, *(type(meta.fields_by_name[n]) for n in template.field_names))
            )
        if len(texts) > 1:
            shown = ", ".join(sorted(t[0] for t in texts))
            return (
                f"its models build the partition key {keys[0]!r} differently ({shown}); a "
                "collection is one partition, so they need the same template."
            )
        return None

    # --- reading

    def _params(
        self, partition: dict[str, Any], reverse: bool, consistent: bool
    ) -> tuple[dict[str, Any], str]:
        names = set(self.partition.field_names)
        if set(partition) != names:
            raise QueryError(
                f"collection {self.name!r} reads one partition: give "
                f"{', '.join(sorted(names))} (got {', '.join(sorted(partition)) or 'nothing'})."
            )
        key = self.partition.render(partition, self.partition_fields, self.name)
        condition = Attr(self.partition.attribute) == key
        if self.sort_range is not None and self.sort_attribute is not None:
            condition = condition & Attr(self.sort_attribute).between(*self.sort_range)
        c = Compiler()  # attribute names and plain strings: nothing to resolve
        params: dict[str, Any] = {
            "TableName": get_handle().table_name(self.shared.table_name),
            "KeyConditionExpression": condition.compile(c),
            "ScanIndexForward": not reverse,
        }
        # As a query's (templates.key_condition): a key rendered before values were
        # escaped may match this partition's text, never its fields.
        fields = self.partition_fields
        delimited = all_of(
            Attr(fields[n].db_name) == wire.decode(fields[n].encode_element(partition[n]))
            for n in self.partition.delimited_names
        )
        if delimited is not None:
            params["FilterExpression"] = delimited.compile(c)
        if self.index is not None:
            params["IndexName"] = self.index
        if consistent:
            if self.index is not None and self.shared.indexes[self.index].kind == "global":
                raise QueryError(
                    f"collection {self.name!r}: index {self.index!r} is global; DynamoDB reads "
                    "global indexes only eventually consistently."
                )
            params["ConsistentRead"] = True
        params.update(c.params())
        parts = {"collection": f"{self.shared.label}:{self.name}", **params}
        parts.pop("TableName")
        return params, cursors.identity(parts)

    def page(
        self,
        /,
        size: int = 25,
        cursor: str | None = None,
        *,
        reverse: bool = False,
        consistent: bool = False,
        **partition: Any,
    ) -> CollectionPage:
        """Exactly one Query: up to ``size`` items of the partition, in sort-key order
        (``reverse``: descending), and the cursor of the next page."""
        if isinstance(size, bool) or not isinstance(size, int) or not 0 < size <= MAX_LIMIT:
            raise QueryError(
                f"page(size=...) takes an integer from 1 to {MAX_LIMIT}, got {size!r}."
            )
        params, query = self._params(partition, reverse, consistent)
        params["Limit"] = size
        keys = {*self.shared.index_keys(None), *self.shared.index_keys(self.index)} - {None}
        if cursor is not None:
            params["ExclusiveStartKey"] = cursors.decode(cursor, query, keys)  # type: ignore[arg-type]
        response = get_handle().call("query", cacheable=True, **params)
        page = CollectionPage(
            items=[],
            count=response["Count"],
            scanned_count=response.get("ScannedCount", response["Count"]),
        )
        kind = self.shared.type_attribute
        partial = self.index is not None and self.shared.indexes[self.index].projection != "ALL"
        for item in response["Items"]:
            model = self.models.get(item.get(kind, {}).get("S", ""))
            if model is None:
                page.unknown.append(item)
            else:
                page.items.append(model._meta.decode(item, partial=partial))
        if page.unknown:
            logger.warning(
                ngettext(
                    "Collection %(name)r read %(n)d item of no member model (entity types: "
                    "%(types)s) in partition %(partition)r; kept in page.unknown.",
                    "Collection %(name)r read %(n)d items of no member model (entity types: "
                    "%(types)s) in partition %(partition)r; kept in page.unknown.",
                    len(page.unknown),
                ),
                {
                    "name": self.name,
                    "n": len(page.unknown),
                    "types": ", ".join(
                        sorted({i.get(kind, {}).get("S", "(none)") for i in page.unknown})
                    ),
                    "partition": params["ExpressionAttributeValues"][":v0"]["S"]
                    if get_handle().settings.log_values
                    else MASK,  # a key value: in a log only with LOG_VALUES
                },
            )
        last = response.get("LastEvaluatedKey")
        page.next_cursor = cursors.encode(last, query) if last else None
        return page

    apage = in_thread(page)
