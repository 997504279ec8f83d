"""``dynamo_plan --format``: the declared tables as CloudFormation, Terraform and JSON.

The CloudFormation output is checked against the ``AWS::DynamoDB::Table``
resource schema that cfn-lint ships (tests/data/README.md says why not cfn-lint
itself), and round-trips: its tables, created on the run's server the way
CloudFormation creates them, pass ``dynamo_plan --check``.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import hcl2
import jsonschema
import pytest
import yaml
from django.core.management import CommandError
from django.test import override_settings

from dynamo_app.client.handle import get_handle
from dynamo_app.tables import IndexDefinition, KeyAttribute, TableDefinition, registry
from dynamo_app.test.store import TestStore
from tests.schema_support import EVENT, PLAYER, S, run

SCHEMA = Path(__file__).parent / "data" / "aws-dynamodb-table.schema.json"

# Attribute names a careless YAML or HCL writer would turn into something else.
AWKWARD = TableDefinition(
    "iac_awkward",
    KeyAttribute("on", S),
    KeyAttribute("1e3", "N"),
    indexes=(IndexDefinition("by_tmpl", "global", KeyAttribute('${x} %{y} "q"', S)),),
    owner="tests.Awkward",
)


def tables_of(template: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The template's table properties by table name."""
    resources = template["Resources"].values()
    assert {r["Type"] for r in resources} == {"AWS::DynamoDB::Table"}
    return {r["Properties"]["TableName"]: r["Properties"] for r in resources}


def test_cloudformation_is_valid_for_the_table_resource_schema(declared):
    declared(PLAYER)
    declared(AWKWARD)
    template = yaml.safe_load(run("dynamo_plan", "--format", "cloudformation"))

    validator = jsonschema.Draft7Validator(json.loads(SCHEMA.read_text()))
    for name, properties in tables_of(template).items():
        assert [e.message for e in validator.iter_errors(properties)] == [], name
    assert template["AWSTemplateFormatVersion"] == "2010-09-09"
    assert all(re.fullmatch(r"[A-Za-z0-9]+", logical_id) for logical_id in template["Resources"])
    resource = template["Resources"]["SchPlayerTable"]
    assert resource["DeletionPolicy"] == resource["UpdateReplacePolicy"] == "Retain"


def test_cloudformation_states_every_default_with_its_reason(declared):
    declared(PLAYER)
    text = run("dynamo_plan", "--format", "cloudformation")
    player = tables_of(yaml.safe_load(text))["test-sch_player"]

    assert player["BillingMode"] == "PAY_PER_REQUEST"
    assert player["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert player["DeletionProtectionEnabled"] is True
    assert player["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    for reason in ("# on-demand:", "# on by default: restore", "# on by default: DeleteTable"):
        assert reason in text
    # the app's own tables are declared too (test settings: database sessions, so no session table)
    assert {"test-dynamo_unique", "test-dynamo_idempotency"} <= set(tables_of(yaml.safe_load(text)))


def test_names_survive_yaml_as_written(declared):
    declared(AWKWARD)
    awkward = tables_of(yaml.safe_load(run("dynamo_plan", "--format", "cloudformation")))[
        "test-iac_awkward"
    ]
    assert [a["AttributeName"] for a in awkward["AttributeDefinitions"]] == [
        "on",
        "1e3",
        '${x} %{y} "q"',
    ]


CREATE_TABLE = {
    "TableName",
    "KeySchema",
    "AttributeDefinitions",
    "BillingMode",
    "GlobalSecondaryIndexes",
    "LocalSecondaryIndexes",
    "DeletionProtectionEnabled",
}


def create_as_cloudformation_does(properties: dict[str, Any]) -> None:
    """One ``AWS::DynamoDB::Table``: CreateTable with the properties the API
    spells alike, then its TTL. Point-in-time recovery (UpdateContinuousBackups)
    is left out: the plan never reads it, and not every local engine has it."""
    client = get_handle().client
    request = {k: v for k, v in properties.items() if k in CREATE_TABLE}
    if "StreamSpecification" in properties:
        request["StreamSpecification"] = {
            "StreamEnabled": True,
            **properties["StreamSpecification"],
        }
    client.create_table(**request)
    if "TimeToLiveSpecification" in properties:
        client.update_time_to_live(
            TableName=properties["TableName"],
            TimeToLiveSpecification=properties["TimeToLiveSpecification"],
        )
    known = CREATE_TABLE | {"StreamSpecification", "TimeToLiveSpecification"}
    assert set(properties) - known == {"PointInTimeRecoverySpecification"}


def test_a_stack_created_from_the_cloudformation_passes_the_plan_check(
    declare, dynamo_server: TestStore
):
    declare(PLAYER)  # a global and a local index, TTL
    declare(EVENT)
    with pytest.raises(SystemExit):
        run("dynamo_plan", "--check")  # missing: what the template is for
    template = yaml.safe_load(run("dynamo_plan", "--format", "cloudformation"))

    assert dynamo_server.server is not None
    dynamo_server.server.reset()  # an empty account: every table comes from the template
    tables = tables_of(template)
    try:
        for properties in tables.values():
            create_as_cloudformation_does(properties)
        output = run("dynamo_plan", "--check")
    finally:  # protected tables would stop the next test's reset on an external engine
        for name in tables:
            get_handle().client.update_table(TableName=name, DeletionProtectionEnabled=False)

    assert f"{len(registry.definitions())} in sync, 0 to apply, 0 mismatched." in output
    assert len(tables) == len(registry.definitions())


def hcl_string(token: str) -> str:
    """A string literal as python-hcl2 returns it (quotes kept), unquoted."""
    value: str = json.loads(token)
    return value


def test_terraform_parses_as_hcl_with_the_declared_shape(declared):
    declared(PLAYER)
    declared(AWKWARD)  # parses: template sequences in names are escaped
    document = hcl2.loads(run("dynamo_plan", "--format", "terraform"))
    resources = {
        hcl_string(label): body
        for block in document["resource"]
        for kind, labelled in block.items()
        if hcl_string(kind) == "aws_dynamodb_table"
        for label, body in labelled.items()
    }
    player = resources["sch_player"]

    assert {
        k: hcl_string(player[k]) for k in ("name", "billing_mode", "hash_key", "range_key")
    } == {
        "name": "test-sch_player",
        "billing_mode": "PAY_PER_REQUEST",
        "hash_key": "team_id",
        "range_key": "player_id",
    }
    assert [(hcl_string(a["name"]), hcl_string(a["type"])) for a in player["attribute"]] == [
        ("team_id", "S"),
        ("player_id", "S"),
        ("uniform_number", "N"),
        ("player_name", "S"),
    ]
    [gsi] = player["global_secondary_index"]
    assert (hcl_string(gsi["name"]), hcl_string(gsi["hash_key"])) == ("by_number", "uniform_number")
    [lsi] = player["local_secondary_index"]
    assert "hash_key" not in lsi and hcl_string(lsi["range_key"]) == "player_name"
    assert hcl_string(player["ttl"][0]["attribute_name"]) == "expires_at"
    assert player["point_in_time_recovery"][0]["enabled"] is True
    assert player["deletion_protection_enabled"] is True
    assert player["lifecycle"][0]["prevent_destroy"] is True
    assert {"dynamo_unique", "dynamo_idempotency", "iac_awkward"} <= set(resources)


def test_json_holds_the_api_requests(declared):
    declared(PLAYER)
    [player] = [
        t
        for t in json.loads(run("dynamo_plan", "--format", "json"))["tables"]
        if t["declared_name"] == "sch_player"
    ]
    assert player["deployed_name"] == "test-sch_player"
    assert player["create_table"] == {
        **PLAYER.create_request("test-sch_player"),
        "DeletionProtectionEnabled": True,
    }
    assert player["update_time_to_live"] == {
        "TableName": "test-sch_player",
        "TimeToLiveSpecification": {"AttributeName": "expires_at", "Enabled": True},
    }
    assert player["update_continuous_backups"]["PointInTimeRecoverySpecification"] == {
        "PointInTimeRecoveryEnabled": True
    }


def test_deployed_names_follow_the_settings(declared, settings):
    declared(EVENT)
    with override_settings(DYNAMO={**settings.DYNAMO, "TABLE_NAMES": {"sch_event": "events-8f"}}):
        names = [
            t["deployed_name"] for t in json.loads(run("dynamo_plan", "--format", "json"))["tables"]
        ]
        assert "events-8f" in names and "test-sch_event" not in names
    with override_settings(DYNAMO={**settings.DYNAMO, "TABLE_NAMES": {"sch_evnt": "x-events"}}):
        with pytest.raises(CommandError, match="'sch_evnt'"):
            run("dynamo_plan", "--format", "terraform")


def test_check_is_refused_with_format():
    with pytest.raises(CommandError, match="--check"):
        run("dynamo_plan", "--format", "json", "--check")
