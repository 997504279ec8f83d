"""Content types and ``view``/``add``/``change``/``delete`` permissions for
DynamoDB models, so ``django.contrib.auth`` (and the admin) can grant them.

Django makes these rows after ``migrate`` (``post_migrate``) for the models of
its app registry, which holds ORM models only: a DynamoDB model has no SQL
table and is not there. ``create_permissions`` makes the same rows for every
registered DynamoDB model whose app is installed (``ContentType(app_label,
model)`` and ``Permission(codename="view_player", ...)``, as Django names
them); ``DynamoAppConfig.ready()`` connects it to ``post_migrate`` when
``django.contrib.auth`` and ``django.contrib.contenttypes`` are installed, so
``manage.py migrate`` (and a test database's creation) makes them. It only
adds what is missing. Careful: ``manage.py remove_stale_contenttypes`` counts
these content types as stale (no ORM model) and would delete them with their
permissions and grants; run ``migrate`` again to recreate the rows, or pass
``--include-stale-apps`` only for apps that hold no DynamoDB model.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, router

from .models.registry import registered_models

__all__ = ["create_permissions"]


def create_permissions(using: str = DEFAULT_DB_ALIAS, **kwargs: Any) -> None:
    """Make the missing content types and default permissions of DynamoDB models
    (a ``post_migrate`` receiver; also callable on its own)."""
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType

    if not router.allow_migrate_model(using, Permission):
        return
    for model in registered_models():
        meta = model._meta
        try:
            app_label = meta.app_label
        except (ImproperlyConfigured, LookupError):
            continue  # in no installed app: nothing can grant it
        content_type, _ = ContentType.objects.db_manager(using).get_or_create(
            app_label=app_label, model=meta.model_name
        )
        existing = set(
            Permission.objects.using(using)
            .filter(content_type=content_type)
            .values_list("codename", flat=True)
        )
        Permission.objects.using(using).bulk_create(
            Permission(
                codename=f"{action}_{meta.model_name}",
                name=f"Can {action} {meta.verbose_name}",
                content_type=content_type,
            )
            for action in ("add", "change", "delete", "view")
            if f"{action}_{meta.model_name}" not in existing
        )
