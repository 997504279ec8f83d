"""``dynamo_app.forms``: Django ModelForms for DynamoDB models.

Built on ``django.forms.BaseForm`` and Django's declarative metaclass, with
the model side read from our own ``_meta`` (Django's ``BaseModelForm``
reads an ORM ``Options`` throughout). What differs from Django's ModelForm,
because DynamoDB decides at write time:

* ``is_valid()`` runs the form's checks and the model's ``full_clean()``,
  whose ``validate_unique()`` reads the lock of a unique value the instance
  does not hold yet (one consistent GetItem; nothing when no unique value is
  new): a taken value is an error on its field then, as in Django. The write
  stays the guarantee: a value claimed between ``is_valid()`` and ``save()``,
  a taken key or a stale version is found by the conditional write.
* ``save()`` turns those refusals into form errors (``refusals()``) and
  returns ``None`` instead of a 500; so does any write of your own inside
  ``with form.refusals():``.
* On an instance that was read, key fields are disabled (a new key is a new
  item) and ``save()`` writes only the form's fields (one UpdateItem).
* A model with a ``VersionField`` gets it as a hidden field: the version the
  form was filled from conditions the write, so a stale edit is refused.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Generic, Literal, TypeVar, cast, overload

from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, FieldError, ImproperlyConfigured
from django.core.exceptions import ValidationError as DjangoValidationError
from django.forms.forms import DeclarativeFieldsMetaclass
from django.forms.models import ALL_FIELDS, ModelFormOptions
from django.forms.utils import ErrorList
from django.utils.text import capfirst, get_text_list

from .exceptions import AlreadyExists, DoesNotExist, StaleObjectError, UniqueViolation
from .exceptions import ValidationError as StoreValidationError
from .models import fields as model_fields
from .models.base import Model
from .models.formfields import SetField
from .models.validation import taken_constraints, unique_error
from .unique import LockTaken

__all__ = [
    "BaseModelForm",
    "ModelForm",
    "SetField",
    "fields_for_model",
    "formfield",
    "modelform_factory",
]

M = TypeVar("M", bound=Model)


def formfield(field: model_fields.Field, **kwargs: Any) -> forms.Field | None:
    """The form field for a model field, or None when it has none: the model
    field's own ``formfield()`` (see ``Field.formfield``)."""
    return field.formfield(**kwargs)


def fields_for_model(
    model: type[Model],
    fields: Collection[str] | str | None = None,
    exclude: Collection[str] | None = None,
    widgets: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    help_texts: dict[str, str] | None = None,
    error_messages: dict[str, dict[str, str]] | None = None,
    field_classes: dict[str, type[forms.Field]] | None = None,
) -> dict[str, forms.Field]:
    """The form fields of ``model`` (as Django's ``fields_for_model``): those named
    in ``fields`` (``"__all__"`` or None: every editable one that has a form
    field), minus ``exclude``; a ``VersionField`` is always included."""
    meta = model._meta
    names = [f.name for f in meta.fields] if fields in (None, ALL_FIELDS) else list(fields or ())
    unknown = [n for n in names if n not in meta.fields_by_name]
    if unknown:
        raise FieldError(
            f"Unknown field(s) ({', '.join(unknown)}) specified for {meta.object_name}; its "
            f"fields are {', '.join(meta.fields_by_name)}."
        )
    explicit = fields not in (None, ALL_FIELDS)
    out: dict[str, forms.Field] = {}
    for name in names:
        field = meta.fields_by_name[name]
        if exclude and name in exclude or field is meta.version:
            continue
        reason = field.no_form_field or ("" if field.editable else "not editable")
        if reason:
            if explicit:
                raise FieldError(
                    f"{meta.object_name}.{name} cannot be a form field: {reason} (a "
                    f"{type(field).__name__}). Leave it out of Meta.fields."
                )
            continue
        overrides: dict[str, Any] = {}
        for option, given in (
            ("widget", widgets),
            ("label", labels),
            ("help_text", help_texts),
            ("error_messages", error_messages),
            ("form_class", field_classes),
        ):
            if given and name in given:
                overrides[option] = given[name]
        out[name] = field.formfield(**overrides)  # type: ignore[assignment]
    if meta.version is not None:
        out[meta.version.name] = meta.version.formfield()  # type: ignore[assignment]
    return out


# --- the form -----------------------------------------------------------------------------


class ModelFormMetaclass(DeclarativeFieldsMetaclass):
    """Django's declarative form fields plus the model's, from ``Meta``."""

    def __new__(mcs, name: str, bases: tuple[type, ...], attrs: dict[str, Any]) -> type:
        new_class: Any = super().__new__(mcs, name, bases, attrs)
        opts = new_class._meta = ModelFormOptions(getattr(new_class, "Meta", None))
        if opts.model is None:
            return new_class
        if not (isinstance(opts.model, type) and issubclass(opts.model, Model)):
            raise ImproperlyConfigured(
                f"{name}.Meta.model must be a dynamo_app model; for a Django ORM model use "
                "django.forms.ModelForm."
            )
        if opts.fields is None and opts.exclude is None:
            raise ImproperlyConfigured(
                f"Creating a ModelForm without either the 'fields' attribute or the 'exclude' "
                f"attribute is prohibited; form {name} needs updating."
            )
        found = fields_for_model(
            opts.model,
            opts.fields,
            opts.exclude,
            opts.widgets,
            opts.labels,
            opts.help_texts,
            opts.error_messages,
            opts.field_classes,
        )
        found.update(new_class.declared_fields)
        new_class.base_fields = found
        return new_class  # type: ignore[no-any-return]


class BaseModelForm(forms.BaseForm, Generic[M]):
    """A form over one DynamoDB model instance; see the module docstring."""

    _meta: ClassVar[ModelFormOptions[Any]]
    base_fields: ClassVar[dict[str, forms.Field]]
    instance: M

    def __init__(
        self,
        data: Any = None,
        files: Any = None,
        auto_id: str = "id_%s",
        prefix: str | None = None,
        initial: dict[str, Any] | None = None,
        error_class: type[ErrorList] = ErrorList,
        label_suffix: str | None = None,
        empty_permitted: bool = False,
        instance: M | None = None,
        use_required_attribute: bool | None = None,
        renderer: Any = None,
    ) -> None:
        model = self._meta.model
        if model is None:
            raise ValueError("ModelForm has no model class specified.")
        self.instance = model() if instance is None else instance
        self.editing = self.instance._state.stored is not None
        values = {name: self.instance.__dict__[name] for name in self._model_field_names()}
        super().__init__(
            data,
            files,
            auto_id,
            prefix,
            {**values, **(initial or {})},
            error_class,
            label_suffix,
            empty_permitted,
            use_required_attribute=use_required_attribute,
            renderer=renderer,
        )
        self.refusal: Exception | None = None
        for field in self.instance._meta.key_fields:
            form_field = self.fields.get(field.name)
            if isinstance(form_field, forms.CharField):
                form_field.strip = False  # " x " names another item than "x"
            if form_field is not None and self.editing:
                form_field.disabled = True  # a new key is a new item

    def _model_field_names(self) -> list[str]:
        names = self.instance._meta.fields_by_name
        return [name for name in self.base_fields if name in names]

    # --- validation: the form's, then the model's (a lock read for a new unique value)

    def _post_clean(self) -> None:
        meta = self.instance._meta
        exclude = set(meta.fields_by_name) - set(self.fields)
        for name in self._model_field_names():
            field = self.fields[name]
            if name in self.errors:
                exclude.add(name)
                continue
            value = self.cleaned_data.get(name)
            if not field.required and value in field.empty_values:
                exclude.add(name)  # the form allows it empty: as Django, the model is not asked
            if meta.fields_by_name[name].is_set and isinstance(value, list):
                value = set(value)  # a multiple choice field cleans to a list
            self.instance.__dict__[name] = value
        try:
            self.instance.full_clean(exclude=exclude, validate_unique=False)
        except DjangoValidationError as exc:
            self._update_errors(exc)
        self.validate_unique()

    def validate_unique(self) -> None:
        """As Django's: a unique value another item holds is an error now, on its
        field (``unique_error()``, as when the write refuses it). Its lock is read
        with one consistent GetItem, none for values the instance was read with;
        the values are those the write will claim, a scope not on the form (the
        key) included. Override it to skip the read: the write is the guarantee."""
        instance = self.instance
        for constraint in taken_constraints(instance, exclude=set(self.errors)):
            refusal = LockTaken(constraint, constraint.values_of(instance.__dict__))(None, 0)
            assert isinstance(refusal, UniqueViolation)  # the write's own error for it
            self.add_error(None, self.unique_error(refusal))

    def _update_errors(self, errors: DjangoValidationError) -> None:
        """Model errors onto the form: each on its field if shown, else above the form;
        ``Meta.error_messages[field][code]`` replaces a message, as in Django."""
        messages = self._meta.error_messages or {}
        by_field = errors.update_error_dict({})
        for name, field_errors in by_field.items():
            target = name if name in self.fields else None
            own = messages.get(name if target else NON_FIELD_ERRORS, {})
            for error in field_errors:
                if error.code in own:
                    error.message = own[error.code]
            self.add_error(target, field_errors)

    # --- writing

    @overload
    def save(self, commit: Literal[False]) -> M: ...
    @overload
    def save(self, commit: bool = True) -> M | None: ...
    def save(self, commit: bool = True) -> M | None:
        """Write the instance and return it, or return ``None`` with the refusal as
        form errors (see ``refusals()``). A new instance is created insert-only
        (``objects.create``); one that was read is written with
        ``save(update_fields=<the form's fields>)``, conditioned on its version.
        ``commit=False`` returns the instance unsaved, for a write of your own."""
        if self.errors:
            raise ValueError(
                f"The {self.instance._meta.object_name} could not be "
                f"{'changed' if self.editing else 'created'} because the data didn't validate."
            )
        if not commit:
            return self.instance
        with self.refusals():
            self._write()
            return self.instance
        return None

    def _write(self) -> None:
        meta = self.instance._meta
        if not self.editing:
            values = {f.name: self.instance.__dict__[f.name] for f in meta.fields}
            self.instance = type(self.instance).objects.create(**values)
            return
        keys = {f.name for f in meta.key_fields}
        names = [n for n in self._model_field_names() if n not in keys and n != _version(meta)]
        if names:
            self.instance.save(update_fields=names)

    @contextmanager
    def refusals(self) -> Iterator[None]:
        """Turn DynamoDB's refusal of a write in the block into form errors, so the
        view shows the form again instead of failing: ``UniqueViolation`` on the
        constraint's fields, ``AlreadyExists`` on the key, ``StaleObjectError``
        (and an item deleted meanwhile) above the form with the stored values.
        The refusal is kept in ``self.refusal``; anything else propagates."""
        try:
            yield
        except UniqueViolation as exc:
            self._refused(exc, self.unique_error(exc))
        except AlreadyExists as exc:
            self._refused(exc, self.exists_error(exc))
        except (StaleObjectError, DoesNotExist) as exc:
            stored = getattr(exc, "item", None)
            if isinstance(stored, Model) and self.instance._meta.version is not None:
                self._carry_version(stored)
            self._refused(exc, self.stale_error(stored))
        except StoreValidationError as exc:  # e.g. ItemTooLarge: never a 500 either
            self._refused(exc, DjangoValidationError({exc.field or NON_FIELD_ERRORS: exc.reason}))

    def _refused(self, exc: Exception, error: DjangoValidationError) -> None:
        self.refusal = exc
        fields = getattr(error, "error_dict", None)
        if fields is not None and not set(fields) <= {*self.fields, NON_FIELD_ERRORS}:
            error = DjangoValidationError(error.messages)
        self.add_error(None, error)

    def _carry_version(self, stored: Model) -> None:
        """The form shown again carries the stored version: saving it again is a
        deliberate overwrite of what the other writer saved."""
        name = _version(stored._meta)
        data = cast(Any, self.data).copy()  # a QueryDict's copy is mutable
        data[self.add_prefix(name)] = stored.__dict__[name]
        self.data = data

    # --- the messages of refusals: override to say more

    def unique_error(self, exc: UniqueViolation) -> DjangoValidationError:
        """On each of the constraint's fields the form shows (else above the form);
        ``Meta.error_messages[field]["unique"]`` replaces Django's message."""
        meta = self.instance._meta
        constraint = next(c for c in meta.unique if c.name == exc.constraint)
        error = unique_error(self.instance, constraint)
        shown = [n for n in constraint.fields if n in self.fields]
        custom = (self._meta.error_messages or {}).get(shown[0] if shown else "", {})
        if "unique" in custom:
            error = DjangoValidationError(custom["unique"], code="unique", params=error.params)
        return DjangoValidationError({name: error for name in shown} or {NON_FIELD_ERRORS: error})

    def exists_error(self, exc: AlreadyExists) -> DjangoValidationError:
        """On the key fields the form shows (else above the form)."""
        meta = self.instance._meta
        labels = get_text_list([capfirst(f.verbose_name) for f in meta.key_fields], "and")
        error = DjangoValidationError(
            "%(model_name)s with this %(field_label)s already exists.",
            code="unique",
            params={"model_name": meta.object_name, "field_label": labels},
        )
        shown = [f.name for f in meta.key_fields if f.name in self.fields]
        return DjangoValidationError({name: error for name in shown} or {NON_FIELD_ERRORS: error})

    def stale_error(self, stored: M | None) -> DjangoValidationError:
        """Above the form: the item was changed (showing the values now stored) or
        deleted since the form was filled."""
        name = self.instance._meta.object_name
        if stored is None:
            return DjangoValidationError(
                f"This {name} was deleted while you were editing it; nothing was saved.",
                code="stale",
            )
        fields = stored._meta.fields_by_name
        now = "; ".join(
            f"{self.fields[n].label}: {fields[n].display(stored.__dict__[n])}"
            for n in self._model_field_names()
            if not isinstance(self.fields[n].widget, forms.HiddenInput)
        )
        return DjangoValidationError(
            f"Someone else saved this {name} while you were editing it; it now holds {now}. "
            "Nothing was saved. Check your values and save again to replace theirs.",
            code="stale",
        )


def _version(meta: Any) -> str:
    return meta.version.name if meta.version is not None else ""


class ModelForm(BaseModelForm[M], metaclass=ModelFormMetaclass):
    """``class PlayerForm(ModelForm): class Meta: model = Player; fields = [...]``.

    ``Meta`` takes Django's options: ``model``, ``fields``, ``exclude``,
    ``widgets``, ``labels``, ``help_texts``, ``error_messages``, ``field_classes``.
    """


def modelform_factory(
    model: type[M],
    form: type[BaseModelForm[M]] = ModelForm,
    fields: Sequence[str] | str | None = None,
    exclude: Sequence[str] | None = None,
    widgets: dict[str, Any] | None = None,
    labels: dict[str, str] | None = None,
    help_texts: dict[str, str] | None = None,
    error_messages: dict[str, dict[str, str]] | None = None,
    field_classes: dict[str, type[forms.Field]] | None = None,
) -> type[BaseModelForm[M]]:
    """A ModelForm class for ``model``, as Django's ``modelform_factory`` (what an
    admin or a generic view builds its forms with)."""
    options = {
        "model": model,
        "fields": fields,
        "exclude": exclude,
        "widgets": widgets,
        "labels": labels,
        "help_texts": help_texts,
        "error_messages": error_messages,
        "field_classes": field_classes,
    }
    bases = (form.Meta,) if hasattr(form, "Meta") else ()
    meta = type("Meta", bases, {k: v for k, v in options.items() if v is not None})
    if getattr(meta, "fields", None) is None and getattr(meta, "exclude", None) is None:
        raise ImproperlyConfigured(
            "Calling modelform_factory without defining 'fields' or 'exclude' explicitly is "
            "prohibited."
        )
    name = f"{model.__name__}Form"
    return cast("type[BaseModelForm[M]]", ModelFormMetaclass(name, (form,), {"Meta": meta}))
