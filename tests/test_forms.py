"""dynamo_app.forms.ModelForm: form fields derived from every field type, instance
editing, and DynamoDB's refusals turned into form errors (never a 500)."""

import uuid
from datetime import date, datetime
from decimal import Decimal

import pytest
from django import forms
from django.core.exceptions import NON_FIELD_ERRORS, FieldError, ImproperlyConfigured
from django.db.models import IntegerChoices
from django.utils import timezone

from dynamo_app import models
from dynamo_app.exceptions import AlreadyExists, StaleObjectError, UniqueViolation
from dynamo_app.forms import ModelForm, SetField, fields_for_model, modelform_factory
from dynamo_app.tables import registry
from dynamo_app.testing import count_requests
from project.roster.models import Player


class Stars(IntegerChoices):
    ONE = 1, "One star"
    TWO = 2, "Two stars"


class Everything(models.Model):
    """One field of every type in the models reference's table."""

    ident_key = models.StringField(partition_key=True)
    text = models.StringField(max_length=20, help_text="Some text.")
    optional = models.StringField(null=True, blank=True)
    integer = models.IntegerField()
    decimal = models.DecimalField(max_digits=6, decimal_places=2)
    real = models.FloatField()
    flag = models.BooleanField(default=False)
    maybe = models.BooleanField(null=True)
    binary = models.BinaryField(null=True)
    when = models.DateTimeField(verbose_name="starts at")
    epoch = models.DateTimeField(epoch=True, null=True, blank=True)
    born = models.DateField(null=True, blank=True)
    ident = models.UUIDField()
    doc = models.JSONField(null=True, blank=True)
    items = models.ListField(of=models.IntegerField, null=True, blank=True)
    mapping = models.MapField(null=True, blank=True)
    tags = models.StringSetField(blank=True)
    numbers = models.NumberSetField(blank=True)
    blobs = models.BinarySetField(blank=True)
    stars = models.IntegerField(choices=Stars, default=Stars.ONE)
    colours = models.StringSetField(choices=[("red", "Red"), ("blue", "Blue")], blank=True)
    secret = models.StringField(default="", editable=False)
    version = models.VersionField()

    class Meta:
        table_name = "forms_everything"


registry.unregister(Everything._meta.table_name)  # its forms never write


class EverythingForm(ModelForm):
    class Meta:
        model = Everything
        fields = "__all__"


def test_every_field_type_gets_a_form_field_or_a_reason():
    fields = EverythingForm().fields
    kinds = {name: type(field) for name, field in fields.items()}
    assert kinds == {
        "ident_key": forms.CharField,
        "text": forms.CharField,
        "optional": forms.CharField,
        "integer": forms.IntegerField,
        "decimal": forms.DecimalField,
        "real": forms.FloatField,
        "flag": forms.BooleanField,
        "maybe": forms.NullBooleanField,
        "when": forms.DateTimeField,
        "epoch": forms.DateTimeField,
        "born": forms.DateField,
        "ident": forms.UUIDField,
        "doc": forms.JSONField,
        "items": forms.JSONField,
        "mapping": forms.JSONField,
        "tags": SetField,
        "numbers": SetField,
        "stars": forms.TypedChoiceField,
        "colours": forms.TypedMultipleChoiceField,
        "version": forms.IntegerField,
    }  # binary, blobs: bytes have no text form; secret: editable=False
    assert fields["text"].max_length == 20 and fields["text"].help_text == "Some text."
    assert (fields["decimal"].max_digits, fields["decimal"].decimal_places) == (6, 2)
    assert fields["when"].label == "Starts at" and fields["optional"].required is False
    assert fields["text"].required and not fields["flag"].required
    assert fields["stars"].choices == [(1, "One star"), (2, "Two stars")]  # a default: no blank
    assert isinstance(fields["version"].widget, forms.HiddenInput)
    for reason, name in [("bytes have no text form", "binary"), ("not editable", "secret")]:
        with pytest.raises(FieldError, match=f"Everything.{name} cannot be a form field: {reason}"):
            fields_for_model(Everything, fields=[name])
    with pytest.raises(FieldError, match="Unknown field\\(s\\) \\(nope\\)"):
        fields_for_model(Everything, fields=["nope"])


def test_every_field_type_reads_its_python_value_from_the_form():
    data = {
        "ident_key": "k1",
        "text": "hello",
        "optional": "",
        "integer": "12345678901234567890",
        "decimal": "1234.50",
        "real": "0.1",
        "flag": "on",
        "maybe": "false",
        "when": "2030-05-01 09:30:00",
        "epoch": "",
        "born": "1990-02-03",
        "ident": "12345678-1234-5678-1234-567812345678",
        "doc": '{"a": [1, 2.5, "x"], "b": null}',
        "items": "[1, 2, 3]",
        "mapping": '{"price": 9.99}',
        "tags": "b\na\n\na",
        "numbers": "1\n2.5",
        "stars": "2",
        "colours": ["red", "blue"],
        "version": "",
    }
    form = EverythingForm(data)
    assert form.is_valid(), form.errors
    obj = form.save(commit=False)
    assert obj.optional is None and obj.integer == 12345678901234567890
    assert obj.decimal == Decimal("1234.50") and obj.real == 0.1 and obj.flag is True
    assert obj.maybe is False and obj.when == timezone.make_aware(datetime(2030, 5, 1, 9, 30))
    assert obj.ident == uuid.UUID("12345678-1234-5678-1234-567812345678")
    assert obj.doc == {"a": [1, Decimal("2.5"), "x"], "b": None}  # numbers stay exact
    assert obj.items == [1, 2, 3] and obj.mapping == {"price": Decimal("9.99")}
    assert obj.tags == {"a", "b"} and obj.numbers == {1, Decimal("2.5")}
    assert obj.stars == 2 and type(obj.stars) is int and obj.colours == {"red", "blue"}
    assert obj.epoch is None and obj.secret == "" and obj.born == date(1990, 2, 3)
    Everything._meta.encode(obj)  # storable as it is

    shown = EverythingForm(instance=obj)
    assert shown["tags"].value() == "a\nb" and shown["stars"].value() == 2
    assert shown["mapping"].value() == '{"price": 9.99}'


def test_model_validation_errors_land_on_the_form_fields():
    form = EverythingForm({"ident_key": "k", "text": "x", "items": '["one"]', "doc": "[1"})
    assert not form.is_valid()
    errors = form.errors
    assert errors["items"] == ["Expected an integer, got str 'one'."]
    assert errors["doc"] == ["Enter a valid JSON."] and "integer" in errors


class PlayerForm(ModelForm):
    class Meta:
        model = Player
        fields = ["team_id", "player_id", "player_name", "uniform_number", "position"]
        labels = {"player_name": "Full name"}
        help_texts = {"uniform_number": "0 to 99."}
        widgets = {"position": forms.RadioSelect}
        error_messages = {"uniform_number": {"unique": "Number %(value)s is taken."}}


def add(**values):
    data = {"team_id": "t1", "player_id": "p1", "player_name": "Ann", "uniform_number": 7}
    return PlayerForm({**data, **values})


def test_meta_options_and_no_request_to_validate(dynamo_requests):
    form = add(uniform_number=100, position="Goalie")
    assert form["player_name"].label == "Full name"
    assert form.fields["uniform_number"].help_text == "0 to 99."
    assert isinstance(form.fields["position"].widget, forms.RadioSelect)
    assert not form.is_valid()
    assert form.errors["uniform_number"] == ["Ensure this value is less than or equal to 99."]
    assert "Select a valid choice" in form.errors["position"][0]
    assert dynamo_requests.total == 0
    with pytest.raises(ValueError, match="didn't validate"):
        form.save()


def test_create_and_every_refusal_is_a_form_error(dynamo_db, dynamo_requests):
    form = add()
    assert form.is_valid() and dict(dynamo_requests) == {"GetItem": 1}  # number 7's lock: free
    ann = form.save()
    assert (
        ann.version == 1 and Player.objects.get(team_id="t1", player_id="p1").player_name == "Ann"
    )
    assert dynamo_requests["TransactWriteItems"] == 1  # the player and its number's lock

    taken = add(player_id="p2", player_name="Bo", uniform_number=9)
    assert taken.is_valid()
    Player.objects.create(team_id="t1", player_id="p3", player_name="Cy", uniform_number=9)
    assert taken.save() is None  # claimed since is_valid(): UniqueViolation, no 500
    assert taken.errors == {"uniform_number": ["Number 9 is taken."]}
    assert isinstance(taken.refusal, UniqueViolation)

    again = add(uniform_number=8)
    assert again.is_valid() and again.save() is None  # AlreadyExists, on the key fields
    message = "Player with this Team id and Player id already exists."
    assert again.errors == {"team_id": [message], "player_id": [message]}
    assert isinstance(again.refusal, AlreadyExists)

    elsewhere = modelform_factory(Player, fields=["player_name", "uniform_number"])(
        {"player_name": "Cy", "uniform_number": 7}, instance=Player(team_id="t1", player_id="p1")
    )
    assert elsewhere.is_valid() and elsewhere.save() is None  # the key is not in this form
    assert elsewhere.errors == {NON_FIELD_ERRORS: [message]}


def test_an_edit_keeps_the_key_and_writes_only_the_form_fields(dynamo_db):
    Player.objects.create(
        team_id="t1", player_id="p1", player_name="Ann", uniform_number=7, position="Pitcher"
    )
    player = Player.objects.get(team_id="t1", player_id="p1")
    NameForm = modelform_factory(Player, fields=["team_id", "player_id", "player_name"])
    shown = NameForm(instance=player)
    assert shown.fields["team_id"].disabled and shown.fields["player_id"].disabled
    assert '<input type="hidden" name="version" value="1"' in str(shown)

    data = {"team_id": "t2", "player_id": "other", "player_name": "Annie", "version": "1"}
    form = NameForm(data, instance=player)
    assert form.is_valid(), form.errors
    with count_requests() as requests:
        saved = form.save()
    assert dict(requests) == {"UpdateItem": 1}  # no lock moves: the number is not in the form
    assert (saved.team_id, saved.player_id, saved.version) == ("t1", "p1", 2)
    stored = Player.objects.get(team_id="t1", player_id="p1")
    assert (stored.player_name, stored.uniform_number, stored.position) == ("Annie", 7, "Pitcher")
    assert list(Player.objects.filter(team_id="t2")) == []


def test_a_stale_edit_is_refused_with_the_stored_values_and_can_be_resubmitted(dynamo_db):
    Player.objects.create(team_id="t1", player_id="p1", player_name="Ann", uniform_number=7)
    Form = modelform_factory(Player, fields=["player_name", "uniform_number", "position"])
    mine = Form(instance=Player.objects.get(team_id="t1", player_id="p1"))
    filled = {name: mine[name].value() for name in mine.fields}

    theirs = Form(
        {**filled, "uniform_number": 20, "position": "Catcher"},
        instance=Player.objects.get(team_id="t1", player_id="p1"),
    )
    assert theirs.is_valid() and theirs.save() is not None

    form = Form(
        {**filled, "player_name": "Annie"},
        instance=Player.objects.get(team_id="t1", player_id="p1"),
    )
    assert form.is_valid() and form.save() is None
    assert isinstance(form.refusal, StaleObjectError)
    (message,) = form.errors[NON_FIELD_ERRORS]
    assert message == (
        "Someone else saved this Player while you were editing it; it now holds Name: Ann; "
        "Uniform number: 20; Position: Catcher. Nothing was saved. Check your values and "
        "save again to replace theirs."
    )
    assert form["version"].value() == 2  # the form shown again carries the stored version
    stored = Player.objects.get(team_id="t1", player_id="p1")
    assert (stored.player_name, stored.uniform_number) == ("Ann", 20)

    resubmit = {name: form[name].value() for name in form.fields}
    again = Form(resubmit, instance=stored)
    assert again.is_valid() and again.save() is not None
    stored = Player.objects.get(team_id="t1", player_id="p1")
    assert (stored.player_name, stored.uniform_number, stored.version) == ("Annie", 7, 3)


class Seat(models.Model):
    seat_id = models.StringField(partition_key=True)
    tier = models.StringField(choices=[("ga", "General admission"), ("press", "Press")])
    version = models.VersionField()

    class Meta:
        table_name = "forms_seat"


def test_a_stale_edit_shows_the_stored_choice_by_its_label(dynamo_db):
    Seat.objects.create(seat_id="s1", tier="ga")
    Form = modelform_factory(Seat, fields=["tier"])
    stale = Seat.objects.get(seat_id="s1")
    Seat.objects.get(seat_id="s1").update(set={"tier": "press"})
    form = Form({"tier": "ga", "version": stale.version}, instance=stale)
    assert form.is_valid() and form.save() is None
    assert "it now holds Tier: Press." in form.errors[NON_FIELD_ERRORS][0]


def test_an_edit_of_an_item_deleted_meanwhile_is_a_form_error(dynamo_db):
    Player.objects.create(team_id="t1", player_id="p1", player_name="Ann", uniform_number=7)
    player = Player.objects.get(team_id="t1", player_id="p1")
    Form = modelform_factory(Player, fields=["player_name"])
    form = Form({"player_name": "Annie", "version": "1"}, instance=player)
    Player.objects.get(team_id="t1", player_id="p1").delete()
    assert form.is_valid() and form.save() is None
    assert form.errors == {
        NON_FIELD_ERRORS: ["This Player was deleted while you were editing it; nothing was saved."]
    }


def test_a_taken_unique_value_is_a_field_error_at_is_valid(dynamo_db):
    """As Django's ModelForm: one consistent GetItem of the value's lock; a value
    the instance already holds is not read."""
    Player.objects.create(team_id="t1", player_id="p1", player_name="Ann", uniform_number=7)
    with count_requests() as requests:
        taken = add(player_id="p2", player_name="Bo")
        assert not taken.is_valid()
    assert taken.errors == {"uniform_number": ["Number 7 is taken."]}
    assert dict(requests) == {"GetItem": 1} and requests.calls[0][1]["ConsistentRead"] is True

    Form = modelform_factory(Player, fields=["player_name", "uniform_number"])
    ann = Player.objects.get(team_id="t1", player_id="p1")
    with count_requests() as requests:
        assert Form(
            {"player_name": "Annie", "uniform_number": 7, "version": 1}, instance=ann
        ).is_valid()
    assert requests.total == 0  # her own number, as read: nothing to ask
    Player.objects.create(team_id="t1", player_id="p2", player_name="Bo", uniform_number=8)
    edit = Form({"player_name": "Ann", "uniform_number": 8, "version": 1}, instance=ann)
    message = "Player with this Uniform number already exists."
    assert not edit.is_valid() and edit.errors == {"uniform_number": [message]}


def test_refusals_wraps_a_write_of_your_own(dynamo_db):
    Player.objects.create(team_id="t1", player_id="p1", player_name="Ann", uniform_number=7)
    form = add(player_id="p2", uniform_number=8)
    assert form.is_valid()
    player = form.save(commit=False)
    player.uniform_number = 7
    with form.refusals():
        Player.objects.create(**{f.name: getattr(player, f.name) for f in Player._meta.fields})
        pytest.fail("the create is refused")
    assert form.errors == {"uniform_number": ["Number 7 is taken."]}


def test_a_form_needs_a_dynamo_model_and_fields():
    with pytest.raises(ImproperlyConfigured, match="without defining 'fields' or 'exclude'"):
        modelform_factory(Player)
    with pytest.raises(ImproperlyConfigured, match="must be a dynamo_app model"):
        modelform_factory(dict, fields="__all__")


def test_an_item_too_large_is_a_form_error_too(dynamo_db, dynamo_requests):
    form = EverythingForm(
        {
            "ident_key": "k",
            "text": "t",
            "integer": "1",
            "decimal": "1",
            "real": "1",
            "when": "2030-01-01 00:00",
            "ident": str(uuid.uuid4()),
            "stars": "1",
            "doc": '"' + "x" * 410_000 + '"',
        }
    )
    assert form.is_valid(), form.errors
    assert form.save() is None and dynamo_requests.total == 0
    (message,) = form.errors[NON_FIELD_ERRORS]
    assert "400 KB" in message
