"""9. Single-table design: the demo's team page, a table per model against one shared table.

The same data in both layouts (a team, 14 players, 20 events); the page's reads as
the demo made them with a table per model (GetItem of the team, a Query of 10
players by number on a local index, a Query of the 5 latest events) and as it makes
them now that they share one table (one Query of the team's collection, descending:
the team, every player, the events newest first). The page-view counter, in its own
table either way, is left out.
"""

from __future__ import annotations

import time

from dynamo_app.testing import count_requests

from .common import Context, Section, compare, ratio
from .models import (
    TEAM_PAGE,
    PageEvent,
    PagePlayer,
    PageTeam,
    RosterEvent,
    RosterPlayer,
    RosterTeam,
)

PLAYERS, EVENTS, PAGE_SIZE, LATEST = 14, 20, 10, 5


def _fill() -> None:
    for team, player, event in (
        (PageTeam, PagePlayer, PageEvent),
        (RosterTeam, RosterPlayer, RosterEvent),
    ):
        team.objects.create(team_id="t1", name="Team 001")
        player.objects.bulk_save(
            player(team_id="t1", player_id=f"p{i:02d}", player_name=f"P{i}", uniform_number=i)
            for i in range(PLAYERS)
        )
        event.objects.bulk_save(
            event(team_id="t1", event_id=f"2026-01-{i:02d}", detail=f"change {i}")
            for i in range(EVENTS)
        )


def table_per_model() -> tuple[int, int, int]:
    team = PageTeam.objects.get(team_id="t1")
    players = PagePlayer.objects.using_index("by_number").filter(team_id="t1").page(PAGE_SIZE)
    events = list(PageEvent.objects.filter(team_id="t1").order_by("-event_id").limit(LATEST))
    return len([team]), len(players), len(events)


def one_table() -> tuple[int, int, int]:
    page = TEAM_PAGE.page(team_id="t1", size=1 + 100 + LATEST, reverse=True)
    players = sorted(page.of(RosterPlayer), key=lambda p: p.uniform_number)
    return len(page.of(RosterTeam)), len(players), len(page.of(RosterEvent)[:LATEST])


def run(ctx: Context) -> Section:
    _fill()
    layouts = {"a table per model (before)": table_per_model, "one shared table": one_table}
    seconds = compare(layouts, repeat=ctx.repeat * 5, clock=time.perf_counter)
    section = Section(
        "9. Single-table design: the demo's team page, a table per model vs one shared table",
        ["layout", "requests", "items shown", "ms per page", "x before"],
    )
    base = seconds["a table per model (before)"]
    for name, read in layouts.items():
        with count_requests() as sent:
            shown = read()
        calls = ", ".join(f"{n} {op}" for op, n in sorted(sent.items()))
        section.rows.append(
            [
                name,
                calls,
                f"{shown[0]} team, {shown[1]} players, {shown[2]} events",
                f"{seconds[name] * 1000:.2f}",
                ratio(seconds[name], base),
            ]
        )
    section.notes.append(
        f"Wall time on the local server (one request at a time), median of {ctx.repeat * 5} "
        "runs; over a network every request saved is a round trip saved. The one-table page "
        "shows every player (at most 100: numbers are 0-99) where the other showed 10."
    )
    return section
