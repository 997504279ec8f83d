"""``manage.py dynamo_local``: a local DynamoDB-compatible server in the foreground."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError

from dynamo_app.local import HOST, LocalServer

DEFAULT_PORT = 8001


class Command(BaseCommand):
    help = (
        "Run a local DynamoDB-compatible server (moto, one request at a time) on "
        f"{HOST}. Point another process at it with DYNAMO['ENDPOINT'] = "
        f"'http://{HOST}:<port>'. Stop it with Ctrl-C; its data goes with it unless "
        "--state names a file to keep it in."
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

    def handle(self, *args: Any, port: int, state: str, **options: Any) -> None:
        if not 0 <= port <= 65535:
            raise CommandError(f"--port must be between 0 and 65535, got {port}.")
        try:
            server = LocalServer(port=port, state_file=state or None).start()
        except OSError as exc:
            raise CommandError(
                f"Cannot listen on {HOST}:{port}: {exc.strerror}. Try --port 0."
            ) from exc
        self.stdout.write(f"Local DynamoDB listening on {server.url}")
        if state:
            self.stdout.write(f"Tables kept in {state} ({server.restored} restored).")
        self.stdout.write(f"Use it with DYNAMO['ENDPOINT'] = {server.url!r} (Ctrl-C to stop).")
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            self.stdout.write("Stopped.")
