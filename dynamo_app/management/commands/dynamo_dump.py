"""``manage.py dynamo_dump``: every item of some models (or all) as JSON lines."""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import ngettext

from dynamo_app.data.dumpload import dump
from dynamo_app.exceptions import DynamoError
from dynamo_app.models.base import Model
from dynamo_app.models.registry import registered_models


def find_models(names: list[str]) -> list[type[Model]]:
    """Models by label (``shop.models.Player``) or by a tail of it (``Player``,
    ``models.Player``); every model when ``names`` is empty."""
    models = registered_models()
    if not names:
        return models
    found = []
    for name in names:
        matches = [
            m
            for m in models
            if m._meta.label.lower() == name.lower()
            or m._meta.label.lower().endswith("." + name.lower())
        ]
        if len(matches) != 1:
            labels = ", ".join(m._meta.label for m in (matches or models)) or "none"
            what = "matches several models" if matches else "is not a model"
            raise CommandError(f"{name!r} {what}; models: {labels}.")
        found.append(matches[0])
    return found


class Command(BaseCommand):
    help = (
        "Write every item of the given models (default: all) as JSON lines, one item a line, "
        "in the typed form dynamo_load reads back exactly. Reads with a Scan, in --segments "
        "parallel slices; progress (items, items/s, ETA from the table's approximate "
        "ItemCount) goes to stderr."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("models", nargs="*", metavar="MODEL", help="label or class name")
        parser.add_argument("--output", "-o", default="-", help="file to write; - for stdout")
        parser.add_argument(
            "--segments", type=int, default=1, help="parallel Scan segments (threads) per table"
        )

    def handle(self, *args: Any, models: list[str], output: str, segments: int, **_: Any) -> None:
        if segments < 1:
            raise CommandError("--segments takes a positive integer.")
        chosen = find_models(models)
        # The raw streams: lines are written whole, and a terminal's progress line is
        # redrawn in place (Django's wrapper would end every write with a newline).
        progress = getattr(self.stderr, "_out", sys.stderr)
        try:
            if output == "-":
                stdout = getattr(self.stdout, "_out", sys.stdout)
                result = dump(chosen, stdout, segments=segments, progress=progress)
            else:
                with open(output, "w", encoding="utf-8") as out:
                    result = dump(chosen, out, segments=segments, progress=progress)
        except DynamoError as exc:
            raise CommandError(str(exc)) from exc
        rate = result.total / result.seconds if result.seconds else 0
        where = "stdout" if output == "-" else output
        items = ngettext("%(n)s item", "%(n)s items", result.total) % {"n": f"{result.total:,}"}
        of = ngettext("%(n)d model", "%(n)d models", len(chosen)) % {"n": len(chosen)}
        self.stderr.write(
            f"Dumped {items} of {of} to {where} in {result.seconds:.1f}s"
            f"{f' ({rate:,.0f} items/s)' if result.seconds >= 0.1 else ''}: "
            + ", ".join(f"{label} {count:,}" for label, count in result.counts.items())
        )
