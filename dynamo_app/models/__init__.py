"""``from dynamo_app import models``: declare DynamoDB tables as Django-style models.

See docs/reference/models.md.
"""

from ..counters import ShardedCounter
from ..exceptions import (
    AlreadyExists,
    BatchIncomplete,
    ConditionFailed,
    DoesNotExist,
    InvalidCursor,
    ItemTooLarge,
    QueryError,
    StoredValueError,
    ValidationError,
    WriteError,
)
from ..expressions import Attr, Condition
from ..unique import Unique
from .base import Model, ModelBase
from .declared import DeclaredQuery
from .fields import (
    BinaryField,
    BinarySetField,
    BooleanField,
    DateField,
    DateTimeField,
    DecimalField,
    Field,
    FieldOptions,
    FloatField,
    IntegerField,
    JSONField,
    ListField,
    MapField,
    NumberSetField,
    SequenceField,
    StringField,
    StringSetField,
    UUIDField,
    VersionField,
    new_uuid,
)
from .manager import Manager
from .options import GlobalIndex, LocalIndex, Options
from .query import Page, QuerySet
from .registry import registered_models
from .table import Table

__all__ = [
    "AlreadyExists",
    "Attr",
    "BatchIncomplete",
    "BinaryField",
    "BinarySetField",
    "BooleanField",
    "Condition",
    "ConditionFailed",
    "DateField",
    "DateTimeField",
    "DecimalField",
    "DeclaredQuery",
    "DoesNotExist",
    "Field",
    "FieldOptions",
    "FloatField",
    "GlobalIndex",
    "IntegerField",
    "InvalidCursor",
    "ItemTooLarge",
    "JSONField",
    "ListField",
    "LocalIndex",
    "MapField",
    "Manager",
    "Model",
    "ModelBase",
    "NumberSetField",
    "Options",
    "Page",
    "QueryError",
    "QuerySet",
    "SequenceField",
    "ShardedCounter",
    "StringField",
    "StringSetField",
    "StoredValueError",
    "Table",
    "UUIDField",
    "Unique",
    "VersionField",
    "ValidationError",
    "WriteError",
    "new_uuid",
    "registered_models",
]
