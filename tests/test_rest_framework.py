"""dynamo_app.contrib.rest_framework through DRF's own test client."""

import importlib
import subprocess
import sys
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from django.test import override_settings
from rest_framework.test import APIClient

from dynamo_app.exceptions import MissingDependency
from tests.drf_support import Member
from tests.drf_urls import MemberSerializer

pytestmark = pytest.mark.usefixtures("dynamo_db")
URL = "/clubs/c1/members/"
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def api():
    with override_settings(ROOT_URLCONF="tests.drf_urls"):
        yield APIClient()


def test_create_read_update_through_the_model(api):
    response = api.post(
        URL,
        {
            "club": "c1",
            "member_id": "m1",
            "name": "Ann",
            "number": 7,
            "balance": "10.50",
            "photo": "AAE=",
            "roles": ["b", "a", "a"],
            "joined": "2024-05-01T09:30:00Z",
            "profile": {"city": "Kyoto", "n": [1, 2]},
        },
        format="json",
    )
    assert response.status_code == 201, response.data
    stored = Member.objects.get(club="c1", member_id="m1")
    assert stored.balance == Decimal("10.50") and stored.photo == b"\x00\x01"
    assert stored.roles == {"a", "b"} and stored.version == 1
    assert stored.profile == {"city": "Kyoto", "n": [1, 2]}

    data = api.get(f"{URL}m1/").json()
    assert data["roles"] == ["a", "b"] and data["photo"] == "AAE=" and data["balance"] == "10.50"
    assert datetime.fromisoformat(data["joined"]) == datetime(2024, 5, 1, 9, 30, tzinfo=UTC)
    assert data["version"] == 1

    response = api.patch(f"{URL}m1/", {"name": "Anne", "version": 1}, format="json")
    assert response.status_code == 200 and response.json()["version"] == 2
    assert Member.objects.get(club="c1", member_id="m1").name == "Anne"


def test_refusals_are_400s_naming_the_field(api):
    Member.objects.create(club="c1", member_id="m1", name="Ann", number=7)
    taken = api.post(URL, {"club": "c1", "member_id": "m2", "name": "Bob", "number": 7})
    assert taken.status_code == 400 and "already taken" in taken.json()["number"][0]
    again = api.post(URL, {"club": "c1", "member_id": "m1", "name": "Ann"})
    assert again.status_code == 400 and "already exists" in again.json()["member_id"][0]
    wrong = api.post(URL, {"club": "c1", "member_id": "m3", "name": "x" * 21, "balance": "1.234"})
    assert wrong.status_code == 400 and set(wrong.json()) == {"name", "balance"}
    key = api.patch(f"{URL}m1/", {"member_id": "m9", "version": 1}, format="json")
    assert key.status_code == 400 and "key" in key.json()["member_id"][0]
    Member.objects.create(club="c1", member_id="m2", name="Bob", number=8)
    moved = api.patch(f"{URL}m2/", {"number": 7, "version": 1}, format="json")
    assert moved.status_code == 400 and "already taken" in moved.json()["number"][0]
    assert api.get(f"{URL}nobody/").status_code == 404


def test_the_model_rules_are_400s_on_their_fields_as_in_a_model_form(api):
    """choices, validators and the model's clean() refuse what full_clean() refuses."""
    wrong = api.post(
        URL,
        {"club": "c1", "member_id": "admin", "name": "Ann", "tier": "gold", "email": "nope"},
        format="json",
    )
    assert wrong.status_code == 400
    assert set(wrong.json()) == {"member_id", "tier", "email"}
    assert "admin is reserved." in wrong.json()["member_id"]
    clean = api.post(URL, {"club": "c1", "member_id": "m1", "name": "A", "tier": "vip"})
    assert clean.status_code == 400
    assert clean.json() == {"non_field_errors": ["A VIP member needs an email address."]}
    assert list(Member.objects.scan()) == []
    fine = {"club": "c1", "member_id": "m1", "name": "A", "tier": "vip", "email": "a@b.example"}
    assert api.post(URL, fine, format="json").status_code == 201
    cleared = api.patch(f"{URL}m1/", {"email": None, "version": 1}, format="json")
    assert cleared.status_code == 400  # the whole item is checked: clean() sees tier="vip"
    assert Member.objects.get(club="c1", member_id="m1").email == "a@b.example"


def test_a_stale_change_is_a_409_with_the_stored_values_never_an_overwrite(api):
    Member.objects.create(club="c1", member_id="m1", name="Ann")
    version = api.get(f"{URL}m1/").json()["version"]
    theirs = api.patch(f"{URL}m1/", {"name": "Theirs", "version": version}, format="json")
    assert theirs.status_code == 200
    mine = api.put(
        f"{URL}m1/",
        {"club": "c1", "member_id": "m1", "name": "Mine", "version": version},
        format="json",
    )
    assert mine.status_code == 409
    assert mine.json()["current"]["name"] == "Theirs" and mine.json()["current"]["version"] == 2
    assert "changed since it was read" in mine.json()["detail"]
    blind = api.patch(f"{URL}m1/", {"name": "Blind"}, format="json")
    assert blind.status_code == 400 and "version" in blind.json()
    assert Member.objects.get(club="c1", member_id="m1").name == "Theirs"
    again = api.patch(f"{URL}m1/", {"name": "Mine", "version": 2}, format="json")
    assert again.status_code == 200 and again.json()["version"] == 3


def test_serializer_fields_carry_the_model_fields_options():
    fields = MemberSerializer().fields
    assert type(fields["tier"]).__name__ == "ChoiceField"
    assert list(fields["tier"].choices) == ["ga", "vip"]
    assert fields["name"].max_length == 20 and not fields["name"].allow_blank
    assert fields["email"].allow_null and not fields["email"].required
    assert fields["version"].read_only is False and fields["version"].required is False


def test_cursor_pages(api):
    Member.objects.bulk_save(
        Member(club="c1", member_id=f"m{i}", name=f"N{i}") for i in range(5)
    )
    names, url = [], URL
    while url:
        page = api.get(url).json()
        names += [m["name"] for m in page["results"]]
        url = page["next"]
        assert url is None or "cursor=" in url
    assert names == [f"N{i}" for i in range(5)]
    bad = api.get(URL + "?cursor=forged")
    assert bad.status_code == 400 and "cursor" in bad.json()


def test_without_drf_the_import_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "rest_framework", None)  # as if not installed
    monkeypatch.delitem(sys.modules, "dynamo_app.contrib.rest_framework")
    with pytest.raises(MissingDependency, match=r"pip install \"django-dynamo-app\[drf\]\""):
        importlib.import_module("dynamo_app.contrib.rest_framework")


def test_the_app_imports_drf_only_when_a_serializer_field_is_asked_for():
    """DRF is an optional extra: forms, the JSON form and the codec never need it."""
    code = """
import sys
sys.modules["rest_framework"] = None  # as if not installed: importing it raises
from django.conf import settings
settings.configure(INSTALLED_APPS=["dynamo_app"], DYNAMO={"ENABLED": False}, USE_TZ=True)
import django
django.setup()
from dynamo_app import forms, serialization
from tests.drf_support import Member
member = Member(club="c", member_id="m", name="n", roles={"a"})
serialization.to_dict(member)
forms.fields_for_model(Member)
Member._meta.encode(member)
try:
    Member._meta.fields_by_name["name"].serializer_field()
except Exception as exc:
    print(type(exc).__name__, exc)
"""
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("MissingDependency") and "[drf]" in done.stdout
