"""Startup: settings -> handle -> table names -> auto-migrate / verify.

When the schema step runs (docs/howto/schema.md, "Exactly when the startup check runs"):
it runs in every process that will serve or use the models - WSGI/ASGI
workers, ``runserver`` (in the serving child, not the autoreloader's watcher),
``shell``, custom commands - and is skipped for the management commands that
inspect or fix the schema or do not touch DynamoDB at all
(``SCHEMA_EXEMPT_COMMANDS``), and for test runs, which never contact the
configured store at all (``dynamo_app.test.store``). Where it is skipped, so
is the VERIFY_SCHEMA=False warning: it would only be noise there.
"""

from __future__ import annotations

import logging
import os
import sys
from typing import TYPE_CHECKING

from django.apps import AppConfig
from django.utils.translation import ngettext

if TYPE_CHECKING:
    from .conf import DynamoSettings

logger = logging.getLogger("dynamo_app")

SCHEMA_EXEMPT_COMMANDS = frozenset(
    {
        "dynamo_plan",
        "dynamo_migrate",
        "dynamo_local",
        "dynamo_check_unique",
        "check",
        "help",
        "version",
        "makemigrations",
        "migrate",
        "showmigrations",
        "sqlmigrate",
        "collectstatic",
        "makemessages",
        "compilemessages",
        "diffsettings",
        "startapp",
        "startproject",
        "test",
    }
)

# Commands that never talk to DynamoDB and build no client at startup:
# ``dynamo_local`` is the server itself (it needs no AWS credentials), and
# asking for help starts nothing.
NO_CLIENT_COMMANDS = frozenset({"dynamo_local", "help", "version"})


def running_command(argv: list[str] | None = None) -> str | None:
    """The management command this process runs, or None (a server, a script)."""
    argv = sys.argv if argv is None else argv
    program = os.path.basename(argv[0]) if argv else ""
    if program not in ("manage.py", "django-admin", "django-admin.py", "__main__.py"):
        return None
    command = argv[1] if len(argv) > 1 else "help"
    return {"-h": "help", "--help": "help", "--version": "version"}.get(command, command)


def schema_step_applies(argv: list[str] | None = None) -> bool:
    """Whether this process should verify (or auto-migrate) the schema now."""
    argv = sys.argv if argv is None else argv
    command = running_command(argv)
    if command in SCHEMA_EXEMPT_COMMANDS:
        return False
    if command == "runserver" and "--noreload" not in argv and os.environ.get("RUN_MAIN") != "true":
        return False  # the autoreloader's watcher; its serving child does the check
    return True


def run_schema_step(settings: DynamoSettings) -> None:
    """AUTO_MIGRATE, then VERIFY_SCHEMA: the startup half of the schema workflow."""
    from .deploy import schema

    if settings.auto_migrate:  # conf refuses it unless DEBUG is true
        result = schema.migrate()
        for change in result.applied:
            logger.info("dynamo_app: AUTO_MIGRATE %s", change.done)
        undeclared = [c for c in result.reported if c.kind is schema.ChangeKind.UNDECLARED]
        for change in result.reported:
            if change not in undeclared:
                logger.warning("dynamo_app: AUTO_MIGRATE will not do this: %s", change.detail)
        if undeclared:  # harmless leftovers: a line, not a warning on every start
            names = ", ".join(c.declared_name for c in undeclared)
            logger.info(
                ngettext(
                    "dynamo_app: no model or app table declares the table %(names)s under "
                    "TABLE_PREFIX; `python manage.py dynamo_drop_table NAME` deletes it.",
                    "dynamo_app: no model or app table declares the tables %(names)s under "
                    "TABLE_PREFIX; `python manage.py dynamo_drop_table NAME` deletes one.",
                    len(undeclared),
                ),
                {"names": names},
            )
    if settings.verify_schema:
        schema.verify()  # SchemaMismatch: the process refuses to start
    else:
        logger.warning(
            "dynamo_app: DYNAMO['VERIFY_SCHEMA'] is False: deployed tables are not checked "
            "against the models at startup, so a missing table, a changed key or a missing "
            "index shows up only as request errors. Run `python manage.py dynamo_plan --check` "
            "in your deploy pipeline instead."
        )


def connect_permissions(config: AppConfig) -> None:
    """DynamoDB models get content types and permissions after ``migrate``, where
    ``django.contrib.auth`` can grant them, and Django takes those content types
    for live ones (see ``dynamo_app.permissions``)."""
    from django.apps import apps

    if not apps.is_installed("django.contrib.contenttypes"):
        return
    from .permissions import create_permissions, know_dynamo_models

    know_dynamo_models()
    if apps.is_installed("django.contrib.auth"):
        from django.db.models.signals import post_migrate

        post_migrate.connect(
            create_permissions, sender=config, dispatch_uid="dynamo_app.permissions"
        )


class DynamoAppConfig(AppConfig):
    name = "dynamo_app"
    verbose_name = "DynamoDB"

    def ready(self) -> None:
        # checks is imported for its registrations: the system checks.
        from . import app_tables, checks  # noqa: F401
        from .client import handle  # noqa: F401
        from .client.handle import get_handle
        from .conf import get_settings
        from .local import server as local  # noqa: F401
        from .tables import registry

        settings = get_settings()  # a bad section fails here, before anything is served
        connect_permissions(self)
        app_tables.register()
        logger.info(settings.summary())
        command = running_command()
        if command == "test":  # the run's embedded server is its own, never the project's
            local.share_embedded = False
        if not settings.enabled or command in NO_CLIENT_COMMANDS:
            return
        settings.resolver().check(d.declared_name for d in registry.definitions())
        if command == "test":
            from .test.runner import refuse_without_runner

            refuse_without_runner()
        if handle.refused is not None:
            return  # a test run: its own store comes up later; the configured one is never used
        get_handle()  # no region or credentials: fail now, not at the first request
        if schema_step_applies():
            run_schema_step(settings)
