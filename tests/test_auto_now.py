"""DateTimeField(auto_now=True / auto_now_add=True), as Django's: the same rule
through every door that writes a whole item, and none through update()."""

import json
from datetime import UTC, datetime, timedelta

import pytest

import dynamo_app
from dynamo_app import forms, models
from dynamo_app.data import dumpload
from dynamo_app.exceptions import ModelDefinitionError
from dynamo_app.testing import count_requests

LONG_AGO = datetime(2001, 2, 3, 4, 5, 6, tzinfo=UTC)


class Page(models.Model):
    slug = models.StringField(partition_key=True)
    title = models.StringField()
    views = models.IntegerField(default=0)
    created = models.DateTimeField(auto_now_add=True)
    changed = models.DateTimeField(auto_now=True)

    class Meta:
        table_name = "auto_now_page"


def recent(value: datetime) -> bool:
    return timedelta(0) <= datetime.now(UTC) - value < timedelta(minutes=5)


class Doc(models.Model):
    """Versioned: update_or_create() reads, then saves the fields it changes."""

    doc_id = models.StringField(partition_key=True)
    body = models.StringField()
    changed = models.DateTimeField(auto_now=True)
    version = models.VersionField()

    class Meta:
        table_name = "auto_now_doc"


def test_create_fills_both_and_save_moves_only_auto_now(dynamo_db):
    page = Page(slug="a", title="A")
    assert (page.created, page.changed) == (None, None)  # filled by the write, as Django
    with count_requests() as counter:
        page.save()
    assert dict(counter) == {"PutItem": 1}  # no read for a date
    assert recent(page.created) and page.changed >= page.created
    stored = Page.objects.get(slug="a")
    assert (stored.created, stored.changed) == (page.created, page.changed)

    stored.created = LONG_AGO
    stored.title = "A2"
    stored.save()  # not an add: auto_now_add keeps what the instance holds
    again = Page.objects.get(slug="a")
    assert again.created == LONG_AGO and again.changed >= page.changed


def test_a_given_value_is_overwritten_on_create_as_django_does(dynamo_db):
    page = Page.objects.create(slug="b", title="B", created=LONG_AGO, changed=LONG_AGO)
    assert recent(page.created) and recent(page.changed)


def test_bulk_save_and_a_transaction_fill_them_too(dynamo_db):
    Page.objects.bulk_save([Page(slug="c", title="C"), Page(slug="d", title="D")])
    with dynamo_app.transaction() as tx:
        tx.create(Page(slug="e", title="E"))
    for slug in "cde":
        page = Page.objects.get(slug=slug)
        assert recent(page.created) and recent(page.changed)


def test_update_writes_only_what_it_names(dynamo_db):
    """As Django's QuerySet.update() leaves auto_now alone."""
    page = Page.objects.create(slug="f", title="F")
    page.update(add={"views": 1})
    assert Page.objects.get(slug="f").changed == page.changed


def test_save_with_update_fields_moves_auto_now_when_it_names_it(dynamo_db):
    """As Django's save(update_fields=[..., "changed"]): a named auto_now field is
    now, auto_now_add keeps its value, and one not named is left alone."""
    Page.objects.create(slug="h", title="H")
    page = Page.objects.get(slug="h")
    page.created = page.changed = LONG_AGO
    page.title = "H2"
    page.save(update_fields=["title"])
    assert Page.objects.get(slug="h").changed != LONG_AGO  # not named: not written
    page.created = page.changed = LONG_AGO
    page.save(update_fields=["title", "created", "changed"])
    stored = Page.objects.get(slug="h")
    assert recent(page.changed) and stored.changed == page.changed
    assert stored.created == LONG_AGO == page.created


def test_update_or_create_moves_auto_now_as_djangos_does(dynamo_db):
    page = Page.objects.create(slug="u", title="U")
    updated, created = Page.objects.update_or_create(slug="u", defaults={"title": "U2"})
    stored = Page.objects.get(slug="u")
    assert not created and stored.title == "U2"
    assert stored.changed > page.changed and stored.created == page.created
    assert updated.changed == stored.changed


def test_update_or_create_of_a_versioned_model_moves_auto_now_too(dynamo_db):
    doc = Doc.objects.create(doc_id="d", body="one")
    Doc.objects.update_or_create(doc_id="d", defaults={"body": "two"})
    stored = Doc.objects.get(doc_id="d")
    assert (stored.body, stored.version) == ("two", 2) and stored.changed > doc.changed


def test_an_upsert_that_creates_the_item_stamps_it(dynamo_db):
    Page.objects.increment(slug="g", views=1, defaults={"title": "G"})
    page = Page.objects.get(slug="g")
    assert recent(page.created) and recent(page.changed)


def test_a_load_keeps_the_dumped_times(dynamo_db):
    line = {
        "model": Page._meta.label,
        "fields": {
            "slug": "h",
            "title": "H",
            "created": LONG_AGO.isoformat(),
            "changed": LONG_AGO.isoformat(),
        },
    }
    dumpload.load([json.dumps(line)])
    page = Page.objects.get(slug="h")
    assert (page.created, page.changed) == (LONG_AGO, LONG_AGO)


def test_forms_leave_them_out_and_validation_lets_them_be_empty():
    form_class = forms.modelform_factory(Page, fields="__all__")
    assert set(form_class.base_fields) == {"slug", "title", "views"}
    Page(slug="i", title="I").full_clean()  # None until the write fills them


def test_the_rest_framework_shows_them_read_only():
    from dynamo_app.contrib.rest_framework import ModelSerializer

    class PageSerializer(ModelSerializer):
        class Meta:
            model = Page
            fields = "__all__"

    serializer = PageSerializer(data={"slug": "j", "title": "J", "created": "2000-01-01T00:00:00Z"})
    assert serializer.is_valid(), serializer.errors
    assert "created" not in serializer.validated_data
    assert serializer.fields["changed"].read_only


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        (
            {"auto_now": True, "default": LONG_AGO},
            r"auto_now=True\) fills itself, so it takes no default=",
        ),
        ({"auto_now": True, "auto_now_add": True}, "takes no auto_now_add="),
        ({"auto_now_add": True, "choices": [(LONG_AGO, "then")]}, "takes no choices="),
    ],
)
def test_conflicting_options_are_refused(options, problem):
    with pytest.raises(ModelDefinitionError, match=problem):
        models.DateTimeField(**options)
