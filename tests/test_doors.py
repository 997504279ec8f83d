"""One model contract on every door: the same value is accepted and stored
identically, or refused, whether it comes through save(), update(), a ModelForm,
the admin, the REST API, dynamo_load or PartiQL.

Three kinds of value:

* valid: every door stores it, as the very same attribute;
* against the model's own rules (``choices``, ``validators``): the doors that
  validate as Django's do (a ModelForm, the admin, the API, ``dynamo_load
  --strict``) refuse it; ``save()``, ``update()``, PartiQL and a plain load store
  it, as Django's ``save()`` does, since ``full_clean()`` is the form's step;
* not storable at all (39 digits): every door refuses it, and nothing is written.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.core.validators import MinValueValidator
from django.test import Client
from django.urls import path
from rest_framework import generics
from rest_framework.test import APIClient

from dynamo_app import models
from dynamo_app.admin import DynamoModelAdmin
from dynamo_app.client.handle import get_handle
from dynamo_app.contrib.rest_framework import ModelSerializer
from dynamo_app.data.dumpload import load
from dynamo_app.exceptions import LoadError, ValidationError
from dynamo_app.forms import modelform_factory


class DoorTicket(models.Model):
    ticket_id = models.StringField(partition_key=True)
    tier = models.StringField(choices=[("ga", "General admission"), ("press", "Press")])
    seats = models.IntegerField(validators=[MinValueValidator(1)], default=1)
    price = models.DecimalField(null=True, blank=True)
    played_on = models.DateField(null=True, blank=True)

    class Meta:
        app_label = "roster"
        table_name = "doors_ticket"


class DoorTicketSerializer(ModelSerializer):
    class Meta:
        model = DoorTicket
        fields = "__all__"


class DoorTickets(generics.CreateAPIView):
    serializer_class = DoorTicketSerializer


site = admin.AdminSite(name="doors")
site.register(DoorTicket, DynamoModelAdmin)
urlpatterns = [path("admin/", site.urls), path("api/", DoorTickets.as_view())]
pytestmark = pytest.mark.usefixtures("module_urls")

BASE = {"tier": "ga", "seats": 1}  # what each door is given besides the value under test
VALID, AGAINST_RULES, UNSTORABLE = "valid", "against the model's rules", "unstorable"
CASES = [
    # field, value, as typed in a form, kind
    ("tier", "press", "press", VALID),
    ("seats", 7, "7", VALID),
    ("price", Decimal("0.000"), "0.000", VALID),
    ("price", Decimal("-12.50"), "-12.50", VALID),
    ("played_on", date(2024, 2, 29), "2024-02-29", VALID),
    ("played_on", date(999, 1, 2), "0999-01-02", VALID),
    ("tier", "gold", "gold", AGAINST_RULES),
    ("seats", 0, "0", AGAINST_RULES),
    ("seats", 10**38 + 1, str(10**38 + 1), UNSTORABLE),  # 39 significant digits
    # a datetime is no date: refused, never cut to its date
    ("played_on", datetime(2024, 5, 1, 9, 30, tzinfo=UTC), "2024-05-01T09:30:00+00:00", UNSTORABLE),
]


class Refused(Exception):
    """A door said no (a form error, a 400, a ValidationError, a LoadError)."""


def raising(*errors: type[Exception]) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The door's own refusals as ``Refused``."""

    def wrap(door: Callable[..., None]) -> Callable[..., None]:
        def run(*args: Any) -> None:
            try:
                door(*args)
            except errors as exc:
                raise Refused(str(exc)) from exc

        run.__name__ = door.__name__
        return run

    return wrap


@raising(ValidationError)
def by_save(key: str, name: str, value: Any, typed: str) -> None:
    DoorTicket(ticket_id=key, **{**BASE, name: value}).save()


@raising(ValidationError)
def by_update(key: str, name: str, value: Any, typed: str) -> None:
    DoorTicket.objects.create(ticket_id=key, **BASE).update(set={name: value})


def by_model_form(key: str, name: str, value: Any, typed: str) -> None:
    form_class = modelform_factory(DoorTicket, fields="__all__")
    form = form_class({"ticket_id": key, **BASE, name: typed})
    if not (form.is_valid() and form.save()):
        raise Refused(form.errors.as_text())


def by_admin(key: str, name: str, value: Any, typed: str) -> None:
    client = Client()
    client.force_login(User.objects.create(username=key, is_staff=True, is_superuser=True))
    page = client.post("/admin/roster/doorticket/add/", {"ticket_id": key, **BASE, name: typed})
    if page.status_code != 302:
        raise Refused(str(page.context["adminform"].form.errors))


def by_api(key: str, name: str, value: Any, typed: str) -> None:
    sent = str(value) if isinstance(value, Decimal | date) else value
    answer = APIClient().post("/api/", {"ticket_id": key, **BASE, name: sent}, format="json")
    if answer.status_code != 201:
        raise Refused(json.dumps(answer.json()))


def _line(key: str, name: str, typed: str) -> str:
    field = DoorTicket._meta.fields_by_name[name]
    fields = {"ticket_id": key, **BASE, name: field.to_json(field.from_json(typed))}
    return json.dumps({"model": DoorTicket._meta.label, "fields": fields})


@raising(LoadError, ValidationError)
def by_load(key: str, name: str, value: Any, typed: str) -> None:
    load([_line(key, name, typed)])


@raising(LoadError, ValidationError)
def by_strict_load(key: str, name: str, value: Any, typed: str) -> None:
    load([_line(key, name, typed)], strict=True)


@raising(ValidationError)
def by_partiql(key: str, name: str, value: Any, typed: str) -> None:
    DoorTicket.objects.create(ticket_id=key, **BASE)  # an UPDATE (moto runs no INSERT with ?)
    statement = f"UPDATE {{table}} SET {name} = ? WHERE ticket_id = ?"
    list(DoorTicket.objects.partiql(statement, [value, key]))


DOORS = [by_save, by_update, by_model_form, by_admin, by_api, by_load, by_strict_load, by_partiql]
VALIDATING = {by_model_form, by_admin, by_api, by_strict_load}


def stored(key: str) -> dict[str, Any] | None:
    handle = get_handle()
    answer = handle.call(
        "get_item",
        TableName=handle.table_name("doors_ticket"),
        Key={"ticket_id": {"S": key}},
        ConsistentRead=True,
    )
    return answer.get("Item")


def as_stored(value: dict[str, Any]) -> Any:
    """A wire value as DynamoDB keeps it: numbers normalised ("1.50" is 1.5), which
    moto and MiniStack each do on some paths and not others."""
    ((kind, inner),) = value.items()
    if kind == "N":
        return ("N", Decimal(inner))
    if kind == "NS":
        return ("NS", frozenset(Decimal(n) for n in inner))
    if kind == "L":
        return ("L", [as_stored(v) for v in inner])
    if kind == "M":
        return ("M", {k: as_stored(v) for k, v in inner.items()})
    return (kind, inner)


@pytest.mark.parametrize(("name", "value", "typed", "kind"), CASES)
@pytest.mark.parametrize("door", DOORS, ids=lambda door: door.__name__)
def test_the_same_value_is_refused_or_stored_identically_through_every_door(
    door: Callable[..., None], name: str, value: Any, typed: str, kind: str
) -> None:
    refused = kind == UNSTORABLE or (kind == AGAINST_RULES and door in VALIDATING)
    if refused:
        with pytest.raises(Refused):
            door("k", name, value, typed)
        unchanged = None  # nothing written; an update refused leaves the item it found
        if door in (by_update, by_partiql):
            unchanged = DoorTicket._meta.encode(DoorTicket(ticket_id="k", **BASE))
        assert stored("k") == unchanged
        return
    door("k", name, value, typed)
    by_save("reference", name, value, typed)
    door_item, reference = stored("k"), stored("reference")
    assert as_stored(door_item[name]) == as_stored(reference[name])  # type: ignore[index]
