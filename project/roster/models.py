"""The roster's DynamoDB tables.

Four small tables, split by how they are written (the seed's advice for
optimistic concurrency): ``Team`` is cold data, changed rarely; ``Player``
holds the roster; ``TeamEvent`` is append-only history (inserts never
conflict with each other); ``TeamStats`` holds the hot page-view counter, so
a page view never contends with an edit of the team.
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


class Team(models.Model):
    """All teams share one partition, so the teams page is one Query (a league
    has dozens of teams, not millions)."""

    league = models.StringField(partition_key=True, default=LEAGUE)
    team_id = models.StringField(sort_key=True)
    name = models.StringField(max_length=60)
    city = models.StringField(max_length=60, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.name


class Player(models.Model):
    team_id = models.StringField(partition_key=True)
    player_id = models.StringField(sort_key=True, default=models.new_uuid)
    player_name = models.StringField(max_length=60, verbose_name="name")
    uniform_number = models.IntegerField(validators=[MinValueValidator(0), MaxValueValidator(99)])
    position = models.StringField(choices=POSITIONS, null=True, blank=True)
    version = models.VersionField()  # an edit based on a stale read is refused

    class Meta:
        # A number is claimed by a lock item written in the same transaction as the player.
        unique = [models.Unique("uniform_number", within="team_id")]
        # The roster page lists a team by number: a local index sorts its partition so.
        indexes = [models.LocalIndex("by_number", sort_key="uniform_number")]

    def __str__(self) -> str:
        return f"#{self.uniform_number} {self.player_name}"


def new_event_id(at: datetime) -> str:
    """Sorts by time; the random tail keeps simultaneous inserts from colliding."""
    return f"{at:%Y%m%dT%H%M%S%f}-{secrets.token_hex(4)}"


class TeamEvent(models.Model):
    """Who changed what: one insert per change, never updated or deleted."""

    team_id = models.StringField(partition_key=True)
    event_id = models.StringField(sort_key=True)
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


class TeamStats(models.Model):
    """Hot counters, one item per team, apart from the cold ``Team`` item."""

    team_id = models.StringField(partition_key=True)
    page_views = models.IntegerField(default=0)

    class Meta:
        verbose_name_plural = "team stats"
