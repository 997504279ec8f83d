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
adds what is missing.

A content type is stale to Django when its ``model_class()`` is None, and
``manage.py remove_stale_contenttypes`` deletes a stale one with its permissions,
their grants and the admin's history of it. ``model_class()`` asks the app
registry only, so ``know_dynamo_models`` (run by ``ready()`` with the receiver
above) makes it answer a DynamoDB model's content type with the model: the rows
of a model that exists are kept, those of a model deleted from the code are
stale as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ImproperlyConfigured
from django.db import DEFAULT_DB_ALIAS, router

from .models.registry import registered_models

if TYPE_CHECKING:
    from django.contrib.contenttypes.models import ContentType

    from .models.base import Model

__all__ = ["create_permissions", "know_dynamo_models"]


def _installed() -> Iterator[tuple[str, type[Model]]]:
    """Every registered DynamoDB model of an installed app, with its app label."""
    for model in registered_models():
        try:
            label = model._meta.app_label
        except (ImproperlyConfigured, LookupError):
            continue  # in no installed app: nothing can grant it
        yield label, model


def _dynamo_model(app_label: str, model_name: str) -> type[Model] | None:
    """The DynamoDB model a content type (``app_label``, ``model``) is of, or None."""
    for label, model in _installed():
        if (label, model._meta.model_name) == (app_label, model_name):
            return model
    return None


def know_dynamo_models() -> None:
    """Make ``ContentType.model_class()`` return a DynamoDB model where the app
    registry (ORM models only) has none, so Django does not take its content type
    for stale. Idempotent: ``ready()`` may run more than once in tests."""
    from django.contrib.contenttypes.models import ContentType

    django_model_class: Callable[[ContentType], Any] = ContentType.model_class
    if getattr(django_model_class, "knows_dynamo_models", False):
        return

    def model_class(self: ContentType) -> Any:
        return django_model_class(self) or _dynamo_model(self.app_label, self.model)

    model_class.__doc__ = django_model_class.__doc__
    model_class.knows_dynamo_models = True  # type: ignore[attr-defined]
    ContentType.model_class = model_class  # type: ignore[method-assign]


def create_permissions(using: str = DEFAULT_DB_ALIAS, **kwargs: Any) -> None:
    """Make the missing content types and default permissions of DynamoDB models
    (a ``post_migrate`` receiver; also callable on its own)."""
    from django.contrib.auth.models import Permission
    from django.contrib.contenttypes.models import ContentType

    if not router.allow_migrate_model(using, Permission):
        return
    for app_label, model in _installed():
        meta = model._meta
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
