"""The roster's pages. Each view names the DynamoDB requests it makes, because
"one request per call, visibly" is the point of the app it demonstrates."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from dynamo_app.exceptions import AlreadyExists, InvalidCursor

from . import sample
from .forms import PlayerForm, TeamForm
from .models import LEAGUE, Player, Team, TeamEvent, TeamStats

PAGE_SIZE = 10
EVENTS_ON_TEAM_PAGE = 5
RECENT_TEAMS = 5


def actor(request: HttpRequest) -> str:
    user = request.user  # type: ignore[attr-defined]
    return user.get_username() if user.is_authenticated else "anonymous"


def get_team(team_id: str) -> Team:
    """One GetItem; a missing team is a 404."""
    try:
        return Team.objects.get(league=LEAGUE, team_id=team_id)
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


def cursor_page(request: HttpRequest, queryset: Any) -> Any:
    """One page of ``queryset`` from the ``?cursor=`` in the URL (keyset, never offsets)."""
    return queryset.page(size=PAGE_SIZE, cursor=request.GET.get("cursor") or None)


def team_list(request: HttpRequest, form: TeamForm | None = None) -> HttpResponse:
    """One Query for the teams, one BatchGetItem for their page views."""
    teams = list(Team.objects.filter(league=LEAGUE))
    stats = TeamStats.objects.bulk_get([t.team_id for t in teams]) if teams else []
    rows = [(team, s.page_views if s else 0) for team, s in zip(teams, stats, strict=True)]
    status = 400 if form is not None else 200
    context = {"rows": rows, "form": form or TeamForm()}
    return render(request, "roster/team_list.html", context, status=status)


@require_POST
def team_create(request: HttpRequest) -> HttpResponse:
    """One conditional PutItem: the slug is the key, so a taken name is refused."""
    form = TeamForm(request.POST)
    if not form.is_valid():
        return team_list(request, form)
    try:
        team = Team.objects.create(
            team_id=form.team_id, name=form.cleaned_data["name"], city=form.cleaned_data["city"]
        )
    except AlreadyExists:
        form.add_error("name", "A team with this name already exists.")
        return team_list(request, form)
    TeamEvent.record(team.team_id, actor(request), "created", f"Team {team.name} created")
    messages.success(request, f"Team {team.name} created.")
    return redirect("roster:team", team_id=team.team_id)


@require_POST
def sample_teams(request: HttpRequest) -> HttpResponse:
    created = sample.create_sample_teams(actor(request))
    if created:
        messages.success(request, f"Created {created} sample teams.")
    else:
        messages.info(request, "The sample teams are already there.")
    return redirect("roster:teams")


def team_detail(request: HttpRequest, team_id: str) -> HttpResponse:
    """GetItem (team), UpdateItem ADD (page views), Query (a page of players, by
    number), Query (latest events)."""
    team = get_team(team_id)
    try:
        by_number = Player.objects.using_index("by_number").filter(team_id=team_id)
        page = cursor_page(request, by_number)
    except InvalidCursor:
        messages.warning(request, "That page link is no longer valid; here is the first page.")
        return redirect("roster:team", team_id=team_id)
    views = TeamStats.record_view(team_id)
    latest = TeamEvent.objects.filter(team_id=team_id).order_by("-event_id")
    events = list(latest.limit(EVENTS_ON_TEAM_PAGE))
    remember_team(request, team)
    context = {"team": team, "page": page, "views": views, "events": events}
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
    team = get_team(team_id)
    form = PlayerForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        player = Player.objects.create(
            team_id=team_id,
            player_name=data["player_name"],
            uniform_number=data["uniform_number"],
            position=data["position"] or None,
        )
        TeamEvent.record(
            team_id, actor(request), "added", f"#{player.uniform_number} {player.player_name}"
        )
        messages.success(request, f"Added #{player.uniform_number} {player.player_name}.")
        return redirect("roster:team", team_id=team_id)
    return render(request, "roster/player_form.html", {"team": team, "form": form})


def player_edit(request: HttpRequest, team_id: str, player_id: str) -> HttpResponse:
    """Rename and change the number in one form."""
    team = get_team(team_id)
    player = get_player(team, player_id)
    initial = {
        "player_name": player.player_name,
        "uniform_number": player.uniform_number,
        "position": player.position or "",
    }
    form = PlayerForm(request.POST or None, initial=initial)
    if request.method == "POST" and form.is_valid():
        changes = describe_changes(player, form.cleaned_data)
        player.player_name = form.cleaned_data["player_name"]
        player.uniform_number = form.cleaned_data["uniform_number"]
        player.position = form.cleaned_data["position"] or None
        try:
            player.save(update_fields=["player_name", "uniform_number", "position"])
        except Player.DoesNotExist:
            raise Http404("This player was removed meanwhile.") from None
        if changes:
            TeamEvent.record(team_id, actor(request), "changed", "; ".join(changes))
        messages.success(request, f"Saved #{player.uniform_number} {player.player_name}.")
        return redirect("roster:team", team_id=team_id)
    context = {"team": team, "player": player, "form": form}
    return render(request, "roster/player_form.html", context)


def describe_changes(player: Player, data: dict[str, Any]) -> list[str]:
    """What the event log says about an edit."""
    changes = []
    if data["player_name"] != player.player_name:
        changes.append(f"renamed {player.player_name} to {data['player_name']}")
    if data["uniform_number"] != player.uniform_number:
        changes.append(
            f"{data['player_name']}: #{player.uniform_number} to #{data['uniform_number']}"
        )
    if (data["position"] or None) != player.position:
        changes.append(f"{data['player_name']}: position {data['position'] or 'none'}")
    return changes


def player_delete(request: HttpRequest, team_id: str, player_id: str) -> HttpResponse:
    team = get_team(team_id)
    player = get_player(team, player_id)
    if request.method == "POST":
        player.delete()
        TeamEvent.record(
            team_id, actor(request), "removed", f"#{player.uniform_number} {player.player_name}"
        )
        messages.success(request, f"Removed #{player.uniform_number} {player.player_name}.")
        return redirect("roster:team", team_id=team_id)
    return render(request, "roster/player_confirm_delete.html", {"team": team, "player": player})


def signup(request: HttpRequest) -> HttpResponse:
    """A Django user in SQLite; the session that logs it in lives in DynamoDB."""
    form = UserCreationForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        login(request, user)
        messages.success(request, f"Welcome, {user.get_username()}.")
        return redirect("roster:teams")
    return render(request, "registration/signup.html", {"form": form})
