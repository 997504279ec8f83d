"""``manage.py dynamo_local``: a local DynamoDB-compatible server in the foreground,
or ``--stop`` to stop the project's shared embedded one."""

from __future__ import annotations

import signal
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from dynamo_app.exceptions import LocalServerError
from dynamo_app.local.server import HOST, LocalServer

DEFAULT_PORT = 8001


class Command(BaseCommand):
    help = (
        "Run a local DynamoDB-compatible server (moto, one request at a time) on "
        f"{HOST}. Point another process at it with DYNAMO['ENDPOINT'] = "
        f"'http://{HOST}:<port>'. Stop it with Ctrl-C; its data goes with it unless "
        "--state names a file to keep it in. --stop stops the project's shared "
        "embedded server (DYNAMO['ENDPOINT'] = 'embedded') instead."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument(
            "--port",
            type=int,
            default=DEFAULT_PORT,
            help=f"port to listen on (default {DEFAULT_PORT}; 0 picks a free one)",
        )
        parser.add_argument(
            "--state",
            default="",
            metavar="FILE",
            help="keep the tables in FILE: restored at start, saved after writes and at exit",
        )
        parser.add_argument(
            "--stop",
            action="store_true",
            help="stop the server that keeps the project's embedded tables (or --state FILE's), "
            "saving them first, and exit",
        )

    def handle(self, *args: Any, port: int, state: str, stop: bool, **options: Any) -> None:
        if stop:
            return self.stop(state)
        if not 0 <= port <= 65535:
            raise CommandError(f"--port must be between 0 and 65535, got {port}.")
        try:
            server = LocalServer(port=port, state_file=state or None).start()
        except LocalServerError as exc:
            raise CommandError(str(exc)) from exc
        except OSError as exc:
            raise CommandError(
                f"Cannot listen on {HOST}:{port}: {exc.strerror}. Try --port 0."
            ) from exc
        self.stdout.write(f"Local DynamoDB listening on {server.url}")
        for warning in server.warnings:
            self.stderr.write(warning)
        if state:
            self.stdout.write(f"Tables kept in {state} ({server.restored} restored).")
        self.stdout.write(f"Use it with DYNAMO['ENDPOINT'] = {server.url!r} (Ctrl-C to stop).")
        signal.signal(signal.SIGTERM, _interrupt)  # `dynamo_local --stop`, kill: save, then exit
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            self.stdout.write("Stopped.")

    def stop(self, state: str) -> None:
        from dynamo_app.conf import get_settings
        from dynamo_app.local import shared as local_shared

        path = Path(state).resolve() if state else None
        try:
            path = path or local_shared.project_state_file(get_settings().local_state_file)
            stopped = local_shared.stop(path)
        except LocalServerError as exc:
            raise CommandError(str(exc)) from exc
        if stopped is None:
            self.stdout.write(f"No local DynamoDB server keeps {path}.")
        else:
            self.stdout.write(
                f"Stopped the local DynamoDB server at {stopped['url']} (pid {stopped['pid']}); "
                f"its tables are saved in {path}."
            )


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt
