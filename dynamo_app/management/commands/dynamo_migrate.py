"""``manage.py dynamo_migrate``: create what is missing, wait until ACTIVE, report the rest."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import ngettext

from dynamo_app.deploy.schema import DEFAULT_TIMEOUT, TableChange, migrate
from dynamo_app.exceptions import DynamoError


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
            applied = len(result.applied)
            done = ngettext("Applied %(n)d change:", "Applied %(n)d changes:", applied)
            self.stdout.write(self.style.SUCCESS(done % {"n": applied}))
            for change in result.applied:
                self.stdout.write(f"  {change.done}")
        else:
            self.stdout.write("Nothing to apply.")
        if verbose and result.in_sync:
            in_sync = len(result.in_sync)
            self.stdout.write(
                ngettext(
                    "%(n)d table already in sync.", "%(n)d tables already in sync.", in_sync
                )
                % {"n": in_sync}
            )
        if result.reported:
            self.stdout.write(self.style.WARNING("Reported, not done by dynamo_migrate:"))
            for change in result.reported:
                self.stdout.write(f"  - {change.detail}")
        if result.mismatches:
            differ = len(result.mismatches)
            raise CommandError(
                ngettext(
                    "%(n)d declared table still differs from its deployed shape",
                    "%(n)d declared tables still differ from their deployed shape",
                    differ,
                )
                % {"n": differ}
                + " (listed above); dynamo_migrate never changes keys or existing indexes."
            )
