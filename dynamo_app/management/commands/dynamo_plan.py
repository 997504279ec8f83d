"""``manage.py dynamo_plan``: what ``dynamo_migrate`` would do, and what it never does."""

from __future__ import annotations

import json
import sys
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from dynamo_app.client.handle import get_handle
from dynamo_app.conf import get_settings
from dynamo_app.deploy import iac, iam
from dynamo_app.deploy.schema import ChangeKind, TableChange, lists_undeclared, plan
from dynamo_app.exceptions import DynamoError
from dynamo_app.tables import registry


def changes_table(changes: list[TableChange]) -> list[str]:
    """Rows of declared name, deployed name, change and detail, columns aligned."""
    rows = [("DECLARED", "DEPLOYED", "CHANGE", "DETAIL")] + [
        (
            c.declared_name if c.kind is not ChangeKind.UNDECLARED else "-",
            c.deployed_name,
            c.kind.label,
            c.detail,
        )
        for c in changes
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return [
        "  ".join([*(v.ljust(w) for v, w in zip(row, widths, strict=False)), row[3]])
        for row in rows
    ]


def summary(changes: list[TableChange]) -> str:
    pending = sum(c.executable for c in changes)
    mismatched = sum(c.mismatch for c in changes)
    undeclared = sum(c.kind is ChangeKind.UNDECLARED for c in changes)
    in_sync = sum(c.kind is ChangeKind.IN_SYNC for c in changes)
    parts = [f"{in_sync} in sync", f"{pending} to apply", f"{mismatched} mismatched"]
    if undeclared:
        parts.append(f"{undeclared} undeclared")
    line = ", ".join(parts) + "."
    if pending:
        line += " Run `python manage.py dynamo_migrate` to apply."
    if mismatched:
        line += " Mismatches are never applied: fix the model or the table."
    return line


class Command(BaseCommand):
    help = (
        "Compare the declared DynamoDB tables (models and the app's own tables) with the "
        "deployed ones and print the difference: tables to create and global indexes to add "
        "(what dynamo_migrate does), key and index mismatches and undeclared tables under "
        "DYNAMO['TABLE_PREFIX'] (reported only, never changed or deleted). Read-only: it "
        "sends DescribeTable and ListTables requests only. With --format or --iam-policy it "
        "sends nothing and prints the declared tables as infrastructure code, or the IAM "
        "policy they need; deployed names resolved for the current settings."
    )

    def add_arguments(self, parser: Any) -> None:
        output = parser.add_mutually_exclusive_group()
        output.add_argument(
            "--format",
            choices=iac.FORMATS,
            dest="fmt",
            help="print the declared tables (keys, indexes, TTL, streams; on-demand billing, "
            "point-in-time recovery and deletion protection on) as a CloudFormation template, "
            "Terraform aws_dynamodb_table resources, or the JSON of the API requests",
        )
        output.add_argument(
            "--iam-policy",
            nargs="?",
            const="app",
            choices=("app", "migrate"),
            help="print the least-privilege IAM policy for the declared tables: 'app' (the "
            "default) what the running app and dynamo_plan send; 'migrate' adds CreateTable, "
            "UpdateTable and UpdateTimeToLive for dynamo_migrate. ${AWS::Partition}, "
            "${AWS::Region} and ${AWS::AccountId} are CloudFormation's pseudo parameters "
            "(Fn::Sub fills them in); elsewhere replace them with aws, the tables' region and "
            "the account id",
        )
        output.add_argument(
            "--json",
            action="store_true",
            dest="as_json",
            help="print the changes as JSON, for machines",
        )
        parser.add_argument(
            "--check",
            action="store_true",
            help="exit with status 1 when anything is to apply or mismatched (for CI and "
            "deploy pipelines); undeclared tables do not fail the check",
        )

    def handle(
        self,
        *args: Any,
        as_json: bool,
        check: bool,
        fmt: str | None,
        iam_policy: str | None,
        **options: Any,
    ) -> None:
        if fmt or iam_policy:
            if check:
                raise CommandError(
                    "--check compares with DynamoDB: use it without --format and --iam-policy."
                )
            self.stdout.write(self.generated(fmt, iam_policy))
            return
        try:
            handle = get_handle()
            changes = plan(handle=handle)
        except (DynamoError, ImproperlyConfigured) as exc:
            raise CommandError(str(exc)) from exc
        undeclared_listed = lists_undeclared(handle.resolver)
        if as_json:
            self.print_json(changes, undeclared_listed)
        else:
            self.print_table(changes, undeclared_listed)
        if check and any(c.executable or c.mismatch for c in changes):
            sys.exit(1)

    def generated(self, fmt: str | None, iam_policy: str | None) -> str:
        """Infrastructure code or the IAM policy: from the settings, no request."""
        try:
            resolver = get_settings().resolver()
            tables = iac.deployed(registry.definitions(), resolver)
        except ImproperlyConfigured as exc:
            raise CommandError(str(exc)) from exc
        if fmt:
            return iac.render(fmt, tables)
        document = iam.policy(
            tables, list_tables=lists_undeclared(resolver), migrate=iam_policy == "migrate"
        )
        return json.dumps(document, indent=2)

    def print_json(self, changes: list[TableChange], undeclared_listed: bool) -> None:
        document = {
            "changes": [c.as_dict() for c in changes],
            "undeclared_tables_listed": undeclared_listed,
        }
        self.stdout.write(json.dumps(document, indent=2))

    def print_table(self, changes: list[TableChange], undeclared_listed: bool) -> None:
        if not changes:
            self.stdout.write("No DynamoDB tables are declared.")
        else:
            header, *rows = changes_table(changes)
            self.stdout.write(header)
            for change, row in zip(changes, rows, strict=True):
                self.stdout.write(self.styled(change, row))
        self.stdout.write(summary(changes))
        if not undeclared_listed:
            self.stdout.write(
                "Undeclared tables are not listed: only a DYNAMO['TABLE_PREFIX'] (without a "
                "TABLE_RESOLVER) tells this project's tables apart from others in the account."
            )

    def styled(self, change: TableChange, row: str) -> str:
        if change.mismatch:
            return self.style.ERROR(row)
        if change.executable or change.kind is ChangeKind.UNDECLARED:
            return self.style.WARNING(row)
        return row
