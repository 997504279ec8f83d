"""The declared tables as infrastructure code: CloudFormation, Terraform, JSON.

A team whose stack owns the tables pastes this instead of transcribing the
models by hand. Keys, indexes and names come from the same ``TableDefinition``
and ``create_request()`` that ``dynamo_migrate`` sends and the same resolver
``dynamo_plan`` looks tables up with, so a stack created from the output
passes ``dynamo_plan --check``. What the plan never compares (billing, TTL,
point-in-time recovery, deletion protection) gets production defaults, each
with a comment saying why.
"""

from __future__ import annotations

import json
import re
import textwrap
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from ..tables import TableDefinition, TableResolver

FORMATS = ("cloudformation", "terraform", "json")

# The comments the CloudFormation and Terraform output carry on their defaults.
WHY = {
    "billing": "on-demand: no capacity to plan or autoscale; PROVISIONED needs "
    "ProvisionedThroughput on the table and on each global index",
    "ttl": "DynamoDB deletes items whose {attribute} (epoch seconds) has passed, "
    "in the background, typically within days",
    "pitr": "on by default: restore to any second of the last 35 days (billed per GB); "
    "turn it off only for data you can rebuild",
    "protection": "on by default: DeleteTable is refused until this is turned off",
    "retain": "keep the table and its data if the resource ever leaves the stack",
    "stream": "Meta.stream: the change records a stream consumer (e.g. a Lambda) reads",
}


@dataclass(frozen=True)
class DeployedTable:
    """A declared table under its deployed name (resolved for the current settings)."""

    definition: TableDefinition
    name: str

    def create_request(self) -> dict[str, Any]:
        """The CreateTable parameters, with deletion protection on."""
        request = self.definition.create_request(self.name)
        request["DeletionProtectionEnabled"] = True
        return request

    @property
    def stream_view_type(self) -> str | None:
        spec = self.definition.create_request(self.name).get("StreamSpecification")
        return cast(dict[str, str], spec)["StreamViewType"] if spec else None


def deployed(
    definitions: Iterable[TableDefinition], resolver: TableResolver
) -> list[DeployedTable]:
    """Each definition with its deployed name; TABLE_NAMES entries that name no
    declared table fail here, as they do at startup."""
    definitions = list(definitions)
    resolver.check(d.declared_name for d in definitions)
    return [DeployedTable(d, resolver(d.declared_name)) for d in definitions]


def render(fmt: str, tables: list[DeployedTable]) -> str:
    """The tables in ``fmt`` (one of ``FORMATS``)."""
    return {"cloudformation": cloudformation, "terraform": terraform, "json": as_json}[fmt](tables)


# --- JSON: the API requests -----------------------------------------------------------


def as_json(tables: list[DeployedTable]) -> str:
    """For scripts and SDKs: per table, the requests that create it as this
    output's stack would (CreateTable, then UpdateTimeToLive and
    UpdateContinuousBackups)."""
    document = {
        "tables": [
            {
                "declared_name": t.definition.declared_name,
                "deployed_name": t.name,
                "owner": t.definition.owner,
                "shared_by": list(t.definition.shared_by),
                "create_table": t.create_request(),
                "update_time_to_live": _ttl_request(t),
                "update_continuous_backups": {
                    "TableName": t.name,
                    "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": True},
                },
            }
            for t in tables
        ]
    }
    return json.dumps(document, indent=2)


def _ttl_request(table: DeployedTable) -> dict[str, Any] | None:
    attribute = table.definition.ttl_attribute
    if not attribute:
        return None
    return {
        "TableName": table.name,
        "TimeToLiveSpecification": {"AttributeName": attribute, "Enabled": True},
    }


# --- CloudFormation -------------------------------------------------------------------


def cloudformation_properties(table: DeployedTable) -> dict[str, Any]:
    """The ``AWS::DynamoDB::Table`` properties: the CreateTable parameters
    (CloudFormation spells them alike) plus TTL and point-in-time recovery."""
    properties = table.create_request()
    stream = properties.pop("StreamSpecification", None)
    if stream is not None:  # CloudFormation enables a stream by naming its view type
        properties["StreamSpecification"] = {"StreamViewType": stream["StreamViewType"]}
    ttl = _ttl_request(table)
    if ttl is not None:
        properties["TimeToLiveSpecification"] = ttl["TimeToLiveSpecification"]
    properties["PointInTimeRecoverySpecification"] = {"PointInTimeRecoveryEnabled": True}
    return properties


def cloudformation(tables: list[DeployedTable]) -> str:
    """A YAML template with one ``AWS::DynamoDB::Table`` per table; paste its
    ``Resources`` into the team's stack, or deploy it as a stack of its own."""
    ids = _unique_ids(tables, _logical_id)
    comments = {
        "BillingMode": WHY["billing"],
        "PointInTimeRecoverySpecification": WHY["pitr"],
        "DeletionProtectionEnabled": WHY["protection"],
        "StreamSpecification": WHY["stream"],
    }
    lines = [
        *_header(),
        'AWSTemplateFormatVersion: "2010-09-09"',
        'Description: "DynamoDB tables declared by the Django project (dynamo_app)"',
        "Resources:",
    ]
    for table in tables:
        ttl = WHY["ttl"].format(attribute=table.definition.ttl_attribute)
        lines += [
            f"  # {_about(table)}",
            f"  {ids[table.definition.declared_name]}:",
            "    Type: AWS::DynamoDB::Table",
            *("    " + line for line in _comment(WHY["retain"])),
            "    DeletionPolicy: Retain",
            "    UpdateReplacePolicy: Retain",
            "    Properties:",
            *_yaml(
                cloudformation_properties(table), 6, comments | {"TimeToLiveSpecification": ttl}
            ),
        ]
    return "\n".join(lines)


def _yaml(value: Any, indent: int, comments: dict[str, str]) -> list[str]:
    """Block-style YAML for the template's dicts, lists and scalars; every string
    double-quoted (JSON's quoting is YAML's), so no name can read as a number
    or a boolean. ``comments`` go above the mapping keys they name."""
    pad = " " * indent
    lines: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            lines += [pad + line for line in _comment(comments.get(key, ""))]
            if isinstance(item, (dict, list)):
                lines += [f"{pad}{key}:", *_yaml(item, indent + 2, {})]
            else:
                lines.append(f"{pad}{key}: {_scalar(item)}")
    else:
        for item in value:
            if isinstance(item, (dict, list)):
                first, *rest = _yaml(item, indent + 2, {})
                lines += [f"{pad}- {first.lstrip()}", *rest]
            else:
                lines.append(f"{pad}- {_scalar(item)}")
    return lines


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value)


def _logical_id(declared_name: str) -> str:
    """``dynamo_sessions`` -> ``DynamoSessionsTable`` (CloudFormation: A-Z a-z 0-9)."""
    words = re.split(r"[^A-Za-z0-9]+", declared_name)
    return "".join(w[:1].upper() + w[1:] for w in words) + "Table"


# --- Terraform ------------------------------------------------------------------------


def terraform(tables: list[DeployedTable]) -> str:
    """One ``aws_dynamodb_table`` resource per table (AWS provider), in HCL."""
    labels = _unique_ids(tables, _terraform_label)
    blocks = [_terraform_table(t, labels[t.definition.declared_name]) for t in tables]
    return "\n\n".join(["\n".join(_header()), *blocks])


def _terraform_table(table: DeployedTable, label: str) -> str:
    d = table.definition
    body: list[str] = [
        f"name         = {_hcl(table.name)}",
        *_comment(WHY["billing"]),
        f"billing_mode = {_hcl(d.billing_mode)}",
        f"hash_key     = {_hcl(d.partition_key.name)}",
    ]
    if d.sort_key is not None:
        body.append(f"range_key    = {_hcl(d.sort_key.name)}")
    for attribute in d.attribute_definitions():
        body += _hcl_block(
            "attribute",
            [("name", attribute["AttributeName"]), ("type", attribute["AttributeType"])],
        )
    for index in d.indexes:
        fields: list[tuple[str, Any]] = [("name", index.name)]
        if index.kind == "global":
            fields.append(("hash_key", index.partition_key.name))
        if index.sort_key is not None:
            fields.append(("range_key", index.sort_key.name))
        projection = index.projection_spec()
        fields.append(("projection_type", projection["ProjectionType"]))
        if "NonKeyAttributes" in projection:
            fields.append(("non_key_attributes", projection["NonKeyAttributes"]))
        body += _hcl_block(f"{index.kind}_secondary_index", fields)
    if d.ttl_attribute:
        body += _hcl_block(
            "ttl",
            [("attribute_name", d.ttl_attribute), ("enabled", True)],
            WHY["ttl"].format(attribute=d.ttl_attribute),
        )
    if table.stream_view_type:
        body += ["", *_comment(WHY["stream"]), "stream_enabled   = true"]
        body.append(f"stream_view_type = {_hcl(table.stream_view_type)}")
    body += _hcl_block("point_in_time_recovery", [("enabled", True)], WHY["pitr"])
    body += ["", *_comment(WHY["protection"]), "deletion_protection_enabled = true"]
    body += _hcl_block("lifecycle", [("prevent_destroy", True)], WHY["retain"])
    inner = "\n".join(f"  {line}" if line else "" for line in body)
    return f'# {_about(table)}\nresource "aws_dynamodb_table" {_hcl(label)} {{\n{inner}\n}}'


def _hcl_block(name: str, fields: list[tuple[str, Any]], comment: str = "") -> list[str]:
    """A nested block after a blank line (and its comment)."""
    width = max(len(k) for k, _ in fields)
    pairs = [f"  {k.ljust(width)} = {_hcl(v)}" for k, v in fields]
    return ["", *_comment(comment), f"{name} {{", *pairs, "}"]


def _hcl(value: Any) -> str:
    """An HCL literal. Strings are JSON-quoted (HCL's escapes are JSON's) with
    template sequences escaped, so an attribute named ``${x}`` stays literal."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "[" + ", ".join(_hcl(v) for v in value) + "]"
    return json.dumps(value).replace("${", "$${").replace("%{", "%%{")


def _terraform_label(declared_name: str) -> str:
    """A Terraform identifier: letters, digits, ``_`` and ``-``, not starting with a digit."""
    label = re.sub(r"[^A-Za-z0-9_-]", "_", declared_name)
    return f"_{label}" if label[0].isdigit() else label


# --- shared ---------------------------------------------------------------------------


def _header() -> list[str]:
    return _comment(
        "The DynamoDB tables this Django project declares (its models and dynamo_app's own "
        "tables), from `python manage.py dynamo_plan --format`, with the deployed names of "
        "the settings it ran with. A stack created from it passes `python manage.py "
        "dynamo_plan --check`."
    )


def _comment(text: str) -> list[str]:
    """``text`` as ``#`` comment lines (YAML and HCL alike), wrapped."""
    return [f"# {line}" for line in textwrap.wrap(text, 88)]


def _about(table: DeployedTable) -> str:
    definition = table.definition
    owner = f" by {definition.owner}" if definition.owner else ""
    shared = f", shared by {', '.join(definition.shared_by)}" if definition.shared_by else ""
    return f"table {definition.declared_name!r} declared{owner}{shared}"


def _unique_ids(tables: list[DeployedTable], make: Callable[[str], str]) -> dict[str, str]:
    """Resource names by declared name; two declared names
    that make the same id (``a.b``, ``a_b``) get ``2``, ``3``... in table order."""
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for table in tables:
        base = candidate = make(table.definition.declared_name)
        n = 1
        while candidate in taken:
            n += 1
            candidate = f"{base}{n}"
        taken.add(candidate)
        ids[table.definition.declared_name] = candidate
    return ids
