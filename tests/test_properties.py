"""Property-based tests (hypothesis): every value a field accepts round-trips
exactly through the server; every value it refuses is a ValidationError naming
model and field, raised before any request.

Examples share one table (``Everything``); each writes a fresh key, so one
``dynamo_db`` per test is enough.
"""

from datetime import UTC, datetime, timedelta, timezone
from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dynamo_app.client import wire
from dynamo_app.exceptions import ValidationError
from dynamo_app.testing import count_requests
from tests.test_models_fields import Everything

PROPERTIES = settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)

LIMIT = 10**wire.MAX_DIGITS  # 38 significant digits

# Any Unicode text that is valid UTF-8, astral planes included (no lone surrogates, no NUL).
text = st.text(st.characters(exclude_categories=("Cs",), exclude_characters="\x00"), max_size=20)
ints38 = st.integers(-LIMIT + 1, LIMIT - 1)
# Up to 38 significant digits with any exponent DynamoDB accepts (1E-130 to 9.9...E+125).
decimals = st.builds(
    lambda digits, adjusted: Decimal(f"{digits}E{adjusted - len(str(abs(digits))) + 1}"),
    ints38.filter(bool),
    st.integers(wire.MIN_EXPONENT, wire.MAX_EXPONENT),
) | st.just(Decimal(0))
big_ints = st.builds(lambda digits, zeros: digits * 10**zeros, ints38, st.integers(0, 87))
floats = st.floats(allow_nan=False, allow_infinity=False).filter(
    lambda f: f == 0 or 1e-130 <= abs(f) < 1e126
)
zones = st.integers(-1439, 1439).map(lambda minutes: timezone(timedelta(minutes=minutes)))
# Aware datetimes whose UTC instant is within years 1-9999 (what a datetime can hold).
instants = st.datetimes(datetime(1, 1, 2), datetime(9999, 12, 30), timezones=zones)
json_scalars = st.none() | st.booleans() | text | big_ints | decimals
json_values = st.recursive(
    json_scalars
    | st.frozensets(text, min_size=1)
    | st.frozensets(st.binary(max_size=8), min_size=1)
    | st.frozensets(decimals, min_size=1),
    lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(text.filter(bool), inner, max_size=4),
    max_leaves=12,
)

VALID = {
    "name": text,
    "size": big_ints,
    "status": st.booleans(),
    "amount": decimals,
    "ratio": floats,
    "blob": st.binary(max_size=64),
    "at": instants,
    "ttl": instants.map(lambda d: d.replace(microsecond=0)),  # epoch: whole seconds
    "day": st.dates(),
    "ref": st.uuids(),
    "scores": st.lists(big_ints, max_size=5),
    "data": json_values,
    "attrs": st.dictionaries(text, json_values, max_size=4),
    "prices": st.dictionaries(text, decimals, max_size=4),
    "tags": st.sets(text, max_size=5),
    "numbers": st.sets(decimals | big_ints, max_size=5),
    "blobs": st.sets(st.binary(max_size=8), max_size=5),
}


@PROPERTIES
@given(values=st.fixed_dictionaries({}, optional=VALID))
def test_every_valid_value_round_trips_exactly(dynamo_db, values):
    obj = Everything(**values)
    obj.save()
    got = Everything.objects.get(id=obj.id, consistent=True)
    for name, value in values.items():
        # Equal values (an aware datetime: the same instant), in the field's own type.
        assert getattr(got, name) == value, name
    if "at" in values:
        assert got.at.tzinfo is not None


surrogate = st.sampled_from(["\ud800", "a\udfffb", "\udbff"])
long_ints = st.integers(LIMIT + 1, 10**45).filter(lambda n: n % 10)  # 39+ significant digits
too_many_digits = st.builds(
    lambda digits, exponent: Decimal(f"{digits}E{exponent}"), long_ints, st.integers(-60, 40)
)
out_of_range = st.builds(
    lambda digits, exponent: Decimal(f"{digits}E{exponent}"),
    st.integers(1, 9),
    st.integers(126, 400) | st.integers(-400, -131),
)
naive = st.datetimes(datetime(1, 1, 1), datetime(9999, 12, 31))
# Aware datetimes whose UTC instant is outside what a datetime can hold.
BEYOND_DATETIME = [
    datetime(1, 1, 1, 1, tzinfo=timezone(timedelta(hours=5))),
    datetime(9999, 12, 31, 23, tzinfo=timezone(timedelta(hours=-5))),
]
not_a_str = st.integers() | st.binary() | st.lists(st.integers(), max_size=2)

INVALID = st.one_of(
    st.tuples(st.just("name"), not_a_str | surrogate),
    st.tuples(st.just("size"), long_ints | st.floats() | st.booleans() | text),
    st.tuples(st.just("amount"), too_many_digits | out_of_range | text),
    st.tuples(st.just("ratio"), st.sampled_from([float("nan"), float("inf"), 1e300, 1e-300])),
    st.tuples(st.just("status"), st.integers() | text),
    st.tuples(st.just("blob"), text | st.integers()),
    st.tuples(st.just("at"), naive | text | st.integers()),
    st.tuples(st.sampled_from(["at", "ttl"]), st.sampled_from(BEYOND_DATETIME)),
    st.tuples(st.just("day"), instants | naive | text | st.integers()),  # a datetime is no date
    st.tuples(st.just("ref"), text.filter(lambda s: len(s) < 32)),
    st.tuples(st.just("scores"), st.lists(text, min_size=1, max_size=3)),
    st.tuples(st.just("data"), st.sampled_from([object(), {1: "x"}, set(), {"a": frozenset()}])),
    st.tuples(st.just("data"), surrogate.map(lambda s: {"k": s})),
    st.tuples(st.just("attrs"), surrogate.map(lambda s: {s: 1})),
    st.tuples(st.just("prices"), st.dictionaries(text, text, min_size=1, max_size=2)),
    st.tuples(st.just("tags"), st.sets(st.integers(), min_size=1, max_size=3)),
    st.tuples(st.just("numbers"), st.sets(out_of_range | too_many_digits, min_size=1)),
    st.tuples(st.just("blobs"), st.sets(text, min_size=1, max_size=3)),
)


@PROPERTIES
@given(case=INVALID)
def test_every_invalid_value_is_a_validation_error_before_any_request(dynamo_db, case):
    name, value = case
    with count_requests() as requests:
        with pytest.raises(ValidationError) as error:
            Everything(id="invalid", **{name: value}).save()
    assert error.value.model == "Everything"
    assert error.value.field.split("[")[0].split("{")[0] == name
    assert f"Everything.{name}" in str(error.value)
    assert requests.total == 0


def test_an_aware_datetime_keeps_its_instant_whatever_the_zone(dynamo_db):
    """Early years too: the stored text stays fixed-width (``0999-...``) and readable."""
    instant = datetime(999, 1, 1, 12, 30, 0, 5, tzinfo=UTC)
    obj = Everything(at=instant.astimezone(timezone(timedelta(hours=-7))))
    obj.save()
    got = Everything.objects.get(id=obj.id, consistent=True)
    assert got.at == instant and got.at.utcoffset() == timedelta(0)
