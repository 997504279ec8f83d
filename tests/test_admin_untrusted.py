"""The admin over crafted or foreign input: key fields round-trip exactly, a crafted
object id or partition is a 404 or a message, a foreign item is skipped and logged."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib import admin
from django.contrib.admin.utils import quote
from django.test import Client
from django.urls import path

from dynamo_app import models
from dynamo_app.admin import DynamoModelAdmin
from tests.admin_support import change_url, form_data
from tests.demo_support import text


class AuSquad(models.Table):
    class Meta:
        table_name = "au_squad"
        indexes = [models.GlobalIndex("gsi1", partition_key="gsi1pk", sort_key="gsi1sk")]


class AuPlayer(models.Model):
    team_id = models.StringField()
    player_id = models.StringField()
    name = models.StringField()
    position = models.StringField(default="p")
    version = models.VersionField()

    class Meta:
        app_label = "roster"
        table = AuSquad
        keys = {
            "pk": "TEAM#{team_id}",
            "sk": "PLAYER#{player_id}",
            "gsi1pk": "POSITION#{position}",
            "gsi1sk": "PLAYER#{player_id}",
        }


class AuTicket(models.Model):
    ticket_no = models.IntegerField(partition_key=True)
    holder = models.StringField()

    class Meta:
        app_label = "roster"


class PlayerAdmin(DynamoModelAdmin):
    list_display = ["player_id", "name"]


site = admin.AdminSite(name="adm-untrusted")
site.register(AuPlayer, PlayerAdmin)
site.register(AuTicket, DynamoModelAdmin)
urlpatterns = [path("admin/", site.urls)]
pytestmark = pytest.mark.usefixtures("module_urls")


def test_a_key_with_spaces_is_edited_as_itself(root: Client) -> None:
    AuPlayer.objects.create(team_id="t", player_id="x", name="plain")
    spaced = AuPlayer.objects.create(team_id="t", player_id=" x ", name="spaced")
    page = root.get(change_url(spaced))
    assert page.status_code == 200 and page.context["original"].obj.name == "spaced"
    saved = root.post(change_url(spaced), form_data(page, name="spaced 2"))
    assert saved.status_code == 302, text(saved)
    assert AuPlayer.objects.get(team_id="t", player_id=" x ").name == "spaced 2"
    assert AuPlayer.objects.get(team_id="t", player_id="x").name == "plain"


def test_a_key_with_spaces_is_added_as_typed(root: Client) -> None:
    page = root.get("/admin/roster/auplayer/add/")
    data = form_data(page, team_id=" t ", player_id=" y ", name="n")
    assert root.post("/admin/roster/auplayer/add/", data).status_code == 302
    assert AuPlayer.objects.get(team_id=" t ", player_id=" y ").name == "n"


def test_a_crafted_object_id_is_a_404_never_a_500(root: Client) -> None:
    urls = [f"/admin/roster/auticket/{oid}/change/" for oid in ("9" * 39, "1e400", "x" * 3000)]
    urls.append(f"/admin/roster/auplayer/{quote('t' * 2100)},p/change/")
    for url in urls:
        page = root.get(url, follow=True)
        assert page.status_code == 200 and "doesn’t exist" in text(page), url


def test_a_partition_value_over_the_key_limit_is_a_message(root: Client) -> None:
    page = root.get("/admin/roster/auplayer/", {"team_id": "t" * 2100})
    assert page.status_code == 200 and "DynamoDB takes 1 to 2048" in text(page)
    page = root.get("/admin/roster/auticket/", {"ticket_no": "9" * 39})
    assert page.status_code == 200 and "39 significant digits" in text(page)


def test_a_foreign_item_in_the_index_range_is_skipped_with_a_warning(
    root: Client, dynamo_db: Any, caplog: Any
) -> None:
    AuPlayer.objects.create(team_id="t", player_id="a", name="A")
    table = dynamo_db.table_name("au_squad")
    dynamo_db.client.put_item(
        TableName=table,
        Item={
            "pk": {"S": "OTHER#1"},
            "sk": {"S": "X"},
            "gsi1pk": {"S": "POSITION#p"},
            "gsi1sk": {"S": "PLAYER#b"},
            "_type": {"S": "Stranger"},
            "name": {"N": "5"},
        },
    )
    page = root.get("/admin/roster/auplayer/", {"index": "gsi1", "position": "p"})
    assert page.status_code == 200, text(page)
    assert [p.player_id for p in page.context["cl"].rows] == ["a"]
    assert "Stranger" in caplog.text
