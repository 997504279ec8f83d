"""The demo's roster through Django's test client: adding, renaming,
renumbering and removing players, and what the event log records."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from project.roster.models import Player, TeamEvent
from tests.demo_support import demo_site, roster, seed, text

ADD = "/teams/team-001/players/new/"


@pytest.fixture(autouse=True)
def site(request: pytest.FixtureRequest, client: Client) -> Iterator[Any]:
    with demo_site(request) as handle:
        seed(client)
        yield handle


def player(name: str) -> Player:
    found = Player.objects.filter(team_id="team-001").where(player_name=name).first()
    assert found is not None, name
    return found


def events() -> list[str]:
    latest = TeamEvent.objects.filter(team_id="team-001").order_by("-event_id")
    return [f"{e.action}: {e.detail}" for e in latest.limit(3)]


def test_add_player(client: Client) -> None:
    assert client.get(ADD).status_code == 200
    response = client.post(
        ADD, {"player_name": "Ohtani", "uniform_number": 16, "position": "Pitcher"}, follow=True
    )
    assert response.redirect_chain == [("/teams/team-001/", 302)]
    assert "Added #16 Ohtani." in text(response)
    assert (16, "Ohtani") in roster("team-001") and player("Ohtani").position == "Pitcher"
    assert events()[0] == "added: #16 Ohtani"


def test_invalid_form_is_shown_again(client: Client) -> None:
    response = client.post(ADD, {"player_name": "", "uniform_number": 100})
    assert response.status_code == 200
    body = text(response)
    assert "This field is required." in body
    assert "Ensure this value is less than or equal to 99." in body


def test_rename_and_renumber(client: Client) -> None:
    alice = player("Alice")
    url = f"/teams/team-001/players/{alice.player_id}/"
    form = client.get(url)
    assert form.status_code == 200 and 'value="Alice"' in form.content.decode()

    client.post(url, {"player_name": "Alicia", "uniform_number": 18, "position": "Pitcher"})
    assert events()[0] == "changed: renamed Alice to Alicia"
    client.post(url, {"player_name": "Alicia", "uniform_number": 21, "position": "Pitcher"})
    assert events()[0] == "changed: Alicia: #18 to #21"
    assert (21, "Alicia") in roster("team-001") and 18 not in dict(roster("team-001"))


def test_remove_player(client: Client) -> None:
    bob = player("Bob")
    url = f"/teams/team-001/players/{bob.player_id}/delete/"
    assert "Remove #19 Bob?" in text(client.get(url))
    response = client.post(url, follow=True)
    assert "Removed #19 Bob." in text(response)
    assert 19 not in dict(roster("team-001")) and len(roster("team-001")) == 13
    assert events()[0] == "removed: #19 Bob"
    assert client.post(url).status_code == 404
