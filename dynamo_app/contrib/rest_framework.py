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

import copy
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError

from ..exceptions import (
    AlreadyExists,
    ConditionFailed,
    InvalidCursor,
    MissingDependency,
    StaleObjectError,
    UniqueViolation,
)
from ..exceptions import ValidationError as DynamoValidationError
from ..models import fields as f

try:
    from rest_framework import pagination, serializers, status
    from rest_framework.exceptions import APIException, ErrorDetail, ValidationError
    from rest_framework.response import Response
    from rest_framework.settings import api_settings
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

__all__ = ["BinaryField", "CursorPagination", "ModelSerializer", "SetField", "StaleWrite"]


def serializer_field(field: f.Field, *, read_only: bool = False) -> serializers.Field:
    """The DRF field for a model field: the model field's own ``serializer_field()``
    (its type, choices, validators, ``null``/``blank``/``default``)."""
    built: serializers.Field = field.serializer_field(**({"read_only": True} if read_only else {}))
    return built


class StaleWrite(APIException):
    """HTTP 409: the item changed since the version the client sent; the body
    carries the values now stored (``current``; null when it was deleted)."""

    status_code = status.HTTP_409_CONFLICT
    default_code = "stale"

    def __init__(self, message: str, current: dict[str, Any] | None) -> None:
        super().__init__(message)
        # The body as is: DRF would turn every value of a dict detail into text.
        self.detail: Any = {"detail": ErrorDetail(message, self.default_code), "current": current}


class ModelSerializer(serializers.Serializer):
    """``class Meta: model = Player; fields = "__all__"`` (or a list; ``exclude``,
    ``read_only_fields`` as in DRF), like DRF's own ``ModelSerializer``:

    * each model field's own ``serializer_field()`` (type, ``choices``,
      ``validators``, ``null``/``blank``, ``max_length``); then ``validate()``
      runs the model's ``full_clean()`` on the item as it would be written (an
      empty value is judged by the field, as DRF judges it), so the API refuses
      what a ``ModelForm`` and the admin refuse, each error on its field (400);
    * key fields are written on create only (a change is a 400 on the field);
    * the write's refusals are 400s on their field (a unique value taken, a key
      already used);
    * a model with a ``VersionField``: a change must send the ``version`` it read
      (GET returns it; a missing one is a 400), and the save is conditioned on it,
      so a stale change is a 409 carrying the values now stored, never a silent
      overwrite.
    """

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
            if field is model._meta.version and name not in read_only:
                out[name] = field.serializer_field(read_only=False, allow_null=False, min_value=1)
            else:
                # Not editable (a SequenceField, an auto_now date): output only, as DRF's own.
                fixed = name in read_only or not field.editable
                out[name] = serializer_field(field, read_only=fixed)
        return out

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        meta = self.Meta.model._meta
        if self.instance is not None:
            moved = [
                k.name
                for k in meta.key_fields
                if k.name in attrs and attrs[k.name] != getattr(self.instance, k.name)
            ]
            if moved:
                raise ValidationError({n: ["Part of the key: it cannot change."] for n in moved})
            version = meta.version.name if meta.version is not None else ""
            if version in self.fields and attrs.get(version) is None:
                said = "Send the version you read (a GET returns it): a change based on an "
                said += "older read must not overwrite a newer one."
                raise ValidationError({version: [said]})
        elif meta.version is not None:
            attrs.pop(meta.version.name, None)  # a new item starts at version 1
        self._full_clean(attrs)
        return attrs

    def _full_clean(self, attrs: dict[str, Any]) -> None:
        """The model's ``full_clean()`` on the item as it would be written: the
        fields sent (all of them, unless partial), and its ``clean()``. Empty
        values were judged by their serializer fields (``allow_null``/``allow_blank``,
        as DRF does); unique values are the write's to judge."""
        model = self.Meta.model
        fields = model._meta.fields_by_name
        values = {n: v for n, v in attrs.items() if n in fields}
        if self.instance is None:
            obj = model(**values)
        else:
            obj = copy.copy(self.instance)
            obj.__dict__.update(values)
        sent = set(values) if self.partial else {n for n in self.fields if n in fields}
        exclude = {n for n in fields if n not in sent or fields[n].is_empty(obj.__dict__[n])}
        try:
            obj.full_clean(exclude=exclude, validate_unique=False)
        except DjangoValidationError as exc:
            raise ValidationError(_error_dict(exc)) from None

    def create(self, validated_data: dict[str, Any]) -> Model:
        model = self.Meta.model
        with self._refusals(model):
            obj: Model = model.objects.create(**validated_data)
        return obj

    def update(self, instance: Model, validated_data: dict[str, Any]) -> Model:
        for name, value in validated_data.items():
            setattr(instance, name, value)
        with self._refusals(type(instance)):
            instance.save()
        return instance

    @contextmanager
    def _refusals(self, model: type[Model]) -> Iterator[None]:
        """The write's refusals: a stale version is a 409 with the values now
        stored; the others are 400s on the field they are about."""
        try:
            yield
        except UniqueViolation as exc:
            constraint = next(c for c in model._meta.unique if c.name == exc.constraint)
            raise ValidationError({name: [str(exc)] for name in constraint.fields}) from exc
        except AlreadyExists as exc:
            raise ValidationError({model._meta.key_fields[-1].name: [str(exc)]}) from exc
        except StaleObjectError as exc:
            current = self.to_representation(exc.item) if exc.item is not None else None
            raise StaleWrite(str(exc), current) from exc
        except ConditionFailed as exc:
            raise ValidationError({api_settings.NON_FIELD_ERRORS_KEY: [str(exc)]}) from exc
        except DynamoValidationError as exc:
            key = exc.field or api_settings.NON_FIELD_ERRORS_KEY
            raise ValidationError({key: list(exc.messages)}) from exc


def _error_dict(exc: DjangoValidationError) -> dict[str, list[str]]:
    """Django's errors by field, with DRF's key for those of no field."""
    return {
        (api_settings.NON_FIELD_ERRORS_KEY if name == NON_FIELD_ERRORS else name): messages
        for name, messages in exc.message_dict.items()
    }


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
