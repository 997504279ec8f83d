"""ShardedCounter: increments spread over K items, a total read with one BatchGetItem."""

import pytest

from dynamo_app import app_tables, models
from dynamo_app.client.handle import get_handle
from dynamo_app.tables import registry
from dynamo_app.testing import count_requests
from tests.process_support import run_together

VIEWS = models.ShardedCounter("test_views", shards=4)


def shard_items():
    handle = get_handle()
    table = handle.table_name(app_tables.COUNTERS.declared_name)
    items = handle.call("scan", TableName=table)["Items"]
    return {i["counter_id"]["S"]: int(i["value"]["N"]) for i in items}


def test_declaring_a_counter_declares_its_table():
    assert app_tables.COUNTERS.declared_name in registry
    assert app_tables.COUNTERS in app_tables.needed()


def test_an_increment_is_one_update_on_one_of_the_shards(dynamo_db):
    with count_requests() as counter:
        for _ in range(40):
            VIEWS.add("team-001")
    assert dict(counter) == {"UpdateItem": 40}
    shards = shard_items()
    assert set(shards) <= {f"test_views#team-001#{n}" for n in range(4)}
    assert len(shards) > 1 and sum(shards.values()) == 40  # spread, nothing lost


def test_a_total_is_one_batch_get_of_the_shards(dynamo_db):
    VIEWS.add("team-001", 5)
    VIEWS.add("team-002", 2)
    with count_requests() as counter:
        assert VIEWS.total("team-001") == 5
    assert dict(counter) == {"BatchGetItem": 1}
    with count_requests() as counter:
        totals = VIEWS.totals(["team-001", "team-002", "team-003"], consistent=True)
    assert totals == {"team-001": 5, "team-002": 2, "team-003": 0}
    assert dict(counter) == {"BatchGetItem": 1}  # 12 shard items: one request


def test_totals_past_100_shards_take_a_request_per_100(dynamo_db):
    with count_requests() as counter:
        VIEWS.totals([f"team-{n}" for n in range(30)])  # 120 shard items
    assert dict(counter) == {"BatchGetItem": 2}


def test_bad_declarations_and_amounts_are_refused():
    for shards in (0, 101, 2.5, True):
        with pytest.raises(ValueError, match="shards="):
            models.ShardedCounter("x", shards=shards)
    with pytest.raises(ValueError, match="without '#'"):
        models.ShardedCounter("a#b")
    with pytest.raises(TypeError, match="whole numbers"):
        VIEWS.add("team-001", 1.5)
    with pytest.raises(ValueError, match="too long"):
        VIEWS.add("x" * 3000)


ADD = """
from dynamo_app.counters import ShardedCounter

counter = ShardedCounter("test_views", shards=4)
start_together()
for n in range(int(sys.argv[1])):
    counter.add("team-001")
    counter.add("team-002", 2)
"""


@pytest.mark.processes  # processes of their own: one leg runs them (bin/test)
def test_totals_are_exact_after_increments_from_several_processes(dynamo_db, tmp_path):
    run_together(ADD, "150", processes=4, go=tmp_path / "go")
    assert VIEWS.totals(["team-001", "team-002"], consistent=True) == {
        "team-001": 4 * 150,
        "team-002": 4 * 150 * 2,
    }
    assert len(shard_items()) == 8  # every shard of both keys took increments
