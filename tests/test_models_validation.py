"""Django's model validation on DynamoDB models: field options, full_clean(),
clean(), validate_unique() against the lock table, and the declaration checks
of the new options."""

from decimal import Decimal

import pytest
from django.core.exceptions import NON_FIELD_ERRORS
from django.core.exceptions import ValidationError as DjangoValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db.models import TextChoices

from dynamo_app import models
from dynamo_app.exceptions import ModelDefinitionError, ValidationError
from dynamo_app.testing import count_requests
from project.roster.models import Player


class Size(TextChoices):
    SMALL = "s", "Small"
    LARGE = "l", "Large"


def even(value):
    if value % 2:
        raise DjangoValidationError("%(value)s is odd.", code="odd", params={"value": value})


class Order(models.Model):
    shop = models.StringField(partition_key=True)
    number = models.IntegerField(sort_key=True, validators=[MinValueValidator(1)])
    customer = models.StringField(max_length=10, verbose_name="buyer", help_text="Who pays.")
    size = models.StringField(choices=Size, null=True, blank=True)
    boxes = models.IntegerField(validators=[MaxValueValidator(10), even], default=2)
    price = models.DecimalField(max_digits=5, decimal_places=2, null=True)
    colours = models.StringSetField(choices=[("red", "Red"), ("blue", "Blue")], blank=True)
    note = models.StringField(null=True, blank=True)
    code = models.StringField(default="", editable=False, blank=True)

    class Meta:
        table_name = "validation_order"

    def clean(self):
        if self.size == Size.LARGE and self.boxes < 4:
            raise DjangoValidationError("A large order needs at least 4 boxes.")


def good(**changes):
    values = {"shop": "s1", "number": 1, "customer": "Ann", "size": "s", "price": Decimal("9.5")}
    return Order(**{**values, **changes})


def codes(error):
    return {name: [e.code for e in errors] for name, errors in error.error_dict.items()}


def test_a_valid_instance_passes_and_no_request_is_sent(dynamo_requests):
    order = good(colours={"red"})
    order.full_clean()
    assert dynamo_requests.total == 0  # no Meta.unique: validate_unique sends nothing


def test_full_clean_reports_every_bad_field_at_once(dynamo_requests):
    order = good(
        number=0,  # validator
        customer="x" * 11,  # max_length
        size="m",  # not a choice
        boxes=13,  # two validators fail
        price=Decimal("123.456"),  # digits
        colours={"red", "green"},  # a member not a choice
        note="",  # blank allowed
    )
    with pytest.raises(ValidationError) as caught:
        order.full_clean()
    error = caught.value
    assert isinstance(error, DjangoValidationError) and error.model == "Order"
    assert codes(error) == {
        "number": ["min_value"],
        "customer": ["invalid"],
        "size": ["invalid_choice"],
        "boxes": ["max_value", "odd"],
        "price": ["invalid"],
        "colours": ["invalid_choice"],
    }
    assert error.message_dict["customer"] == [
        "Expected at most 10 characters, got str 'xxxxxxxxxxx'."
    ]
    assert error.message_dict["size"] == ["Value 'm' is not a valid choice."]
    assert error.message_dict["boxes"][1] == "13 is odd."
    assert dynamo_requests.total == 0


def test_empty_values_follow_blank_and_null():
    with pytest.raises(ValidationError) as caught:
        good(customer="", size=None, price=None, colours=set()).full_clean()
    # customer: blank=False; size, colours: blank=True; price: null=True but not blank
    assert codes(caught.value) == {"customer": ["blank"], "price": ["blank"]}
    with pytest.raises(ValidationError) as caught:
        good(customer=None).full_clean()
    assert codes(caught.value) == {"customer": ["null"]}


def test_clean_runs_after_the_fields_and_exclude_skips_fields():
    order = good(size="l", boxes=2, customer="y" * 20)
    with pytest.raises(ValidationError) as caught:
        order.full_clean()
    assert codes(caught.value) == {"customer": ["invalid"], NON_FIELD_ERRORS: [None]}
    assert caught.value.message_dict[NON_FIELD_ERRORS] == ["A large order needs at least 4 boxes."]
    with pytest.raises(ValidationError) as caught:
        order.full_clean(exclude=["customer"])
    assert set(caught.value.error_dict) == {NON_FIELD_ERRORS}
    order.clean_fields(exclude=["customer"])  # clean() is not part of clean_fields()


def test_a_key_value_is_checked_as_a_key():
    with pytest.raises(ValidationError) as caught:
        good(shop="k" * 2049).full_clean()
    assert codes(caught.value) == {"shop": ["invalid"]}
    assert "a key value of 1 to 2048 bytes" in caught.value.message_dict["shop"][0]


def test_a_wrong_type_is_one_error_on_its_field():
    with pytest.raises(ValidationError) as caught:
        good(boxes="two").full_clean()
    assert caught.value.message_dict == {"boxes": ["Expected an integer, got str 'two'."]}


def test_save_still_validates_only_what_dynamodb_needs(dynamo_requests):
    """save() does not call full_clean() (as Django): a value outside choices is stored."""
    with pytest.raises(ValidationError, match="Order.customer: expected at most 10"):
        good(customer="x" * 11).save()
    assert dynamo_requests.total == 0


def test_field_options_are_kept_as_django_names_them():
    field = Order._meta.fields_by_name["customer"]
    assert (field.verbose_name, field.help_text, field.editable) == ("buyer", "Who pays.", True)
    assert Order._meta.fields_by_name["note"].verbose_name == "note"
    assert Order._meta.fields_by_name["size"].flatchoices == [("s", "Small"), ("l", "Large")]
    assert Order._meta.fields_by_name["code"].editable is False
    version = models.VersionField()
    assert (version.editable, version.blank) == (False, True)


class Ticket(models.Model):
    ticket_id = models.StringField(partition_key=True)
    tier = models.StringField(
        choices=[("Seats", [("ga", "General admission"), ("vip", "VIP")]), ("press", "Press")],
        null=True,
    )
    stars = models.IntegerField(choices=[(1, "One"), (2, "Two")], default=1)
    perks = models.StringSetField(choices=[("bar", "Open bar"), ("cloak", "Cloakroom")])
    note = models.StringField(null=True)

    class Meta:
        table_name = "validation_ticket"

    def get_stars_display(self):
        return f"{self.stars} star(s)"  # one of the model's own is kept, as in Django


def test_get_field_display_shows_the_label_as_django_does():
    ticket = Ticket(ticket_id="t", tier="ga", stars=2, perks={"cloak", "bar"})
    assert ticket.get_tier_display() == "General admission"  # inside a group
    assert ticket.get_perks_display() == "Cloakroom, Open bar"
    assert ticket.get_stars_display() == "2 star(s)"
    ticket.tier = "gold"
    assert ticket.get_tier_display() == "gold"  # not a choice: the value itself
    ticket.tier = None
    assert ticket.get_tier_display() is None
    assert not hasattr(ticket, "get_note_display")


@pytest.mark.parametrize(
    "field, problem",
    [
        (models.StringField(choices="abc"), "must be (value, label) pairs"),
        (models.IntegerField(choices=[("one", "One")]), "choice 'one' cannot be stored"),
        (models.StringField(max_length=2, choices=[("abc", "ABC")]), "at most 2 characters"),
        (models.NumberSetField(choices=[("x", "X")]), "choice 'x' cannot be stored"),
        (models.JSONField(choices=[(1, "one")]), "JSONField does not take choices"),
        (models.StringField(validators=[1]), "must be a list of callables"),
        (models.StringField(blank="yes"), "blank='yes' must be True or False"),
        (models.StringField(max_length=0), "max_length=0 must be a positive integer"),
    ],
)
def test_bad_field_options_are_declaration_errors(field, problem):
    with pytest.raises(ModelDefinitionError, match="dynamo.E113") as caught:
        abstract_model("Bad", f=field)
    assert problem in str(caught.value) and "Bad.f" in str(caught.value)


def test_a_field_named_like_a_validation_method_is_refused():
    with pytest.raises(ModelDefinitionError, match="Model.full_clean"):
        abstract_model("Clash", full_clean=models.StringField())


def abstract_model(name, **fields):
    """A model declared only to be checked (abstract: no table)."""
    attrs = {"__module__": __name__, "k": models.StringField(partition_key=True), **fields}
    attrs["Meta"] = type("Meta", (), {"abstract": True})
    return type(name, (models.Model,), attrs)


# --- validate_unique: the lock table, one request


def test_validate_unique_reads_a_lock_in_one_request(dynamo_db):
    alice = Player.objects.create(team_id="t1", player_name="Alice", uniform_number=18)
    with count_requests() as requests:
        alice.validate_unique()  # the value she was written with: her own lock, not read
        bob = Player(team_id="t1", player_name="Bob", uniform_number=18)
        with pytest.raises(ValidationError) as caught:
            bob.full_clean()
    assert caught.value.message_dict == {
        "uniform_number": ["Player with this Uniform number already exists."]
    }
    assert dict(requests) == {"GetItem": 1}
    assert requests.calls[-1][1]["ConsistentRead"] is True

    with count_requests() as requests:
        Player(team_id="t2", player_name="Bob", uniform_number=18).validate_unique()  # other team
        bob.full_clean(validate_unique=False)
        bob.full_clean(exclude=["uniform_number"])
        alice.uniform_number = 19
        alice.validate_unique()  # a value she does not hold yet: asked
    assert dict(requests) == {"GetItem": 2}


def test_validate_unique_is_skipped_for_a_field_that_failed(dynamo_db, dynamo_requests):
    with pytest.raises(ValidationError) as caught:
        Player(team_id="t1", player_name="Bob", uniform_number=100).full_clean()
    assert codes(caught.value) == {"uniform_number": ["max_value"]}
    assert dynamo_requests.total == 0
