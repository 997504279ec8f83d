"""Sample teams, so a newcomer's first visit shows a populated roster.

Created from the teams page (a button), not by a command: the embedded
DynamoDB lives inside the runserver process, so only that process can fill it.
"""

from __future__ import annotations

import dynamo_app
from dynamo_app.exceptions import AlreadyExists

from .models import Player, Team, TeamEvent

# The first team is the seed's: Alice and Bob of team-001, now with different numbers.
SAMPLE_TEAMS: list[tuple[str, str, str, list[tuple[str, int, str]]]] = [
    (
        "team-001",
        "Team 001",
        "Tokyo",
        [
            ("Alice", 18, "Pitcher"),
            ("Bob", 19, "Catcher"),
            ("Chiaki", 1, "Shortstop"),
            ("Daichi", 3, "First base"),
            ("Emi", 4, "Second base"),
            ("Fumio", 5, "Third base"),
            ("Goro", 7, "Left field"),
            ("Hana", 8, "Center field"),
            ("Isamu", 9, "Right field"),
            ("Jun", 11, "Pitcher"),
            ("Kaori", 14, "Pitcher"),
            ("Ken", 22, "Catcher"),
            ("Mei", 24, "Left field"),
            ("Noboru", 51, "Center field"),
        ],
    ),
    (
        "osaka-otters",
        "Osaka Otters",
        "Osaka",
        [
            ("Ryo", 6, "Shortstop"),
            ("Sora", 10, "Pitcher"),
            ("Taro", 2, "Catcher"),
            ("Umi", 25, "First base"),
            ("Yui", 31, "Right field"),
        ],
    ),
    (
        "kyoto-cranes",
        "Kyoto Cranes",
        "Kyoto",
        [
            ("Aoi", 17, "Pitcher"),
            ("Haruto", 27, "Catcher"),
            ("Riko", 55, "Center field"),
        ],
    ),
]


def create_sample_teams(actor: str) -> int:
    """Create the sample teams that do not exist yet; how many were created.

    Each team is one transaction (the team, its players, their number locks
    and an event): all or nothing, and two clicks at once never add a team
    twice, as the loser's create of the team gets ``AlreadyExists``.
    """
    created = 0
    for team_id, name, city, players in SAMPLE_TEAMS:
        try:
            with dynamo_app.transaction() as tx:
                tx.create(Team(team_id=team_id, name=name, city=city))
                for player_name, number, position in players:
                    tx.create(
                        Player(
                            team_id=team_id,
                            player_name=player_name,
                            uniform_number=number,
                            position=position,
                        )
                    )
                detail = f"Sample team with {len(players)} players"
                tx.create(TeamEvent.new(team_id, actor, "created", detail))
        except AlreadyExists:
            continue
        created += 1
    return created
