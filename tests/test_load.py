"""Load and concurrency: 8 threads of mixed operations against the server over
loopback, sharing one client as a threaded WSGI server does. Afterwards the
stored state must be exactly what the operations that succeeded imply."""

import random
import threading
import time
from collections import Counter, defaultdict

from django.conf import settings
from django.test import override_settings

from dynamo_app import models
from dynamo_app.data.integrity import check_unique
from dynamo_app.exceptions import AlreadyApplied, UniqueViolation
from dynamo_app.sessions import SessionStore
from tests.thread_support import in_threads

THREADS = 8
OPERATIONS = 60  # per thread
NUMBERS = 24  # the shared pool of unique values: claims collide on purpose
KEYS = 16  # idempotency keys per counter: some are repeated on purpose
COUNTERS = 3
TEAM = "load"
lock = threading.Lock()  # guards the shared record of applied idempotency keys


class LoadPlayer(models.Model):
    team_id = models.StringField(partition_key=True)
    player_id = models.StringField(sort_key=True, default=models.new_uuid)
    number = models.IntegerField(null=True)

    class Meta:
        table_name = "load_player"
        unique = [models.Unique("number", within="team_id")]


class LoadCounter(models.Model):
    counter_id = models.StringField(partition_key=True)
    hits = models.IntegerField(default=0)

    class Meta:
        table_name = "load_counter"


class Worker:
    """One thread's share: its own players and sessions, shared counters and numbers."""

    def __init__(self, seed, applied):
        self.rng = random.Random(seed)
        self.players = {}  # player_id -> instance as last written
        self.sessions = {}  # session key -> the value last saved
        self.applied = applied  # counter -> idempotency keys applied (shared)
        self.done = Counter()
        self.errors = []

    def run(self):
        operations = [self.create, self.change, self.delete, self.count, self.session]
        for _ in range(OPERATIONS):
            operation = self.rng.choices(operations, weights=[3, 3, 1, 4, 3])[0]
            try:
                operation()
            except Exception as exc:  # noqa: BLE001 - collected and asserted below
                self.errors.append(exc)

    def create(self):
        try:
            player = LoadPlayer.objects.create(team_id=TEAM, number=self.rng.randrange(NUMBERS))
        except UniqueViolation:
            self.done["unique refused"] += 1
            return
        self.players[player.player_id] = player
        self.done["create"] += 1

    def change(self):
        if not self.players:
            return self.create()
        player = self.players[self.rng.choice(list(self.players))]
        player.number = self.rng.randrange(NUMBERS)
        try:
            player.save()
        except UniqueViolation:
            player.refresh_from_db()  # the instance keeps the refused value until then
            self.done["unique refused"] += 1
            return
        self.done["change"] += 1

    def delete(self):
        if not self.players:
            return self.create()
        self.players.pop(self.rng.choice(list(self.players))).delete()
        self.done["delete"] += 1

    def count(self):
        counter = f"c{self.rng.randrange(COUNTERS)}"
        key = f"{counter}-{self.rng.randrange(KEYS)}"
        try:
            LoadCounter.objects.increment(counter_id=counter, hits=1, idempotency_key=key)
        except AlreadyApplied:
            self.done["repeat refused"] += 1
            return
        with lock:
            assert key not in self.applied[counter], f"{key} applied twice"
            self.applied[counter].add(key)
        self.done["count"] += 1

    def session(self):
        if self.sessions and self.rng.random() < 0.5:
            key = self.rng.choice(list(self.sessions))
            store = SessionStore(key)
            assert store["n"] == self.sessions[key]  # what this thread saved last
        else:
            store = SessionStore()
        store["n"] = self.rng.randrange(10**6)
        store.save()
        self.sessions[store.session_key] = store["n"]
        self.done["session"] += 1


def test_mixed_operations_from_8_threads_keep_every_guarantee(session_db, capsys):
    applied = defaultdict(set)
    workers = [Worker(seed, applied) for seed in range(THREADS)]
    with override_settings(DYNAMO={**settings.DYNAMO, "MAX_IDLE_CONNS": THREADS}):
        started = time.monotonic()
        assert in_threads(Worker.run, workers) == []
        elapsed = time.monotonic() - started

        assert [e for w in workers for e in w.errors] == []
        done = sum((w.done for w in workers), Counter())
        assert done["unique refused"] and done["repeat refused"]  # the collisions happened
        # No lost write, no duplicate unique value: the table holds exactly the
        # players the threads created and did not delete, with their last numbers.
        stored = {p.player_id: p.number for p in LoadPlayer.objects.filter(team_id=TEAM)}
        expected = {pid: p.number for w in workers for pid, p in w.players.items()}
        assert stored == expected
        assert len(set(stored.values())) == len(stored)
        report = check_unique()
        assert report.findings == [] and report.owners_checked == len(stored)
        assert report.locks_checked == len(stored)
        # Every counter counts each idempotency key once.
        for counter, keys in applied.items():
            assert LoadCounter.objects.get(counter_id=counter, consistent=True).hits == len(keys)
        # No session lost or overwritten by another.
        for worker in workers:
            for key, value in worker.sessions.items():
                assert SessionStore(key)["n"] == value

    with capsys.disabled():
        print(
            f"\nload: {sum(done.values())} operations ({dict(sorted(done.items()))}) from "
            f"{THREADS} threads in {elapsed:.1f}s; {len(stored)} players, 0 duplicates, "
            f"0 orphan/missing locks, {sum(len(k) for k in applied.values())} counted keys"
        )
