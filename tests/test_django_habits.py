"""What a Django developer types first: each ORM habit that a DynamoDB model has
no equivalent for is refused where it is written (at class creation, at
``manage.py check``, at the attribute) with a message naming the DynamoDB way;
a tampered cursor is a 400 in any view."""

from __future__ import annotations

from typing import Any

import pytest
from django import forms as django_forms
from django.contrib import admin
from django.core import checks
from django.db import models as orm
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.test import Client
from django.urls import path

from dynamo_app import forms, models
from dynamo_app.admin import DynamoModelAdmin
from dynamo_app.exceptions import InvalidCursor, ModelDefinitionError, NotSupported, QueryError
from dynamo_app.tables import registry


class Gig(models.Model):
    venue = models.StringField(partition_key=True)
    starts = models.IntegerField(sort_key=True)
    title = models.StringField(default="")

    class Meta:
        app_label = "roster"
        table_name = "habits_gig"


registry.unregister(Gig._meta.table_name)  # never written: every refusal comes before a request


# --- at class creation


def declare(meta: dict[str, Any] | None = None, **attrs: Any) -> type[models.Model]:
    attrs = {"__module__": __name__, "gig_id": models.StringField(partition_key=True), **attrs}
    if meta is not None:
        attrs["Meta"] = type("Meta", (), {"table_name": "habits_wrong", **meta})
    return type("Wrong", (models.Model,), attrs)


@pytest.mark.parametrize(
    ("option", "fix"),
    [
        ("ordering", r"sort-key order: make the order the sort key.*order_by\('-<sort key>'\)"),
        ("unique_together", r"Meta.unique = \[Unique\('a', 'b'\)\].*within="),
        ("db_table", "Meta.table_name"),
    ],
)
def test_a_django_meta_option_names_the_dynamodb_way(option: str, fix: str) -> None:
    with pytest.raises(ModelDefinitionError, match=rf"unknown option '{option}'\. .*{fix}"):
        declare({option: ["gig_id"]})


def test_an_unknown_meta_option_still_lists_the_valid_ones() -> None:
    with pytest.raises(ModelDefinitionError, match=r"'colour'\. Valid options: abstract"):
        declare({"colour": "red"})


def test_an_orm_field_in_a_dynamodb_model_is_refused_naming_the_field_to_use() -> None:
    with pytest.raises(ModelDefinitionError) as refused:
        declare(
            name=orm.CharField(max_length=10),
            when=orm.DateTimeField(),
            on=orm.DateField(),
            ip=orm.GenericIPAddressField(),
        )
    message = str(refused.value)
    assert (
        "Wrong.name is a django.db.models.CharField, a field of Django's ORM: a DynamoDB "
        "model neither stores nor validates it. Declare it with dynamo_app.models.StringField. "
        "[dynamo.E120]"
    ) in message
    assert "Wrong.when is a django.db.models.DateTimeField" in message
    assert "Declare it with dynamo_app.models.DateTimeField." in message
    assert "Wrong.on is a django.db.models.DateField" in message
    assert "Declare it with dynamo_app.models.DateField." in message
    assert "Wrong.ip is a django.db.models.GenericIPAddressField" in message
    assert "Declare it with a field of dynamo_app.models (StringField" in message


def test_django_forms_model_form_points_to_dynamo_app_forms() -> None:
    with pytest.raises(
        NotSupported, match=r"Gig is a DynamoDB model.*dynamo_app\.forms\.ModelForm"
    ):

        class GigForm(django_forms.ModelForm):  # type: ignore[type-arg]
            class Meta:
                model = Gig
                fields = "__all__"

    class Fine(forms.ModelForm):
        class Meta:
            model = Gig
            fields = "__all__"

    assert list(Fine.base_fields) == ["venue", "starts", "title"]
    assert not hasattr(Gig._meta, "private_fields")  # an AttributeError, as before


# --- at the attribute


def test_objects_all_and_count_point_to_filter_and_scan() -> None:
    with pytest.raises(NotSupported) as refused:
        Gig.objects.all()
    assert str(refused.value) == (
        "Gig.objects has no all(): DynamoDB reads a table one partition at a time: "
        "Gig.objects.filter(venue=...) is one Query per page, and Gig.objects.scan() reads "
        "every item of the table (and is billed for all of them)."
    )
    with pytest.raises(NotSupported, match=r"\(venue=\.\.\.\)\.count\(\) counts one partition"):
        Gig.objects.count()
    with pytest.raises(NotSupported, match=r"a method of a query: Gig.objects.filter\(venue"):
        Gig.objects.first()
    with pytest.raises(NotSupported, match=r"Gig.objects has no values\(\): it is a Django ORM"):
        Gig.objects.values()
    with pytest.raises(NotSupported, match=r"A query of Gig has no exclude\(\)"):
        Gig.objects.filter(venue="v").exclude(title="x")
    with pytest.raises(NotSupported) as refused:
        Gig.objects.filter(venue="v").update(title="x")
    assert str(refused.value) == (
        "A query of Gig has no update(): queries only read: DynamoDB writes one item per "
        "request, so write each item it returns (for obj in query: obj.update(set={...}), "
        "one UpdateItem each), or several in one dynamo_app.transaction()."
    )
    with pytest.raises(NotSupported, match=r"Gig.objects has no delete\(\).*bulk_delete\(query\)"):
        Gig.objects.delete()
    assert not hasattr(Gig.objects, "all")
    with pytest.raises(AttributeError) as plain:
        Gig.objects.nothing_of_the_kind  # noqa: B018
    assert type(plain.value) is AttributeError


def test_slicing_a_query_points_to_limit_and_page_cursors() -> None:
    with pytest.raises(TypeError, match=r"no offsets.*\.limit\(n\).*\.page\(size, cursor\)"):
        Gig.objects.filter(venue="v")[20:30]
    with pytest.raises(TypeError, match="cannot be indexed or sliced"):
        Gig.objects.filter(venue="v")[0]


# --- at manage.py check


def test_a_plain_model_admin_is_refused_by_the_system_check() -> None:
    site = admin.AdminSite(name="habits")
    site.register(Gig)  # Django's default: a plain ModelAdmin
    try:
        errors = [e for e in checks.run_checks(tags=["dynamo"]) if e.id == "dynamo.E305"]
    finally:
        site.unregister(Gig)
    assert [e.msg for e in errors] == [
        "tests.test_django_habits.Gig is a DynamoDB model registered on the admin site 'habits' "
        "with ModelAdmin, a Django ModelAdmin for ORM models."
    ]
    assert "DynamoModelAdmin" in (errors[0].hint or "")

    site.register(Gig, DynamoModelAdmin)
    try:
        assert not [e for e in checks.run_checks(tags=["dynamo"]) if e.id == "dynamo.E305"]
    finally:
        site.unregister(Gig)


# --- a tampered cursor in an ordinary view


def gigs(request: HttpRequest) -> HttpResponse:
    """A view as the README writes one: the cursor straight from the query string."""
    page = Gig.objects.filter(venue="v").page(size=10, cursor=request.GET.get("cursor"))
    return JsonResponse({"titles": [g.title for g in page], "next": page.next_cursor})


urlpatterns = [path("gigs/", gigs)]


@pytest.mark.urls(__name__)
def test_a_tampered_cursor_is_a_400_in_any_view(dynamo_db: Any, client: Client) -> None:
    response = client.get("/gigs/", {"cursor": "garbage"})
    assert response.status_code == 400


def test_an_invalid_cursor_is_still_a_query_error(dynamo_db: Any) -> None:
    with pytest.raises(QueryError):  # caught as before by code that catches it
        Gig.objects.filter(venue="v").page(size=10, cursor="garbage")
    assert issubclass(InvalidCursor, ValueError)


# --- manage.py shell


def test_the_shell_imports_the_dynamodb_models_beside_the_orm_ones(capsys: Any) -> None:
    from django.core.management import call_command

    call_command("shell", command="print(TeamEvent._meta.label, Gig._meta.label, User.__name__)")
    said = capsys.readouterr().out
    assert "project.roster.models.TeamEvent tests.test_django_habits.Gig User" in said


def test_counted_words_agree_with_their_count() -> None:
    with pytest.raises(TypeError, match=r"Gig\(\) got unexpected field: nope\. Fields:"):
        Gig(venue="v", starts=1, nope=1)
    with pytest.raises(TypeError, match=r"got unexpected fields: nope, other\."):
        Gig(venue="v", starts=1, nope=1, other=2)


@pytest.mark.parametrize(
    ("option", "hint"),
    [
        ({"unique": True}, r"StringField\(\) takes no unique=: declare Meta.unique = \[Unique"),
        ({"primary_key": True}, r"takes no primary_key=: the key is partition_key=True"),
        ({"db_index": True}, r"takes no db_index=: declare Meta.indexes = \[GlobalIndex"),
        ({"db_column": "x"}, r"takes no db_column=: db_name='\.\.\.' names the stored attribute"),
        ({"max_lenght": 3}, r"takes no max_lenght=\. Did you mean max_length=\? Its options: "),
    ],
)
def test_a_django_field_option_is_refused_with_what_does_its_job(option, hint) -> None:
    with pytest.raises(ModelDefinitionError, match=hint):
        models.StringField(**option)


def test_an_option_of_another_field_type_lists_the_options_this_one_has() -> None:
    with pytest.raises(ModelDefinitionError) as refused:
        models.IntegerField(max_length=3)
    assert str(refused.value) == (
        "IntegerField() takes no max_length=. Its options: blank, choices, db_name, default, "
        "editable, help_text, null, partition_key, sort_key, validators, verbose_name."
    )
