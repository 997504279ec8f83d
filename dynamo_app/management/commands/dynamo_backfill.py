"""``manage.py dynamo_backfill``: apply a function to every item of a table."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils.module_loading import import_string
from django.utils.translation import ngettext

from dynamo_app.data import backfill
from dynamo_app.exceptions import DynamoError

from .dynamo_dump import find_models


class Command(BaseCommand):
    help = (
        "Apply FUNCTION (a dotted path, e.g. shop.backfills.fill_slug) to every item of its "
        "model - the annotation of its first parameter, or --model - with a parallel Scan, "
        "writing back the items it changed, each conditioned on what was read (a concurrent "
        "edit counts as a conflict and is never overwritten). Checkpoints each segment, so a "
        "killed run resumes when started again. --segment i --total-segments n runs one "
        "slice: start n workers (processes, machines) with i = 0..n-1."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("function", metavar="FUNCTION")
        parser.add_argument("--model", help="the model, when FUNCTION's annotation names none")
        parser.add_argument("--segments", type=int, default=1, help="parallel segments (threads)")
        parser.add_argument("--segment", type=int, help="run only this slice (0-based) ...")
        parser.add_argument("--total-segments", type=int, help="... of a scan split n ways")
        parser.add_argument(
            "--max-capacity", type=float, help="capacity units a second this process may use"
        )
        parser.add_argument("--name", help="checkpoint name (default: FUNCTION and model)")
        parser.add_argument(
            "--restart", action="store_true", help="forget the checkpoints: start from the top"
        )

    def handle(self, *args: Any, function: str, **options: Any) -> None:
        try:
            fn = import_string(function)
        except ImportError as exc:
            raise CommandError(f"Cannot import {function!r}: {exc}") from exc
        if options["model"]:
            (model,) = find_models([options["model"]])
        else:
            found = backfill.model_of(fn)
            if found is None:
                raise CommandError(
                    f"{function} does not say which model it takes: annotate its first parameter "
                    "(def fill(player: Player)) or pass --model."
                )
            model = found
        progress = getattr(self.stderr, "_out", sys.stderr)
        try:
            result = backfill.run(
                model,
                fn,
                segments=options["segments"],
                segment=options["segment"],
                total_segments=options["total_segments"],
                name=options["name"],
                max_capacity=options["max_capacity"],
                restart=options["restart"],
                progress=progress,
            )
        except (DynamoError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        segments = result.segments_done
        done = ngettext("%(n)d segment done", "%(n)d segments done", segments) % {"n": segments}
        self.stdout.write(f"{model._meta.label}: {result} ({done}).")
