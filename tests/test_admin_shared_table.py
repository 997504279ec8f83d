"""The admin over models in a shared table (single-table design): the change list
names a partition by the fields its key template is built from, orders, searches,
pages and links by the model's fields, and offers the table's overloaded indexes,
at the same request counts as for a model with its own table.

The member tests run twice, on the same model in both designs (its own table with
its key fields, and the shared ``AdmClubs`` table with key templates): the admin's
URLs, pages and requests are the same.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.test import Client
from django.urls import path

from dynamo_app import models
from dynamo_app.admin import DynamoModelAdmin, object_id, parse_object_id
from dynamo_app.testing import count_requests
from tests.admin_support import change_url
from tests.demo_support import text


class AdmClubs(models.Table):
    class Meta:
        table_name = "adm_clubs"
        indexes = [
            models.GlobalIndex("gsi1", partition_key="gsi1pk", sort_key="gsi1sk"),
            models.LocalIndex("lsi1", sort_key="lsi1sk"),
        ]


class AdmClub(models.Model):
    region = models.StringField(default="north")
    club_id = models.StringField()
    name = models.StringField()

    class Meta:
        app_label = "roster"
        table = AdmClubs
        keys = {
            "pk": "CLUB#{club_id}",
            "sk": "CLUB",
            "gsi1pk": "REGION#{region}",
            "gsi1sk": "CLUB#{club_id}",
        }


class AdmMember(models.Model):
    club_id = models.StringField()
    member_id = models.StringField(default=models.new_uuid)
    name = models.StringField()
    number = models.IntegerField()
    position = models.StringField(null=True, blank=True)
    version = models.VersionField()

    class Meta:
        app_label = "roster"
        table = AdmClubs
        keys = {
            "pk": "CLUB#{club_id}",
            "sk": "MEMBER#{member_id}",
            "lsi1sk": "NUMBER#{number:02d}",
            "gsi1pk": "POSITION#{position}",
            "gsi1sk": "NUMBER#{number:02d}",
        }
        unique = [models.Unique("number", within="club_id")]


class AdmSoloMember(models.Model):
    """``AdmMember`` with a table of its own: the same fields, indexes of the same names."""

    club_id = models.StringField(partition_key=True)
    member_id = models.StringField(sort_key=True, default=models.new_uuid)
    name = models.StringField()
    number = models.IntegerField()
    position = models.StringField(null=True, blank=True)
    version = models.VersionField()

    class Meta:
        app_label = "roster"
        indexes = [
            models.GlobalIndex("gsi1", partition_key="position", sort_key="number"),
            models.LocalIndex("lsi1", sort_key="number"),
        ]
        unique = [models.Unique("number", within="club_id")]


class AdmMatch(models.Model):
    """A partition named by two fields; a sort key that is a padded number."""

    league = models.StringField()
    season = models.IntegerField()
    round = models.IntegerField()
    venue = models.StringField()

    class Meta:
        app_label = "roster"
        table = AdmClubs
        keys = {"pk": "MATCH#{league}#{season}", "sk": "ROUND#{round:02d}"}


class MemberAdmin(DynamoModelAdmin):
    list_display = ["number", "name", "position"]
    default_index = "lsi1"
    list_per_page = 5


class ClubAdmin(DynamoModelAdmin):
    list_display = ["club_id", "name"]
    default_index = "gsi1"


class MatchAdmin(DynamoModelAdmin):
    list_display = ["round", "venue"]
    descending = True
    list_per_page = 2


site = admin.AdminSite(name="adm-shared")
site.register(AdmMember, MemberAdmin)
site.register(AdmSoloMember, MemberAdmin)
site.register(AdmClub, ClubAdmin)
site.register(AdmMatch, MatchAdmin)
urlpatterns = [path("admin/", site.urls)]
pytestmark = pytest.mark.usefixtures("module_urls")


@pytest.fixture(params=[AdmMember, AdmSoloMember], ids=["shared", "own"])
def member(request: pytest.FixtureRequest) -> type[models.Model]:
    """The member model in one design or the other, with a club of 12 members (and,
    in the shared table, the club's own item in the same partition)."""
    model = request.param
    AdmClub.objects.create(club_id="c1", name="Club One")
    model.objects.bulk_save(
        [
            model(
                club_id="c1",
                member_id=f"m{n:02d}",
                name=f"N{n}",
                number=n * 3 % 40,
                position="Pitcher" if n % 4 == 0 else None,
            )
            for n in range(12)
        ]
    )
    model.objects.create(club_id="c2", member_id="x", name="Other", number=8, position="Pitcher")
    return model


def changelist(model: type[models.Model]) -> str:
    return f"/admin/roster/{model._meta.model_name}/"


def column(page: Any, name: str) -> list[Any]:
    return [getattr(obj, name) for obj in page.context["cl"].rows]


def test_a_partition_a_page_one_query_each_forwards_and_back(
    root: Client, member: type[models.Model]
) -> None:
    url = changelist(member)
    with count_requests() as sent:
        asked = root.get(url)
    assert sent.total == 0 and "choose their club id" in text(asked)
    assert 'name="club_id"' in asked.content.decode()

    with count_requests() as sent:
        first = root.get(url, {"club_id": "c1"})
    assert sent == {"Query": 1}
    assert column(first, "number") == [0, 3, 6, 9, 12]  # lsi1: by number, members only
    cl = first.context["cl"]
    assert cl.next_url.startswith("?club_id=c1&cursor=") and cl.previous_url == ""
    with count_requests() as sent:
        second = root.get(url + cl.next_url)
    assert sent == {"Query": 1} and column(second, "number") == [15, 18, 21, 24, 27]
    with count_requests() as sent:
        back = root.get(url + second.context["cl"].previous_url)
    assert sent == {"Query": 1} and column(back, "number") == [0, 3, 6, 9, 12]
    third = root.get(url + second.context["cl"].next_url)
    assert column(third, "number") == [30, 33] and third.context["cl"].next_url == ""


def test_the_table_key_with_a_prefix_search_and_an_overloaded_index(
    root: Client, member: type[models.Model]
) -> None:
    url = changelist(member)
    table = root.get(url, {"index": "", "club_id": "c1"})
    assert column(table, "member_id")[:3] == ["m00", "m01", "m02"]  # by member_id
    with count_requests() as sent:
        found = root.get(url, {"index": "", "club_id": "c1", "q": "m1"})
    assert sent == {"Query": 1}
    assert column(found, "member_id") == ["m10", "m11"]
    (call,) = sent.calls
    assert "begins_with" in call[1]["KeyConditionExpression"]
    assert "Member id begins with" in text(found)

    by_position = root.get(url, {"index": "gsi1", "position": "Pitcher"})
    assert 'name="position"' in by_position.content.decode()
    assert column(by_position, "name") == ["N0", "Other", "N4", "N8"]  # numbers 0, 8, 12, 24
    choices = [label for _, label in by_position.context["cl"].indexes]
    assert choices == ["the table", "index gsi1", "index lsi1"]


def test_change_add_and_delete_by_the_models_object_id(
    root: Client, member: type[models.Model]
) -> None:
    one = member.objects.get(club_id="c1", member_id="m01")
    assert object_id(one) == "c1,m01" and parse_object_id(member, "c1,m01") == one.key
    listed = root.get(changelist(member), {"club_id": "c1"}).content.decode()
    assert f'href="{change_url(one)}?' in listed  # and the list's filters

    with count_requests() as sent:
        page = root.get(change_url(one))
    assert page.status_code == 200 and sent == {"GetItem": 1}
    form = page.context["adminform"].form
    assert form.fields["club_id"].disabled and form.fields["member_id"].disabled
    data = {n: form[n].value() for n in form.fields if not form.fields[n].disabled}
    with count_requests() as sent:
        saved = root.post(change_url(one), {**data, "name": "Renamed", "position": ""})
    assert saved.status_code == 302 and sent == {"GetItem": 1, "UpdateItem": 1}
    assert member.objects.get(**one.key).name == "Renamed"

    add = {"club_id": "c1", "member_id": "new", "name": "New", "number": 38, "version": ""}
    with count_requests() as sent:
        added = root.post(changelist(member) + "add/", add)
    assert added.status_code == 302 and sent == {"GetItem": 1, "TransactWriteItems": 1}
    taken = root.post(changelist(member) + "add/", {**add, "member_id": "new2"})
    assert "already exists" in text(taken)

    new = member.objects.get(club_id="c1", member_id="new")
    delete = change_url(new).replace("/change/", "/delete/")
    confirm = root.get(delete)
    with count_requests() as sent:
        gone = root.post(delete, {"post": "yes", "_version": confirm.context["version"]})
    assert gone.status_code == 302 and sent == {"GetItem": 1, "TransactWriteItems": 1}
    assert not member.objects.filter(club_id="c1", member_id="new").exists()

    ids = [object_id(m) for m in member.objects.filter(club_id="c1").limit(2)]
    with count_requests() as sent:
        confirm = root.post(
            changelist(member) + "?club_id=c1",
            {"action": "delete_selected", "_selected_action": ids},
        )
    assert confirm.status_code == 200 and sent == {"BatchGetItem": 1}


def test_a_model_whose_index_partition_has_a_plain_default_opens_at_once(root: Client) -> None:
    for n in (2, 1, 3):
        AdmClub.objects.create(club_id=f"c{n}", name=f"Club {n}")
    AdmClub.objects.create(club_id="s1", name="South", region="south")
    with count_requests() as sent:
        page = root.get(changelist(AdmClub))  # index gsi1, region "north": its default
    assert sent == {"Query": 1} and column(page, "club_id") == ["c1", "c2", "c3"]
    club = AdmClub.objects.get(club_id="c2")
    assert object_id(club) == "c2"  # the fields of the table's key templates: club_id alone
    with count_requests() as sent:
        shown = root.get(change_url(club))
    assert shown.status_code == 200 and sent == {"GetItem": 1}
    south = root.get(changelist(AdmClub), {"region": "south", "q": "s"})
    assert column(south, "name") == ["South"]


def test_a_partition_named_by_two_fields_and_a_numeric_sort_key(root: Client) -> None:
    AdmMatch.objects.bulk_save(
        [AdmMatch(league="east", season=2026, round=n, venue=f"V{n}") for n in range(1, 6)]
    )
    url = changelist(AdmMatch)
    with count_requests() as sent:
        asked = root.get(url, {"league": "east"})
    assert sent.total == 0 and "choose their league and season:" in text(asked)
    assert 'name="season"' in asked.content.decode()
    assert "begins with" not in text(asked)  # a padded number: no prefix search
    bad = root.get(url, {"league": "east", "season": "soon"})
    assert "&#x27;soon&#x27; is not a season (an integer)" in text(bad)

    with count_requests() as sent:
        first = root.get(url, {"league": "east", "season": "2026"})
    assert sent == {"Query": 1} and column(first, "round") == [5, 4]  # descending
    match = first.context["cl"].rows[0]
    assert object_id(match) == "east,2026,5"
    assert parse_object_id(AdmMatch, "east,2026,5") == match.key
    second = root.get(url + first.context["cl"].next_url)
    assert column(second, "round") == [3, 2]
    back = root.get(url + second.context["cl"].previous_url)
    assert column(back, "round") == [5, 4]
    assert root.get(change_url(match)).context["original"].obj == match
