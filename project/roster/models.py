"""The roster's DynamoDB tables.

Split by how they are written (the seed's advice for optimistic concurrency):
``PAGE_VIEWS``, the hot page-view counter, lives apart in the app's counters
table, so a page view never contends with an edit of the team; the cold
entities share one table, ``Roster`` (single-table design), because the team
page reads them together: ``Team`` (changed rarely), ``Player`` (the roster)
and ``TeamEvent`` (append-only history: inserts never conflict with each other)
live in the team's partition, so ``TEAM_PAGE.page(team_id=...)`` reads the
team, its players and its latest events with one Query.

Sort keys: ``TEAM`` > ``PLAYER#...`` > ``EVENT#...``, so reading the partition
in descending order gives the team, then every player, then the events,
newest first.
"""

from __future__ import annotations

import secrets
from datetime import datetime

from django.core.validators import MaxValueValidator, MinValueValidator
from django.utils import timezone

from dynamo_app import models

LEAGUE = "demo"

POSITIONS = [
    (name, name)
    for name in (
        "Pitcher",
        "Catcher",
        "First base",
        "Second base",
        "Third base",
        "Shortstop",
        "Left field",
        "Center field",
        "Right field",
    )
]


class Roster(models.Table):
    """The cold entities of every team, one partition per team (``TEAM#<team_id>``)."""

    class Meta:
        table_name = "roster"
        indexes = [
            # Overloaded: teams fill it with their league, so the teams page is one Query.
            models.GlobalIndex("gsi1", partition_key="gsi1pk", sort_key="gsi1sk"),
            # Players fill it with their number: who wears a number is one Query.
            models.LocalIndex("lsi1", sort_key="lsi1sk"),
        ]


class Team(models.Model):
    """All teams of a league share one partition of index gsi1, so the teams
    page is one Query (a league has dozens of teams, not millions)."""

    league = models.StringField(default=LEAGUE)
    team_id = models.StringField()
    name = models.StringField(max_length=60)
    city = models.StringField(max_length=60, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        table = Roster
        keys = {
            "pk": "TEAM#{team_id}",
            "sk": "TEAM",
            "gsi1pk": "LEAGUE#{league}",
            "gsi1sk": "TEAM#{team_id}",
        }

    def __str__(self) -> str:
        return self.name


class Player(models.Model):
    team_id = models.StringField()
    player_id = models.StringField(default=models.new_uuid)
    player_name = models.StringField(max_length=60, verbose_name="name")
    uniform_number = models.IntegerField(validators=[MinValueValidator(0), MaxValueValidator(99)])
    position = models.StringField(choices=POSITIONS, null=True, blank=True)
    version = models.VersionField()  # an edit based on a stale read is refused

    class Meta:
        table = Roster
        keys = {
            "pk": "TEAM#{team_id}",
            "sk": "PLAYER#{player_id}",
            "lsi1sk": "NUMBER#{uniform_number:02d}",
        }
        # A number is claimed by a lock item written in the same transaction as the player.
        unique = [models.Unique("uniform_number", within="team_id")]

    def __str__(self) -> str:
        return f"#{self.uniform_number} {self.player_name}"


def new_event_id(at: datetime) -> str:
    """Sorts by time; the random tail keeps simultaneous inserts from colliding."""
    return f"{at:%Y%m%dT%H%M%S%f}-{secrets.token_hex(4)}"


class TeamEvent(models.Model):
    """Who changed what: one insert per change, never updated or deleted."""

    team_id = models.StringField()
    event_id = models.StringField()
    at = models.DateTimeField()
    actor = models.StringField()
    action = models.StringField()
    detail = models.StringField()

    @classmethod
    def new(cls, team_id: str, actor: str, action: str, detail: str) -> TeamEvent:
        """An unsaved event, to create in the same transaction as the change it records."""
        at = timezone.now()
        return cls(
            team_id=team_id,
            event_id=new_event_id(at),
            at=at,
            actor=actor,
            action=action,
            detail=detail,
        )

    class Meta:
        table = Roster
        keys = {"pk": "TEAM#{team_id}", "sk": "EVENT#{event_id}"}


# The team page: the team, its players and its latest events, one Query per page.
TEAM_PAGE = Roster.collection("team", Team, Player, TeamEvent)


# Every view of a team adds 1: spread over 4 items, so a popular team's views are not
# one item's writes (DynamoDB serves one partition at up to 1,000 writes a second).
PAGE_VIEWS = models.ShardedCounter("page_views", shards=4)
