"""What ``Field.serializer_field()`` builds with (the ``drf`` extra): DRF's own
fields, and the two DRF has not, bytes as base64 text and a set as a sorted list.
Imported only when a serializer field is asked for, so a project without Django
REST framework never imports it."""

from __future__ import annotations

import base64
import binascii
from typing import Any, ClassVar

from ..exceptions import MissingDependency

try:
    from rest_framework import serializers
    from rest_framework.exceptions import ValidationError
except ImportError as exc:  # pragma: no cover - the extra is installed in the suite
    raise MissingDependency(
        "DynamoDB model serializers need Django REST framework: "
        'pip install "django-dynamo-app[drf]".'
    ) from exc

__all__ = ["BinaryField", "SetField", "serializers"]


class BinaryField(serializers.Field):
    """Bytes as base64 text."""

    default_error_messages: ClassVar[dict[str, str]] = {"invalid": "Enter valid base64 data."}

    def to_representation(self, value: bytes) -> str:
        return base64.b64encode(value).decode()

    def to_internal_value(self, data: Any) -> bytes:
        try:
            return base64.b64decode(data, validate=True)
        except (binascii.Error, TypeError, ValueError):
            raise ValidationError(self.error_messages["invalid"], code="invalid") from None


class SetField(serializers.ListField):
    """A set as a sorted list; duplicates in the input are one member."""

    def to_representation(self, data: Any) -> list[Any]:
        return sorted(super().to_representation(data), key=str)

    def to_internal_value(self, data: Any) -> set[Any]:
        return set(super().to_internal_value(data))
