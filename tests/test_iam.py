"""``dynamo_plan --iam-policy``: exactly the operations dynamo_app sends.

The proof has three parts. ``dynamo_app.deploy.iam.OPERATIONS`` lists the operations;
tests/conftest.py fails every test of the suite in which the app sent one it
does not list (tests/app_operations.py says how a request is told to be the
app's); ``test_the_app_sends_every_listed_operation`` sends each listed one
through the app's own code paths; and the policy allows exactly the IAM actions
of the list. So the policy covers exactly what the suite's app code sends.
"""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from django.core.management import call_command
from django.test import override_settings

import dynamo_app
from dynamo_app import models, partiql
from dynamo_app.client.handle import get_handle
from dynamo_app.deploy import iam, schema
from dynamo_app.deploy.iac import DeployedTable
from dynamo_app.streams.consumer import Consumer
from dynamo_app.tables import IndexDefinition, KeyAttribute, TableDefinition
from tests.schema_support import EVENT, PLAYER, make_table, run

ARN = "arn:${AWS::Partition}:dynamodb:${AWS::Region}:${AWS::AccountId}:table/"


class IamReading(models.Model):
    sensor = models.StringField(partition_key=True)
    at = models.IntegerField(sort_key=True)
    site = models.StringField(null=True)

    class Meta:
        indexes = [models.GlobalIndex("by_site", partition_key="site", sort_key="at")]


class IamFeed(models.Model):
    feed_id = models.StringField(partition_key=True)

    class Meta:
        stream = "new_image"


class IamPlayer(models.Model):
    team_id = models.StringField(partition_key=True)
    player_id = models.StringField(sort_key=True)
    number = models.IntegerField()

    class Meta:
        unique = [models.Unique("number", within="team_id")]


def policy_of(*args: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(run("dynamo_plan", *args))
    return document


def statements(document: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {s["Sid"]: s for s in document["Statement"]}


def test_policy_allows_each_operation_on_the_tables_and_indexes_it_touches():
    tables = [DeployedTable(PLAYER, "prod-player"), DeployedTable(EVENT, "prod-event")]
    assert iam.policy(tables, list_tables=True) == {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Sid": "DynamoAppItems",
                "Effect": "Allow",
                "Action": [
                    "dynamodb:BatchGetItem",
                    "dynamodb:BatchWriteItem",
                    "dynamodb:ConditionCheckItem",
                    "dynamodb:DeleteItem",
                    "dynamodb:GetItem",
                    "dynamodb:PartiQLDelete",
                    "dynamodb:PartiQLInsert",
                    "dynamodb:PartiQLSelect",
                    "dynamodb:PartiQLUpdate",
                    "dynamodb:PutItem",
                    "dynamodb:Query",
                    "dynamodb:Scan",
                    "dynamodb:UpdateItem",
                ],
                "Resource": [f"{ARN}prod-player", f"{ARN}prod-event"],
            },
            {
                "Sid": "DynamoAppIndexQueries",
                "Effect": "Allow",
                "Action": ["dynamodb:PartiQLSelect", "dynamodb:Query", "dynamodb:Scan"],
                "Resource": [
                    f"{ARN}prod-player/index/by_number",
                    f"{ARN}prod-player/index/by_name",
                ],
            },
            {
                "Sid": "DynamoAppSchemaCheck",
                "Effect": "Allow",
                "Action": ["dynamodb:DescribeTable"],
                "Resource": [f"{ARN}prod-player", f"{ARN}prod-event"],
            },
            {
                "Sid": "DynamoAppListTables",
                "Effect": "Allow",
                "Action": ["dynamodb:ListTables"],
                "Resource": ["*"],
            },
        ],
    }


def test_policy_allows_exactly_the_listed_operations(declared):
    declared(PLAYER)
    document = policy_of("--iam-policy", "migrate")
    allowed = {a for s in document["Statement"] for a in s["Action"]}
    listed = {
        f"dynamodb:{a}"
        for op in iam.OPERATIONS
        if op.need is not iam.Need.DEVELOP  # dynamo_drop_table: a local store only
        for a in op.actions + op.index_actions
    }
    # ... and, for a table with Meta.stream, what a Lambda event source mapping calls
    assert allowed == listed | {f"dynamodb:{a}" for a in iam.STREAM_ACTIONS}
    assert statements(document)["DynamoAppMigrate"]["Action"] == [
        "dynamodb:CreateTable",
        "dynamodb:UpdateTable",
        "dynamodb:UpdateTimeToLive",
    ]
    # every declared table, the app's own included, under its deployed name
    items = statements(document)["DynamoAppItems"]["Resource"]
    assert {f"{ARN}test-sch_player", f"{ARN}test-dynamo_unique"} <= set(items)
    assert "DynamoAppMigrate" not in statements(policy_of("--iam-policy"))


def test_list_tables_only_where_dynamo_plan_lists_undeclared_tables(settings):
    assert "DynamoAppListTables" in statements(policy_of("--iam-policy"))  # TABLE_PREFIX test-
    with override_settings(DYNAMO={**settings.DYNAMO, "TABLE_PREFIX": ""}):
        assert "DynamoAppListTables" not in statements(policy_of("--iam-policy"))


def test_the_app_sends_every_listed_operation(declare, app_operations: set[str]):
    new = declare(TableDefinition("iam_new", KeyAttribute("id", "S"), ttl_attribute="ttl"))
    grown = declare(
        TableDefinition(
            "iam_grown",
            KeyAttribute("id", "S"),
            indexes=(IndexDefinition("by_x", "global", KeyAttribute("x", "S")),),
        )
    )
    make_table(get_handle().table_name(grown.declared_name), ("id", "S", "HASH"))
    app_operations.clear()  # the fixtures' own requests are not this test's

    schema.migrate()  # ListTables, DescribeTable, CreateTable, UpdateTimeToLive, UpdateTable
    reading = IamReading.objects.create(sensor="s1", at=1, site="kyoto")  # PutItem
    IamReading.objects.get(sensor="s1", at=1)  # GetItem
    reading.site = "osaka"
    reading.save(update_fields=["site"])  # UpdateItem
    IamReading.objects.bulk_save([IamReading(sensor="s1", at=2)])  # BatchWriteItem
    IamReading.objects.bulk_get([("s1", 2)])  # BatchGetItem
    list(IamReading.objects.filter(sensor="s1"))  # Query
    list(IamReading.objects.using_index("by_site").filter(site="osaka"))  # Query (index)
    list(IamReading.objects.scan())  # Scan
    reading.delete()  # DeleteItem
    IamPlayer.objects.create(team_id="t", player_id="p", number=7)  # TransactWriteItems
    dynamo_app.read_atomic([(IamPlayer, ("t", "p"))])  # TransactGetItems
    list(IamReading.objects.partiql("SELECT * FROM {table} WHERE sensor = ?", ["s1"]))
    partiql.execute_transaction(  # ExecuteTransaction
        [
            (
                'UPDATE {IamReading} SET site = ? WHERE sensor = ? AND "at" = ?',
                ["x", "s1", 2],
            )
        ]
    )

    IamFeed.objects.create(feed_id="f")
    Consumer().round()  # DescribeStream, GetShardIterator, GetRecords
    make_table(get_handle().table_name("iam_left_over"), ("id", "S", "HASH"))
    with override_settings(DEBUG=True):  # a local store: the suite's server
        call_command("dynamo_drop_table", "iam_left_over", "--noinput", stdout=io.StringIO())
    assert app_operations == {op.name for op in iam.OPERATIONS}
    assert get_handle().table_name(new.declared_name) in schema.table_names(get_handle())


def test_only_the_apps_own_requests_count(dynamo_db, app_operations: set[str]):
    app_operations.clear()
    handle = get_handle()
    handle.call("describe_time_to_live", TableName=handle.table_name("dynamo_unique"))
    assert app_operations == set()  # the test's own request through the handle

    schema.table_names(handle)  # the app's, through paginate()
    assert app_operations == {"ListTables"}


@pytest.mark.parametrize("flag", ["--iam-policy", "--format"])
def test_policy_and_format_send_nothing(flag, app_operations: set[str]):
    # no dynamo_db: a request would fail with AccessNotAllowed
    run("dynamo_plan", flag, *(["json"] if flag == "--format" else []))
    assert app_operations == set()
