"""``manage.py dynamo_drop_table NAME``: delete one table nothing declares any more,
in development only.

A model removed under ``AUTO_MIGRATE`` leaves its development table behind
(``dynamo_migrate`` never deletes one); this deletes that one table, after a
confirmation, and leaves the rest of the development data as it is. It refuses
a declared table, and any store but a local one with ``DEBUG`` on: a shared or
production account's tables belong to its infrastructure tool.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from dynamo_app.client.handle import get_handle
from dynamo_app.conf import get_settings
from dynamo_app.deploy.schema import table_names
from dynamo_app.exceptions import DynamoError
from dynamo_app.tables import registry


class Command(BaseCommand):
    help = (
        "Delete one table that no model or app table declares (dynamo_plan lists it as "
        "undeclared; NAME as listed there, without TABLE_PREFIX), with every item in it. "
        "Development only: it refuses unless DEBUG is on and DYNAMO['ENDPOINT'] is local "
        "('embedded' or a 127.0.0.1/localhost URL). Asks for confirmation unless --noinput."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("name", help="the table's name without TABLE_PREFIX")
        parser.add_argument(
            "--noinput",
            "--no-input",
            action="store_false",
            dest="interactive",
            help="do not ask for confirmation",
        )

    def handle(self, *args: Any, name: str, interactive: bool, **options: Any) -> None:
        section = get_settings()
        if not settings.DEBUG or not section.local:
            raise CommandError(
                "dynamo_drop_table deletes data, so it runs only in development: with DEBUG "
                "on and a local DYNAMO['ENDPOINT'] ('embedded' or http://127.0.0.1:<port>). "
                "Delete a table of another account with your infrastructure tool."
            )
        if name in registry:
            raise CommandError(
                f"Table {name!r} is declared (by a model or an app table): dynamo_drop_table "
                "deletes only tables nothing declares. Remove its model first."
            )
        try:
            handle = get_handle()
            deployed = handle.table_name(name)
            if deployed not in table_names(handle):
                raise CommandError(
                    f"There is no table {deployed!r}: `python manage.py dynamo_plan` lists "
                    "the undeclared tables under TABLE_PREFIX."
                )
            if interactive:
                answer = input(
                    f"Delete table {deployed!r} and every item in it? This cannot be undone.\n"
                    "Type 'yes' to continue, or 'no' to cancel: "
                )
                if answer != "yes":
                    self.stdout.write("Cancelled: nothing was deleted.")
                    return
            handle.call("delete_table", TableName=deployed)
        except DynamoError as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(self.style.SUCCESS(f"Deleted table {deployed!r}."))
