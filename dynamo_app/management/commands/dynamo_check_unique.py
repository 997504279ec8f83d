"""``manage.py dynamo_check_unique``: unique locks and their owners, compared."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from dynamo_app.data.integrity import check_unique
from dynamo_app.exceptions import DynamoError


class Command(BaseCommand):
    help = (
        "Check that every unique value is held by exactly one lock item and every lock by "
        "its owner: reports owners without locks, locks without owners and real duplicates "
        "(written before a constraint existed, or by other programs). Scans every model "
        "with Meta.unique and the lock table. --repair claims missing locks and releases "
        "orphans, each in a small transaction conditioned on what was read; duplicates are "
        "only reported. Exits 1 while anything remains."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--repair", action="store_true", help="fix what can be fixed safely")

    def handle(self, *args: Any, repair: bool, **options: Any) -> None:
        try:
            report = check_unique(repair=repair)
        except DynamoError as exc:
            raise CommandError(str(exc)) from exc
        for finding in report.findings:
            style = self.style.SUCCESS if finding.repaired else self.style.ERROR
            self.stdout.write(style(str(finding)))
        remaining = [f for f in report.findings if not f.repaired]
        self.stdout.write(
            f"Checked {report.owners_checked} owners and {report.locks_checked} locks: "
            f"{report.count('missing')} missing, {report.count('orphan')} orphan, "
            f"{report.count('duplicate')} duplicate"
            + (f"; {len(report.findings) - len(remaining)} repaired." if repair else ".")
        )
        if remaining:
            if not repair:
                self.stdout.write("Run with --repair to fix missing and orphan locks.")
            sys.exit(1)
