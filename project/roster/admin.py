"""The roster in Django's admin (/admin/): each model a DynamoModelAdmin, so the
change lists read one partition a page (a Query each) and the forms write with
the models' own conditions (the player's version and its number's lock). Team,
Player and TeamEvent share the Roster table: their lists name a partition by
their fields (``?team_id=``), and each reads its own items of it."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from dynamo_app.admin import DynamoModelAdmin

from .models import Player, Team, TeamEvent


# django-stubs types admin.register() for the ORM's models only, hence the ignores.
@admin.register(Team)  # type: ignore[arg-type]
class TeamAdmin(DynamoModelAdmin):
    """By league, on the overloaded index gsi1: the league's one partition ("demo",
    the field's default) opens at once."""

    list_display = ["team_id", "name", "city", "players"]
    fields = ["league", "team_id", "name", "city"]
    default_index = "gsi1"

    @admin.display(description="players")
    def players(self, team: Team) -> str:
        url = reverse("admin:roster_player_changelist")
        return format_html('<a href="{}?team_id={}">Players</a>', url, team.team_id)


@admin.register(Player)  # type: ignore[arg-type]
class PlayerAdmin(DynamoModelAdmin):
    """A team's players by number (the Roster's local index lsi1), 10 a page."""

    list_display = ["uniform_number", "player_name", "position", "player_id"]
    default_index = "lsi1"
    list_per_page = 10


@admin.register(TeamEvent)  # type: ignore[arg-type]
class TeamEventAdmin(DynamoModelAdmin):
    """The append-only log of a team, newest first: written only by the site's own
    views, so the admin shows it and changes nothing."""

    list_display = ["at", "actor", "action", "detail"]
    descending = True

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
