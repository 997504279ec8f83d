"""The demo site in headless Chromium, served by the live server on the run's
DynamoDB: sample teams, a roster paged with its cursor links, and a player
edited in two tabs (the second save is refused and shows what is stored).
Without Chromium the browser tests fail, saying what to install."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from project.roster.models import Player
from tests import browser_support
from tests.browser_support import Browser
from tests.demo_support import demo_site, roster

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def site(request: pytest.FixtureRequest, dynamo_server: Any) -> Iterator[Any]:
    with demo_site(request) as handle:
        yield handle


def test_sample_teams_and_roster_pages(browser: Browser) -> None:
    browser.get("/")
    assert "No teams yet" in browser.text()
    browser.submit("Create sample teams")
    assert "Created 3 sample teams." in browser.text()

    browser.follow("Team 001")
    first = browser.texts("td.number")
    assert len(first) == 10 and "First page" not in browser.text()
    browser.follow("Next page »")
    assert browser.path.startswith("/teams/team-001/?cursor=")
    second = browser.texts("td.number")
    assert len(second) == 4 and "Next page" not in browser.text()
    assert [int(n) for n in first + second] == sorted(n for n, _ in roster("team-001"))
    browser.follow("« First page")
    assert browser.texts("td.number") == first


def test_stale_edit_in_two_tabs_shows_the_stored_player(browser: Browser) -> None:
    browser.get("/")
    browser.submit("Create sample teams")
    alice = next(p for p in Player.objects.filter(team_id="team-001") if p.player_name == "Alice")
    edit = f"/teams/team-001/players/{alice.player_id}/"

    browser.get(edit)
    mine = browser.driver.current_window_handle
    browser.fill(player_name="Alice Smith")  # typed in one tab...
    browser.new_tab(edit)
    browser.fill(uniform_number=20)
    browser.submit("Save")  # ...while another tab saves first
    assert "Saved #20 Alice." in browser.text()

    browser.switch_to(mine)
    browser.submit("Save")
    assert "Someone else saved this player while you were editing: it is now #20 Alice" in (
        browser.text()
    )
    assert (20, "Alice") in roster("team-001")

    browser.submit("Save")  # the form shown again carries the stored version: an overwrite
    assert "Saved #18 Alice Smith." in browser.text()
    assert (18, "Alice Smith") in roster("team-001")


def test_without_chromium_the_test_fails_naming_the_packages(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(browser_support, "CHROMEDRIVER", str(tmp_path / "chromedriver"))
    with pytest.raises(pytest.fail.Exception) as failed:
        browser_support.start_chromium(tmp_path)
    assert "chromedriver missing" in str(failed.value)
    assert browser_support.INSTALL in str(failed.value) and "bin/test does it" in str(failed.value)
