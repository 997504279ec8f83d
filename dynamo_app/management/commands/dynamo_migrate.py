"""``manage.py dynamo_migrate``: create what is missing, wait until ACTIVE, report the rest."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError

from dynamo_app.exceptions import DynamoError
from dynamo_app.schema import DEFAULT_TIMEOUT, TableChange, migrate


class Command(BaseCommand):
    help = (
        "Apply the DynamoDB schema plan (see dynamo_plan): create missing tables with their "
        "indexes (and TTL), add missing global secondary indexes one at a time, and wait until "
        "each is ACTIVE. It never deletes a table or an index and never changes a key: those "
        "differences are reported, and the command exits with status 1 while any declared "
        "table still differs from its deployed shape."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--timeout",
            type=float,
            default=DEFAULT_TIMEOUT,
            help="seconds to wait for tables and indexes to become ACTIVE "
            f"(default {DEFAULT_TIMEOUT:g}); DynamoDB goes on after the wait ends",
        )

    def handle(self, *args: Any, timeout: float, **options: Any) -> None:
        if timeout <= 0:
            raise CommandError(f"--timeout must be greater than zero, got {timeout:g}.")
        verbose = options["verbosity"] >= 1

        def progress(change: TableChange, message: str) -> None:
            if verbose:
                self.stdout.write(f"  {change.deployed_name}: {message}")

        try:
            result = migrate(timeout=timeout, progress=progress)
        except (DynamoError, ImproperlyConfigured) as exc:
            raise CommandError(str(exc)) from exc

        if result.applied:
            self.stdout.write(self.style.SUCCESS(f"Applied {len(result.applied)} change(s):"))
            for change in result.applied:
                self.stdout.write(f"  {change.done}")
        else:
            self.stdout.write("Nothing to apply.")
        if verbose and result.in_sync:
            self.stdout.write(f"{len(result.in_sync)} table(s) already in sync.")
        if result.reported:
            self.stdout.write(self.style.WARNING("Reported, not done by dynamo_migrate:"))
            for change in result.reported:
                self.stdout.write(f"  - {change.detail}")
        if result.mismatches:
            raise CommandError(
                f"{len(result.mismatches)} declared table(s) still differ from the deployed "
                "shape (listed above); dynamo_migrate never changes keys or existing indexes."
            )
