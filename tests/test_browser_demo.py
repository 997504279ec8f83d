"""The demo site in headless Chromium, served by the live server on the run's
DynamoDB: sample teams, a team page, the history paged with its cursor links, and a player
edited in two tabs (the second save is refused and shows what is stored).
Without Chromium the browser tests fail, saying what to install.
``BROWSER_SCREENSHOTS=docs`` also writes the docs' pictures of the team page and the
refused stale edit (tests/browser_support.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from project.roster.models import Player, TeamEvent
from tests import browser_support
from tests.browser_support import Browser
from tests.demo_support import demo_site, roster

pytestmark = pytest.mark.browser


@pytest.fixture(autouse=True)
def site(request: pytest.FixtureRequest, dynamo_server: Any) -> Iterator[Any]:
    with demo_site(request) as handle:
        yield handle


def test_sample_teams_the_team_page_and_history_pages(browser: Browser) -> None:
    browser.get("/")
    assert "No teams yet" in browser.text()
    browser.submit("Create sample teams")
    assert "Created 3 sample teams." in browser.text()

    browser.follow("Team 001")  # the team, every player and the latest events: one Query
    numbers = [int(n) for n in browser.texts("td.number")]
    assert numbers == sorted(n for n, _ in roster("team-001")) and len(numbers) == 14
    assert "Next page" not in browser.text()
    browser.screenshot("demo-team.png")

    TeamEvent.objects.bulk_save(
        [TeamEvent.new("team-001", "test", "noted", f"note {n}") for n in range(11)]
    )
    browser.follow("Full history")  # 12 events, 10 a page, newest first
    first = browser.texts("table.events tbody tr")
    assert len(first) == 10 and "noted" in first[0] and "Newest" not in browser.text()
    browser.follow("Older »")
    assert browser.path.startswith("/teams/team-001/history/?cursor=")
    second = browser.texts("table.events tbody tr")
    assert len(second) == 2 and "created" in second[-1] and "Older" not in browser.text()
    browser.follow("« Newest")
    assert browser.texts("table.events tbody tr") == first


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
    browser.screenshot("demo-stale-edit.png")

    browser.submit("Save")  # the form shown again carries the stored version: an overwrite
    assert "Saved #18 Alice Smith." in browser.text()
    assert (18, "Alice Smith") in roster("team-001")


def test_without_chromium_the_test_fails_naming_the_packages(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(browser_support, "CHROMEDRIVER", str(tmp_path / "chromedriver"))
    with pytest.raises(pytest.fail.Exception) as failed:
        browser_support.start_chromium(tmp_path)
    assert "chromedriver missing" in str(failed.value)
    assert browser_support.INSTALL in str(failed.value) and "bin/test does it" in str(failed.value)
