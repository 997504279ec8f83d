"""The demo's roster through Django's test client: adding, renaming,
renumbering and removing players; a number taken twice, a stale edit, a
repeated POST, concurrent submissions; and what the event log records."""

from __future__ import annotations

from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from django.test import Client

from dynamo_app.data.integrity import check_unique
from project.roster.models import Player, TeamEvent
from tests.demo_support import demo_site, form, roster, seed, text

ADD = "/teams/team-001/players/new/"


@pytest.fixture(autouse=True)
def site(request: pytest.FixtureRequest, client: Client, dynamo_server: Any) -> Iterator[Any]:
    with demo_site(request) as handle:
        seed(client)
        yield handle


def player(name: str) -> Player:
    found = Player.objects.filter(team_id="team-001").where(player_name=name).first()
    assert found is not None, name
    return found


def edit_url(name: str) -> str:
    return f"/teams/team-001/players/{player(name).player_id}/"


def events(n: int = 1) -> list[str]:
    latest = TeamEvent.objects.filter(team_id="team-001").order_by("-event_id")
    return [f"{e.action}: {e.detail}" for e in latest.limit(n)]


def test_add_player(client: Client) -> None:
    data = form(client, ADD, player_name="Ohtani", uniform_number=16, position="Pitcher")
    response = client.post(ADD, data, follow=True)
    assert response.redirect_chain == [("/teams/team-001/", 302)]
    assert "Added #16 Ohtani." in text(response)
    assert (16, "Ohtani") in roster("team-001") and player("Ohtani").position == "Pitcher"
    assert events() == ["added: #16 Ohtani"]


def test_invalid_form_is_shown_again(client: Client) -> None:
    response = client.post(ADD, form(client, ADD, uniform_number=100))
    assert response.status_code == 200
    body = text(response)
    assert "This field is required." in body
    assert "Ensure this value is less than or equal to 99." in body
    assert client.post(ADD, {"player_name": "X", "uniform_number": 3}).status_code == 200


def test_a_taken_number_is_a_form_error(client: Client) -> None:
    before = roster("team-001")
    response = client.post(ADD, form(client, ADD, player_name="Carol", uniform_number=18))
    assert response.status_code == 200
    assert "Number 18 is already worn by Alice in Team 001. Choose another number." in text(
        response
    )
    assert roster("team-001") == before

    bob = edit_url("Bob")
    taken = client.post(bob, form(client, bob, uniform_number=18))
    assert "Number 18 is already worn by Alice" in text(taken)
    assert roster("team-001") == before and events() == ["created: Sample team with 14 players"]


def test_rename_and_renumber_move_the_lock(client: Client) -> None:
    url = edit_url("Alice")
    assert 'value="Alice"' in client.get(url).content.decode()

    client.post(url, form(client, url, player_name="Alicia"))
    assert events() == ["changed: renamed Alice to Alicia"]
    client.post(url, form(client, url, uniform_number=21))
    assert events() == ["changed: Alicia: #18 to #21"]
    assert (21, "Alicia") in roster("team-001") and 18 not in dict(roster("team-001"))

    # 18 is free again; 21 is not.
    assert (
        client.post(ADD, form(client, ADD, player_name="Carol", uniform_number=18)).status_code
        == 302
    )
    assert (
        client.post(ADD, form(client, ADD, player_name="Dave", uniform_number=21)).status_code
        == 200
    )
    assert check_unique().clean


def test_remove_player_frees_the_number(client: Client) -> None:
    url = edit_url("Bob") + "delete/"
    assert "Remove #19 Bob?" in text(client.get(url))
    response = client.post(url, follow=True)
    assert "Removed #19 Bob." in text(response)
    assert 19 not in dict(roster("team-001")) and len(roster("team-001")) == 13
    assert events() == ["removed: #19 Bob"]
    assert client.post(url).status_code == 404
    assert (
        client.post(ADD, form(client, ADD, player_name="Bo", uniform_number=19)).status_code == 302
    )


def test_stale_edit_is_refused_and_can_be_resubmitted(client: Client) -> None:
    url = edit_url("Alice")
    mine = form(client, url, player_name="Alice Smith")  # filled in one tab...
    theirs = Client()
    theirs.post(url, form(theirs, url, uniform_number=20))  # ...saved in another

    response = client.post(url, mine)
    assert response.status_code == 409
    assert (
        "Someone else saved this player while you were editing: it is now #20 Alice (Pitcher). "
        "Nothing was changed." in text(response)
    )
    assert (20, "Alice") in roster("team-001") and events() == ["changed: Alice: #18 to #20"]

    # The form shown again carries the current version: saving it is a deliberate overwrite.
    again = response.context["form"]
    resubmit = {name: again[name].value() for name in again.fields}
    assert client.post(url, resubmit).status_code == 302
    assert (18, "Alice Smith") in roster("team-001")


def test_a_repeated_post_adds_once(client: Client) -> None:
    data = form(client, ADD, player_name="Ohtani", uniform_number=17)
    assert client.post(ADD, data).status_code == 302
    repeat = client.post(ADD, data, follow=True)
    assert "#17 Ohtani was already added; the form was sent twice." in text(repeat)
    assert [n for n, name in roster("team-001") if name == "Ohtani"] == [17]
    assert events(2) == ["added: #17 Ohtani", "created: Sample team with 14 players"]

    # The same form with another number is still the same submission: applied once.
    again = client.post(ADD, {**data, "uniform_number": 77})
    assert again.status_code == 302 and 77 not in dict(roster("team-001"))


def test_concurrent_claims_of_one_number_leave_one_winner(client: Client) -> None:
    # Eight visitors fill the form (the test client records rendered forms
    # process-wide, so read them one by one), then all submit at once.
    forms = [form(client, ADD, player_name=f"Rookie {i}", uniform_number=77) for i in range(8)]
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(pool.map(lambda data: Client().post(ADD, data).status_code, forms))
    assert sorted(statuses) == [200] * 7 + [302]
    (winner,) = [name for n, name in roster("team-001") if n == 77]
    assert events() == [f"added: #77 {winner}"]
    assert check_unique().clean


def test_concurrent_renumbers_to_one_number_leave_one_winner(client: Client) -> None:
    names = ["Chiaki", "Daichi", "Emi", "Fumio", "Goro", "Hana"]
    edits = [(url, form(client, url, uniform_number=99)) for url in map(edit_url, names)]
    with ThreadPoolExecutor(max_workers=6) as pool:
        statuses = list(pool.map(lambda e: Client().post(*e).status_code, edits))
    assert sorted(statuses) == [200] * 5 + [302]
    numbers = [n for n, _ in roster("team-001")]
    assert numbers.count(99) == 1 and len(numbers) == len(set(numbers)) == 14
    assert check_unique().clean
