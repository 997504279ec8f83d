"""What ``Field.formfield()`` builds with where Django's forms have nothing ready:
a set typed one member per line, JSON that keeps numbers exact, choices posted
back as text, and a number field's limits read from its validators."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from django import forms
from django.core import validators
from django.core.exceptions import ValidationError as DjangoValidationError

from ..client import wire


class SetField(forms.Field):
    """A set typed one member per line (``StringSetField``, ``NumberSetField``)."""

    widget = forms.Textarea

    def __init__(self, *, member: Callable[[str], Any] = str, **kwargs: Any) -> None:
        self.member = member
        super().__init__(**kwargs)

    def prepare_value(self, value: Any) -> Any:
        if isinstance(value, (set, frozenset, list, tuple)):
            return "\n".join(sorted(str(v) for v in value))
        return value

    def to_python(self, value: Any) -> set[Any]:
        if isinstance(value, (set, frozenset, list, tuple)):
            return set(value)
        members = set()
        for line in str(value or "").splitlines():
            if line.strip():
                try:
                    members.add(self.member(line.strip()))
                except (ValueError, ArithmeticError):
                    raise DjangoValidationError(
                        "%(value)r is not a valid member.", code="invalid", params={"value": line}
                    ) from None
        return members


class ExactJSONEncoder(json.JSONEncoder):
    """Shows a stored ``Decimal`` as a JSON number (exactly, when a float can)."""

    def default(self, o: Any) -> Any:
        if isinstance(o, Decimal):
            if o == o.to_integral_value():
                return int(o)
            if Decimal(repr(float(o))) == o:
                return float(o)
            return str(o)  # more digits than a JSON number parsed as float keeps
        if isinstance(o, (set, frozenset)):
            return sorted(o, key=str)
        return super().default(o)


class ExactJSONDecoder(json.JSONDecoder):
    """Reads numbers with a point as ``Decimal`` (DynamoDB keeps them exactly), and
    refuses text too costly to parse before parsing it (``json_problem``): Django's
    JSON form field then shows it again as typed, with its "Enter a valid JSON." error."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(parse_float=Decimal, **kwargs)

    def decode(self, s: str, *args: Any, **kwargs: Any) -> Any:
        problem = json_problem(s)
        if problem is not None:
            raise json.JSONDecodeError(problem, s, 0)
        return super().decode(s, *args, **kwargs)


# The longest run of digits a number DynamoDB holds needs when written out in full
# (1E-130 is "0." and 130 digits); a longer one is refused before it is parsed.
MAX_NUMBER_DIGITS = 200
_JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_LONG_NUMBER = re.compile(rf"\d{{{MAX_NUMBER_DIGITS + 1},}}")
_BRACKETS = re.compile(r"[\[\]{}]")


def json_problem(text: str) -> str | None:
    """What makes ``text`` too costly to parse, read before parsing it: maps and lists
    nested deeper than DynamoDB stores (a deep enough one would exhaust Python's
    stack), or a number longer than any DynamoDB holds (Python refuses to read an
    integer of over 4,300 digits)."""
    bare = _JSON_STRING.sub('""', text)  # brackets and digits inside strings are text
    if _LONG_NUMBER.search(bare):
        return (
            f"a number is written with more than {MAX_NUMBER_DIGITS} digits; DynamoDB keeps "
            f"at most {wire.MAX_DIGITS} significant digits"
        )
    depth = 0
    for bracket in _BRACKETS.findall(bare):
        depth += 1 if bracket in "[{" else -1
        if depth > wire.MAX_NESTING + 1:
            return f"maps and lists nest more than {wire.MAX_NESTING + 1} levels deep"
    return None


JSON_OPTIONS = {
    "form_class": forms.JSONField,
    "encoder": ExactJSONEncoder,
    "decoder": ExactJSONDecoder,
}


def number(text: str) -> int | Decimal:
    """A number set's member as typed: an ``int`` unless it has a point."""
    value = Decimal(text)
    if not value.is_finite():
        raise ValueError(text)
    return int(value) if value == value.to_integral_value() and "." not in text else value


def limits(field: Any) -> dict[str, Any]:
    """``min_value`` / ``max_value`` from a field's Min/MaxValueValidators."""
    found = {}
    for validator in field.validators:
        if isinstance(validator, validators.MinValueValidator):
            found["min_value"] = validator.limit_value
        elif isinstance(validator, validators.MaxValueValidator):
            found["max_value"] = validator.limit_value
    return found


def choice_options(field: Any) -> dict[str, Any]:
    """A choice field's options: the values posted back as text, coerced to the
    choice's own value (an int stays an int)."""
    by_text = {str(value): value for value, _ in field.flatchoices}

    def coerce(text: Any) -> Any:
        return by_text.get(str(text), text)

    choices: list[Any] = list(field.choices)
    if field.is_set:
        return {"form_class": forms.TypedMultipleChoiceField, "choices": choices, "coerce": coerce}
    include_blank = field.blank or not field.has_default()
    return {
        "form_class": forms.TypedChoiceField,
        "choices": [("", "---------"), *choices] if include_blank else choices,
        "coerce": coerce,
        "empty_value": None if field.null else "",
    }
