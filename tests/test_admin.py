"""Django's admin over DynamoDB models (dynamo_app.admin), through the test client, on
the demo's models as project/roster/admin.py registers them on Django's own site.

Sessions are Django's database ones here, so the DynamoDB requests counted are the
admin's own (with the demo's DynamoDB sessions, every page adds the session's GetItem).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from django.contrib import admin
from django.contrib.admin.models import LogEntry
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission, User
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from django.urls import path
from django.utils.encoding import iri_to_uri

from dynamo_app import models
from dynamo_app.admin import DynamoModelAdmin, object_id, parse_object_id
from dynamo_app.client.handle import get_handle
from dynamo_app.tables import registry
from dynamo_app.testing import count_requests
from project.roster.models import Player, Team, TeamEvent
from tests.admin_support import change_url, form_data
from tests.demo_support import demo_site, seed, text

PLAYERS = "/admin/roster/player/"


@pytest.fixture(autouse=True)
def site(request: pytest.FixtureRequest, db: None, dynamo_server: Any) -> Iterator[Any]:
    with (
        demo_site(request) as handle,
        override_settings(SESSION_ENGINE="django.contrib.sessions.backends.db"),
    ):
        yield handle


@pytest.fixture
def player(root: Client) -> Player:
    """The demo's sample teams, and the first player of team-001 by uniform number."""
    seed(root)
    return Player.objects.using_index("lsi1").filter(team_id="team-001").first()


def requests_to(counter: Any, *models_: type[models.Model]) -> Counter[str]:
    """The requests of a block that went to these models' tables, by operation."""
    tables = {get_handle().table_name(m._meta.table_name) for m in models_}
    return Counter(r.operation for r in counter.requests if set(r.table.split(", ")) & tables)


def numbers(page: Any) -> list[int]:
    return [p.uniform_number for p in page.context["cl"].rows]


def test_index_lists_the_models_under_their_app_next_to_orm_models(root: Client) -> None:
    index = root.get("/admin/")
    assert index.status_code == 200
    body = text(index)
    assert "Authentication and Authorization" in body and "Users" in body
    assert "Baseball roster" in body and "Players" in body and "Teams" in body
    assert "Team events" in body
    html = index.content.decode()
    assert 'href="/admin/roster/player/"' in html and 'href="/admin/roster/player/add/"' in html
    app = root.get("/admin/roster/")
    assert app.status_code == 200 and "Players" in text(app)


def test_change_list_is_one_query_per_page_forwards_and_back(root: Client) -> None:
    seed(root)
    with count_requests() as counter:
        first = root.get(PLAYERS, {"team_id": "team-001"})
    assert requests_to(counter, Player) == {"Query": 1}
    assert counter.total == 1
    assert numbers(first) == [1, 3, 4, 5, 7, 8, 9, 11, 14, 18]  # the lsi1 index: by number
    cl = first.context["cl"]
    assert cl.previous_url == "" and cl.next_url.startswith("?team_id=team-001&cursor=")
    assert "This page: 1 DynamoDB request" in text(first)
    assert "in all" not in text(first)  # no count unless the admin asks for one

    with count_requests() as counter:
        second = root.get(PLAYERS + cl.next_url)
    assert counter.total == 1 and numbers(second) == [19, 22, 24, 51]
    assert second.context["cl"].next_url == ""

    with count_requests() as counter:
        back = root.get(PLAYERS + second.context["cl"].previous_url)
    assert counter.total == 1 and numbers(back) == numbers(first)
    assert back.context["cl"].previous_url == ""  # the first page again
    assert numbers(root.get(PLAYERS + back.context["cl"].next_url)) == [19, 22, 24, 51]


def test_change_list_by_table_key_with_a_sort_key_prefix(root: Client) -> None:
    seed(root)
    team = root.get("/admin/roster/team/")  # the league partition: the key's default
    assert 'href="/admin/roster/player/?team_id=team-001"' in team.content.decode()
    assert [t.team_id for t in team.context["cl"].rows] == [
        "kyoto-cranes",
        "osaka-otters",
        "team-001",
    ]
    with count_requests() as counter:
        found = root.get("/admin/roster/team/", {"league": "demo", "q": "kyoto"})
    assert counter.total == 1
    (call,) = counter.calls
    assert "begins_with" in call[1]["KeyConditionExpression"]
    assert [t.team_id for t in found.context["cl"].rows] == ["kyoto-cranes"]
    with count_requests() as counter:  # the table: by player_id, the players of the partition
        players = root.get(PLAYERS, {"index": "", "team_id": "team-001"})
    ids = [p.player_id for p in players.context["cl"].rows]
    assert ids == sorted(ids) and len(ids) == 10
    (call,) = counter.calls  # the team's item and its events share the partition: not read
    assert "begins_with" in call[1]["KeyConditionExpression"]
    assert {"S": "PLAYER#"} in call[1]["ExpressionAttributeValues"].values()


def test_change_list_without_a_partition_sends_nothing_and_asks_for_one(root: Client) -> None:
    with count_requests() as counter:
        page = root.get(PLAYERS)
    assert page.status_code == 200 and counter.total == 0
    assert "To list players, choose their team id:" in text(page)
    assert 'name="team_id"' in page.content.decode()


def test_change_form_is_one_get_item_and_saves_the_form_fields(
    root: Client, player: Player
) -> None:
    with count_requests() as counter:
        page = root.get(change_url(player))
    assert page.status_code == 200 and counter == {"GetItem": 1}
    form = page.context["adminform"].form
    assert form.fields["team_id"].disabled and form.fields["player_id"].disabled
    with count_requests() as counter:
        saved = root.post(change_url(player), form_data(page, player_name="Chiaki II"))
    assert saved.status_code == 302, text(saved)
    assert counter == {"GetItem": 1, "UpdateItem": 1}  # the read, the conditioned write
    stored = Player.objects.get(team_id=player.team_id, player_id=player.player_id)
    assert stored.player_name == "Chiaki II" and stored.version == player.version + 1
    followed = root.get(saved["Location"])
    assert "was changed successfully" in text(followed)


def test_a_stale_save_is_refused_with_the_stored_values_then_saved_on_purpose(
    root: Client,
    player: Player,
) -> None:
    mine = root.get(change_url(player))
    theirs = root.get(change_url(player))
    assert root.post(change_url(player), form_data(theirs, player_name="Theirs")).status_code == 302

    refused = root.post(change_url(player), form_data(mine, player_name="Mine"))
    assert refused.status_code == 409
    body = text(refused)
    assert "Someone else saved this Player while you were editing it" in body
    assert "Name: Theirs" in body and "Nothing was saved" in body
    assert Player.objects.get(**player.key).player_name == "Theirs"

    again = root.post(change_url(player), form_data(refused, player_name="Mine"))
    assert again.status_code == 302
    assert Player.objects.get(**player.key).player_name == "Mine"


def test_a_taken_unique_value_is_an_error_on_its_field(root: Client) -> None:
    seed(root)
    by_number = Player.objects.using_index("lsi1").filter(team_id="team-001")
    player = by_number.first()
    page = root.get(change_url(player))
    taken = root.post(change_url(player), form_data(page, uniform_number=18))
    assert taken.status_code == 200
    form = taken.context["adminform"].form
    assert form.errors["uniform_number"] == ["Player with this Uniform number already exists."]
    assert Player.objects.get(**player.key).uniform_number == player.uniform_number


def test_add_creates_insert_only_and_logs_the_addition(root: Client) -> None:
    seed(root)
    with count_requests() as counter:
        page = root.get(PLAYERS + "add/")
    assert page.status_code == 200 and counter.total == 0
    data = form_data(page, team_id="team-001", player_name="Zed", uniform_number=77)
    with count_requests() as counter:  # the form's unique check (GetItem) and the write
        added = root.post(PLAYERS + "add/", data)
    assert added.status_code == 302 and counter == {"GetItem": 1, "TransactWriteItems": 1}
    stored = Player.objects.using_index("lsi1").filter(team_id="team-001", uniform_number=77)
    (zed,) = list(stored)
    entry = LogEntry.objects.get()
    assert entry.object_id == object_id(zed) and entry.is_addition()
    assert entry.get_admin_url() == change_url(zed)
    with count_requests() as counter:
        history = root.get(change_url(zed).replace("/change/", "/history/"))
    assert history.status_code == 200 and "Added." in text(history)
    assert counter == {"GetItem": 1}

    twice = root.post(PLAYERS + "add/", {**data, "player_id": zed.player_id})
    assert twice.status_code == 200
    assert "already exists" in text(twice)


def test_delete_is_conditioned_on_the_version_the_page_showed(root: Client, player: Player) -> None:
    delete_url = change_url(player).replace("/change/", "/delete/")
    with count_requests() as counter:
        page = root.get(delete_url)
    assert page.status_code == 200 and "the unique value lock" in text(page)
    assert counter == {"GetItem": 1}
    assert page.context["version"] == player.version

    player.player_name = "Changed meanwhile"
    player.save()
    refused = root.post(delete_url, {"post": "yes", "_version": page.context["version"]})
    assert refused.status_code == 409 and "nothing was deleted" in text(refused)
    assert Player.objects.get(**player.key).player_name == "Changed meanwhile"

    with count_requests() as counter:
        deleted = root.post(delete_url, {"post": "yes", "_version": refused.context["version"]})
    assert deleted.status_code == 302
    assert counter == {"GetItem": 1, "TransactWriteItems": 1}  # the item and its number's lock
    assert not Player.objects.filter(**player.key).exists()
    # its number is free again: the lock went in the same transaction
    Player.objects.create(team_id="team-001", player_name="New", uniform_number=1)


def test_delete_selected_reads_once_and_keeps_what_changed(root: Client) -> None:
    seed(root)
    a, b, c = list(Player.objects.using_index("lsi1").filter(team_id="team-001").limit(3))
    ids = [object_id(p) for p in (a, b, c)]
    post = {"action": "delete_selected", "_selected_action": ids, "index": 0}
    with count_requests() as counter:
        confirm = root.post(PLAYERS + "?team_id=team-001", post)
    assert confirm.status_code == 200 and counter == {"BatchGetItem": 1}
    versions = dict(confirm.context["versions"])
    c.player_name = "Changed"
    c.save()
    done = root.post(
        PLAYERS + "?team_id=team-001", {**post, "post": "yes", **versions}, follow=True
    )
    body = text(done)
    assert "Successfully deleted 2 players." in body and "Not deleted" in body
    left = [p.player_id for p in Player.objects.filter(team_id="team-001")]
    assert a.player_id not in left and b.player_id not in left and c.player_id in left


class AdminScanned(models.Model):
    """Small items keyed by one field alone: no partition to name, so an admin that
    opts in browses them with a Scan."""

    name = models.StringField(partition_key=True)

    class Meta:
        app_label = "roster"


class ScannedAdmin(DynamoModelAdmin):
    list_display = ["name"]
    allow_scan = True


scan_site = admin.AdminSite(name="test-admin-scan")
scan_site.register(AdminScanned, ScannedAdmin)


class GuardedPlayerAdmin(DynamoModelAdmin):
    """The delete pages' hooks overridden: a captain is protected, and a delete
    takes whatever is stored now (no version to confirm)."""

    def get_deleted_objects(self, objs: Any, request: Any) -> Any:
        deleted, count, perms_needed, _ = super().get_deleted_objects(objs, request)
        return deleted, count, perms_needed, [str(o) for o in objs if o.player_name == "Captain"]

    def version_confirmed(self, request: Any, obj: Any, name: str) -> bool:
        return True


hooks_site = admin.AdminSite(name="test-admin-hooks")
hooks_site.register(Player, GuardedPlayerAdmin)
urlpatterns = [path("scan/", scan_site.urls), path("hooks/", hooks_site.urls)]


def test_scan_only_where_the_admin_allows_it_with_its_cost(root: Client) -> None:
    AdminScanned.objects.create(name="only")
    with override_settings(ROOT_URLCONF=__name__), count_requests() as counter:
        scanned = root.get("/scan/roster/adminscanned/")
    assert requests_to(counter, AdminScanned) == {"Scan": 1}
    assert "A Scan of the whole table (allow_scan)" in text(scanned)
    assert [s.name for s in scanned.context["cl"].rows] == ["only"]
    with count_requests() as counter:
        root.get(PLAYERS)
    assert counter.total == 0  # Player: no allow_scan, no partition, no request


def delete_url(base: str, obj: models.Model) -> str:
    """The delete page of ``obj`` on the admin site at ``base``."""
    return f"{base}{quote(object_id(obj))}/delete/"


def test_the_delete_pages_hooks_protect_items_and_skip_the_version(root: Client) -> None:
    captain = Player.objects.create(team_id="t-hooks", player_name="Captain", uniform_number=1)
    other = Player.objects.create(team_id="t-hooks", player_name="Other", uniform_number=2)
    base = "/hooks/roster/player/"
    with override_settings(ROOT_URLCONF=__name__):
        page = root.get(delete_url(base, captain))
        assert page.context["protected"] == [str(captain)] and "Yes, I’m sure" not in text(page)
        refused = root.post(delete_url(base, captain), {"post": "y"})
        assert refused.status_code == 200 and Player.objects.filter(**captain.key).exists()
        selected = {"action": "delete_selected", "_selected_action": [object_id(captain)]}
        confirm = root.post(base + "?team_id=t-hooks", selected)
        assert "protected related objects" in text(confirm) and "Yes, I’m sure" not in text(confirm)
        root.post(base + "?team_id=t-hooks", {**selected, "post": "yes"})
        assert Player.objects.filter(**captain.key).exists()

        other.player_name = "Changed meanwhile"
        other.save()  # the version a page showed before is stale now: not asked for
        deleted = root.post(delete_url(base, other), {"post": "y"})
    assert deleted.status_code == 302 and not Player.objects.filter(**other.key).exists()


def test_composite_object_ids_are_escaped_and_reversible(root: Client) -> None:
    odd = Player.objects.create(team_id="a,b/c_d?é", player_name="Odd", uniform_number=5)
    oid = object_id(odd)
    assert parse_object_id(Player, oid) == odd.key
    page = root.get(change_url(odd))
    assert page.status_code == 200 and page.context["original"].obj == odd
    listed = root.get(PLAYERS, {"team_id": "a,b/c_d?é"})
    assert iri_to_uri(change_url(odd)) in listed.content.decode()
    with pytest.raises(ValueError):
        parse_object_id(Player, "no-comma")
    assert root.get(PLAYERS + "no-comma/change/", follow=True).redirect_chain[-1][0] == "/admin/"


def test_permissions_come_from_django_auth(client: Client) -> None:
    seed(client)
    assert (
        Permission.objects.filter(
            content_type__app_label="roster", codename__in=["view_player", "change_player"]
        ).count()
        == 2
    )
    staff = User.objects.create_user("staff", password="pw", is_staff=True)
    client.force_login(staff)
    assert "Baseball roster" not in text(client.get("/admin/"))
    assert client.get(PLAYERS, {"team_id": "team-001"}).status_code == 403

    staff.user_permissions.add(Permission.objects.get(codename="view_player"))
    staff = User.objects.get(pk=staff.pk)  # a fresh permission cache
    client.force_login(staff)
    listed = client.get(PLAYERS, {"team_id": "team-001"})
    assert listed.status_code == 200 and len(listed.context["cl"].rows) == 10
    assert listed.context["action_form"] is None  # delete_selected needs delete permission
    player = listed.context["cl"].rows[0]
    view = client.get(change_url(player))
    assert view.status_code == 200 and "View player" in text(view)
    assert all(f.disabled for f in view.context["adminform"].form.fields.values())
    assert client.post(change_url(player), {"player_name": "x"}).status_code == 403
    assert client.get(PLAYERS + "add/").status_code == 403


@pytest.fixture
def throttle(settings: Any) -> Iterator[Any]:
    """``throttle("Query", ...)``: those operations fail as throttled, retries spent
    (no local engine throttles; DynamoDB does under load)."""
    settings.DYNAMO = {**settings.DYNAMO, "RETRY": {"MAX_ATTEMPTS": 1}}
    events = get_handle().client.meta.events
    failing: set[str] = set()

    def hook(model: Any, params: Any, **kwargs: Any) -> None:
        if model.name in failing:
            error = {"Error": {"Code": "ThrottlingException", "Message": "slow down"}}
            raise ClientError(error, model.name)  # type: ignore[arg-type]

    events.register("before-call.dynamodb", hook, unique_id="test-admin-throttle")
    yield failing.update
    events.unregister("before-call.dynamodb", unique_id="test-admin-throttle")


def test_dynamodb_errors_are_admin_messages_never_a_500(
    root: Client, player: Player, throttle: Any
) -> None:
    form = root.get(change_url(player))
    throttle({"UpdateItem"})
    kept = root.post(change_url(player), form_data(form, player_name="Typed"))
    assert kept.status_code == 503 and "nothing was saved" in text(kept)
    assert kept.context["adminform"].form["player_name"].value() == "Typed"  # not lost
    assert Player.objects.get(**player.key).player_name == player.player_name
    throttle({"Query", "GetItem", "BatchGetItem"})
    pages = [
        root.get(PLAYERS, {"team_id": "team-001"}),
        root.get(change_url(player)),
        root.get(change_url(player).replace("/change/", "/delete/")),
        root.post(
            PLAYERS + "?team_id=team-001",
            {"action": "delete_selected", "_selected_action": [object_id(player)]},
        ),
    ]
    for page in pages:
        assert page.status_code == 503
        assert "DynamoDB did not answer" in text(page) and "throttl" in text(page).lower()


def test_key_fields_of_a_stored_item_are_text_not_inputs(root: Client, player: Player) -> None:
    html = root.get(change_url(player)).content.decode()
    assert f'<div class="readonly">{player.team_id}</div>' in html
    assert f'<div class="readonly">{player.player_id}</div>' in html
    assert 'name="team_id"' not in html and 'name="player_id"' not in html
    assert 'name="player_name"' in html  # the other fields stay inputs
    added = root.get(PLAYERS + "add/").content.decode()
    assert 'name="team_id"' in added  # a new item's key is typed in


def test_a_missing_table_is_said_with_the_command_that_creates_it(root: Client) -> None:
    handle = get_handle()
    handle.call("delete_table", TableName=handle.table_name(Player._meta.table_name))
    page = root.get(PLAYERS, {"team_id": "team-001"})
    assert page.status_code == 503
    shown = text(page)
    assert "Players: the DynamoDB table does not exist" in shown
    assert "python manage.py dynamo_migrate" in shown
    assert "Try again in a moment" not in shown and "did not answer" not in shown


class AdminSiteThing(models.Model):
    thing_id = models.IntegerField(partition_key=True)
    blob = models.BinaryField(sort_key=True)
    tier = models.StringField(choices=[("ga", "General admission")], null=True)

    class Meta:
        app_label = "roster"


class AdminOrphanThing(models.Model):  # in no installed app: tests/ is none
    thing_id = models.StringField(partition_key=True)


for _model in (AdminSiteThing, AdminOrphanThing):  # never written: no tables
    registry.unregister(_model._meta.table_name)


def test_number_and_binary_keys_in_object_ids() -> None:
    thing = AdminSiteThing(thing_id=-42, blob=b"\x00/,_\xff")
    oid = object_id(thing)
    assert oid == "-42,AC8sX_5F8_3D"  # base64url of the bytes, quoted ("_" -> "_5F")
    assert parse_object_id(AdminSiteThing, oid) == {"thing_id": -42, "blob": b"\x00/,_\xff"}
    for bad in ("x,AA==", "1.5,AA==", "NaN,AA==", ",AA==", "1"):
        with pytest.raises(ValueError):
            parse_object_id(AdminSiteThing, bad)


def test_a_choice_shows_its_label_in_the_change_list() -> None:
    model_admin = DynamoModelAdmin(AdminSiteThing, admin.AdminSite(name="labels"))
    model_admin.list_display = ["tier"]
    assert model_admin.cell("tier", AdminSiteThing(thing_id=1, blob=b"b", tier="ga")) == (
        "General admission"
    )
    assert model_admin.cell("tier", AdminSiteThing(thing_id=1, blob=b"b")) == "-"


def test_register_on_djangos_site_and_its_checks() -> None:
    site = admin.AdminSite(name="test-admin-site")
    site.register(AdminSiteThing, DynamoModelAdmin)
    assert site.is_registered(AdminSiteThing)
    site.unregister(AdminSiteThing)

    @admin.register(AdminSiteThing, site=site)
    class ThingAdmin(DynamoModelAdmin):
        list_display = ["thing_id", "nothing"]
        list_filter = ["thing_id"]

    ids = sorted(e.id for e in site._registry[AdminSiteThing].check())
    assert ids == ["dynamo.E301", "dynamo.E302"]
    with pytest.raises(ImproperlyConfigured, match="declare Meta.app_label"):
        site.register(AdminOrphanThing, DynamoModelAdmin)


def test_the_admin_urls_and_form_names_the_browser_tests_use(root: Client) -> None:
    seed(root)
    listed = root.get(PLAYERS, {"team_id": "team-001"}).content.decode()
    assert re.search(r'<input type="text"[^>]*name="team_id"', listed)
    assert 'class="next-page"' in listed and 'name="_selected_action"' in listed
    team = Team.objects.get(team_id="team-001")
    assert object_id(team) == "team-001"  # the field of its table-key templates (Roster)
    page = root.get("/admin/roster/team/team-001/change/")
    assert page.status_code == 200 and page.context["original"].obj == team


def test_count_only_when_asked_with_its_cost_and_newest_first(root: Client) -> None:
    seed(root)
    from project.roster.admin import PlayerAdmin

    PlayerAdmin.show_count = True
    try:
        with count_requests() as counter:
            page = root.get(PLAYERS, {"team_id": "team-001"})
    finally:
        del PlayerAdmin.show_count
    assert counter == {"Query": 2}  # the page, and a Select=COUNT over the partition
    assert page.context["cl"].count == 14 and "14 in all" in text(page)
    assert "Counting the partition: 1 DynamoDB request" in text(page)

    for n in range(3):
        TeamEvent.new("team-001", "root", "noted", f"note {n}").save()
    events = root.get("/admin/roster/teamevent/", {"team_id": "team-001"})
    shown = [e.detail for e in events.context["cl"].rows]  # newest first
    assert shown[:3] == ["note 2", "note 1", "note 0"] and len(shown) == 4


def test_a_broken_cursor_goes_back_to_the_first_page(root: Client) -> None:
    seed(root)
    broken = root.get(PLAYERS, {"team_id": "team-001", "cursor": "forged"}, follow=True)
    assert broken.redirect_chain == [("?team_id=team-001", 302)]
    assert "That page link is no longer valid" in text(broken)
    other_team = root.get(PLAYERS, {"team_id": "team-001"}).context["cl"].next_url
    moved = other_team.replace("team-001", "kyoto-cranes")
    assert "no longer valid" in text(root.get(PLAYERS + moved, follow=True))


def test_a_page_that_ends_the_partition_exactly_offers_no_next_page(root: Client) -> None:
    Player.objects.bulk_save(
        [Player(team_id="exact", player_name=f"P{n}", uniform_number=n) for n in range(10)]
    )
    with count_requests() as counter:
        page = root.get(PLAYERS, {"team_id": "exact"})
    assert counter.total == 1 and numbers(page) == list(range(10))
    assert page.context["cl"].next_url == ""  # it read 11 at most: no empty page behind


def test_changing_a_unique_value_reads_its_lock_then_moves_it_in_one_transaction(
    root: Client,
    player: Player,
) -> None:
    page = root.get(change_url(player))
    with count_requests() as counter:
        saved = root.post(change_url(player), form_data(page, uniform_number=77))
    assert saved.status_code == 302
    assert counter == {"GetItem": 2, "TransactWriteItems": 1}  # the item, the new lock; the write
    assert Player.objects.get(**player.key).uniform_number == 77
