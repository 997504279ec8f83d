"""``manage.py dynamo_load``: the lines of a dynamo_dump file, validated and written."""

from __future__ import annotations

import functools
import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import ngettext

from dynamo_app.data.dumpload import load
from dynamo_app.exceptions import DynamoError


class Command(BaseCommand):
    help = (
        "Load a dynamo_dump file (- for stdin): every line is checked through its model "
        "(what a save() checks, so whatever the app stored loads back; with --strict also "
        "full_clean()) before anything is written, and a file with a bad line loads "
        "nothing: each bad line is named, or with --skip-invalid counted and skipped. Items "
        "are written in file order, in batches, and those of models with unique constraints "
        "together with their locks. A load that stops says which lines are loaded; run it "
        "again to resume: items already loaded are recognised."
    )

    stealth_options = ("stdin",)

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("file", metavar="FILE")
        parser.add_argument(
            "--strict",
            action="store_true",
            help="also refuse what full_clean() refuses (choices, validators, the model's "
            "clean()): for data that did not come from this app",
        )
        parser.add_argument(
            "--skip-invalid", action="store_true", help="count and skip lines that cannot load"
        )

    def handle(
        self, *args: Any, file: str, strict: bool, skip_invalid: bool, **options: Any
    ) -> None:
        progress = getattr(self.stderr, "_out", sys.stderr)
        load_file = functools.partial(
            load, strict=strict, skip_invalid=skip_invalid, progress=progress
        )
        try:
            if file == "-":
                result = load_file(options.get("stdin") or sys.stdin, source="stdin")
            else:
                with open(file, encoding="utf-8") as lines:
                    result = load_file(lines, source=file)
        except (DynamoError, OSError) as exc:
            raise CommandError(str(exc)) from exc
        rate = (result.loaded + result.present) / result.seconds if result.seconds else 0
        loaded = ngettext("Loaded %(n)s item", "Loaded %(n)s items", result.loaded)
        present = ngettext(
            "%(n)s was already there", "%(n)s were already there", result.present
        )
        summary = (
            f"{loaded % {'n': f'{result.loaded:,}'}} in {result.seconds:.1f}s"
            f"{f' ({rate:,.0f} items/s)' if result.seconds >= 0.1 else ''}; "
            f"{present % {'n': f'{result.present:,}'}}"
        )
        if result.invalid:
            shown = ", ".join(map(str, result.invalid[:20]))
            more = " ..." if len(result.invalid) > 20 else ""
            skipped = ngettext(
                "skipped %(n)s invalid line", "skipped %(n)s invalid lines", len(result.invalid)
            )
            summary += f"; {skipped % {'n': f'{len(result.invalid):,}'}}: {shown}{more}"
        for name, number in result.advanced.items():
            summary += f"; sequence {name} moved up to {number:,} (the highest loaded)"
        self.stderr.write(summary + ".")
