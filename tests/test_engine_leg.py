"""tests/engine_leg.py: the engine leg's rule, and the guard that keeps it true."""

import pytest

from tests.engine_leg import check_sent, uses_store


def test_a_test_naming_the_store_is_on_the_engine_leg(request, dynamo_db):
    assert uses_store(request.node)
    check_sent(request.node, {"ListTables"})


def test_a_test_reaching_the_store_without_naming_it_fails(request, handle_calls):
    assert not uses_store(request.node)
    # What a fixture that registers tables and then asks for them late does.
    handle = request.getfixturevalue("dynamo_db")
    handle.call("list_tables")
    assert "ListTables" in handle_calls.every  # with the store's own, creating the tables
    with pytest.raises(AssertionError, match="names neither dynamo_db nor dynamo_server"):
        check_sent(request.node, handle_calls.every)
    handle_calls.every.clear()  # the failure was this test's point, not its result
