"""``manage.py shell``: Django's, with the DynamoDB models imported too.

Django 5.2's shell imports every ORM model of the installed apps
(``get_auto_imports()``, its documented hook); the DynamoDB models are not ORM
models, so they are added here, before the ORM's (an ORM model of the same name
keeps the name, as an earlier app's model does in Django's own list).
``--no-imports`` turns both off.
"""

from __future__ import annotations

from django.core.management.commands import shell

from dynamo_app.models.registry import registered_models


class Command(shell.Command):
    def get_auto_imports(self) -> list[str]:
        ours = [
            f"{model.__module__}.{model.__name__}"
            for model in reversed(registered_models())  # the first of a name wins, as in Django
            if model.__qualname__ == model.__name__  # importable by its module path
        ]
        return [*ours, *(super().get_auto_imports() or ())]
