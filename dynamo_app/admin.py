"""``dynamo_app.admin``: Django's admin for DynamoDB models, on Django's own site.

``admin.site.register(Player, DynamoModelAdmin)`` or ``@admin.register(Player)``
on a ``DynamoModelAdmin`` subclass. The model then sits in the admin index
under its app, at Django's URLs, with Django's templates, messages and
``view``/``add``/``change``/``delete`` permissions (rows made by
``dynamo_app.permissions``). What differs is what DynamoDB makes cheap:

* The change list shows one partition at a time (``?<partition key>=<value>``,
  or ``?index=<name>&<its partition key>=<value>``; for a model in a shared table,
  one parameter per field its partition template is built from, ``?team_id=``
  for ``"TEAM#{team_id}"``, and its queries are scoped to its sort-key prefix as
  every query of it is), in sort-key order, a page
  per Query (``list_per_page`` items), paged by the signed cursors
  (``?cursor=`` forwards, ``?before=`` backwards), never by offsets (a page asks
  for one item more than it shows, to know whether another follows); ``?q=`` is
  a sort-key prefix (``begins_with``). No count unless ``show_count = True``
  (it reads the whole partition). A Scan of the whole table only with
  ``allow_scan = True``, and each page says what it cost.
* The change form is one consistent GetItem and a ``dynamo_app.forms``
  ModelForm: keys fixed on change, the version carried by the form (a stale
  save is refused, shown again with the stored values), unique values as
  field errors. A delete is conditioned on the version the confirmation page
  showed.
* Actions take the selected instances (one BatchGetItem), not a queryset.

Object ids in URLs: a key value's text (a number's digits, a binary key in
URL-safe base64); a composite key (or, in a shared table, the several fields its
key templates are built from) is ``quote(partition) + "," + quote(sort)``
with Django's ``quote`` (which escapes ``,``), and Django's admin quotes the
whole id once more into the URL, so every id is reversible (``parse_object_id``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import TYPE_CHECKING, Any, cast

from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.contrib.admin.utils import display_for_value, flatten_fieldsets, quote, unquote
from django.core import checks
from django.core.exceptions import PermissionDenied
from django.forms import Widget
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import reverse
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.safestring import SafeString
from django.utils.text import capfirst, get_text_list
from django.utils.translation import ngettext

from . import forms
from .client.requests import RequestCounter, count_requests
from .exceptions import (
    DoesNotExist,
    DynamoError,
    InvalidCursor,
    QueryError,
    ServiceError,
    StaleObjectError,
    TableNotFound,
    ValidationError,
)
from .models import fields as model_fields
from .models.base import Model
from .models.keyrules import Term, key_problems
from .models.query import MAX_LIMIT, Page, QuerySet

if TYPE_CHECKING:
    from django.db.models import QuerySet as OrmQuerySet

    from .models.options import KeySchema, Options

__all__ = ["AdminObject", "DynamoModelAdmin", "delete_selected", "object_id", "parse_object_id"]

# The change list's GET parameters (besides each key field's own name).
INDEX_VAR = "index"
SEARCH_VAR = "q"
CURSOR_VAR = "cursor"
BEFORE_VAR = "before"
VERSION_VAR = "_version"


# --- object ids: a key in a URL ---------------------------------------------------------


def _key_text(field: model_fields.Field, value: Any, limit: int) -> str:
    ((kind, raw),) = field.encode_key(value, limit).items()
    return base64.urlsafe_b64encode(raw).decode() if kind == "B" else str(raw)


def _key_value(field: model_fields.Field, text: str) -> Any:
    """The key value a text stands for, or ``ValueError``."""
    try:
        kind = str(field.key_type)
        if kind == "B":
            return field.decode({"B": base64.urlsafe_b64decode(text.encode())})
        value = field.decode({kind: text})
    except (ValueError, ArithmeticError, binascii.Error, KeyError) as exc:
        raise ValueError(text) from exc
    if text == "" or isinstance(value, Decimal) and not value.is_finite():
        raise ValueError(text)
    return value


def object_id(obj: Model) -> str:
    """The id of ``obj`` in admin URLs and ``LogEntry.object_id`` (see the module docstring)."""
    meta = obj._meta
    texts = [_key_text(f, obj.__dict__[f.name], meta.key_limits[f.name]) for f in meta.key_fields]
    return texts[0] if len(texts) == 1 else ",".join(quote(t) for t in texts)


def parse_object_id(model: type[Model], text: str) -> dict[str, Any]:
    """The key (field name -> value) an object id stands for, or ``ValueError``."""
    fields = model._meta.key_fields
    parts = [text] if len(fields) == 1 else [unquote(p) for p in text.split(",")]
    if len(parts) != len(fields):
        raise ValueError(text)
    key = {f.name: _key_value(f, part) for f, part in zip(fields, parts, strict=True)}
    try:
        model._meta.key_of(key)  # DynamoDB's key rules: digits, sizes, a template's limits
    except DynamoError as exc:
        raise ValueError(text) from exc
    return key


def _search_field(meta: Options, schema: KeySchema) -> model_fields.Field | None:
    """The field ``?q=`` is a prefix of: the sort key's last field, when a query of a
    partition takes ``begins_with`` on it (a string, written as it is in the key)."""
    if not schema.sort_fields:
        return None
    field = schema.sort_fields[-1]
    terms = [Term(f.name, f.name, f, "exact") for f in schema.partition_fields]
    terms.append(Term(f"{field.name}__begins_with", field.name, field, "begins_with"))
    return None if key_problems(meta, schema, terms) else field


class StoredText(Widget):
    """A field the change form cannot change (a stored item's key, or every field
    without the change permission), shown as Django's admin shows a read-only
    field: its text (a choice's label), not an input that looks editable."""

    def __init__(self, field: model_fields.Field) -> None:
        super().__init__()
        self.field = field

    def render(
        self, name: str, value: Any, attrs: Any = None, renderer: Any = None
    ) -> SafeString:
        shown = display_for_value(self.field.display(value), "-")
        return format_html('<div class="readonly">{}</div>', shown)

    def id_for_label(self, id_: str) -> str:
        return ""  # no input to point a label at


class AdminObject:
    """An instance as Django's admin code and templates read an ORM instance:
    ``pk`` is the object id (Django quotes it into URLs and keeps it in
    ``LogEntry.object_id``; ``Model.pk`` of a composite key is a tuple),
    ``_meta`` and ``str()`` are the instance's."""

    def __init__(self, obj: Model) -> None:
        self.obj = obj
        self.pk = object_id(obj)
        self._meta = obj._meta

    def __str__(self) -> str:
        return str(self.obj)


# --- the change list --------------------------------------------------------------------


class ChangeList:
    """One page of the change list, from the request's GET parameters: which key
    schema (table or index), which partition, which prefix, which cursor."""

    def __init__(self, request: HttpRequest, model_admin: DynamoModelAdmin) -> None:
        self.model_admin = model_admin
        self.model = model_admin.dynamo_model
        self.opts = self.model._meta
        self.params = request.GET
        self.errors: list[str] = []
        meta = self.opts
        chosen = self.params.get(INDEX_VAR)
        self.index = model_admin.default_index if chosen is None else chosen or None
        if self.index not in (None, *model_admin.get_indexes(request)):
            self.errors.append(f"{meta.object_name} offers no index {self.index!r} here.")
            self.index = None
        self.schema = meta.key_schema(self.index)
        # The fields that name a partition (one GET parameter each: the partition key,
        # or the fields its template is built from), the field the list is ordered by,
        # and the one ``?q=`` is a prefix of: the model's own fields, in both designs.
        self.partition_fields = self.schema.partition_fields
        sort = [f for f in self.schema.sort_fields if f not in self.partition_fields]
        self.sort_field = sort[0] if sort else None
        self.search_field = _search_field(meta, self.schema)
        self.partition_texts = {
            f.name: self.params.get(f.name, model_admin.default_partition(request, f))
            for f in self.partition_fields
        }
        values: dict[str, Any] = {}
        for field in self.partition_fields:
            text = self.partition_texts[field.name]
            try:
                values[field.name] = _key_value(field, text)
            except ValueError:
                if text:
                    self.errors.append(
                        f"{text!r} is not a {field.verbose_name} ({field.description})."
                    )
        # The partition's field values, once every one is given (a template of literal
        # text alone names one partition: the list opens at once).
        self.partition = values if len(values) == len(self.partition_fields) else None
        self.query = self.params.get(SEARCH_VAR, "") if self.search_field else ""
        self.scan = self.partition is None and model_admin.allow_scan and not self.errors
        self.page: Page[Any] | None = None
        self.rows: list[Model] = []
        self.next_url = self.previous_url = self.first_url = ""
        self.count: int | None = None
        self.cost: RequestCounter | None = None
        self.count_cost: RequestCounter | None = None

    # --- what is read

    def queryset(self, reverse: bool = False) -> QuerySet[Any]:
        if self.scan:
            return self.model.objects.scan()
        objects = self.model.objects
        qs = (objects.using_index(self.index) if self.index else objects).filter(
            **self.partition  # type: ignore[arg-type]
        )
        if self.query:
            qs = qs.filter(**{f"{self.search_field.name}__begins_with": self.query})  # type: ignore[union-attr]
        descending = self.model_admin.descending != reverse
        if self.sort_field is not None and (descending or self.model_admin.descending):
            qs = qs.order_by(f"{'-' if descending else ''}{self.sort_field.name}")
        return qs

    def run(self) -> None:
        """One request: the page the cursor names (``before``: the query reversed).

        It asks for one item more than it shows: whether that item came is whether
        there is a page further on, on every engine (DynamoDB hands out a cursor when
        ``Limit`` is met exactly, so a page of exactly ``Limit`` would otherwise
        lead to an empty one)."""
        if self.errors or (self.partition is None and not self.scan):
            return
        size = self.model_admin.list_per_page
        before = self.params.get(BEFORE_VAR) if self.sort_field and not self.scan else None
        cursor = None if before else self.params.get(CURSOR_VAR) or None
        qs = self.queryset(reverse=bool(before))
        with count_requests() as self.cost:
            self.page = qs.page(size=size + 1, cursor=before or cursor)
        shown = self.page.items[:size]
        further = self._further(qs, self.page, shown)
        if self.model_admin.show_count and not self.scan:
            with count_requests() as self.count_cost:
                self.count = self.queryset().count()
        self.rows = shown[::-1] if before else shown
        self._link_pages(before, cursor, further)

    @staticmethod
    def _further(qs: QuerySet[Any], page: Page[Any], shown: list[Model]) -> str | None:
        """The cursor of the page beyond the one shown, in the order read; None at the end."""
        if len(page.items) > len(shown):
            return qs.cursor_after(shown[-1])
        return page.next_cursor  # DynamoDB stopped early (1 MB a response): more may follow

    def _link_pages(self, before: str | None, cursor: str | None, further: str | None) -> None:
        """The next, previous and first page's URLs, from the page shown (read
        backwards when ``before``)."""
        pageable = self.sort_field is not None and not self.scan
        if before:
            self.previous_url = self.url(**{BEFORE_VAR: further}) if further else ""
            if self.rows:
                self.next_url = self.url(
                    **{CURSOR_VAR: self.queryset().cursor_after(self.rows[-1])}
                )
        else:
            self.next_url = self.url(**{CURSOR_VAR: further}) if further else ""
            if cursor and pageable and self.rows:
                back = self.queryset(reverse=True).cursor_after(self.rows[0])
                self.previous_url = self.url(**{BEFORE_VAR: back})
        if before or cursor:
            self.first_url = self.url()

    def url(self, **page: str | None) -> str:
        """This change list's URL with another page (no page: the first)."""
        params = {k: str(v) for k, v in self.params.items() if k not in (CURSOR_VAR, BEFORE_VAR)}
        params.update((k, v) for k, v in page.items() if v)
        return "?" + urlencode(params)

    # --- what is shown

    def headers(self) -> list[str]:
        return [self.model_admin.column_label(name) for name in self.model_admin.list_display]

    def results(self) -> list[tuple[str, str, list[Any]]]:
        """Per row: its object id, its change URL, its cells."""
        model_admin = self.model_admin
        out = []
        for obj in self.rows:
            oid = object_id(obj)
            url = model_admin.change_url(oid)
            out.append(
                (oid, url, [model_admin.cell(name, obj) for name in model_admin.list_display])
            )
        return out

    @property
    def partition_inputs(self) -> list[tuple[str, str, str]]:
        """(GET parameter, label, value) of each field that names the partition."""
        return [
            (f.name, f.verbose_name, self.partition_texts[f.name]) for f in self.partition_fields
        ]

    @property
    def partition_label(self) -> str:
        """What the page asks for to list something: "team id", "league and season"."""
        return str(get_text_list([f.verbose_name for f in self.partition_fields], "and"))

    @property
    def index_value(self) -> str:
        return self.index or ""

    @property
    def result_list(self) -> list[Model]:  # what Django's admin/actions.html counts
        return self.rows

    @property
    def result_count(self) -> int:
        return len(self.rows)

    @property
    def cost_note(self) -> str:
        """What this page cost DynamoDB, said on the page."""
        if self.cost is None or self.page is None:
            return ""
        if self.scan:
            read = ngettext("%(n)d item", "%(n)d items", self.page.scanned_count)
            note = (
                f"A Scan of the whole table (allow_scan): this page read "
                f"{read % {'n': self.page.scanned_count}} in {self.cost.summary()}; every "
                "further page reads on through the table."
            )
        else:
            note = f"This page: {self.cost.summary()}."
        if self.count_cost is not None:
            note += f" Counting the partition: {self.count_cost.summary()}."
        return note

    @property
    def indexes(self) -> list[tuple[str, str]]:
        """(value, label) of each key schema offered: the table, then indexes."""
        schemas = [("", "the table")]
        schemas += [(name, f"index {name}") for name in self.model_admin.index_names]
        return schemas


# --- the admin ----------------------------------------------------------------------------


class DynamoModelAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """A ``ModelAdmin`` for a DynamoDB model: see the module docstring.

    Takes Django's ``list_display``, ``list_per_page``, ``fields``, ``exclude``,
    ``fieldsets``, ``form`` (a ``dynamo_app.forms.ModelForm``), ``actions``,
    ``save_on_top``, ``save_as_continue``; and its own ``allow_scan``,
    ``show_count``, ``indexes``, ``default_index``, ``descending``. What reads
    an ORM queryset (``list_filter``, ``search_fields``, ``date_hierarchy``,
    ``list_editable``, ``inlines``,
    ``readonly_fields``, ``raw_id_fields``) has no meaning here and is refused
    by ``manage.py check`` (dynamo.E301).
    """

    form = forms.ModelForm  # type: ignore[assignment]
    list_per_page = 25
    # A Scan reads (and bills) the whole table; the change list makes one only if True.
    allow_scan = False
    # A count reads the whole partition (every page); shown only if True.
    show_count = False
    # The indexes the change list offers (None: every declared index), and the one it opens.
    indexes: Sequence[str] | None = None
    default_index: str | None = None
    # The change list's order: the sort key ascending, or descending (newest first).
    descending = False
    view_on_site = False
    actions: Sequence[Any] = ()  # delete_selected is added in get_actions()
    change_list_template = "dynamo_app/admin/change_list.html"
    delete_confirmation_template = "dynamo_app/admin/delete_confirmation.html"
    delete_selected_confirmation_template = "dynamo_app/admin/delete_selected_confirmation.html"
    unavailable_template = "dynamo_app/admin/unavailable.html"

    def __init__(self, model: type[Model], admin_site: admin.AdminSite) -> None:
        super().__init__(model, admin_site)
        self.meta.app_label  # noqa: B018  # no installed app: refused now, not on the first page

    # --- configuration

    @property
    def meta(self) -> Options:
        """The model's own ``_meta`` (``self.opts`` is the same, typed for Django's code)."""
        return cast("type[Model]", self.model)._meta

    @property
    def dynamo_model(self) -> type[Model]:
        return cast("type[Model]", self.model)

    @property
    def index_names(self) -> list[str]:
        declared = list(self.meta.indexes)
        return declared if self.indexes is None else [n for n in self.indexes if n in declared]

    def get_indexes(self, request: HttpRequest) -> list[str]:
        return self.index_names

    def default_partition(self, request: HttpRequest, field: model_fields.Field) -> str:
        """The text ``field`` (a field that names a partition) has when the change list
        is opened without ``?<field>=``: its default when that is a plain value (e.g. one
        league, so that the list opens at once), else none."""
        if field.has_default() and not callable(field.default):
            return _key_text(field, field.default, self.meta.key_limits[field.name])
        return ""

    def check(self, **kwargs: Any) -> list[checks.CheckMessage]:
        """Our own checks: Django's ModelAdminChecks read an ORM model's ``_meta``."""
        errors: list[checks.CheckMessage] = []
        name = type(self).__name__
        for option in (
            "list_filter",
            "search_fields",
            "date_hierarchy",
            "list_editable",
            "inlines",
            "readonly_fields",
            "raw_id_fields",
            "autocomplete_fields",
            "filter_horizontal",
            "filter_vertical",
            "prepopulated_fields",
        ):
            if getattr(self, option, None):
                errors.append(
                    checks.Error(
                        f"{name}.{option} is set; it works on ORM querysets and fields, which a "
                        "DynamoDB model has not.",
                        hint="Remove it: the change list is a partition in sort-key order with a "
                        "sort-key prefix search (see the docs, 'The admin').",
                        obj=type(self),
                        id="dynamo.E301",
                    )
                )
        for column in self.list_display:
            if not self._column(column)[0]:
                errors.append(
                    checks.Error(
                        f"{name}.list_display names {column!r}, which is neither a field nor an "
                        f"attribute of {self.meta.object_name} or of {name}.",
                        obj=type(self),
                        id="dynamo.E302",
                    )
                )
        if not 0 < self.list_per_page < MAX_LIMIT:
            errors.append(
                checks.Error(
                    f"{name}.list_per_page must be 1 to {MAX_LIMIT - 1} (a page reads one item "
                    f"more than it shows, and DynamoDB's Limit is at most {MAX_LIMIT}).",
                    obj=type(self),
                    id="dynamo.E303",
                )
            )
        named = [*(self.indexes or ()), self.default_index]
        unknown = [n for n in named if n and n not in self.meta.indexes]
        if unknown:
            errors.append(
                checks.Error(
                    f"{name}.indexes names {', '.join(unknown)}, not declared in "
                    f"{self.meta.object_name}.Meta.indexes.",
                    obj=type(self),
                    id="dynamo.E304",
                )
            )
        return errors

    # --- columns

    def _column(self, name: Any) -> tuple[bool, Callable[[Any], Any] | None, str]:
        """Whether ``name`` is a column, how to read it, its label."""
        meta = self.meta
        if callable(name):
            label = getattr(name, "short_description", name.__name__.replace("_", " "))
            return True, name, label
        if name == "__str__":
            return True, str, meta.verbose_name
        field = meta.fields_by_name.get(name)
        if field is not None:
            return True, None, field.verbose_name
        attr = getattr(self, name, None)
        if callable(attr):
            label = getattr(attr, "short_description", name.replace("_", " "))
            return True, attr, label
        if hasattr(self.model, name):
            return True, lambda obj: getattr(obj, name), name.replace("_", " ")
        return False, None, ""

    def column_label(self, name: Any) -> str:
        return capfirst(self._column(name)[2])

    def cell(self, name: Any, obj: Model) -> Any:
        _, read, _ = self._column(name)
        if read is None:  # a field: a choice shows its label, as in Django's admin
            value = self.meta.fields_by_name[name].display(obj.__dict__[name])
        else:
            value = read(obj)
        value = value() if callable(value) else value
        boolean = isinstance(value, bool) or value is None and self._is_boolean(name)
        return display_for_value(value, self.get_empty_value_display(), boolean=boolean)

    def _is_boolean(self, name: Any) -> bool:
        field = self.meta.fields_by_name.get(name) if isinstance(name, str) else None
        return isinstance(field, model_fields.BooleanField)

    def change_url(self, oid: str) -> str:
        name = f"admin:{self.meta.app_label}_{self.meta.model_name}_change"
        return reverse(name, args=(quote(oid),), current_app=self.admin_site.name)

    # --- reading one item

    def get_object(self, request: HttpRequest, object_id: str, from_field: Any = None) -> Any:
        """One consistent GetItem (the form carries the version it read), or None."""
        try:
            key = parse_object_id(self.dynamo_model, object_id)
        except ValueError:
            return None
        try:
            return self.dynamo_model.objects.get(consistent=True, **key)
        except DoesNotExist:
            return None

    def _missing(self, request: HttpRequest, object_id: str) -> HttpResponseRedirect:
        """As Django's admin: back to the index, saying the object is gone."""
        self.message_user(
            request,
            f"{capfirst(self.opts.verbose_name)} with ID “{object_id}” doesn’t exist. Perhaps "
            "it was deleted?",
            messages.WARNING,
        )
        return HttpResponseRedirect(reverse("admin:index", current_app=self.admin_site.name))

    def each_context(self, request: HttpRequest) -> dict[str, Any]:
        """What every page of this admin is rendered with, as the site's
        ``admin_site.each_context(request)`` is for its pages: that, the model's
        options, and what a page outside a popup has. Each view adds its own title
        and the rest; override this to give every page of the model more."""
        return {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "subtitle": None,
            "is_popup": False,
            "to_field": None,
            "media": self.media,
        }

    def _render(
        self, request: HttpRequest, template: str, context: dict[str, Any], status: int = 200
    ) -> TemplateResponse:
        request.current_app = self.admin_site.name
        return TemplateResponse(request, template, context, status=status)

    def _unavailable(self, request: HttpRequest, exc: ServiceError) -> TemplateResponse:
        """DynamoDB could not answer: an admin message on an admin page, never a 500.
        A missing table is said as such, with the command that creates it: trying
        again in a moment would not help."""
        missing = isinstance(exc, TableNotFound)
        said = f"{exc}" if missing else f"DynamoDB did not answer: {exc}"
        self.message_user(request, said, messages.ERROR)
        plural = capfirst(self.opts.verbose_name_plural)
        title = (
            f"{plural}: the DynamoDB table does not exist"
            if missing
            else f"{plural}: DynamoDB is unavailable"
        )
        context = {**self.each_context(request), "title": title, "missing": missing}
        return self._render(request, self.unavailable_template, context, status=503)

    # --- the change list

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        if request.method == "POST" and "action" in request.POST:
            response = self.response_action(request)
            if response is not None:
                return response
        cl = ChangeList(request, self)
        try:
            cl.run()
        except InvalidCursor:
            self.message_user(
                request,
                "That page link is no longer valid; here is the first page.",
                messages.WARNING,
            )
            return HttpResponseRedirect(cl.url())
        except (QueryError, ValidationError) as exc:  # a crafted partition value
            cl.errors.append(str(exc))
        except ServiceError as exc:
            return self._unavailable(request, exc)
        action_form = None
        actions = self.get_actions(request)
        if actions:
            action_form = self.action_form(auto_id=None)
            action_form.fields["action"].choices = self.get_action_choices(request)
        plural = str(capfirst(self.opts.verbose_name_plural))
        context = {
            **self.each_context(request),
            "title": plural,
            "module_name": plural,
            "cl": cl,
            "has_add_permission": self.has_add_permission(request),
            "action_form": action_form,
            "actions_selection_counter": self.actions_selection_counter,
            "preserved_filters": self.get_preserved_filters(request),
            "index_var": INDEX_VAR,
            "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
            "selection_note": f"0 of {len(cl.rows)} selected",
            "search_var": SEARCH_VAR,
            **(extra_context or {}),
        }
        return self._render(request, self.change_list_template, context)

    # --- actions: functions of (model_admin, request, list of instances)

    def get_actions(self, request: HttpRequest, *args: Any, **kwargs: Any) -> dict[str, Any]:
        """This admin's actions (Django's site-wide ones take ORM querysets):
        ``delete_selected`` and ``actions``, those the user may run."""
        found = {}
        for action in [delete_selected, *self.actions]:
            func = getattr(self, action) if isinstance(action, str) else action
            name = getattr(func, "__name__", str(action))
            description = getattr(func, "short_description", capfirst(name.replace("_", " ")))
            allowed = getattr(func, "allowed_permissions", ())
            if all(getattr(self, f"has_{p}_permission")(request) for p in allowed):
                found[name] = (func, name, description)
        return found

    def get_action_choices(
        self, request: HttpRequest, *args: Any, **kwargs: Any
    ) -> list[tuple[str, str]]:
        meta = self.meta
        names = {"verbose_name": meta.verbose_name, "verbose_name_plural": meta.verbose_name_plural}
        choices = [("", "---------")]
        choices += [
            (name, str(text) % names) for _, name, text in self.get_actions(request).values()
        ]
        return choices

    def response_action(self, request: HttpRequest, queryset: Any = None) -> HttpResponse | None:
        """Run the chosen action on the selected rows (read with one BatchGetItem)."""
        action = request.POST.get("action", "")
        found = self.get_actions(request).get(action)
        selected = request.POST.getlist(helpers.ACTION_CHECKBOX_NAME)
        if found is None or not selected:
            self.message_user(
                request,
                "Items must be selected in order to perform actions on them. No items have "
                "been changed."
                if found
                else "No action selected.",
                messages.WARNING,
            )
            return HttpResponseRedirect(request.get_full_path())
        try:
            objects = self.read_selected(selected)
        except ServiceError as exc:
            return self._unavailable(request, exc)
        response = found[0](self, request, objects)
        return (
            response
            if isinstance(response, HttpResponse)
            else HttpResponseRedirect(request.get_full_path())
        )

    def read_selected(self, ids: list[str]) -> list[Model]:
        """The selected items as stored now: one consistent BatchGetItem."""
        keys = []
        for oid in ids:
            try:
                keys.append(parse_object_id(self.dynamo_model, oid))
            except ValueError:
                continue
        found = self.dynamo_model.objects.bulk_get(keys, consistent=True)
        return [obj for obj in found if obj is not None]

    # --- add / change

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        """A ``dynamo_app.forms`` ModelForm class over the admin's fields."""
        fields: Any = kwargs.get("fields") or self.fields or "__all__"
        return forms.modelform_factory(
            self.dynamo_model,
            form=self.form,
            fields=fields,
            exclude=self.exclude,
        )

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        if self.fields:
            return self.fields
        return list(self.get_form(request, obj).base_fields)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        """One write (``form.save()``): a refusal (a stale version, a taken unique
        value or key) becomes form errors. To write more in one transaction, use
        ``with form.refusals(): with dynamo_app.transaction() as tx: ...``."""
        form.save()

    def delete_model(self, request: HttpRequest, obj: Any) -> None:
        """One delete, conditioned on the version read (and releasing unique locks)."""
        obj.delete()

    def changeform_view(
        self,
        request: HttpRequest,
        object_id: str | None = None,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        try:
            return self._changeform(request, object_id, form_url, extra_context)
        except ServiceError as exc:
            return self._unavailable(request, exc)

    def _changeform(
        self,
        request: HttpRequest,
        object_id: str | None,
        form_url: str,
        extra_context: dict[str, Any] | None,
    ) -> HttpResponse:
        add = object_id is None
        obj = None
        if add:
            if not self.has_add_permission(request):
                raise PermissionDenied
        else:
            obj = self.get_object(request, unquote(object_id))  # type: ignore[arg-type]
            if not self.has_view_or_change_permission(request, obj):
                raise PermissionDenied
            if obj is None:
                return self._missing(request, unquote(object_id))  # type: ignore[arg-type]
        can_change = add or self.has_change_permission(request, obj)
        fieldsets = self.get_fieldsets(request, obj)
        form_class = self.get_form(
            request, obj, change=not add, fields=flatten_fieldsets(fieldsets)
        )
        status = 200
        if request.method == "POST":
            if not can_change:
                raise PermissionDenied
            form = form_class(request.POST, request.FILES, instance=obj)
            saved, status = self._save_form(request, form, add)
            if saved is not None:
                return saved
            if isinstance(form.refusal, StaleObjectError) and form.refusal.item is not None:
                obj, status = form.refusal.item, 409  # as the demo: the values now stored
        else:
            form = form_class(instance=obj)
        self._show_stored_as_text(form, can_change)
        admin_form = helpers.AdminForm(form, list(fieldsets), {}, (), model_admin=self)  # type: ignore[arg-type]
        title = "Add %s" if add else ("Change %s" if can_change else "View %s")
        shown = AdminObject(obj) if obj is not None else None
        context = {
            **self.each_context(request),
            "title": title % self.opts.verbose_name,
            "subtitle": str(obj) if obj is not None else None,
            "adminform": admin_form,
            "object_id": object_id,
            "original": shown,
            "media": self.media + admin_form.media,
            "inline_admin_formsets": [],
            "errors": helpers.AdminErrorList(form, []),
            "preserved_filters": self.get_preserved_filters(request),
            **(extra_context or {}),
        }
        response = self.render_change_form(
            request, context, add=add, change=not add, form_url=form_url, obj=shown
        )
        response.status_code = status
        return response

    def _save_form(
        self, request: HttpRequest, form: Any, add: bool
    ) -> tuple[HttpResponse | None, int]:
        """Save a posted form (``save_model``) and answer as Django's admin does after
        it; or no answer and the status of the form shown again (its errors, or
        DynamoDB not answering: 503)."""
        if not form.is_valid():
            return None, 200
        try:
            self.save_model(request, form.instance, form, not add)
        except ServiceError as exc:
            said = f"DynamoDB did not answer; nothing was saved: {exc}"
            self.message_user(request, said, messages.ERROR)
            return None, 503
        if form.errors:  # a refusal of the write, on the form
            return None, 200
        saved = AdminObject(form.instance)
        message = self.construct_change_message(request, form, [], add)
        if add:
            self.log_addition(request, saved, message)
            return self.response_add(request, saved), 200
        self.log_change(request, saved, message)
        return self.response_change(request, saved), 200

    def _show_stored_as_text(self, form: Any, can_change: bool) -> None:
        """A field the form cannot change (all of them without the change
        permission) shows its stored value as text, as Django's read-only fields."""
        if not can_change:
            for field in form.fields.values():
                field.disabled = True
        for name, field in form.fields.items():
            if field.disabled and name in self.meta.fields_by_name:
                field.widget = StoredText(self.meta.fields_by_name[name])

    # --- delete

    def delete_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        try:
            return self._delete(request, unquote(object_id), extra_context)
        except ServiceError as exc:
            return self._unavailable(request, exc)

    def _delete(
        self, request: HttpRequest, oid: str, extra_context: dict[str, Any] | None
    ) -> HttpResponse:
        obj = self.get_object(request, oid)
        if not self.has_delete_permission(request, obj):
            raise PermissionDenied
        if obj is None:
            return self._missing(request, oid)
        status = 200
        deleted, model_count, perms_needed, protected = self.get_deleted_objects([obj], request)
        if request.method == "POST" and request.POST.get("post") and not protected:
            if perms_needed:
                raise PermissionDenied
            if self.version_confirmed(request, obj, VERSION_VAR):
                try:
                    self.delete_model(request, obj)
                except StaleObjectError as exc:
                    obj = exc.item or obj
                else:
                    shown = AdminObject(obj)
                    self.log_deletions(request, [shown])  # type: ignore[arg-type]
                    return self.response_delete(request, str(obj), shown.pk)  # type: ignore[arg-type]
            self.message_user(
                request,
                f"The {self.opts.verbose_name} “{obj}” was changed since you asked to delete it; "
                "nothing was deleted. Here it is as stored now.",
                messages.WARNING,
            )
            status = 409
            deleted, model_count, perms_needed, protected = self.get_deleted_objects([obj], request)
        context = {
            **self.each_context(request),
            "title": "Are you sure?",
            "object_name": str(self.opts.verbose_name),
            "object": AdminObject(obj),
            "escaped_object": str(obj),
            "deleted_objects": deleted[0],
            "delete_confirmation_max_display": _listing_limit(self),
            "model_count": list(model_count.items()),
            "perms_lacking": perms_needed or None,
            "protected": protected or None,
            "app_label": self.opts.app_label,
            "preserved_filters": self.get_preserved_filters(request),
            "version_var": VERSION_VAR,
            "version": self.get_version(obj),
            **(extra_context or {}),
        }
        return self._render(request, self.delete_confirmation_template, context, status=status)

    # --- hooks of the delete pages (the delete view and the delete_selected action)

    def get_deleted_objects(
        self, objs: Sequence[Model] | OrmQuerySet[Any, Any], request: HttpRequest
    ) -> tuple[list[Any], dict[str, int], set[str], list[str]]:
        """What deleting ``objs`` removes, as Django's hook of the same name says it
        to the confirmation pages: per item, its text and the unique-value locks its
        delete releases (a DynamoDB delete cascades to nothing else); the number of
        items per model; the permissions lacking and the items protected (none: a
        non-empty set or list shows them instead of the form, and refuses the delete)."""
        deleted = []
        for obj in objs:
            locks = []
            for constraint in obj._meta.unique:
                values = ", ".join(f"{n} {obj.__dict__[n]}" for n in constraint.fields)
                locks.append(f"the unique value lock: {values}")
            deleted.append([str(obj), *locks])
        return deleted, {str(capfirst(self.opts.verbose_name_plural)): len(objs)}, set(), []

    def get_version(self, obj: Model) -> Any:
        """The version a confirmation page carries for ``obj`` (its VersionField's
        value; "" without one), which its delete is conditioned on."""
        field = obj._meta.version
        return "" if field is None or obj.__dict__[field.name] is None else obj.__dict__[field.name]

    def version_confirmed(self, request: HttpRequest, obj: Model, name: str) -> bool:
        """Whether the version the confirmation page showed (POST parameter ``name``)
        is still the stored one: a delete of an item changed since is refused."""
        return obj._meta.version is None or request.POST.get(name, "") == str(self.get_version(obj))

    # --- history: Django's view, shown with the object id

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        try:
            response = super().history_view(request, object_id, extra_context)
        except ServiceError as exc:
            return self._unavailable(request, exc)
        context = getattr(response, "context_data", None)
        if context is not None and isinstance(context.get("object"), Model):
            context["object"] = AdminObject(context["object"])
        return response



def _listing_limit(model_admin: DynamoModelAdmin) -> int | None:
    """How many items a delete page lists: Django 6.1's
    ``ModelAdmin.delete_confirmation_max_display`` (its templates read it), all
    (None) on a Django without it."""
    limit: int | None = getattr(model_admin, "delete_confirmation_max_display", None)
    return limit


def delete_selected(
    model_admin: DynamoModelAdmin, request: HttpRequest, objects: list[Model]
) -> HttpResponse | None:
    """Delete the selected items after a confirmation page; each delete is
    conditioned on the version that page showed (changed items are kept)."""
    opts = model_admin.opts
    deletable, model_count, perms_needed, protected = model_admin.get_deleted_objects(
        objects, request
    )
    if request.POST.get("post") and not protected:
        if perms_needed:
            raise PermissionDenied
        _delete_confirmed(model_admin, request, objects)
        return None
    name = opts.verbose_name if len(objects) == 1 else opts.verbose_name_plural
    context = {
        **model_admin.each_context(request),
        "title": "Delete multiple objects",
        "objects_name": str(name),
        "deletable_objects": deletable,
        "delete_confirmation_max_display": _listing_limit(model_admin),
        "model_count": list(model_count.items()),
        "queryset": [AdminObject(o) for o in objects],
        "versions": [
            (f"{VERSION_VAR}:{object_id(o)}", model_admin.get_version(o)) for o in objects
        ],
        "perms_lacking": perms_needed or None,
        "protected": protected or None,
        "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
    }
    request.current_app = model_admin.admin_site.name
    return TemplateResponse(request, model_admin.delete_selected_confirmation_template, context)


def _delete_confirmed(
    model_admin: DynamoModelAdmin, request: HttpRequest, objects: list[Model]
) -> None:
    """Delete each item whose version the confirmation showed is still stored, and
    say which were deleted and which kept."""
    opts = model_admin.opts
    kept, deleted = [], []
    for obj in objects:
        if not model_admin.version_confirmed(request, obj, f"{VERSION_VAR}:{object_id(obj)}"):
            kept.append(obj)
            continue
        try:
            model_admin.delete_model(request, obj)
        except StaleObjectError:
            kept.append(obj)
        else:
            deleted.append(AdminObject(obj))
    if deleted:
        model_admin.log_deletions(request, deleted)  # type: ignore[arg-type]
        model_admin.message_user(
            request,
            f"Successfully deleted {len(deleted)} "
            f"{opts.verbose_name if len(deleted) == 1 else opts.verbose_name_plural}.",
            messages.SUCCESS,
        )
    if kept:
        model_admin.message_user(
            request,
            f"Not deleted, changed since the confirmation: {', '.join(str(o) for o in kept)}.",
            messages.WARNING,
        )


delete_selected.allowed_permissions = ("delete",)  # type: ignore[attr-defined]
delete_selected.short_description = "Delete selected %(verbose_name_plural)s"  # type: ignore[attr-defined]
