"""Whatever the app stores dumps and loads back identically (hypothesis, against the
server): an item written by save(), update() (set, add, upsert), increment() or
bulk_save() becomes a dump line (``record()``, what ``dynamo_dump`` writes) that
``dynamo_load``'s ``load()`` writes back as the very same stored item."""

import itertools
import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynamo_app.data.dumpload import load, record
from tests.test_field_twins import EVERYTHING, canonical
from tests.test_models_fields import Everything, raw_item
from tests.test_properties import text

ROUND_TRIPS = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def by_save(key, values):
    Everything(id=key, **values).save()


def by_update(key, values):
    Everything.objects.create(id=key)
    if values:
        Everything(id=key).update(set=values)


def by_upsert(key, values):
    Everything(id=key).update(set={"label": "upserted", **values}, upsert=True)


def by_bulk_save(key, values):
    Everything.objects.bulk_save([Everything(id=key, **values)])


WRITES = st.sampled_from([by_save, by_update, by_upsert, by_bulk_save])
KEYS = (f"k{n}" for n in itertools.count())  # one item per example


def stored(key):
    return {name: canonical(value) for name, value in raw_item(Everything(id=key)).items()}


def dumped_and_loaded_back(key):
    line = json.dumps(record(Everything.objects.get(id=key, consistent=True)))
    before = stored(key)
    Everything(id=key).delete()
    assert load([line]).loaded == 1
    after = stored(key)
    Everything(id=key).delete()
    return before, after


@ROUND_TRIPS
@given(write=WRITES, values=st.fixed_dictionaries({}, optional=EVERYTHING))
def test_an_item_any_write_stored_loads_back_identically(dynamo_db, write, values):
    key = next(KEYS)
    write(key, values)
    before, after = dumped_and_loaded_back(key)
    assert after == before


@ROUND_TRIPS
@given(
    size=st.integers(-(10**30), 10**30),
    amount=st.decimals(-(10**20), 10**20, places=6),  # moto's ADD fails on 1E+1 (a 500)
    tags=st.sets(text, min_size=1, max_size=3),
)
def test_counters_and_sets_added_by_update_and_increment_load_back(dynamo_db, size, amount, tags):
    key = next(KEYS)
    Everything.objects.increment(id=key, size=size)
    Everything(id=key).update(add={"amount": amount, "tags": tags, "size": 1})
    before, after = dumped_and_loaded_back(key)
    assert after == before
