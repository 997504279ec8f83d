"""``models.Table``: one physical table shared by several models (single-table design).

The table is declared once: its generic key attributes (``pk``, ``sk``), its
indexes, including overloaded ones each model fills in its own way, the
attribute every item names its model in, and its TTL attribute. Each model
that lives in it says ``Meta.table = Roster`` and how its fields build the
keys (``Meta.keys``, see templates.py). The schema workflow sees one table
definition, registered under the table's name, that lists the models sharing
it; a model with its own table is untouched by any of this.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from ..conf import require_installed
from ..exceptions import ModelDefinitionError
from ..tables import (
    IndexDefinition,
    KeyAttribute,
    TableDefinition,
    index_name_problem,
    registry,
    snake_case,
)
from .options import _Index

if TYPE_CHECKING:
    from .base import Model
    from .collection import Collection

TABLE_OPTIONS: dict[str, Any] = {
    "table_name": None,
    "partition_key": "pk",
    "sort_key": "sk",
    "indexes": (),
    "ttl": None,
    "type_attribute": "_type",
}


class TableOptions:
    """``Table._table``: the parsed ``Meta`` of a shared table and the models in it."""

    def __init__(self, table: type[Table], meta: type | None) -> None:
        self.table = table
        self.label = f"{table.__module__}.{table.__qualname__}"
        values = dict(TABLE_OPTIONS)
        problems = []
        if meta is not None:
            for name in (n for n in vars(meta) if not n.startswith("_")):
                if name in TABLE_OPTIONS:
                    values[name] = getattr(meta, name)
                else:
                    problems.append(
                        f"{table.__name__}.Meta has unknown option {name!r} (options: "
                        f"{', '.join(sorted(TABLE_OPTIONS))})."
                    )
        self.table_name: str = values["table_name"] or snake_case(table.__name__)
        self.partition_key: str = values["partition_key"]
        self.sort_key: str | None = values["sort_key"]
        self.ttl: str | None = values["ttl"]
        self.type_attribute: str = values["type_attribute"]
        self.indexes: dict[str, _Index] = {}
        for index in values["indexes"] or ():
            if not isinstance(index, _Index):
                problems.append(f"{table.__name__}.Meta.indexes holds {index!r}.")
                continue
            problem = index_name_problem(index.name)
            if problem or index.name in self.indexes:
                problems.append(
                    f"{table.__name__}: index {index.name!r} {problem or 'is declared twice'}."
                )
            if index.kind == "local" and self.sort_key is None:
                problems.append(f"{table.__name__}: a local index needs a table sort key.")
            if isinstance(index.projection, tuple):
                problems.append(
                    f"{table.__name__}: index {index.name!r}: a shared table's index projects "
                    '"ALL" or "KEYS_ONLY" (the models in it have different fields).'
                )
            self.indexes[index.name] = index
        if self.type_attribute in self.key_attributes:
            problems.append(f"{table.__name__}.Meta.type_attribute is a key attribute.")
        if problems:
            raise ModelDefinitionError(
                f"{self.label} is declared wrongly:\n" + "\n".join(f"  - {p}" for p in problems)
            )
        self.models: dict[str, type[Model]] = {}  # by entity name

    @property
    def key_attributes(self) -> tuple[str, ...]:
        """Every key attribute of the table and its indexes, each once."""
        names = [self.partition_key, *([self.sort_key] if self.sort_key else [])]
        for index in self.indexes.values():
            names += [n for n in (index.partition_key, index.sort_key) if n]
        return tuple(dict.fromkeys(names))

    def index_keys(self, name: str | None) -> tuple[str, str | None]:
        """``(partition attribute, sort attribute)`` of the table (None) or an index."""
        if name is None:
            return self.partition_key, self.sort_key
        index = self.indexes[name]
        return index.partition_key or self.partition_key, index.sort_key

    def attach(self, model: type[Model]) -> None:
        """Add a model (replacing an earlier class of the same label, as the
        table registry does on reload) and register the table again with it."""
        meta = model._meta
        for entity, other in list(self.models.items()):
            if other._meta.label == meta.label:
                del self.models[entity]
        self.models[meta.entity] = model
        registry.register(self.definition())

    def definition(self) -> TableDefinition:
        def key(name: str | None) -> KeyAttribute | None:
            return KeyAttribute(name, "S") if name else None

        indexes = tuple(
            IndexDefinition(
                name=name,
                kind=index.kind,  # type: ignore[arg-type]
                partition_key=key(index.partition_key or self.partition_key),  # type: ignore[arg-type]
                sort_key=key(index.sort_key),
                projection=index.projection,
            )
            for name, index in self.indexes.items()
        )
        return TableDefinition(
            declared_name=self.table_name,
            partition_key=key(self.partition_key),  # type: ignore[arg-type]
            sort_key=key(self.sort_key),
            indexes=indexes,
            ttl_attribute=self.ttl,
            owner=self.label,
            shared_by=tuple(m._meta.label for m in self.models.values()),
        )


class Table:
    """A physical table several models share. See docs/howto/single-table.md::

        class Roster(models.Table):
            class Meta:
                table_name = "roster"
                indexes = [models.GlobalIndex("gsi1", partition_key="gsi1pk", sort_key="gsi1sk")]

    ``Meta``: ``table_name`` (default: snake_case of the class name, resolved
    by the same resolver as every table), ``partition_key`` and ``sort_key``
    (the generic key attributes, default ``"pk"``/``"sk"``; every key
    attribute is a string), ``indexes`` (keys named by attribute), ``ttl``
    (the attribute DynamoDB's TTL reads) and ``type_attribute`` (where every
    item names its model, default ``"_type"``).
    """

    _table: ClassVar[TableOptions]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._table = TableOptions(cls, cls.__dict__.get("Meta"))
        require_installed(f"The DynamoDB table {cls._table.label}")
        registry.register(cls._table.definition())

    @classmethod
    def collection(cls, name: str, *models: type[Model], index: str | None = None) -> Collection:
        """Models that share a partition, read together: one Query per page, each
        item decoded into its model, in sort-key order (see collection.py)."""
        from .collection import Collection

        return Collection(cls._table, name, models, index=index)
