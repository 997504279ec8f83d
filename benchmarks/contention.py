"""6. Contention: threads creating players with colliding unique values.

8 threads create players of one team, each with a random uniform number
from a range half as large as the attempts, so about half the creates
collide. Every create is one TransactWriteItems (the player and its lock);
a collision is a ``UniqueViolation``. Afterwards the team must hold one
player per distinct number and ``integrity.check_unique()`` must be clean.
"""

from __future__ import annotations

import contextvars
import random
import threading
import time

from dynamo_app.data import integrity
from dynamo_app.exceptions import UniqueViolation
from dynamo_app.testing import count_requests

from .common import Context, Section
from .models import BenchPlayer

THREADS = 8
TEAM = "team-k"


def run(ctx: Context) -> Section:
    attempts = 10 if ctx.quick else 50  # per thread
    numbers = THREADS * attempts // 2
    created: list[int] = []
    refused: list[int] = []
    errors: list[BaseException] = []

    def player(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(attempts):
            number = rng.randint(1, numbers)
            try:
                BenchPlayer.objects.create(team_id=TEAM, player_name="P", uniform_number=number)
                created.append(number)
            except UniqueViolation:
                refused.append(number)
            except Exception as exc:  # reported, not raised: the run goes on
                errors.append(exc)

    with count_requests() as requests:
        # Each thread in a copy of this context, so its requests count for the block.
        threads = [
            threading.Thread(target=contextvars.copy_context().run, args=(player, seed))
            for seed in range(THREADS)
        ]
        start = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        seconds = time.perf_counter() - start
    stored = [p.uniform_number for p in BenchPlayer.objects.filter(team_id=TEAM)]
    report = integrity.check_unique()
    consistent = sorted(stored) == sorted(created) == sorted(set(created))
    tries = THREADS * attempts
    section = Section(
        f"6. Contention: {THREADS} threads creating players with colliding uniform numbers",
        [
            "attempts",
            "created",
            "UniqueViolation",
            "other errors",
            "creates/s",
            "TransactWriteItems",
            "retried",
            "integrity",
        ],
    )
    section.rows.append(
        [
            str(tries),
            str(len(created)),
            str(len(refused)),
            str(len(errors)),
            f"{len(created) / seconds:.0f}",
            str(requests["TransactWriteItems"]),
            str(requests["TransactWriteItems"] - tries),
            "clean" if consistent and report.clean and not errors else "FAILED",
        ]
    )
    section.notes.append(
        f"Uniform numbers drawn from 1..{numbers}. Integrity: one stored player per created "
        f"number ({len(stored)} stored), no duplicates, check_unique() found "
        f"{len(report.findings)} problems over {report.owners_checked} owners and "
        f"{report.locks_checked} locks. The local server runs one request at a time, so "
        "DynamoDB's TransactionConflict never occurs here (retried = 0); it is tested by "
        "fault injection in the suite."
    )
    section.notes += [f"check_unique(): {finding}" for finding in report.findings]
    if errors:
        section.notes.append(f"Errors: {sorted({repr(e)[:120] for e in errors})}")
    return section
