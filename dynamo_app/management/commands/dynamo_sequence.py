"""``manage.py dynamo_sequence [NAME] [--to N]``: show the models' sequences, or
advance one.

Items loaded with numbers of their own (``dynamo_load``, a migration from SQL)
do not move the sequence: advance it past the highest number loaded, or
``SequenceField`` hands those numbers out again. It never moves back.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from dynamo_app.exceptions import SequenceError
from dynamo_app.models.fields import SequenceField
from dynamo_app.models.registry import registered_models
from dynamo_app.sequences import Sequence


def declared() -> dict[str, list[SequenceField]]:
    """Every model's SequenceFields, by the name of their sequence."""
    found: dict[str, list[SequenceField]] = {}
    for model in registered_models():
        for field in model._meta.sequences:
            found.setdefault(field.sequence.name, []).append(field)
    return dict(sorted(found.items()))


class Command(BaseCommand):
    help = (
        "Show every sequence the models' SequenceFields use: the highest number reserved "
        "so far (each process holds a block of 'cache' numbers above what it handed out). "
        "With NAME and --to N, advance that sequence so new numbers start above N (after "
        "loading items that carry their own numbers); a sequence is never moved back."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name", nargs="?", help="a sequence, as this command lists it")
        parser.add_argument("--to", type=int, help="make N the highest number reserved")

    def handle(self, *args: Any, name: str | None, to: int | None, **options: Any) -> None:
        sequences = declared()
        if name is None:
            if to is not None:
                raise CommandError("--to needs the NAME of the sequence to advance.")
            if not sequences:
                self.stdout.write("No model has a SequenceField.")
            for each in sequences:
                self._show(each, sequences[each])
            return
        if name not in sequences:
            raise CommandError(
                f"No model's SequenceField uses a sequence {name!r}. Sequences: "
                f"{', '.join(sequences) or 'none'}."
            )
        if to is not None:
            try:
                Sequence(name).advance(to)
            except SequenceError as exc:
                raise CommandError(str(exc)) from None
            self.stdout.write(f"Advanced {name}: new numbers start above {to}.")
        self._show(name, sequences[name])

    def _show(self, name: str, fields: list[SequenceField]) -> None:
        users = ", ".join(f"{f.label} (cache={f.cache})" for f in fields)
        self.stdout.write(f"{name}: {Sequence(name).current()} reserved; used by {users}")
