"""``manage.py dynamo_stream``: deliver the local server's stream records to the receivers."""

from __future__ import annotations

import traceback
from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import BaseCommand, CommandError
from django.utils.translation import ngettext

from dynamo_app.exceptions import DynamoError, ReceiverFailed, StreamError
from dynamo_app.streams.consumer import Consumer


class Command(BaseCommand):
    help = (
        "Read the streams of the tables whose models declare Meta.stream (every shard) and "
        "deliver each change record to its model's receivers (@dynamo_app.streams.receiver). "
        "Checkpoints in the app table dynamo_stream_checkpoints let a restart go on where the "
        "last run stopped (at least once: a record may come twice, never not at all). A "
        "receiver that raises stops the command at that record, which the next run delivers "
        "again. For development and tests; in production, an AWS Lambda event source mapping "
        "calls dynamo_app.streams.lambda_handler."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--from",
            dest="start",
            choices=("trim_horizon", "latest"),
            default="trim_horizon",
            help="where to start in a shard that has no checkpoint yet: its oldest record "
            "(trim_horizon, the default) or only records written from now on (latest)",
        )
        parser.add_argument(
            "--until-caught-up",
            action="store_true",
            help="stop once every shard is read to its newest record (for tests and scripts); "
            "without it the command keeps polling until interrupted",
        )
        parser.add_argument(
            "--interval",
            type=float,
            default=1.0,
            help="seconds between polls once caught up (default 1)",
        )

    def handle(
        self, *args: Any, start: str, until_caught_up: bool, interval: float, **options: Any
    ) -> None:
        if interval <= 0:
            raise CommandError(f"--interval must be greater than zero, got {interval:g}.")
        verbose = options["verbosity"] >= 1

        def report(line: str) -> None:
            if verbose:
                self.stdout.write(f"  {line}")

        try:
            consumer = Consumer(start=start, report=report)  # type: ignore[arg-type]
            if not consumer.dispatcher.tables:
                self.stdout.write("No model declares Meta.stream: nothing to consume.")
                return
            if verbose:
                names = ", ".join(sorted(consumer.dispatcher.tables))
                self.stdout.write(f"Consuming the streams of {names}.")
            delivered = consumer.run(follow=not until_caught_up, interval=interval)
        except ReceiverFailed as exc:
            cause = exc.__cause__
            if cause is not None:
                self.stderr.write("".join(traceback.format_exception(cause)))
            where = "" if _notes(exc) else " the checkpoint is the record before it, so"
            raise CommandError(
                f"{exc}{_notes(exc)}\nStopped at that record:{where} the next run delivers it "
                "again (to every receiver of the model: make them idempotent)."
            ) from exc
        except StreamError as exc:
            raise CommandError(f"{exc}{_notes(exc)}\nStopped at that record.") from exc
        except (DynamoError, ImproperlyConfigured) as exc:
            raise CommandError(str(exc)) from exc
        except KeyboardInterrupt as exc:
            self.stdout.write(f"Stopped; the next run goes on from the checkpoints.{_notes(exc)}")
            return
        caught_up = ngettext(
            "Caught up: %(n)d record delivered.", "Caught up: %(n)d records delivered.", delivered
        )
        self.stdout.write(self.style.SUCCESS(caught_up % {"n": delivered}))


def _notes(exc: BaseException) -> str:
    """What the consumer added to the error that stopped it (a checkpoint that failed too)."""
    return "".join(f"\n{note}" for note in getattr(exc, "__notes__", ()))
