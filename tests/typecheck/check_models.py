"""What a user's module sees: each field type and each read API, as ``assert_type``.

Never imported or run: bin/test type-checks it with ``mypy --strict`` and pyright
(no plugin of ours), so a change that loses a type fails there. Each line is a
claim about the public API's types, written as a user would write the call.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import date, datetime
from decimal import Decimal
from typing import Any, ClassVar, Literal, TypeVar, Unpack, assert_type, overload

from django.utils.translation import gettext_lazy

import dynamo_app
from dynamo_app import models, transactions
from dynamo_app.models import FieldOptions
from dynamo_app.partiql import Result


class Roster(models.Table):
    """A shared table: its collections read several models with one Query."""


class Player(models.Model):
    team_id = models.StringField(partition_key=True)
    player_id = models.StringField(sort_key=True, default=models.new_uuid)
    player_name = models.StringField(max_length=60, verbose_name=gettext_lazy("name"))
    nickname = models.StringField(null=True)
    uniform_number = models.IntegerField()
    goals = models.IntegerField(default=0)
    assists = models.IntegerField(null=True)
    salary = models.DecimalField(max_digits=12, decimal_places=2)
    bonus = models.DecimalField(null=True)
    rating = models.FloatField()
    active = models.BooleanField(default=True)
    injured = models.BooleanField(null=True)
    photo = models.BinaryField(null=True)
    joined_at = models.DateTimeField()
    expires_at = models.DateTimeField(epoch=True, null=True)
    seen_at = models.DateTimeField(auto_now=True)
    born_on = models.DateField()
    retired_on = models.DateField(null=True)
    signed_on = models.DateField(auto_now_add=True)
    badge = models.UUIDField(default=uuid.uuid4)
    profile = models.JSONField(null=True)
    scores = models.ListField(of=models.IntegerField())
    aliases = models.ListField(of=models.StringField(), null=True)
    stats = models.MapField(of=models.DecimalField())
    extra = models.MapField()
    tags = models.StringSetField()
    lucky = models.NumberSetField()
    keys = models.BinarySetField()
    version = models.VersionField()

    roster = models.DeclaredQuery("team_id = {team}")
    roster_page = models.DeclaredQuery("team_id = {team}", returns="page", order="desc")


class Ticket(models.Model):
    number = models.SequenceField(partition_key=True)


def fields(player: Player) -> None:
    assert_type(player.team_id, str)
    assert_type(player.player_name, str)
    assert_type(player.nickname, str | None)
    assert_type(player.uniform_number, int)
    assert_type(player.goals, int)
    assert_type(player.assists, int | None)
    assert_type(player.salary, Decimal)
    assert_type(player.bonus, Decimal | None)
    assert_type(player.rating, float)
    assert_type(player.active, bool)
    assert_type(player.injured, bool | None)
    assert_type(player.photo, bytes | None)
    assert_type(player.joined_at, datetime)
    assert_type(player.expires_at, datetime | None)
    assert_type(player.seen_at, datetime)
    assert_type(player.born_on, date)
    assert_type(player.retired_on, date | None)
    assert_type(player.signed_on, date)
    assert_type(player.badge, uuid.UUID)
    assert_type(player.profile, Any)
    assert_type(player.scores, list[int])
    assert_type(player.aliases, list[str] | None)
    assert_type(player.stats, dict[str, Decimal])
    assert_type(player.extra, dict[str, Any])
    assert_type(player.tags, set[str])
    assert_type(player.lucky, set[int | Decimal])
    assert_type(player.keys, set[bytes])
    assert_type(player.version, int | None)
    assert_type(Ticket(number=1).number, int)
    # Read from the class, a field is the field (conditions, _meta, forms).
    assert_type(Player.goals, models.IntegerField[int])
    assert_type(Player.nickname, models.StringField[str | None])
    assert_type(Player.retired_on, models.DateField[date | None])
    assert_type(Player.goals.name, str)
    # Writes take what the field stores.
    player.goals = player.goals + 1
    player.nickname = None
    player.retired_on = None
    player.salary = 3  # an int is stored exactly, as a Decimal
    player.badge = "1b4e28ba-2fa1-11d2-883f-0016d3cca427"


def reads(player: Player) -> None:
    assert_type(Player.objects, models.Manager[Player])
    assert_type(Player.objects.get(team_id="t", uniform_number=7), Player)
    assert_type(Player.objects.get(team_id="t", player_id="p", consistent=True), Player)
    assert_type(Player.objects.create(team_id="t"), Player)
    assert_type(Player.objects.get_or_create(team_id="t", player_id="p"), tuple[Player, bool])
    assert_type(Player.objects.update_or_create(team_id="t", player_id="p"), tuple[Player, bool])
    assert_type(Player.objects.bulk_get([("t", "p")]), list[Player | None])
    assert_type(Player.objects.partiql("SELECT * FROM {table}"), Result[Player])
    assert_type(Player.from_dict(player.to_dict()), Player)

    query = Player.objects.filter(team_id="t")
    assert_type(query, models.QuerySet[Player])
    chained = query.where(models.Attr("goals") > 1).order_by("-player_id").limit(5)
    assert_type(chained, models.QuerySet[Player])
    by_index = Player.objects.using_index("by_number").consistent().only("goals")
    assert_type(by_index, models.QuerySet[Player])
    assert_type(Player.objects.scan().segment(0, 4), models.QuerySet[Player])
    assert_type(Player.objects.get_queryset(), models.QuerySet[Player])
    assert_type(iter(query), Iterator[Player])
    assert_type([p for p in query], list[Player])
    assert_type(query.first(), Player | None)
    assert_type(query.page(size=10), models.Page[Player])
    assert_type(query.page().items, list[Player])
    assert_type([p for p in query.page()], list[Player])
    assert_type(query.cursor_after(player), str)

    assert_type(Player.roster(team="t"), models.QuerySet[Player])
    assert_type(Player.roster_page(team="t", size=10).items, list[Player])
    assert_type([p for p in Player.objects.partiql("SELECT * FROM {table}")], list[Player])
    page = Roster.collection("team", Player, Ticket).page(team_id="t")
    assert_type(page.of(Player), list[Player])
    assert_type(page.items, list[models.Model])

    assert_type(transactions.read([(Player, ("t", "p"))]), list[Player | None])
    assert_type(dynamo_app.read_atomic([(Player, ("t", "p"))]), list[Player | None])
    with dynamo_app.transaction() as tx:
        assert_type(tx, dynamo_app.Transaction)
        assert_type(tx.create(Ticket(number=1)), Ticket)
        assert_type(tx.save(player), Player)
    for entry in transactions.read([(Player, ("t", "p")), (Ticket, 1)]):
        if isinstance(entry, Ticket):
            assert_type(entry.number, int)


async def async_reads() -> None:
    assert_type(await Player.objects.aget(team_id="t", player_id="p"), Player)
    assert_type(await Player.objects.acreate(team_id="t"), Player)
    got = await Player.objects.aget_or_create(team_id="t", player_id="p")
    assert_type(got, tuple[Player, bool])
    assert_type(await Player.objects.abulk_get([("t", "p")]), list[Player | None])
    query = Player.objects.filter(team_id="t")
    assert_type(await query.afirst(), Player | None)
    assert_type(await query.apage(), models.Page[Player])
    assert_type(query.__aiter__(), AsyncIterator[Player])
    assert_type([p async for p in query], list[Player])


# --- managers ---------------------------------------------------------------------------


class TeamManager(models.Manager["Team"]):
    def in_city(self, city: str) -> models.QuerySet[Team]:
        return self.filter(city=city)


class Team(models.Model):
    team_id = models.StringField(partition_key=True)
    city = models.StringField()

    objects = TeamManager()


def managers() -> None:
    assert_type(Team.objects, TeamManager)
    assert_type(Team.objects.get(team_id="t"), Team)
    assert_type(Team.objects.in_city("Kyoto"), models.QuerySet[Team])


M = TypeVar("M", bound=models.Model)


def first_of(model: type[M], **key: Any) -> M:
    """Code generic over models gets each model's type back."""
    return model.objects.get(**key)


def generic() -> None:
    assert_type(first_of(Player, team_id="t", player_id="p"), Player)
    assert_type(first_of(Team, team_id="t"), Team)


# --- a custom field ---------------------------------------------------------------------


class Point:
    def __init__(self, x: float, y: float) -> None:
        self.x, self.y = x, y


class PointField(models.Field[Point]):
    """Reads as a ``Point``: the type argument of ``Field``."""


P = TypeVar("P", Point, Point | None)


class OptionalPointField(models.Field[P]):
    """With ``null``: overloads of ``__init__`` choose the type, as the built-in fields do."""

    @overload
    def __init__(
        self: OptionalPointField[Point],
        *,
        null: Literal[False] = False,
        **options: Unpack[FieldOptions],
    ) -> None: ...
    @overload
    def __init__(
        self: OptionalPointField[Point | None], *, null: bool, **options: Unpack[FieldOptions]
    ) -> None: ...
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)


class LowerCaseField(models.StringField):
    """A subclass of a built-in field reads as its parent does."""


class Place(models.Model):
    place_id = models.StringField(partition_key=True)
    spot = PointField()
    home = OptionalPointField()
    away = OptionalPointField(null=True)
    slug = LowerCaseField()

    known_spots: ClassVar[int] = 0


def custom(place: Place) -> None:
    assert_type(place.spot, Point)
    assert_type(place.home, Point)
    assert_type(place.away, Point | None)
    assert_type(place.slug, str)


# --- what must not type-check: each ignore names the error it expects, and both
# checkers report an ignore that no longer silences anything (mypy's warn_unused_ignores
# under --strict, pyright's reportUnnecessaryTypeIgnoreComment), so a type lost to Any fails.


def refused(player: Player) -> None:
    player.goals = "7"  # type: ignore[assignment]  # pyright: ignore[reportAttributeAccessIssue]
    player.nickname.upper()  # type: ignore[union-attr]  # pyright: ignore[reportOptionalMemberAccess]
    Player.objects.get(team_id="t").goals.upper()  # type: ignore[attr-defined]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
    _ = player.objects  # type: ignore[arg-type]  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownVariableType]
    models.StringField(nul=True)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]
    player.born_on = "2024-05-01"  # type: ignore[assignment]  # pyright: ignore[reportAttributeAccessIssue]
    models.DateField(epoch=True)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue]
    models.DeclaredQuery("team_id = {t}", returns="one")  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]
