"""The demo site's pages through Django's test client: teams, a team's roster
with keyset pagination, the event log, the page-view counter, sessions and
login/logout."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from dynamo_app.sessions import SessionStore
from dynamo_app.testing import count_requests
from project.roster.models import PAGE_VIEWS, Team, TeamEvent
from project.roster.sample import SAMPLE_TEAMS
from tests.demo_support import demo_site, form, seed, text


@pytest.fixture(autouse=True)
def site(request: pytest.FixtureRequest, dynamo_server: Any) -> Iterator[Any]:
    with demo_site(request) as handle:
        yield handle


def test_empty_site_offers_sample_teams(client: Client) -> None:
    page = client.get("/")
    assert page.status_code == 200
    assert "No teams yet" in text(page) and 'action="/teams/sample/"' in page.content.decode()

    response = client.post("/teams/sample/", follow=True)
    assert "Created 3 sample teams." in text(response)
    assert "Team 001" in text(response) and "Create sample teams" not in text(response)

    again = client.post("/teams/sample/", follow=True)
    assert "The sample teams are already there." in text(again)
    assert len(list(TeamEvent.objects.filter(team_id="team-001"))) == 1


def test_no_character_of_a_page_needs_an_emoji_font(client: Client) -> None:
    html = client.get("/").content.decode()
    symbols = [c for c in html if 0x2600 <= ord(c) <= 0x27BF or ord(c) >= 0x1F000]
    assert symbols == []  # a browser without an emoji font would show empty boxes
    assert '<svg class="logo"' in html  # the brand's mark is drawn


def test_create_team_and_refuse_a_taken_name(client: Client) -> None:
    response = client.post("/teams/new/", {"name": "Nagoya Owls", "city": "Nagoya"})
    assert response.status_code == 302 and response["Location"] == "/teams/nagoya-owls/"
    assert Team.objects.get(team_id="nagoya-owls").city == "Nagoya"

    taken = client.post("/teams/new/", {"name": "nagoya owls"})
    assert taken.status_code == 400
    assert "A team with this name already exists." in text(taken)

    blank = client.post("/teams/new/", {"name": "!!!"})
    assert blank.status_code == 400 and "Use at least one letter or digit." in text(blank)


def test_team_page_shows_roster_counter_and_latest_events(client: Client) -> None:
    seed(client)
    page = client.get("/teams/team-001/")
    assert page.status_code == 200
    body = text(page)
    assert "Team 001" in body and "Tokyo · viewed 1 time" in body
    assert "created: Sample team with 14 players" in body

    assert "viewed 2 times" in text(client.get("/teams/team-001/"))
    assert PAGE_VIEWS.total("team-001", consistent=True) == 2
    with count_requests() as sent:
        teams = text(client.get("/"))
    assert re.search(r"Team 001 Tokyo 2 ", teams) and re.search(r"Kyoto Cranes Kyoto 0", teams)
    assert sent["BatchGetItem"] == 1  # every team's views: their 3 x 4 shards in one request


def test_team_page_is_one_query_of_the_teams_partition_and_the_sharded_counter(
    client: Client,
) -> None:
    seed(client)
    for number in range(6):  # more events than the page shows
        client.post(
            "/teams/team-001/players/new/",
            form(
                client,
                "/teams/team-001/players/new/",
                player_name=f"N{number}",
                uniform_number=60 + number,
            ),
        )
    with count_requests() as sent:
        page = client.get("/teams/team-001/")
    shown = [(r.operation, r.table.rsplit("-", 1)[-1]) for r in sent.requests]
    assert [s for s in shown if s[1] in ("roster", "dynamo_counters")] == [
        ("Query", "roster"),
        ("UpdateItem", "dynamo_counters"),  # the view added to one of the team's 4 shards
        ("BatchGetItem", "dynamo_counters"),  # its total: the 4 shards read back
    ]
    [query] = [p for op, p in sent.calls if op == "Query"]
    assert query["ScanIndexForward"] is False
    listed = [p.uniform_number for p in page.context["players"]]
    expected = sorted([*(n for _, n, _ in SAMPLE_TEAMS[0][3]), *range(60, 66)])
    assert listed == expected  # every player once, by number
    assert page.content.decode().count('class="number"') == 20
    events = [e.detail for e in page.context["events"]]
    assert events == ["#65 N5", "#64 N4", "#63 N3", "#62 N2", "#61 N1"]  # newest first


def test_history_cursors_belong_to_their_team(client: Client) -> None:
    seed(client)
    add = "/teams/osaka-otters/players/new/"
    for number in range(11):
        client.post(add, form(client, add, player_name=f"P{number}", uniform_number=40 + number))
    first = client.get("/teams/osaka-otters/history/")
    cursor = first.context["page"].next_cursor
    tampered = client.get(
        "/teams/osaka-otters/history/", {"cursor": cursor[:-2] + "xx"}, follow=True
    )
    assert tampered.redirect_chain == [("/teams/osaka-otters/history/", 302)]
    assert "That page link is no longer valid" in text(tampered)
    other_team = client.get("/teams/team-001/history/", {"cursor": cursor})
    assert other_team.status_code == 302  # a cursor belongs to its own query


def test_history_is_paged_newest_first(client: Client) -> None:
    client.post("/teams/new/", {"name": "Sendai Larks"})
    add = "/teams/sendai-larks/players/new/"
    for number in range(12):
        client.post(add, form(client, add, player_name=f"P{number}", uniform_number=number))
    newest = client.get("/teams/sendai-larks/history/")
    assert newest.status_code == 200
    events = newest.context["page"].items
    assert len(events) == 10 and events[0].detail == "#11 P11"
    older = client.get(
        "/teams/sendai-larks/history/", {"cursor": newest.context["page"].next_cursor}
    )
    assert [e.detail for e in older.context["page"]] == [
        "#1 P1",
        "#0 P0",
        "Team Sendai Larks created",
    ]
    assert "Newest" in text(older) and "Older" not in text(older)


@pytest.mark.parametrize(
    "url",
    [
        "/teams/no-such-team/",
        "/teams/no-such-team/history/",
        "/teams/no-such-team/players/new/",
        "/teams/team-001/players/no-such-player/",
        "/teams/team-001/players/no-such-player/delete/",
    ],
)
def test_missing_team_or_player_is_404(client: Client, url: str) -> None:
    seed(client)
    assert client.get(url).status_code == 404
    assert client.post(url, {"player_name": "X", "uniform_number": 1}).status_code == 404


def test_recently_viewed_teams_live_in_the_session(client: Client) -> None:
    seed(client)
    assert "Teams you open are remembered here" in text(client.get("/"))
    for team_id in ("kyoto-cranes", "osaka-otters", "kyoto-cranes", "team-001"):
        client.get(f"/teams/{team_id}/")
    key = client.cookies["sessionid"].value
    assert SessionStore(key).load()["recent_teams"] == [
        ["team-001", "Team 001"],
        ["kyoto-cranes", "Kyoto Cranes"],
        ["osaka-otters", "Osaka Otters"],
    ]
    aside = client.get("/").content.decode().split("<aside>")[1]
    assert re.findall(r'href="/teams/([\w-]+)/"', aside) == [
        "team-001",
        "kyoto-cranes",
        "osaka-otters",
    ]


def test_signup_login_logout(client: Client, django_user_model: Any) -> None:
    assert client.get("/accounts/login/").status_code == 200
    assert client.get("/accounts/signup/").status_code == 200
    signed_up = client.post(
        "/accounts/signup/",
        {"username": "ichiro", "password1": "a-long-passphrase", "password2": "a-long-passphrase"},
        follow=True,
    )
    assert "Signed in as ichiro" in text(signed_up)
    assert django_user_model.objects.filter(username="ichiro").exists()

    client.post("/teams/new/", {"name": "Kobe Herons"})
    assert TeamEvent.objects.filter(team_id="kobe-herons").first().actor == "ichiro"

    logged_out = client.post("/accounts/logout/", follow=True)
    assert "Log in" in text(logged_out) and "Signed in" not in text(logged_out)

    wrong = client.post("/accounts/login/", {"username": "ichiro", "password": "nope"})
    assert wrong.status_code == 200 and "Please enter a correct username" in text(wrong)
    logged_in = client.post(
        "/accounts/login/", {"username": "ichiro", "password": "a-long-passphrase"}, follow=True
    )
    assert logged_in.redirect_chain == [("/", 302)] and "Signed in as ichiro" in text(logged_in)
