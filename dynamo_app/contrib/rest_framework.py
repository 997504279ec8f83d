"""Django REST framework for DynamoDB models (the ``drf`` extra).

``ModelSerializer`` derives its fields from a model's fields, as DRF's own does
from a Django model, and creates and updates through the model: a create is
the model's conditional insert, an update a save conditioned on what was read.
Refusals DynamoDB decides at write time - a unique value taken, an item that
changed since it was read, a key already used - come back as DRF validation
errors (HTTP 400) naming the field. ``CursorPagination`` pages a query or scan
with the app's signed cursors: one request per page, never an offset.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..exceptions import (
    AlreadyExists,
    ConditionFailed,
    InvalidCursor,
    MissingDependency,
    UniqueViolation,
)
from ..exceptions import ValidationError as DynamoValidationError
from ..models import fields as f

try:
    from rest_framework import pagination, serializers
    from rest_framework.exceptions import ValidationError
    from rest_framework.response import Response
    from rest_framework.utils.urls import replace_query_param

    from ..models.serializerfields import BinaryField, SetField
except ImportError as exc:  # pragma: no cover - the extra is installed in the suite
    raise MissingDependency(
        "dynamo_app.contrib.rest_framework needs Django REST framework: "
        'pip install "django-dynamo-app[drf]".'
    ) from exc

if TYPE_CHECKING:
    from rest_framework.request import Request

    from ..models.base import Model
    from ..models.query import Page, QuerySet

__all__ = ["BinaryField", "CursorPagination", "ModelSerializer", "SetField"]


def serializer_field(field: f.Field, *, read_only: bool = False) -> serializers.Field:
    """The DRF field for a model field: the model field's own ``serializer_field()``
    (its type, choices, validators, ``null``/``blank``/``default``)."""
    built: serializers.Field = field.serializer_field(**({"read_only": True} if read_only else {}))
    return built


class ModelSerializer(serializers.Serializer):
    """``class Meta: model = Player; fields = "__all__"`` (or a list; ``exclude``,
    ``read_only_fields`` as in DRF). Key fields are written on create only."""

    class Meta:
        model: type[Model]

    def get_fields(self) -> dict[str, serializers.Field]:
        declared = super().get_fields()
        meta = self.Meta
        model = meta.model
        names = getattr(meta, "fields", "__all__")
        if names == "__all__":
            names = [field.name for field in model._meta.fields]
        names = [n for n in names if n not in getattr(meta, "exclude", ())]
        read_only = set(getattr(meta, "read_only_fields", ()))
        out = {}
        for name in names:
            if name in declared:
                out[name] = declared[name]
                continue
            field = model._meta.fields_by_name.get(name)
            if field is None:
                raise DynamoValidationError(
                    f"{type(self).__name__}.Meta.fields names {name!r}, which is not a field of "
                    f"{model.__name__}.",
                    model=model.__name__,
                    field=name,
                )
            out[name] = serializer_field(field, read_only=name in read_only)
        return out

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if self.instance is not None:
            meta = self.Meta.model._meta
            moved = [
                k.name
                for k in meta.key_fields
                if k.name in attrs and attrs[k.name] != getattr(self.instance, k.name)
            ]
            if moved:
                raise ValidationError({n: ["Part of the key: it cannot change."] for n in moved})
        return attrs

    def create(self, validated_data: dict[str, Any]) -> Model:
        model = self.Meta.model
        with _as_validation_errors(model):
            obj: Model = model.objects.create(**validated_data)
        return obj

    def update(self, instance: Model, validated_data: dict[str, Any]) -> Model:
        for name, value in validated_data.items():
            setattr(instance, name, value)
        with _as_validation_errors(type(instance)):
            instance.save()
        return instance


@contextmanager
def _as_validation_errors(model: type[Model]) -> Iterator[None]:
    """The write's refusals as DRF's 400s, with the field they are about."""
    try:
        yield
    except UniqueViolation as exc:
        constraint = next(c for c in model._meta.unique if c.name == exc.constraint)
        raise ValidationError({name: [str(exc)] for name in constraint.fields}) from exc
    except AlreadyExists as exc:
        raise ValidationError({model._meta.key_fields[-1].name: [str(exc)]}) from exc
    except ConditionFailed as exc:  # StaleObjectError: changed since it was read
        raise ValidationError({"non_field_errors": [str(exc)]}) from exc
    except DynamoValidationError as exc:
        raise ValidationError({exc.field or "non_field_errors": list(exc.messages)}) from exc


class CursorPagination(pagination.BasePagination):
    """Pages of a ``QuerySet`` (a query or scan) with its signed cursors:
    ``?cursor=...`` in, ``next`` out, one DynamoDB request per page."""

    page_size = 25
    cursor_query_param = "cursor"
    page_size_query_param: str | None = None  # e.g. "page_size" to let clients choose
    max_page_size = 1000

    def paginate_queryset(
        self, queryset: QuerySet[Any], request: Request, view: Any = None
    ) -> list[Any]:
        self.request = request
        cursor = request.query_params.get(self.cursor_query_param) or None
        try:
            self.page: Page[Any] = queryset.page(self.get_page_size(request), cursor)
        except InvalidCursor as exc:
            raise ValidationError({self.cursor_query_param: [str(exc)]}) from exc
        return self.page.items

    def get_page_size(self, request: Request) -> int:
        if self.page_size_query_param:
            try:
                asked = int(request.query_params[self.page_size_query_param])
            except (KeyError, ValueError):
                return self.page_size
            if asked > 0:
                return min(asked, self.max_page_size)
        return self.page_size

    def get_next_link(self) -> str | None:
        if self.page.next_cursor is None:
            return None
        url: str = self.request.build_absolute_uri()
        link: str = replace_query_param(url, self.cursor_query_param, self.page.next_cursor)
        return link

    def get_paginated_response(self, data: Any) -> Response:
        return Response({"next": self.get_next_link(), "results": data})

    def get_paginated_response_schema(self, schema: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "object",
            "required": ["results"],
            "properties": {
                "next": {"type": "string", "nullable": True, "format": "uri"},
                "results": schema,
            },
        }
