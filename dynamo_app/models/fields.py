"""Model fields: one class per stored type, each its own codec.

A field knows its wire type, so ``encode`` goes straight from a Python value
to ``{"S": ...}`` / ``{"N": ...}`` with one type test on the common path,
and ``decode`` reads the wire value without asking what type it is. The slow
paths (subclasses, ``NULL``, numbers written as ``1E+2`` by other code) are
taken only when the fast one fails. A value that cannot be stored raises
``ValidationError`` naming the model and field, before any request.

A field type also owns every other form of its values, as Django's fields own
``formfield()``: the form field (``formfield()``), the REST framework field
(``serializer_field()``), the typed JSON form (``to_json()`` / ``from_json()``)
and a choice's label (``display()``). Forms, the admin, DRF, ``to_dict()`` and
dump/load ask the field; none of them tells field types apart.
"""

from __future__ import annotations

import copy
import typing
import uuid
from collections.abc import Callable, Iterable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from types import ModuleType
from typing import (
    TYPE_CHECKING,
    Any,
    ClassVar,
    Generic,
    Literal,
    Never,
    Self,
    TypedDict,
    Unpack,
    cast,
    overload,
)

from django import forms
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import Field as DjangoField
from django.utils import timezone
from django.utils.choices import flatten_choices, normalize_choices
from django.utils.encoding import force_str
from django.utils.functional import Promise
from django.utils.hashable import make_hashable
from django.utils.text import capfirst

from ..client import wire
from ..exceptions import ModelDefinitionError, StoredValueError, ValidationError
from ..sequences import Sequence, check_cache
from . import formfields, jsonform
from .codec import DECODE_ERRORS, utc_text
from .habits import option_problem

if TYPE_CHECKING:
    from typing_extensions import TypeVar  # PEP 696 defaults (typing has them from 3.13)

    from .base import Model
else:

    def TypeVar(name: str, *, default: object = None) -> typing.TypeVar:
        """A type variable; its default is read by type checkers only."""
        return typing.TypeVar(name)


# What reading a field from an instance gives (docs/howto/typed-models.md).
# Each default is the type of an annotation without arguments: ``StringField`` is
# ``StringField[str]``, and a subclass of it reads as ``str``.
_T = TypeVar("_T", default=Any)
_Member = TypeVar("_Member")
_Str = TypeVar("_Str", default=str)
_Int = TypeVar("_Int", default=int)
_Decimal = TypeVar("_Decimal", default=Decimal)
_Float = TypeVar("_Float", default=float)
_Bool = TypeVar("_Bool", default=bool)
_Bytes = TypeVar("_Bytes", default=bytes)
_DateTime = TypeVar("_DateTime", default=datetime)
_Date = TypeVar("_Date", default=date)
_UUID = TypeVar("_UUID", default=uuid.UUID)
_List = TypeVar("_List", default=list[Any])
_Map = TypeVar("_Map", default=dict[str, Any])

NOT_PROVIDED: Any = object()
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_INT_LIMIT = 10**wire.MAX_DIGITS


def _iterable(value: Any) -> bool:
    return isinstance(value, (list, tuple))


def new_uuid() -> str:
    """A random UUID as a string: a ready ``default`` for key fields."""
    return str(uuid.uuid4())


class FieldOptions(TypedDict, total=False):
    """The options every field takes but ``null``, for typing a field's ``__init__``
    (``**options: Unpack[FieldOptions]``): a misspelt option is a type error."""

    partition_key: bool
    sort_key: bool
    default: Any
    db_name: str | None
    choices: Any
    validators: Iterable[Callable[[Any], None]]
    blank: bool
    verbose_name: str | Promise | None  # a lazy translation (gettext_lazy) too
    help_text: str | Promise
    editable: bool


class Field(Generic[_T]):
    """Base of every field. Options common to all fields:

    ``partition_key`` / ``sort_key``: this field is the table's key.
    ``null``: the attribute may be absent (``None`` in Python); a ``None``
    value is not stored at all. ``default``: a value or a callable.
    ``db_name``: the stored attribute name when it differs from the Python name.

    Django's validation and form options, with Django's meaning (``full_clean()``
    and ``dynamo_app.forms`` read them; ``save()`` does not): ``choices``,
    ``validators``, ``blank`` (an empty value passes validation), ``verbose_name``,
    ``help_text``, ``editable`` (False: left out of forms).

    To a type checker, ``Field[T]`` reads as ``T`` from an instance and as the
    field from the class: a subclass of ``Field[Point]`` reads as ``Point``.
    """

    wire_type: ClassVar[str] = ""
    key_type: ClassVar[str | None] = None  # "S", "N" or "B" when usable as a key
    python_types: ClassVar[tuple[type, ...]] = (object,)
    description: ClassVar[str] = "a value"
    is_set: ClassVar[bool] = False
    takes_choices: ClassVar[bool] = True
    _counter: ClassVar[int] = 0
    # Django's own messages (and translations) for what validation says.
    error_messages: ClassVar[dict[str, Any]] = DjangoField.default_error_messages

    def __init__(
        self,
        *,
        partition_key: bool = False,
        sort_key: bool = False,
        null: bool = False,
        default: Any = NOT_PROVIDED,
        db_name: str | None = None,
        choices: Any = None,
        validators: Iterable[Callable[[Any], None]] = (),
        blank: bool = False,
        verbose_name: str | Promise | None = None,
        help_text: str | Promise = "",
        editable: bool = True,
        **unsupported: Never,
    ) -> None:
        if unsupported:
            raise ModelDefinitionError(option_problem(type(self), sorted(unsupported)))
        if isinstance(default, (list, dict, set)):
            raise ModelDefinitionError(
                f"{type(self).__name__}(default={default!r}) would share one mutable object "
                f"between instances: pass a callable such as default={type(default).__name__}."
            )
        self.partition_key = partition_key
        self.sort_key = sort_key
        self.null = null
        self.default = default
        self.db_name = db_name or ""
        self.choices: Any = normalize_choices(choices) if choices is not None else None
        self.validators = list(validators) if _iterable(validators) else validators
        self.blank = blank
        # A lazy translation is a str wherever it is shown (Django's own fields keep them).
        self._verbose_name = cast("str | None", verbose_name)
        self.help_text = cast(str, help_text)
        self.editable = editable
        self.name = ""
        self.model: Any = None
        Field._counter += 1
        self.creation_order = Field._counter

    if TYPE_CHECKING:
        # To a type checker a field is a descriptor: ``Player.goals`` is the field,
        # ``player.goals`` its value (``_T``). At run time the value sits in the
        # instance's __dict__, so a read is a plain attribute lookup and no call.

        @overload
        def __get__(self, instance: None, owner: type[Model]) -> Self: ...
        @overload
        def __get__(self, instance: Model, owner: type[Model]) -> _T: ...
        def __get__(self, instance: Model | None, owner: type[Model]) -> Self | _T: ...
        def __set__(self, instance: Model, value: _T) -> None: ...

    def __repr__(self) -> str:
        where = f"{self.model.__name__}.{self.name}" if self.model is not None else "unbound"
        return f"<{type(self).__name__}: {where}>"

    def clone(self) -> Field:
        """An unbound copy, for a subclass inheriting this field."""
        field = copy.copy(self)
        field.model = None
        return field

    def bind(self, model: Any, name: str) -> None:
        self.model = model
        self.name = name
        self.db_name = self.db_name or name

    @property
    def is_key(self) -> bool:
        return self.partition_key or self.sort_key

    @property
    def label(self) -> str:
        model = self.model.__name__ if self.model is not None else "?"
        return f"{model}.{self.name}"

    @property
    def verbose_name(self) -> str:
        """As Django's: the declared one, else the name with spaces for underscores."""
        return self._verbose_name or self.name.replace("_", " ")

    @property
    def flatchoices(self) -> list[tuple[Any, Any]]:
        """``choices`` without their groups: ``[(value, label), ...]``."""
        return list(flatten_choices(self.choices)) if self.choices is not None else []

    def display(self, value: Any) -> Any:
        """What Django's ``get_<field>_display()`` shows: the label of ``value`` among
        the choices (groups included), else the value itself; a set's members'
        labels, sorted and joined with commas."""
        if self.choices is None:
            return value
        labels = dict(make_hashable(self.flatchoices))
        if self.is_set and isinstance(value, (set, frozenset, list, tuple)):
            return ", ".join(sorted(str(labels.get(m, m)) for m in value))
        return force_str(labels.get(make_hashable(value), value), strings_only=True)

    # --- values a write fills in

    fills_itself: ClassVar[bool] = False  # pre_save() may change the value (Options.fillers)
    auto_now = False  # Django's option (the date fields take it): now at every save

    def pre_save(self, obj: Any, add: bool) -> Any:
        """The value a whole-item write (create, save, bulk_save, a transaction's
        save) stores, set on ``obj`` by the write; ``add``: the instance was never
        read nor written. As Django's ``Field.pre_save``, where ``auto_now`` and
        sequence numbers fill themselves; a loaded line's values are kept as they
        are (a raw save). Only fields with ``fills_itself`` are asked."""
        return obj.__dict__[self.name]

    def created_value(self) -> Any:
        """What an item that an upsert creates holds when the update does not
        write this field: its default (a self-filling date: now)."""
        return self.get_default()

    # --- defaults and missing attributes

    def has_default(self) -> bool:
        return self.default is not NOT_PROVIDED

    def get_default(self) -> Any:
        if self.default is NOT_PROVIDED:
            return None
        return self.default() if callable(self.default) else self.default

    def missing(self) -> Any:
        """The value of an attribute absent from a stored item (older items)."""
        return self.get_default()

    @property
    def missing_is_none(self) -> bool:
        return self.default is NOT_PROVIDED and not self.is_set

    # --- inline forms for the generated codec (codec.py): source text over one
    # variable name; None means "call the method".

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        """``(guard, expression)``: when ``guard`` holds, ``expression`` is the wire value.

        ``key_limit``: for a key of the table or an index, its size limit in bytes
        (``Options.key_limits``); the value must then also be a valid key. Each
        template repeats its field's ``encode`` fast path as source text: change
        both, or return None (the codec then calls ``encode``)."""
        return None

    def decode_template(self, var: str) -> str | None:
        """An expression reading this field's own wire type (may raise; then the
        slow path runs)."""
        return None

    def size_template(self, var: str) -> str | None:
        """For ``Options.encode_checked``: an expression of at least DynamoDB's size
        of the value ``encode_template`` just built, over ``var`` and ``w`` (that wire
        value); None means ``value_size(w)``. It may raise ``UnicodeEncodeError``
        (text DynamoDB cannot store); then the exact ``check_size`` decides."""
        return None

    def sized_template(self, var: str, key_limit: int | None) -> tuple[str, str, str] | None:
        """``(guard, expression, size)`` for ``Options.encode_checked``: the encode
        template and the size of what it built."""
        template = self.encode_template(var, key_limit)
        if template is None:
            return None
        return (*template, self.size_template(var) or "value_size(w)")

    # --- the codec

    def invalid(self, value: Any, expected: str | None = None) -> ValidationError:
        shown = wire.shown(value)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        model = self.model.__name__ if self.model is not None else ""
        reason = f"expected {expected or self.description}, got {type(value).__name__} {shown}."
        shown_alone = reason[:1].upper() + reason[1:]  # in a form, beside the field
        return ValidationError(
            f"{self.label}: {reason}", model=model, field=self.name, reason=shown_alone
        )

    def encode(self, value: Any) -> dict[str, Any] | None:
        """A non-None Python value -> wire form; None means "store nothing" (empty set)."""
        raise NotImplementedError

    def encode_key(self, value: Any, limit: int) -> dict[str, Any]:
        """Like ``encode``, plus DynamoDB's key rules: not empty, at most ``limit``
        bytes (``Options.key_limits``: a partition key allows more than a sort key)."""
        if value is None:
            raise self.invalid(value, f"{self.description} (a key attribute cannot be empty)")
        encoded = self.encode(value)
        if encoded is None:
            raise self.invalid(value)
        ((kind, raw),) = encoded.items()
        if kind in ("S", "B"):
            size = len(raw.encode()) if kind == "S" else len(raw)
            if size == 0 or size > limit:
                raise self.invalid(value, f"a key value of 1 to {limit} bytes")
        return encoded

    def encode_element(self, value: Any) -> dict[str, Any]:
        """An operand of ``contains`` (a substring, or a member of a set or list)."""
        encoded = self.encode(value)
        if encoded is None:
            raise self.invalid(value)
        return encoded

    def decode(self, value: dict[str, Any]) -> Any:
        """Wire form of this field's own type -> Python (fast path; may raise)."""
        raise NotImplementedError

    def decode_slow(self, value: dict[str, Any], table: str = "") -> Any:
        """Decode anything stored under this attribute, or say clearly why not."""
        if value.get("NULL"):
            return None
        try:
            return self.decode(value)
        except DECODE_ERRORS:
            pass
        converted = self.decode_other(value)
        if converted is not NOT_PROVIDED:
            return converted
        ((kind, raw),) = value.items()
        where = f" in table {table!r}" if table else ""
        raise StoredValueError(
            f"{self.label}: the stored attribute {self.db_name!r}{where} holds {kind} "
            f"{str(raw)[:60]!r}, which {type(self).__name__} cannot read (it stores "
            f"{self.wire_type}). Fix the item, or declare the field with the stored type."
        )

    def decode_other(self, value: dict[str, Any]) -> Any:
        """A stored value of an equivalent form the fast path does not read."""
        return NOT_PROVIDED

    # --- validation (Django's Field.clean; ``Model.full_clean()`` calls it)

    def is_empty(self, value: Any) -> bool:
        """Django's empty values: None, and an empty string, bytes, list, dict or set."""
        return value is None or (
            isinstance(value, (str, bytes, list, tuple, dict, set, frozenset)) and not value
        )

    def clean(self, value: Any, key_limit: int | None = None) -> Any:
        """Check ``value`` as Django's ``Field.clean`` does and return it; raise
        Django's ``ValidationError`` listing every problem. An empty value is
        refused unless ``blank`` (``None`` also unless ``null``), and otherwise
        passes. Then: storable (type, ``max_length``, digits, a key's size when
        ``key_limit`` is given), one of ``choices``, and every validator."""
        if self.is_empty(value):
            if value is None and not self.null:
                raise DjangoValidationError(self.error_messages["null"], code="null")
            if not self.blank:
                raise DjangoValidationError(self.error_messages["blank"], code="blank")
            return value
        try:
            self.encode(value) if key_limit is None else self.encode_key(value, key_limit)
        except ValidationError as exc:
            raise DjangoValidationError(exc.reason, code="invalid") from None
        errors: list[DjangoValidationError] = []
        if self.choices is not None:
            allowed = [choice for choice, _ in self.flatchoices]
            for member in value if self.is_set else (value,):
                if member not in allowed:
                    errors.append(
                        DjangoValidationError(
                            self.error_messages["invalid_choice"],
                            code="invalid_choice",
                            params={"value": member},
                        )
                    )
        for validator in self.validators:
            try:
                validator(value)
            except DjangoValidationError as exc:
                errors.extend(exc.error_list)
        if errors:
            raise DjangoValidationError(errors)
        return value

    def option_problems(self) -> list[str]:
        """What is wrong with this field's options; Options reports each as a
        declaration problem naming model and field (so ``manage.py check`` does too)."""
        problems = [
            f"{option}={getattr(self, option)!r} must be True or False."
            for option in ("null", "blank", "editable")
            if not isinstance(getattr(self, option), bool)
        ]
        if not _iterable(self.validators) or not all(callable(v) for v in self.validators):
            problems.append(f"validators={self.validators!r} must be a list of callables.")
        if self.choices is not None:
            problems += self.choice_problems()
        return problems

    def choice_problems(self) -> list[str]:
        """``choices`` as Django takes them (pairs, or named groups of pairs),
        each value one this field can store."""
        if not self.takes_choices:
            return [f"{type(self).__name__} does not take choices."]
        try:
            pairs = self.flatchoices
            if not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs):
                raise TypeError
        except (TypeError, ValueError):
            return [
                f"choices={self.choices!r} must be (value, label) pairs, or (group name, "
                "[(value, label), ...]) groups, or a Django Choices class."
            ]
        problems = []
        for value, _ in pairs:
            try:
                self.encode_choice(value)
            except ValidationError as exc:
                problems.append(f"choice {value!r} cannot be stored: {exc.reason}")
        return problems

    def encode_choice(self, value: Any) -> Any:
        """A choice is a value of the field (a member, for a set)."""
        return self.encode(value)

    # --- the value's other forms. Each field type owns them, as Django's fields own
    # formfield(): forms, the admin, DRF, to_dict() and dump/load ask the field.

    no_form_field: ClassVar[str] = ""  # why this type has no form field ("": it has one)

    def formfield(self, **kwargs: Any) -> forms.Field | None:
        """The form field (Django's ``Field.formfield()``), or None when the type has
        none (``no_form_field``). Options map as in Django: ``verbose_name`` ->
        label, ``help_text``, ``blank`` -> not required, ``default`` -> initial,
        ``choices`` -> a choice field, and the type's own limits (``form_options()``).
        ``kwargs``, ``form_class`` included, override any of them."""
        if self.no_form_field:
            return None
        options: dict[str, Any] = {
            "required": not self.blank,
            "label": capfirst(self.verbose_name),
            "help_text": self.help_text,
        }
        if self.has_default():
            options["initial"] = self.default
        typed = self.form_options() if self.choices is None else formfields.choice_options(self)
        options.update(typed)
        options.update(kwargs)
        form_class = options.pop("form_class")
        return form_class(**options)  # type: ignore[no-any-return]

    def form_options(self) -> dict[str, Any]:
        """``form_class`` and its options for this type (here: JSON, exact numbers)."""
        return dict(formfields.JSON_OPTIONS)

    def serializer_field(self, **options: Any) -> Any:
        """The Django REST framework field, as DRF's ``ModelSerializer`` builds one
        from a model field: the type's own (``serializer_type()``), or a choice field
        for ``choices``; ``validators``; ``null`` -> ``allow_null``; a default, ``null``
        or ``blank`` -> not required; ``editable=False`` -> read-only; the declared
        ``verbose_name`` and ``help_text``. ``options`` override any of them. Needs
        DRF (the ``drf`` extra), imported only now."""
        from . import serializerfields as drf

        if self.choices is None:
            serializer_class, kwargs = self.serializer_type(drf)
        elif self.is_set:
            serializer_class = drf.serializers.MultipleChoiceField
            kwargs = {"choices": self.choices}
        else:
            serializer_class = drf.serializers.ChoiceField
            kwargs = {"choices": self.choices, "allow_blank": self.blank}
        kwargs["validators"] = list(self.validators)
        if self.null:
            kwargs["allow_null"] = True
        if self.null or self.blank or self.has_default() or self.is_set:
            kwargs["required"] = False
        if not self.editable:
            kwargs.update(read_only=True, required=False)
        if self._verbose_name:
            kwargs["label"] = capfirst(self._verbose_name)
        if self.help_text:
            kwargs["help_text"] = self.help_text
        kwargs.update(options)
        return serializer_class(**kwargs)

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        """This type's DRF field class and its options (``drf``: the module of
        DRF's ``serializers`` and the app's own DRF fields). Here: JSON."""
        return drf.serializers.JSONField, {}

    def to_json(self, value: Any) -> Any:
        """``value`` in its typed JSON form (``to_dict()``, dump lines; see
        ``dynamo_app.data.serialization``), checked by ``encode()`` first."""
        if value is None:
            return None
        encoded = self.encode(value)
        return [] if encoded is None else jsonform.scalar_to_json(encoded)

    def from_json(self, value: Any) -> Any:
        """The value of ``to_json()``'s form; ``ValidationError`` naming model and
        field when it is not that form."""
        if value is None:
            return None
        try:
            return self.json_value(value)
        except ValidationError:
            raise
        except jsonform.CONVERSION_ERRORS:
            raise self.invalid(value, f"{self.description} in its JSON form") from None

    def json_value(self, value: Any) -> Any:
        """``from_json()`` without its error message: read as the wire type's form."""
        return self.decode_slow(jsonform.scalar_from_json(self.wire_type, value))


# --- scalars ------------------------------------------------------------------------


class StringField(Field[_Str]):
    wire_type = key_type = "S"
    python_types = (str,)
    description = "a string"

    @overload
    def __init__(
        self: StringField[str],
        *,
        max_length: int | None = None,
        null: Literal[False] = False,
        **options: Unpack[FieldOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: StringField[str | None],
        *,
        max_length: int | None = None,
        null: bool,
        **options: Unpack[FieldOptions],
    ) -> None: ...
    def __init__(self, *, max_length: int | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.max_length = max_length

    def encode(self, value: Any) -> dict[str, Any]:
        if type(value) is not str:
            if not isinstance(value, str):
                raise self.invalid(value)
            value = str(value)
        if self.max_length is not None and len(value) > self.max_length:
            raise self.invalid(value, f"at most {self.max_length} characters")
        if not value.isascii():
            try:
                value.encode()
            except UnicodeEncodeError:
                raise self.invalid(value, "valid Unicode text (no lone surrogates)") from None
        return {"S": value}

    def decode(self, value: dict[str, Any]) -> Any:
        return value["S"]

    def option_problems(self) -> list[str]:
        length = self.max_length
        problems = super().option_problems()
        if length is not None and (type(length) is not int or length < 1):
            problems.insert(0, f"max_length={length!r} must be a positive integer.")
        return problems

    def form_options(self) -> dict[str, Any]:
        return {
            "form_class": forms.CharField,
            "max_length": self.max_length,
            "empty_value": None if self.null else "",
        }

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        options = {"max_length": self.max_length, "allow_blank": self.blank}
        return drf.serializers.CharField, {**options, "trim_whitespace": False}

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        if self.max_length is not None:
            return None
        # Up to 4 UTF-8 bytes a character: within the key limit without encoding.
        guard = f" and 0 < len({var}) <= {key_limit // 4}" if key_limit else ""
        return f"type({var}) is str{guard}", f'{{"S": {var}}}'

    def size_template(self, var: str) -> str | None:
        return f"(len({var}) if {var}.isascii() else len({var}.encode()))"

    def decode_template(self, var: str) -> str | None:
        return f'{var}["S"]'


class _NumberField(Field[_T]):
    wire_type = key_type = "N"

    def size_template(self, var: str) -> str | None:
        # The inline forms write at most 38 digits: DynamoDB counts at most this.
        return str(wire.MAX_NUMBER_SIZE)

    def encode_number(self, value: Any) -> dict[str, Any]:
        try:
            return {"N": wire.number_text(value)}
        except wire.WireError as exc:
            raise self.invalid(value, f"{self.description} ({exc})") from None


class IntegerField(_NumberField[_Int]):
    """Python ``int`` of up to 38 digits (DynamoDB's precision), exactly."""

    python_types = (int,)
    description = "an integer"

    @overload
    def __init__(
        self: IntegerField[int], *, null: Literal[False] = False, **options: Unpack[FieldOptions]
    ) -> None: ...
    @overload
    def __init__(
        self: IntegerField[int | None], *, null: bool, **options: Unpack[FieldOptions]
    ) -> None: ...
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)

    def encode(self, value: Any) -> dict[str, Any]:
        if type(value) is int and -_INT_LIMIT < value < _INT_LIMIT:
            return {"N": str(value)}
        if isinstance(value, bool):
            raise self.invalid(value)
        if isinstance(value, int):
            return self.encode_number(int(value))
        if isinstance(value, Decimal) and value.is_finite() and value == value.to_integral():
            return self.encode_number(value)
        raise self.invalid(value)

    def decode(self, value: dict[str, Any]) -> Any:
        return int(value["N"])

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        guard = f"type({var}) is int and {-_INT_LIMIT} < {var} < {_INT_LIMIT}"
        return guard, f'{{"N": str({var})}}'

    def decode_template(self, var: str) -> str | None:
        return f'int({var}["N"])'

    def form_options(self) -> dict[str, Any]:
        return {"form_class": forms.IntegerField, **formfields.limits(self)}

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        return drf.serializers.IntegerField, {}

    def decode_other(self, value: dict[str, Any]) -> Any:
        number = Decimal(value["N"]) if "N" in value else None
        if number is not None and number == number.to_integral():
            return int(number)
        return NOT_PROVIDED


class VersionField(IntegerField[int | None]):
    """Optimistic locking: every save, update and delete of an instance is
    conditioned on the version it read, and increments it. A write based on a
    stale read raises ``StaleObjectError`` and changes nothing.

    ``None`` until the instance is first written (then 1); never set it by hand.
    """

    description = "a version number (managed by dynamo_app)"
    takes_choices = False

    def __init__(self, **options: Any) -> None:
        for option in ("partition_key", "sort_key", "default", "choices"):
            if option in options:
                raise ModelDefinitionError(f"VersionField() does not take {option}=.")
        options.setdefault("blank", True)
        options.setdefault("editable", False)
        super().__init__(null=True, **options)

    def form_options(self) -> dict[str, Any]:
        """Hidden: the version the form was filled from conditions its write."""
        return {"form_class": forms.IntegerField, "widget": forms.HiddenInput, "required": False}


class SequenceField(IntegerField[int]):
    """An integer filled from a sequence when an item is created without one:
    ``1, 2, 3, ...`` as Django's ``AutoField`` gives, for a partition key
    (``/tickets/1234/``) or a display number beside a UUID key.

    ``cache``: how many numbers a process reserves with one request. 1 (the
    default): strictly increasing in the order items are created, a request
    per item. Larger (100, 65536): a request per block, numbers not in order
    across processes and gaps after a restart; never a duplicate either way.
    ``sequence``: the sequence's name (default ``"<table>.<attribute>"``);
    fields naming the same sequence share its numbers.
    ``None`` until the item is first written; a value given is kept.
    """

    description = "a sequence number (filled by dynamo_app when unset)"
    takes_choices = False

    def __init__(self, *, cache: int = 1, sequence: str | None = None, **options: Any) -> None:
        for option in ("default", "choices", "null"):
            if option in options:
                raise ModelDefinitionError(f"SequenceField() does not take {option}=.")
        check_cache(cache, "SequenceField()")
        options.setdefault("blank", True)
        options.setdefault("editable", False)
        super().__init__(**options)
        self.cache = cache
        self.sequence_name = sequence
        self._sequence: Sequence | None = None
        if sequence is not None:
            self._sequence = Sequence(sequence, cache)  # a bad name or cache fails here

    def clone(self) -> Field:
        field = super().clone()
        assert isinstance(field, SequenceField)
        if self.sequence_name is None:
            field._sequence = None  # a subclass's own table, its own sequence
        return field

    def clean(self, value: Any, key_limit: int | None = None) -> Any:
        """``None`` passes: the first save fills it (an unsaved form's instance)."""
        return None if value is None else super().clean(value, key_limit)

    fills_itself = True

    def pre_save(self, obj: Any, add: bool) -> Any:
        """The next number for an instance never written without one."""
        value = obj.__dict__[self.name]
        return self.sequence.next() if add and value is None else value

    @property
    def sequence(self) -> Sequence:
        if self._sequence is None:
            name = f"{self.model._meta.table_name}.{self.db_name}"
            self._sequence = Sequence(name, self.cache)
        return self._sequence


class DecimalField(_NumberField[_Decimal]):
    """Exact decimal numbers (``Decimal``) of up to 38 significant digits.

    ``int`` and ``float`` values are accepted too; a float is taken at its
    shortest repr (``0.1`` is stored as ``0.1``), never at its binary value.

    ``max_digits`` / ``decimal_places`` limit the digits in total and after
    the point, as Django's; a value beyond them is refused, never rounded.
    They apply to the number, not its spelling: DynamoDB stores ``1.50`` as
    ``1.5``, so ``Decimal("1.50")`` has one decimal place.
    """

    python_types = (Decimal, int, float)
    description = "a Decimal"

    @overload
    def __init__(
        self: DecimalField[Decimal],
        *,
        max_digits: int | None = None,
        decimal_places: int | None = None,
        null: Literal[False] = False,
        **options: Unpack[FieldOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: DecimalField[Decimal | None],
        *,
        max_digits: int | None = None,
        decimal_places: int | None = None,
        null: bool,
        **options: Unpack[FieldOptions],
    ) -> None: ...
    def __init__(
        self, *, max_digits: int | None = None, decimal_places: int | None = None, **options: Any
    ) -> None:
        super().__init__(**options)
        self.max_digits = max_digits
        self.decimal_places = decimal_places

    if TYPE_CHECKING:

        def __set__(self, instance: Model, value: _Decimal | int | float) -> None: ...

    def option_problems(self) -> list[str]:
        return [*self._digit_problems(), *super().option_problems()]

    def _digit_problems(self) -> list[str]:
        problems: list[str] = []
        for option, least in (("max_digits", 1), ("decimal_places", 0)):
            value = getattr(self, option)
            if value is not None and (type(value) is not int or value < least):
                problems.append(f"{option}={value!r} must be an integer of at least {least}.")
        if problems:
            return problems
        if self.max_digits is not None and self.max_digits > wire.MAX_DIGITS:
            problems.append(
                f"max_digits={self.max_digits} is over the {wire.MAX_DIGITS} significant digits "
                "DynamoDB keeps."
            )
        max_digits, decimal_places = self.max_digits, self.decimal_places
        if max_digits is not None and decimal_places is not None and decimal_places > max_digits:
            problems.append(f"decimal_places={decimal_places} is over max_digits={max_digits}.")
        return problems

    def encode(self, value: Any) -> dict[str, Any]:
        if isinstance(value, bool) or not isinstance(value, (Decimal, int, float)):
            raise self.invalid(value)
        if self.max_digits is not None or self.decimal_places is not None:
            self._check_digits(value)
        return self.encode_number(value)

    def _check_digits(self, value: int | float | Decimal) -> None:
        """Refuse a value with more digits than declared (Django's rules, on the number)."""
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
        if not number.is_finite() or not number:
            return  # not finite: encode_number says why; zero fits any shape
        shape = number.as_tuple()
        digits, exponent = shape.digits, int(shape.exponent)
        while exponent < 0 and digits[-1] == 0:  # 1.50 is 1.5
            digits, exponent = digits[:-1], exponent + 1
        places = max(0, -exponent)
        whole = max(0, len(digits) + exponent)
        max_digits, decimal_places = self.max_digits, self.decimal_places
        if max_digits is not None and whole + places > max_digits:
            raise self.invalid(value, f"a Decimal of at most {max_digits} digits")
        if decimal_places is not None and places > decimal_places:
            raise self.invalid(value, f"a Decimal of at most {decimal_places} decimal places")
        whole_limit = None if max_digits is None else max_digits - (decimal_places or 0)
        if whole_limit is not None and whole > whole_limit:
            raise self.invalid(
                value, f"a Decimal of at most {whole_limit} digits before the decimal point"
            )

    def decode(self, value: dict[str, Any]) -> Any:
        return Decimal(value["N"])

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        if self.max_digits is not None or self.decimal_places is not None:
            return None  # the limits are checked by encode()
        # A finite number whose text has no exponent and at most 38 characters has
        # at most 38 significant digits and an exponent well inside DynamoDB's range.
        # A zero is "0" whatever its spelling, as encode() sends it (DynamoDB keeps 0).
        guard = (
            f"type({var}) is Decimal and {var}.is_finite() and len(_t := str({var})) <= 38 "
            'and "E" not in _t'
        )
        return guard, f'{{"N": _t if {var} else "0"}}'

    def decode_template(self, var: str) -> str | None:
        return f'Decimal({var}["N"])'

    def form_options(self) -> dict[str, Any]:
        return {
            "form_class": forms.DecimalField,
            "max_digits": self.max_digits,
            "decimal_places": self.decimal_places,
            **formfields.limits(self),
        }

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        digits = {"max_digits": self.max_digits, "decimal_places": self.decimal_places}
        return drf.serializers.DecimalField, digits


class FloatField(_NumberField[_Float]):
    """Python ``float`` (IEEE 754 double, about 15-17 significant digits).

    Stored as the float's shortest repr, so every float reads back as exactly
    the same float. For money or more digits use ``DecimalField``.
    """

    python_types = (float, int)
    description = "a float"

    @overload
    def __init__(
        self: FloatField[float], *, null: Literal[False] = False, **options: Unpack[FieldOptions]
    ) -> None: ...
    @overload
    def __init__(
        self: FloatField[float | None], *, null: bool, **options: Unpack[FieldOptions]
    ) -> None: ...
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)

    def encode(self, value: Any) -> dict[str, Any]:
        if type(value) is float:
            magnitude = abs(value)
            if magnitude < 1e126 and (magnitude >= 1e-130 or magnitude == 0.0):
                return {"N": repr(value)}
            if value != value or magnitude == float("inf"):
                raise self.invalid(value, "a finite float")
            raise self.invalid(value, "a float within DynamoDB's range (1E-130 to 9.9E+125)")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.invalid(value)
        return self.encode(float(value))

    def decode(self, value: dict[str, Any]) -> Any:
        return float(value["N"])

    def decode_template(self, var: str) -> str | None:
        return f'float({var}["N"])'

    def form_options(self) -> dict[str, Any]:
        return {"form_class": forms.FloatField, **formfields.limits(self)}

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        return drf.serializers.FloatField, {}


class BooleanField(Field[_Bool]):
    wire_type = "BOOL"
    python_types = (bool,)
    description = "True or False"

    @overload
    def __init__(
        self: BooleanField[bool], *, null: Literal[False] = False, **options: Unpack[FieldOptions]
    ) -> None: ...
    @overload
    def __init__(
        self: BooleanField[bool | None], *, null: bool, **options: Unpack[FieldOptions]
    ) -> None: ...
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)

    def encode(self, value: Any) -> dict[str, Any]:
        if value is True or value is False:
            return {"BOOL": value}
        raise self.invalid(value)

    def decode(self, value: dict[str, Any]) -> Any:
        return value["BOOL"]

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        return f"{var} is True or {var} is False", f'{{"BOOL": {var}}}'

    def size_template(self, var: str) -> str | None:
        return "1"

    def decode_template(self, var: str) -> str | None:
        return f'{var}["BOOL"]'

    def form_options(self) -> dict[str, Any]:
        form_class = forms.NullBooleanField if self.null else forms.BooleanField
        return {"form_class": form_class, "required": False}  # unchecked is False

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        return drf.serializers.BooleanField, {}


class BinaryField(Field[_Bytes]):
    wire_type = key_type = "B"
    python_types = (bytes, bytearray, memoryview)
    description = "bytes"
    no_form_field = "bytes have no text form to type in"

    @overload
    def __init__(
        self: BinaryField[bytes], *, null: Literal[False] = False, **options: Unpack[FieldOptions]
    ) -> None: ...
    @overload
    def __init__(
        self: BinaryField[bytes | None], *, null: bool, **options: Unpack[FieldOptions]
    ) -> None: ...
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)

    if TYPE_CHECKING:

        def __set__(self, instance: Model, value: _Bytes | bytearray | memoryview) -> None: ...

    def encode(self, value: Any) -> dict[str, Any]:
        if type(value) is bytes:
            return {"B": value}
        if isinstance(value, (bytes, bytearray, memoryview)):
            return {"B": bytes(value)}
        raise self.invalid(value)

    def decode(self, value: dict[str, Any]) -> Any:
        return bytes(value["B"])

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        guard = f" and 0 < len({var}) <= {key_limit}" if key_limit else ""
        return f"type({var}) is bytes{guard}", f'{{"B": {var}}}'

    def size_template(self, var: str) -> str | None:
        return f"len({var})"

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        return drf.BinaryField, {}


class _SelfFillingOptions(FieldOptions, total=False):
    """A self-filling field's options (``_SelfFillingField``), for its overloads."""

    auto_now: bool
    auto_now_add: bool


class _SelfFillingField(Field[_T]):
    """A date or time that ``auto_now`` / ``auto_now_add`` fill at a write, as
    Django's: ``auto_now``, at every whole-item write; ``auto_now_add``, when the
    item is created. ``update()`` writes only what it names, as Django's
    ``QuerySet.update()`` leaves ``auto_now`` alone. Such a field is
    ``editable=False`` and ``blank=True``, and takes no ``default`` or ``choices``."""

    filled_with: ClassVar[str] = ""  # what a fill holds, for messages ("time", "date")

    def __init__(
        self, *, auto_now: bool = False, auto_now_add: bool = False, **options: Any
    ) -> None:
        if auto_now or auto_now_add:
            given: list[str] = [o for o in ("default", "choices") if o in options]
            if auto_now and auto_now_add:
                given.insert(0, "auto_now_add")
            if given:
                raise ModelDefinitionError(
                    f"{type(self).__name__}({'auto_now' if auto_now else 'auto_now_add'}=True) "
                    f"fills itself, so it takes no {', '.join(given)}= (as Django's). auto_now: "
                    f"the {self.filled_with} of every save; auto_now_add: the "
                    f"{self.filled_with} the item was created."
                )
            options.setdefault("editable", False)
            options.setdefault("blank", True)
        super().__init__(**options)
        self.auto_now = auto_now
        self.auto_now_add = auto_now_add

    def now(self) -> Any:
        """The value a fill writes."""
        raise NotImplementedError

    @property
    def fills_itself(self) -> bool:  # type: ignore[override]
        return self.auto_now or self.auto_now_add

    def pre_save(self, obj: Any, add: bool) -> Any:
        if self.auto_now or (self.auto_now_add and add):
            return self.now()
        return obj.__dict__[self.name]

    def created_value(self) -> Any:
        return self.now() if self.fills_itself else super().created_value()

    def clean(self, value: Any, key_limit: int | None = None) -> Any:
        """``None`` passes for a self-filling field: the write fills it."""
        return None if value is None and self.fills_itself else super().clean(value, key_limit)


class DateTimeField(_SelfFillingField[_DateTime]):
    """A timezone-aware ``datetime``, stored in UTC.

    By default an ISO-8601 string of fixed width (``2024-05-01T09:30:00.000000Z``),
    so string order is time order and it can be a sort key. ``epoch=True``
    stores whole seconds since 1970 as a number instead, which is what
    DynamoDB's TTL reads (sub-second precision is dropped). ``auto_now`` and
    ``auto_now_add`` fill it with ``timezone.now()``.
    """

    python_types = (datetime,)
    description = "a timezone-aware datetime"
    filled_with = "time"

    @overload
    def __init__(
        self: DateTimeField[datetime],
        *,
        epoch: bool = False,
        null: Literal[False] = False,
        **options: Unpack[_SelfFillingOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: DateTimeField[datetime | None],
        *,
        epoch: bool = False,
        null: bool,
        **options: Unpack[_SelfFillingOptions],
    ) -> None: ...
    def __init__(self, *, epoch: bool = False, **options: Any) -> None:
        super().__init__(**options)
        self.epoch = epoch

    def now(self) -> datetime:
        return timezone.now()

    @property
    def wire_type(self) -> str:  # type: ignore[override]
        return "N" if self.epoch else "S"

    @property
    def key_type(self) -> str:  # type: ignore[override]
        return self.wire_type

    def encode(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, datetime) or value.tzinfo is None:
            raise self.invalid(
                value, "a timezone-aware datetime (e.g. django.utils.timezone.now())"
            )
        try:
            utc = value.astimezone(UTC)
        except OverflowError:
            raise self.invalid(value, "a datetime whose UTC time is within years 1-9999") from None
        if self.epoch:
            return {"N": str((utc - EPOCH) // timedelta(seconds=1))}
        return {"S": utc_text(utc)}

    def decode(self, value: dict[str, Any]) -> Any:
        if self.epoch:
            return EPOCH + timedelta(seconds=int(value["N"]))
        parsed = datetime.fromisoformat(value["S"])
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        if self.epoch:
            return None
        # A datetime already in UTC (timezone.now() is) needs no astimezone(), which
        # with its result would cost more than the text itself.
        return f"type({var}) is datetime and {var}.tzinfo is UTC", f'{{"S": utc_text({var})}}'

    def size_template(self, var: str) -> str | None:
        return str(len("2024-05-01T09:30:00.000000Z"))

    def decode_template(self, var: str) -> str | None:
        if self.epoch:
            return None
        return f'(_d if (_d := fromiso({var}["S"])).tzinfo is not None else _d.replace(tzinfo=UTC))'

    def decode_other(self, value: dict[str, Any]) -> Any:
        if self.epoch and "N" in value:
            return EPOCH + timedelta(seconds=float(Decimal(value["N"])))
        return NOT_PROVIDED

    def form_options(self) -> dict[str, Any]:
        return {"form_class": forms.DateTimeField}

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        return drf.serializers.DateTimeField, {}

    def to_json(self, value: Any) -> Any:
        """ISO-8601 in UTC with microseconds, whether stored as text or epoch."""
        if value is None:
            return None
        self.encode(value)  # the field's own checks (aware, in range)
        return utc_text(value.astimezone(UTC))

    def json_value(self, value: Any) -> Any:
        parsed = datetime.fromisoformat(jsonform.string(value))
        return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=UTC)


class DateField(_SelfFillingField[_Date]):
    """A calendar ``date``, stored as ``YYYY-MM-DD`` text: fixed width (years 0001
    to 9999), so string order is date order and it can be a sort key or part of
    a key template.

    A ``datetime`` is refused, though it is a subclass of ``date``. Django's
    ``DateField`` takes one and keeps its date (in the default time zone when
    aware); here that would store something other than what was given, silently
    dropping the time, and for an aware value the date depends on the zone it is
    read in. So the caller says which date it means: ``value.date()``, or
    ``timezone.localdate(value)`` for the date where the user is. DRF's
    ``DateField`` refuses a datetime for the same reason.

    ``auto_now`` and ``auto_now_add`` fill it with ``datetime.date.today()``, as
    Django's ``DateField`` does: the date in the process's zone, which Django sets
    to ``TIME_ZONE`` (on Unix), not the zone a request activated.
    """

    wire_type = key_type = "S"
    python_types = (date,)
    description = "a date"
    filled_with = "date"

    @overload
    def __init__(
        self: DateField[date],
        *,
        null: Literal[False] = False,
        **options: Unpack[_SelfFillingOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: DateField[date | None], *, null: bool, **options: Unpack[_SelfFillingOptions]
    ) -> None: ...
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)

    def now(self) -> date:
        return date.today()

    def encode(self, value: Any) -> dict[str, Any]:
        if type(value) is date:
            return {"S": value.isoformat()}
        if isinstance(value, datetime):
            raise self.invalid(
                value,
                "a date, not a datetime (pass value.date(), or timezone.localdate(value) for "
                "the date where the user is: a DateField drops no time silently)",
            )
        if not isinstance(value, date):
            raise self.invalid(value, "a date (datetime.date)")
        return {"S": date.isoformat(value)}

    def decode(self, value: dict[str, Any]) -> Any:
        return date.fromisoformat(value["S"])

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        # Ten characters: within any key limit.
        return f"type({var}) is date", f'{{"S": {var}.isoformat()}}'

    def size_template(self, var: str) -> str | None:
        return str(len("2024-05-01"))

    def decode_template(self, var: str) -> str | None:
        return f'fromisodate({var}["S"])'

    def form_options(self) -> dict[str, Any]:
        return {"form_class": forms.DateField}

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        return drf.serializers.DateField, {}


class UUIDField(Field[_UUID]):
    """A ``uuid.UUID``, stored as its canonical string."""

    wire_type = key_type = "S"
    python_types = (uuid.UUID, str)
    description = "a UUID"

    @overload
    def __init__(
        self: UUIDField[uuid.UUID], *, null: Literal[False] = False, **options: Unpack[FieldOptions]
    ) -> None: ...
    @overload
    def __init__(
        self: UUIDField[uuid.UUID | None], *, null: bool, **options: Unpack[FieldOptions]
    ) -> None: ...
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)

    if TYPE_CHECKING:

        def __set__(self, instance: Model, value: _UUID | str) -> None: ...

    def encode(self, value: Any) -> dict[str, Any]:
        if isinstance(value, uuid.UUID):
            return {"S": str(value)}
        if isinstance(value, str):
            try:
                return {"S": str(uuid.UUID(value))}
            except ValueError:
                pass
        raise self.invalid(value)

    def decode(self, value: dict[str, Any]) -> Any:
        return uuid.UUID(value["S"])

    def form_options(self) -> dict[str, Any]:
        return {"form_class": forms.UUIDField}

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        return drf.serializers.UUIDField, {}


# --- documents ------------------------------------------------------------------------


class JSONField(Field[Any]):
    """Nested maps and lists (and strings, numbers, booleans, None) stored natively.

    Stored as DynamoDB maps and lists, not as a JSON string, so conditions and
    updates can reach inside (``Attr("profile.city")``). Numbers read back as
    ``int`` or exact ``Decimal`` (never float).
    """

    wire_type = "M"
    description = "a JSON-like value"
    takes_choices = False

    def encode(self, value: Any) -> dict[str, Any]:
        try:
            return wire.encode(value)
        except wire.WireError as exc:
            raise self.invalid(value, f"a JSON-like value ({exc})") from None

    def decode(self, value: dict[str, Any]) -> Any:
        return wire.decode(value)

    encode_element = encode

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        return _json_template(f"{var} is not None", var, sized=False)[:2]

    def sized_template(self, var: str, key_limit: int | None) -> tuple[str, str, str] | None:
        return _json_template(f"{var} is not None", var, sized=True)

    def decode_template(self, var: str) -> str | None:
        return f"decode_json({var})"

    def to_json(self, value: Any) -> Any:
        """DynamoDB JSON: only a tag says whether ``"1.5"`` was a string or a number."""
        return None if value is None else jsonform.wire_to_json(self.encode(value))

    def json_value(self, value: Any) -> Any:
        return self.decode(jsonform.wire_from_json(value))


def _joined_size(var: str) -> str:
    """The UTF-8 bytes of a list's or set's strings: joined in one string, whose length
    is its size when it is ASCII. ``str.join`` raises ``TypeError`` on an element that
    is not a string, which sends ``encode_checked`` to ``encode()``, naming it: so the
    join is also the type check (in C, where a test per element in Python cost as
    much as the rest of a two-element list's encode)."""
    return f"(len(_j) if (_j := ''.join({var})).isascii() else len(_j.encode()))"


def _json_template(guard: str, var: str, *, sized: bool) -> tuple[str, str, str]:
    """A JSON-like value of the common kinds, encoded (and sized) in one walk by
    ``wire.encode_common``; anything else takes ``encode()``, which names it."""
    common = f"(_c := encode_common({var}, {sized})) is not None"
    return f"{guard} and {common}", "_c[0]", "_c[1]"


def _bind_inner(inner: Field | type[Field] | None) -> Field | None:
    if inner is None:
        return None
    field = inner() if isinstance(inner, type) else inner.clone()
    if not isinstance(field, Field):
        raise ModelDefinitionError(f"of= takes a field, got {inner!r}")
    return field


class ListField(Field[_List]):
    """A list whose elements are all of one field type: ``ListField(of=IntegerField())``."""

    wire_type = "L"
    python_types = (list, tuple)
    description = "a list"
    takes_choices = False

    @overload
    def __init__(
        self: ListField[list[_Member]],
        *,
        of: Field[_Member] | type[Field[_Member]],
        null: Literal[False] = False,
        **options: Unpack[FieldOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: ListField[list[_Member] | None],
        *,
        of: Field[_Member] | type[Field[_Member]],
        null: bool,
        **options: Unpack[FieldOptions],
    ) -> None: ...
    def __init__(self, *, of: Field | type[Field], **options: Any) -> None:
        super().__init__(**options)
        self.of: Field = _bind_inner(of)  # type: ignore[assignment]

    def bind(self, model: Any, name: str) -> None:
        super().bind(model, name)
        self.of.bind(model, f"{name}[]")

    def clone(self) -> Field:
        field = super().clone()
        assert isinstance(field, ListField)
        field.of = self.of.clone()
        return field

    def encode(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, (list, tuple)):
            raise self.invalid(value)
        encode = self.of.encode
        out = []
        for item in value:
            encoded = encode(item) if item is not None else None
            if encoded is None:
                raise self.of.invalid(item)
            out.append(encoded)
        return {"L": out}

    def encode_element(self, value: Any) -> dict[str, Any]:
        return self.of.encode_element(value)

    def option_problems(self) -> list[str]:
        return [*super().option_problems(), *self.of.option_problems()]

    def decode(self, value: dict[str, Any]) -> Any:
        decode = self.of.decode_slow
        return [decode(item) for item in value["L"]]

    def _of_plain_strings(self) -> bool:
        return type(self.of) is StringField and self.of.max_length is None

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        if not self._of_plain_strings():
            return None
        # Built with a type test per element; any other element: encode() says why.
        built = f'len(_l := [{{"S": x}} for x in {var} if type(x) is str]) == len({var})'
        return f"type({var}) is list and {built}", '{"L": _l}'

    def sized_template(self, var: str, key_limit: int | None) -> tuple[str, str, str] | None:
        if not self._of_plain_strings():
            return None
        # A byte per element, and its text: all of it joined in one string, which also
        # checks that every element is a string.
        size = f"3 + len({var}) + {_joined_size(var)}"
        return f"type({var}) is list", f'{{"L": [{{"S": x}} for x in {var}]}}', size

    def decode_template(self, var: str) -> str | None:
        inner = self.of.decode_template("x")
        return None if inner is None else f'[{inner} for x in {var}["L"]]'

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        return drf.serializers.ListField, {"child": self.of.serializer_field()}

    def to_json(self, value: Any) -> Any:
        """A list of the elements' own JSON forms."""
        if value is None:
            return None
        self.encode(value)
        return [self.of.to_json(v) for v in value]

    def json_value(self, value: Any) -> Any:
        if not isinstance(value, list):
            raise TypeError(value)
        return [self.of.from_json(v) for v in value]


class MapField(Field[_Map]):
    """A dict with string keys; values of one field type (``of=``) or JSON-like."""

    wire_type = "M"
    python_types = (dict,)
    description = "a dict with string keys"
    takes_choices = False

    @overload
    def __init__(
        self: MapField[dict[str, _Member]],
        *,
        of: Field[_Member] | type[Field[_Member]],
        null: Literal[False] = False,
        **options: Unpack[FieldOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: MapField[dict[str, _Member] | None],
        *,
        of: Field[_Member] | type[Field[_Member]],
        null: bool,
        **options: Unpack[FieldOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: MapField[dict[str, Any]],
        *,
        of: None = None,
        null: Literal[False] = False,
        **options: Unpack[FieldOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: MapField[dict[str, Any] | None],
        *,
        of: None = None,
        null: bool,
        **options: Unpack[FieldOptions],
    ) -> None: ...
    def __init__(self, *, of: Field | type[Field] | None = None, **options: Any) -> None:
        super().__init__(**options)
        self.of = _bind_inner(of)

    def bind(self, model: Any, name: str) -> None:
        super().bind(model, name)
        if self.of is not None:
            self.of.bind(model, f"{name}{{}}")

    def clone(self) -> Field:
        field = super().clone()
        assert isinstance(field, MapField)
        field.of = self.of.clone() if self.of is not None else None
        return field

    def encode(self, value: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.invalid(value)
        if self.of is None:
            try:
                return wire.encode(value)
            except wire.WireError as exc:
                raise self.invalid(value, f"a dict of JSON-like values ({exc})") from None
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise self.invalid(key, "string keys")
            encoded = self.of.encode(item) if item is not None else None
            if encoded is None:
                raise self.of.invalid(item)
            out[key] = encoded
        return {"M": out}

    def encode_element(self, value: Any) -> dict[str, Any]:
        return {"S": value} if isinstance(value, str) else self.encode(value)

    def option_problems(self) -> list[str]:
        inner = self.of.option_problems() if self.of is not None else []
        return [*super().option_problems(), *inner]

    def decode(self, value: dict[str, Any]) -> Any:
        if self.of is None:
            return wire.decode(value)
        decode = self.of.decode_slow
        return {key: decode(item) for key, item in value["M"].items()}

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        if self.of is not None:
            return None
        return _json_template(f"type({var}) is dict", var, sized=False)[:2]

    def sized_template(self, var: str, key_limit: int | None) -> tuple[str, str, str] | None:
        if self.of is not None:
            return None
        return _json_template(f"type({var}) is dict", var, sized=True)

    def decode_template(self, var: str) -> str | None:
        if self.of is None:
            return f'decode_map({var}["M"])'
        inner = self.of.decode_template("x")
        return None if inner is None else f'{{k: {inner} for k, x in {var}["M"].items()}}'

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        if self.of is None:
            return drf.serializers.JSONField, {}
        return drf.serializers.DictField, {"child": self.of.serializer_field()}

    def to_json(self, value: Any) -> Any:
        """The values' own JSON forms by key; without ``of=``, DynamoDB JSON."""
        if value is None:
            return None
        encoded = self.encode(value)
        if self.of is None:
            return jsonform.wire_to_json(encoded)
        return {k: self.of.to_json(v) for k, v in value.items()}

    def json_value(self, value: Any) -> Any:
        if self.of is None:
            return self.decode(jsonform.wire_from_json(value))
        if not isinstance(value, dict):
            raise TypeError(value)
        return {str(k): self.of.from_json(v) for k, v in value.items()}


# --- sets -------------------------------------------------------------------------------


class _SetField(Field[_T]):
    """A set. Empty sets are not stored (DynamoDB forbids them) and read back as ``set()``."""

    python_types = (set, frozenset)
    is_set = True

    def missing(self) -> Any:
        return set() if self.default is NOT_PROVIDED else self.get_default()

    def encode(self, value: Any) -> dict[str, Any] | None:
        if not isinstance(value, (set, frozenset, list, tuple)):
            raise self.invalid(value)
        if not value:
            return None
        return {self.wire_type: [self.encode_member(v) for v in set(value)]}

    def encode_member(self, value: Any) -> Any:
        raise NotImplementedError

    def encode_element(self, value: Any) -> dict[str, Any]:
        return {self.wire_type[0]: self.encode_member(value)}

    def encode_choice(self, value: Any) -> Any:
        """A set's choices are the members it may hold."""
        return self.encode_member(value)

    def serializer_type(self, drf: ModuleType) -> tuple[Any, dict[str, Any]]:
        return drf.SetField, {"child": self.member_serializer(drf)}

    def member_serializer(self, drf: ModuleType) -> Any:
        """The DRF field of one member."""
        raise NotImplementedError


class StringSetField(_SetField[set[str]]):
    wire_type = "SS"
    description = "a set of strings"

    def encode_member(self, value: Any) -> Any:
        if not isinstance(value, str):
            raise self.invalid(value, "strings as members")
        return value

    def decode(self, value: dict[str, Any]) -> Any:
        return set(value["SS"])

    def encode_template(self, var: str, key_limit: int | None) -> tuple[str, str] | None:
        # An empty set is not stored: encode() says so (None).
        built = f"len(_l := [x for x in {var} if type(x) is str]) == len({var})"
        return f"type({var}) is set and {var} and {built}", '{"SS": _l}'

    def sized_template(self, var: str, key_limit: int | None) -> tuple[str, str, str] | None:
        # The join that sizes the members also checks that each is a string.
        return f"type({var}) is set and {var}", f'{{"SS": (_l := list({var}))}}', _joined_size("_l")

    def decode_template(self, var: str) -> str | None:
        return f'set({var}["SS"])'

    def form_options(self) -> dict[str, Any]:
        return {"form_class": formfields.SetField}

    def member_serializer(self, drf: ModuleType) -> Any:
        return drf.serializers.CharField(trim_whitespace=False)


class NumberSetField(_SetField[set[int | Decimal]]):
    """A set of numbers; members read back as ``int`` or exact ``Decimal``."""

    wire_type = "NS"
    description = "a set of numbers"

    def encode_member(self, value: Any) -> Any:
        try:
            return wire.number_text(value)
        except wire.WireError as exc:
            raise self.invalid(value, f"numbers as members ({exc})") from None

    def decode(self, value: dict[str, Any]) -> Any:
        return {wire.parse_number(v) for v in value["NS"]}

    def form_options(self) -> dict[str, Any]:
        return {"form_class": formfields.SetField, "member": formfields.number}

    def member_serializer(self, drf: ModuleType) -> Any:
        return drf.serializers.DecimalField(max_digits=wire.MAX_DIGITS, decimal_places=None)


class BinarySetField(_SetField[set[bytes]]):
    wire_type = "BS"
    description = "a set of bytes"
    no_form_field = "bytes have no text form to type in"

    def encode_member(self, value: Any) -> Any:
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise self.invalid(value, "bytes as members")
        return bytes(value)

    def decode(self, value: dict[str, Any]) -> Any:
        return {bytes(v) for v in value["BS"]}

    def member_serializer(self, drf: ModuleType) -> Any:
        return drf.BinaryField()
