"""The roster's pages. Each view names the DynamoDB requests it makes, because
"one request per call, visibly" is the point of the app it demonstrates."""

from __future__ import annotations

import copy
from typing import TypeVar

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

import dynamo_app
from dynamo_app.exceptions import AlreadyApplied, InvalidCursor, StaleObjectError
from dynamo_app.models import Model, Page, QuerySet

from . import sample
from .forms import AddPlayerForm, PlayerForm, TeamForm
from .models import LEAGUE, PAGE_VIEWS, TEAM_PAGE, Player, Team, TeamEvent

PAGE_SIZE = 10
EVENTS_ON_TEAM_PAGE = 5
# Numbers are 0-99 and unique within a team: a roster has at most 100 players.
MAX_PLAYERS = 100
RECENT_TEAMS = 5


def actor(request: HttpRequest) -> str:
    user = request.user
    return user.get_username() if user.is_authenticated else "anonymous"


def get_team(team_id: str) -> Team:
    """One GetItem; a missing team is a 404."""
    try:
        return Team.objects.get(team_id=team_id)
    except Team.DoesNotExist:
        raise Http404(f"No team {team_id!r}.") from None


def get_player(team: Team, player_id: str) -> Player:
    try:
        return Player.objects.get(team_id=team.team_id, player_id=player_id)
    except Player.DoesNotExist:
        raise Http404(f"No player {player_id!r} in {team.name}.") from None


def remember_team(request: HttpRequest, team: Team) -> None:
    """Keep the last few teams viewed in the session (saved only when it changes)."""
    entry = [team.team_id, team.name]
    recent = request.session.get("recent_teams", [])
    if recent[:1] != [entry]:
        others = [e for e in recent if e[0] != team.team_id]
        request.session["recent_teams"] = [entry, *others][:RECENT_TEAMS]


M = TypeVar("M", bound=Model)


def cursor_page(request: HttpRequest, queryset: QuerySet[M]) -> Page[M]:
    """One page of ``queryset`` from the ``?cursor=`` in the URL (keyset, never offsets)."""
    return queryset.page(size=PAGE_SIZE, cursor=request.GET.get("cursor") or None)


def team_list(request: HttpRequest, form: TeamForm | None = None) -> HttpResponse:
    """One Query for the teams (index gsi1 of the Roster table), one BatchGetItem for
    their page views (4 shard items a team: one request per 25 teams, none for none)."""
    teams = list(Team.objects.using_index("gsi1").filter(league=LEAGUE))
    views = PAGE_VIEWS.totals([t.team_id for t in teams]) if teams else {}
    rows = [(team, views[team.team_id]) for team in teams]
    status = 400 if form is not None else 200
    context = {"rows": rows, "form": form or TeamForm()}
    return render(request, "roster/team_list.html", context, status=status)


@require_POST
def team_create(request: HttpRequest) -> HttpResponse:
    """One transaction: the team (its slug is the key, so a taken name is refused)
    and its first event."""
    form = TeamForm(request.POST)
    if form.is_valid():
        team = form.save(commit=False)
        with form.refusals():  # a taken name: a form error, not a 500
            with dynamo_app.transaction() as tx:
                tx.create(team)
                event = f"Team {team.name} created"
                tx.create(TeamEvent.new(team.team_id, actor(request), "created", event))
            messages.success(request, f"Team {team.name} created.")
            return redirect("roster:team", team_id=team.team_id)
    return team_list(request, form)


@require_POST
def sample_teams(request: HttpRequest) -> HttpResponse:
    created = sample.create_sample_teams(actor(request))
    if created:
        messages.success(request, f"Created {created} sample teams.")
    else:
        messages.info(request, "The sample teams are already there.")
    return redirect("roster:teams")


def team_detail(request: HttpRequest, team_id: str) -> HttpResponse:
    """What it costs, now: three requests. One Query of the team's partition in the shared
    ``Roster`` table (the ``TEAM_PAGE`` collection in descending sort-key order: the team,
    every player, then the events newest first; a Limit of 1 + 100 + 5 items, so a full
    roster and at least the 5 latest events come in the one page: about 3 KB, 0.5 read
    units, for a sample team, and up to the Limit's worth of older events, a few KB more,
    for a team with a long history); then the view counted, an UpdateItem ADD on one of
    the team's 4 ``PAGE_VIEWS`` shards (the app's counters table, no read), and the total
    read back, one strongly consistent BatchGetItem of the 4 shards (4 read units), so the
    count shown includes this view. Why shards: every view of a team writes its counter,
    and one item takes at most about 1,000 writes a second (one partition's limit); 4
    shards take 4 times that.

    Before, with a table per entity, the roster alone cost three reads: GetItem (the
    team), Query (10 players by number, on a local index; a cursor per further page) and
    Query (the 5 latest events), each a round trip and at least 0.5 read units of its own.
    docs/explanation/benchmarks.md, section 9, measures both layouts."""
    page = TEAM_PAGE.page(team_id=team_id, size=1 + MAX_PLAYERS + EVENTS_ON_TEAM_PAGE, reverse=True)
    teams = page.of(Team)
    if not teams:
        raise Http404(f"No team {team_id!r}.")
    team = teams[0]
    PAGE_VIEWS.add(team_id)
    views = PAGE_VIEWS.total(team_id, consistent=True)
    players = sorted(page.of(Player), key=lambda p: p.uniform_number)
    events = page.of(TeamEvent)[:EVENTS_ON_TEAM_PAGE]
    remember_team(request, team)
    context = {"team": team, "players": players, "views": views, "events": events}
    return render(request, "roster/team_detail.html", context)


def team_history(request: HttpRequest, team_id: str) -> HttpResponse:
    """The append-only log, newest first, a page at a time."""
    team = get_team(team_id)
    try:
        page = cursor_page(request, TeamEvent.objects.filter(team_id=team_id).order_by("-event_id"))
    except InvalidCursor:
        messages.warning(request, "That page link is no longer valid; here is the first page.")
        return redirect("roster:history", team_id=team_id)
    return render(request, "roster/team_history.html", {"team": team, "page": page})


def player_add(request: HttpRequest, team_id: str) -> HttpResponse:
    """One transaction: the player, the lock on its number, the event, and the
    form's idempotency record (a repeated POST applies nothing)."""
    team = get_team(team_id)
    form = AddPlayerForm(request.POST or None, instance=Player(team_id=team_id), team=team)
    if request.method == "POST" and form.is_valid():
        player = form.save(commit=False)
        label = f"#{player.uniform_number} {player.player_name}"
        key = f"roster:add-player:{team_id}:{form.cleaned_data['idempotency_key']}"
        with form.refusals():  # a taken number: an error on its field
            try:
                with dynamo_app.transaction(idempotency_key=key) as tx:
                    tx.create(player)
                    tx.create(TeamEvent.new(team_id, actor(request), "added", label))
            except AlreadyApplied:
                messages.info(request, f"{label} was already added; the form was sent twice.")
            else:
                messages.success(request, f"Added {label}.")
            return redirect("roster:team", team_id=team_id)
    return render(request, "roster/player_form.html", {"team": team, "form": form})


def player_edit(request: HttpRequest, team_id: str, player_id: str) -> HttpResponse:
    """Rename and change the number in one form. One transaction: the player,
    conditioned on the version the form was filled from (a changed number
    moves its lock), and the event. A stale edit is shown again (409) with the
    values now stored, carrying their version: saving it again replaces them."""
    team = get_team(team_id)
    player = get_player(team, player_id)
    before = copy.copy(player)
    form = PlayerForm(request.POST or None, instance=player, team=team)
    if request.method == "POST" and form.is_valid():
        edited = form.save(commit=False)
        changes = describe_changes(before, edited)
        with form.refusals():
            with dynamo_app.transaction() as tx:
                tx.save(edited)
                if changes:
                    tx.create(TeamEvent.new(team_id, actor(request), "changed", "; ".join(changes)))
            messages.success(request, f"Saved #{edited.uniform_number} {edited.player_name}.")
            return redirect("roster:team", team_id=team_id)
    stale = isinstance(form.refusal, StaleObjectError)
    shown = form.refusal.item if stale and form.refusal.item else before  # type: ignore[union-attr]
    context = {"team": team, "player": shown, "form": form}
    return render(request, "roster/player_form.html", context, status=409 if stale else 200)


def describe_changes(player: Player, edited: Player) -> list[str]:
    """What the event log says about an edit."""
    changes = []
    if edited.player_name != player.player_name:
        changes.append(f"renamed {player.player_name} to {edited.player_name}")
    if edited.uniform_number != player.uniform_number:
        changes.append(
            f"{edited.player_name}: #{player.uniform_number} to #{edited.uniform_number}"
        )
    if edited.position != player.position:
        changes.append(f"{edited.player_name}: position {edited.position or 'none'}")
    return changes


def player_delete(request: HttpRequest, team_id: str, player_id: str) -> HttpResponse:
    """One transaction: the player, its number's lock, and the event."""
    team = get_team(team_id)
    player = get_player(team, player_id)
    if request.method == "POST":
        label = f"#{player.uniform_number} {player.player_name}"
        try:
            with dynamo_app.transaction() as tx:
                tx.delete(player)
                tx.create(TeamEvent.new(team_id, actor(request), "removed", label))
        except StaleObjectError:
            messages.warning(request, f"{label} was changed meanwhile; nothing was removed.")
        else:
            messages.success(request, f"Removed {label}.")
        return redirect("roster:team", team_id=team_id)
    return render(request, "roster/player_confirm_delete.html", {"team": team, "player": player})


def signup(request: HttpRequest) -> HttpResponse:
    """A Django user in SQLite; the session that logs it in lives in DynamoDB."""
    form: UserCreationForm[User] = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        messages.success(request, f"Welcome, {user.get_username()}.")
        return redirect("roster:teams")
    return render(request, "registration/signup.html", {"form": form})
