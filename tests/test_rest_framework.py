"""dynamo_app.contrib.rest_framework through DRF's own test client."""

import importlib
import sys
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.test import override_settings
from rest_framework.exceptions import ValidationError
from rest_framework.test import APIClient

from dynamo_app.exceptions import MissingDependency
from tests.drf_support import Member
from tests.drf_urls import MemberSerializer

pytestmark = pytest.mark.usefixtures("dynamo_db")
URL = "/clubs/c1/members/"


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

    response = api.patch(f"{URL}m1/", {"name": "Anne", "version": 99}, format="json")
    assert response.status_code == 200 and response.json()["version"] == 2  # read-only
    assert Member.objects.get(club="c1", member_id="m1").name == "Anne"


def test_refusals_are_400s_naming_the_field(api):
    Member.objects.create(club="c1", member_id="m1", name="Ann", number=7)
    taken = api.post(URL, {"club": "c1", "member_id": "m2", "name": "Bob", "number": 7})
    assert taken.status_code == 400 and "already taken" in taken.json()["number"][0]
    again = api.post(URL, {"club": "c1", "member_id": "m1", "name": "Ann"})
    assert again.status_code == 400 and "already exists" in again.json()["member_id"][0]
    wrong = api.post(URL, {"club": "c1", "member_id": "m3", "name": "x" * 21, "balance": "1.234"})
    assert wrong.status_code == 400 and set(wrong.json()) == {"name", "balance"}
    key = api.patch(f"{URL}m1/", {"member_id": "m9"}, format="json")
    assert key.status_code == 400 and "key" in key.json()["member_id"][0]
    Member.objects.create(club="c1", member_id="m2", name="Bob", number=8)
    moved = api.patch(f"{URL}m2/", {"number": 7}, format="json")
    assert moved.status_code == 400 and "already taken" in moved.json()["number"][0]
    assert api.get(f"{URL}nobody/").status_code == 404


def test_a_stale_instance_is_a_400_not_an_overwrite():
    Member.objects.create(club="c1", member_id="m1", name="Ann")
    read = Member.objects.get(club="c1", member_id="m1")
    other = Member.objects.get(club="c1", member_id="m1")
    other.name = "Theirs"
    other.save()
    serializer = MemberSerializer(read, data={"name": "Mine"}, partial=True)
    assert serializer.is_valid()
    with pytest.raises(ValidationError) as error:
        serializer.save()
    assert error.value.status_code == 400 and "changed since it was read" in str(error.value)
    assert Member.objects.get(club="c1", member_id="m1").name == "Theirs"


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
