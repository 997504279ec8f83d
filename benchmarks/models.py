"""The benchmark's typical item: about ten attributes of the common kinds."""

from datetime import UTC, datetime, timedelta
from decimal import Decimal

from dynamo_app import models


class BenchItem(models.Model):
    team_id = models.StringField(partition_key=True)
    item_id = models.StringField(sort_key=True)
    name = models.StringField()
    count = models.IntegerField()
    price = models.DecimalField()
    active = models.BooleanField()
    created = models.DateTimeField()
    tags = models.ListField(of=models.StringField())
    attrs = models.MapField()
    labels = models.StringSetField()


START = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)


def values(i: int, team: str = "team-1", pad: int = 0) -> dict:
    """The Python values of item ``i`` (the same for every library compared);
    ``pad`` lengthens the name by that many characters."""
    return {
        "team_id": team,
        "item_id": f"item-{i:08d}",
        "name": f"Player number {i}" + "." * pad,
        "count": i,
        "price": Decimal(i) / 100 + Decimal("19.99"),
        "active": i % 2 == 0,
        "created": START + timedelta(seconds=i),
        "tags": ["forward", f"squad-{i % 7}"],
        "attrs": {"color": "red", "size": i % 5},
        "labels": {"alpha", f"label-{i % 3}"},
    }


def item(i: int, team: str = "team-1") -> BenchItem:
    return BenchItem(**values(i, team))


class BenchPlayer(models.Model):
    """A player whose uniform number is unique within the team."""

    team_id = models.StringField(partition_key=True)
    player_id = models.StringField(sort_key=True, default=models.new_uuid)
    player_name = models.StringField()
    uniform_number = models.IntegerField()

    class Meta:
        unique = [models.Unique("uniform_number", within="team_id")]


# Section 8: the demo's team page, a table per model against one shared table.


class PageTeam(models.Model):
    team_id = models.StringField(partition_key=True)
    name = models.StringField()


class PagePlayer(models.Model):
    team_id = models.StringField(partition_key=True)
    player_id = models.StringField(sort_key=True)
    player_name = models.StringField()
    uniform_number = models.IntegerField()

    class Meta:
        indexes = [models.LocalIndex("by_number", sort_key="uniform_number")]


class PageEvent(models.Model):
    team_id = models.StringField(partition_key=True)
    event_id = models.StringField(sort_key=True)
    detail = models.StringField()


class PageRoster(models.Table):
    class Meta:
        table_name = "page_roster"


class RosterTeam(models.Model):
    team_id = models.StringField()
    name = models.StringField()

    class Meta:
        table = PageRoster
        keys = {"pk": "TEAM#{team_id}", "sk": "TEAM"}


class RosterPlayer(models.Model):
    team_id = models.StringField()
    player_id = models.StringField()
    player_name = models.StringField()
    uniform_number = models.IntegerField()

    class Meta:
        table = PageRoster
        keys = {"pk": "TEAM#{team_id}", "sk": "PLAYER#{player_id}"}


class RosterEvent(models.Model):
    team_id = models.StringField()
    event_id = models.StringField()
    detail = models.StringField()

    class Meta:
        table = PageRoster
        keys = {"pk": "TEAM#{team_id}", "sk": "EVENT#{event_id}"}


TEAM_PAGE = PageRoster.collection("team", RosterTeam, RosterPlayer, RosterEvent)


class BenchTicket(models.Model):
    """A sequence number as the key (``ids``); declaring it declares the sequences table."""

    ticket_id = models.SequenceField(partition_key=True)


BENCH_VIEWS = models.ShardedCounter("bench_views", shards=8)  # declares the counters table
