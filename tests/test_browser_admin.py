"""Django's admin over the demo's DynamoDB models (project/roster/admin.py) in headless
Chromium: a superuser logs in through the admin's own login page (sessions in DynamoDB,
as the demo keeps them), opens the index, a team's players paged with the cursor links,
adds a player, saves a change form that went stale in another tab (refused, showing the
stored values) and deletes; a staff user without permissions sees none of the models.

``BROWSER_SCREENSHOTS=docs`` also writes the docs' pictures of the change list, a
change form and a stale save (tests/browser_support.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from project.roster.models import Player
from tests.browser_support import Browser
from tests.demo_support import demo_site, roster, seed

pytestmark = pytest.mark.browser

PLAYERS = "/admin/roster/player/"


@pytest.fixture(autouse=True)
def site(request: pytest.FixtureRequest, dynamo_server: Any) -> Iterator[Any]:
    with demo_site(request) as handle:
        seed(Client())
        yield handle


def log_in(browser: Browser, username: str, *, superuser: bool = False) -> None:
    if superuser:
        User.objects.create_superuser(username, f"{username}@example.com", "pw")
    else:
        User.objects.create_user(username, password="pw", is_staff=True)
    browser.get("/admin/")
    assert browser.path == "/admin/login/?next=/admin/"
    browser.fill(username=username, password="pw")
    browser.submit("Log in")


def player_numbers(browser: Browser) -> list[int]:
    """The uniform numbers of the change list's rows (its first column), in page order."""
    return [int(n) for n in browser.texts("#result_list tbody th")]


def test_index_and_a_change_list_paged_with_its_cursor_links(browser: Browser) -> None:
    log_in(browser, "root", superuser=True)
    index = browser.text().lower()  # as shown: the admin's CSS upper-cases some headings
    assert "site administration" in index and "authentication and authorization" in index
    assert "baseball roster" in index
    roster_models = browser.texts("#content-main .app-roster th[scope=row]")
    assert roster_models == ["Players", "Team events", "Teams"]

    browser.follow("Teams")
    assert browser.texts("#result_list tbody th") == ["kyoto-cranes", "osaka-otters", "team-001"]
    browser.driver.find_element("css selector", f"a[href='{PLAYERS}?team_id=team-001']").click()
    first = player_numbers(browser)
    assert first == [1, 3, 4, 5, 7, 8, 9, 11, 14, 18]  # 10 a page, by number
    assert "10 players on this page" in browser.text()
    browser.screenshot("admin-changelist.png")

    browser.follow("Next page ›")
    assert player_numbers(browser) == [19, 22, 24, 51]
    assert "Next page" not in browser.text()
    browser.follow("‹ Previous page")
    assert player_numbers(browser) == first
    assert first + [19, 22, 24, 51] == sorted(n for n, _ in roster("team-001"))


def test_add_then_a_stale_change_shows_the_stored_values_then_delete(browser: Browser) -> None:
    log_in(browser, "root", superuser=True)
    browser.get(PLAYERS + "add/")
    browser.fill(team_id="team-001", player_name="Zed", uniform_number=77, position="Pitcher")
    browser.submit("Save")
    assert "was added successfully" in browser.text()
    assert (77, "Zed") in roster("team-001")

    zed = next(p for p in Player.objects.filter(team_id="team-001") if p.player_name == "Zed")
    browser.get(PLAYERS + "?team_id=team-001")
    browser.follow("Next page ›")
    browser.follow("77")  # the row's link: the change form, its composite key in the URL
    change = browser.path  # the composite key "team-001,<player_id>", quoted as the admin does
    assert change.startswith(f"{PLAYERS}team-001_2C{zed.player_id}/change/?_changelist_filters=")
    browser.screenshot("admin-change-form.png")
    mine = browser.driver.current_window_handle
    browser.fill(player_name="Zed Mine")

    browser.new_tab(change)  # another tab saves first
    browser.fill(uniform_number=78)
    browser.submit("Save")
    assert "was changed successfully" in browser.text()

    browser.switch_to(mine)
    browser.submit("Save")
    stale = browser.text()
    assert "Someone else saved this Player while you were editing it" in stale
    assert "Nothing was saved" in stale and "Uniform number: 78" in stale
    browser.screenshot("admin-stale-save.png")
    assert (78, "Zed") in roster("team-001")

    browser.submit("Save")  # the form shown again holds the stored version: saved on purpose
    assert "was changed successfully" in browser.text()
    assert Player.objects.get(**zed.key).player_name == "Zed Mine"

    browser.get(change)
    browser.follow("Delete")
    assert "Are you sure" in browser.text()
    browser.submit("Yes, I’m sure")
    assert "was deleted successfully" in browser.text()
    assert not Player.objects.filter(**zed.key).exists()


def test_staff_without_permissions_sees_none_of_the_models(browser: Browser) -> None:
    log_in(browser, "staff")
    assert "You don’t have permission to view or edit anything." in browser.text()
    assert "Baseball roster" not in browser.text() and "Players" not in browser.text()
    browser.get(PLAYERS + "?team_id=team-001")
    assert "403 Forbidden" in browser.text() and "Zed" not in browser.text()
