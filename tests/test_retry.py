"""Error classification and retries, with faults injected where the local
server cannot produce them (conflicts, throttling, timeouts)."""

import random
import uuid

import pytest
from botocore.exceptions import (
    ChecksumError,
    ClientError,
    ConnectionClosedError,
    EndpointConnectionError,
    ReadTimeoutError,
)

from dynamo_app import exceptions
from dynamo_app.client.retry import Decision, RetryPolicy, Tally, classify
from dynamo_app.conf import RetrySettings
from dynamo_app.testing import count_requests
from tests.fault_support import Faults, client_error

TABLE = "retry"  # declared: the deployed name carries the suite's TABLE_PREFIX
DAMAGED = ChecksumError(checksum_type="crc32", expected_checksum=1, actual_checksum=2)


@pytest.mark.parametrize(
    "exc, decision",
    [
        (client_error("ThrottlingException"), Decision.RETRY),
        (client_error("ProvisionedThroughputExceededException"), Decision.RETRY),
        (client_error("RequestLimitExceeded"), Decision.RETRY),
        (client_error("TransactionInProgressException"), Decision.RETRY),
        (client_error("InternalServerError", 500), Decision.IF_IDEMPOTENT),
        (client_error("ServiceUnavailable", 503), Decision.IF_IDEMPOTENT),
        (client_error("Whatever", 503), Decision.IF_IDEMPOTENT),
        (
            client_error("TransactionCanceledException", reasons=["None", "TransactionConflict"]),
            Decision.RETRY,
        ),
        (
            client_error(
                "TransactionCanceledException",
                reasons=["TransactionConflict", "ConditionalCheckFailed"],
            ),
            Decision.NEVER,
        ),
        (client_error("ConditionalCheckFailedException"), Decision.NEVER),
        (client_error("ValidationException"), Decision.NEVER),
        (client_error("ResourceNotFoundException"), Decision.NEVER),
        (EndpointConnectionError(endpoint_url="http://127.0.0.1:1"), Decision.RECONNECT),
        (ReadTimeoutError(endpoint_url="http://127.0.0.1:1"), Decision.IF_IDEMPOTENT),
        (ConnectionClosedError(endpoint_url="http://127.0.0.1:1"), Decision.IF_IDEMPOTENT),
        (DAMAGED, Decision.IF_IDEMPOTENT),
        (ValueError("bug"), Decision.NEVER),
    ],
)
def test_classification(exc, decision):
    assert classify(exc) is decision


def test_backoff_is_capped_full_jitter():
    policy = RetryPolicy(RetrySettings(10, 0.1, 1.0), rng=random.Random(7))
    for attempt in range(1, 10):
        ceiling = min(1.0, 0.1 * 2 ** (attempt - 1))
        delays = [policy.delay(attempt) for _ in range(200)]
        assert all(0 <= d <= ceiling for d in delays)
        assert max(delays) > ceiling * 0.8  # jitter spans the whole window


@pytest.fixture
def table(dynamo_db, slept):
    dynamo_db.call(
        "create_table",
        TableName=dynamo_db.table_name(TABLE),
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    dynamo_db.sleeps = slept
    return dynamo_db


def _key(table, key):
    return {"TableName": table.table_name(TABLE), "Key": {"pk": {"S": key}}}


def _put(table, key, **extra):
    return {"TableName": table.table_name(TABLE), "Item": {"pk": {"S": key}}, **extra}


def _counter_add(table, key):
    return {
        **_key(table, key),
        "UpdateExpression": "ADD #n :one",
        "ExpressionAttributeNames": {"#n": "n"},
        "ExpressionAttributeValues": {":one": {"N": "1"}},
    }


def test_conflict_twice_then_success_on_attempt_three(table):
    # DynamoDB (and MiniStack) remember a token for 10 minutes: a fresh one per run.
    token = str(uuid.uuid4())
    conflict = client_error("TransactionCanceledException", reasons=["TransactionConflict"])
    with Faults(table.client, conflict, conflict) as faults:
        table.call(
            "transact_write_items",
            TransactItems=[{"Put": _put(table, "a")}],
            ClientRequestToken=token,
        )
    assert len(faults.attempts) == 3
    assert len(table.sleeps) == 2
    assert table.sleeps[0] <= 0.05 and table.sleeps[1] <= 0.1  # capped, growing windows
    assert table.call("get_item", **_key(table, "a"))["Item"]


def test_condition_failure_is_tried_exactly_once(table):
    table.call("put_item", **_put(table, "b"))
    with count_requests() as counter, pytest.raises(exceptions.ConditionFailed):
        table.call("put_item", **_put(table, "b", ConditionExpression="attribute_not_exists(pk)"))
    assert counter["PutItem"] == 1 and table.sleeps == []


def test_timeout_on_a_counter_add_is_not_retried_and_reported_as_unknown(table):
    with Faults(table.client, ReadTimeoutError(endpoint_url="x")) as faults:
        with pytest.raises(exceptions.OutcomeUnknown, match="may or may not have been applied"):
            table.call("update_item", **_counter_add(table, "c"))
    assert len(faults.attempts) == 1
    assert "Item" not in table.call("get_item", **_key(table, "c"))


def test_timeout_on_transaction_is_retried_with_the_same_token(table):
    token = str(uuid.uuid4())
    with Faults(table.client, ReadTimeoutError(endpoint_url="x")) as faults:
        table.call(
            "transact_write_items",
            TransactItems=[{"Update": _counter_add(table, "d")}],
            ClientRequestToken=token,
        )
    tokens = [a["ClientRequestToken"] for a in faults.attempts]
    assert tokens == [token, token]


def test_timeout_on_read_is_retried(table):
    with Faults(table.client, ReadTimeoutError(endpoint_url="x")) as faults:
        table.call("get_item", **_key(table, "e"))
    assert len(faults.attempts) == 2


def test_connection_refused_reconnects_even_for_writes(table):
    with Faults(table.client, EndpointConnectionError(endpoint_url="x")) as faults:
        table.call("update_item", **_counter_add(table, "f"))
    assert len(faults.attempts) == 2
    item = table.call("get_item", **_key(table, "f"))["Item"]
    assert item["n"] == {"N": "1"}  # applied once


@pytest.mark.parametrize("position", ["first", "middle", "last"])
@pytest.mark.parametrize(
    "fault, retried",
    [
        (client_error("ThrottlingException"), True),
        (client_error("ProvisionedThroughputExceededException"), True),
        (client_error("InternalServerError", 500), True),
        (client_error("TransactionCanceledException", reasons=["TransactionConflict"]), True),
        (EndpointConnectionError(endpoint_url="x"), True),
        (ReadTimeoutError(endpoint_url="x"), True),  # a whole-item put may be repeated
        (client_error("ValidationException"), False),
    ],
)
def test_every_error_class_at_every_position(table, fault, retried, position):
    """MAX_ATTEMPTS is 5: faults fill attempts up to the position, then success."""
    count = {"first": 1, "middle": 3, "last": 5}[position]
    with Faults(table.client, *[fault] * count) as faults:
        if retried and count < 5:
            table.call("put_item", **_put(table, f"k-{position}"))
            assert len(faults.attempts) == count + 1
            assert len(table.sleeps) == count
            assert sum(table.sleeps) <= 0.05 + 0.1 + 0.2 + 0.4  # bounded total delay
        else:
            with pytest.raises(exceptions.DynamoError) as e:
                table.call("put_item", **_put(table, f"k-{position}"))
            assert len(faults.attempts) == (5 if retried else 1)
            assert e.value.__cause__ is not None  # the final error carries its cause


def test_botocore_exceptions_carry_no_bookkeeping_of_ours(table):
    """How hard the policy tried is the app error's (and the Tally's), never
    stamped on the botocore exception behind it."""
    throttled = client_error("ThrottlingException")
    with Faults(table.client, *[throttled] * 5), pytest.raises(exceptions.Throttled) as e:
        table.call("put_item", **_put(table, "t"))
    cause = e.value.__cause__
    assert isinstance(cause, ClientError) and e.value.attempts == 5
    assert not {"attempts", "outcome_unknown"} & set(vars(cause))

    def server_error():
        raise client_error("InternalServerError", 500)

    tally = Tally()
    policy = RetryPolicy(RetrySettings(2, 0.001, 0.001), sleep=lambda s: None)
    with pytest.raises(ClientError) as raw:
        policy.run(server_error, "update_item", {}, tally)
    assert (tally.attempts, tally.outcome_unknown) == (1, True)
    assert not {"attempts", "outcome_unknown"} & set(vars(raw.value))


def test_the_app_error_says_how_many_requests_were_sent(table):
    throttled = client_error("ThrottlingException")
    with Faults(table.client, *[throttled] * 5), pytest.raises(exceptions.Throttled) as e:
        table.call("put_item", **_put(table, "t"))
    assert e.value.attempts == 5 and "after 5 attempts" in str(e.value)
    table.call("put_item", **_put(table, "t"))
    with Faults(table.client, throttled), pytest.raises(exceptions.ConditionFailed) as failed:
        table.call("put_item", **_put(table, "t", ConditionExpression="attribute_not_exists(pk)"))
    assert failed.value.attempts == 2
    with pytest.raises(exceptions.ServiceError) as rejected:
        table.call("put_item", TableName=table.table_name(TABLE), Item={"pk": {"N": "1"}})
    assert rejected.value.attempts == 1
