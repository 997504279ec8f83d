"""Django system checks (``manage.py check``, tag ``dynamo``)."""

from __future__ import annotations

from typing import Any

from django.core import checks


@checks.register("dynamo")
def check_models(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Every registered model's declarations, checked before the first request."""
    from .models.checks import model_problems
    from .models.registry import registered_models

    return [
        checks.Error(problem.message, hint=problem.hint or None, obj=model, id=problem.id)
        for model in registered_models()
        for problem in model_problems(model)
    ]


@checks.register("dynamo", checks.Tags.admin)
def check_admin_classes(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """A DynamoDB model registered with Django's plain ``ModelAdmin`` (the default
    of ``admin.site.register(Model)``) would pass Django's admin checks, then answer
    its change list with a 500: refused here, before the first request."""
    from django.apps import apps

    if not apps.is_installed("django.contrib.admin"):
        return []
    from django.contrib.admin.sites import all_sites

    from .admin import DynamoModelAdmin
    from .models.base import Model

    return [
        checks.Error(
            f"{model._meta.label} is a DynamoDB model registered on the admin site "
            f"{site.name!r} with {type(model_admin).__name__}, a Django ModelAdmin for "
            "ORM models.",
            hint="Register it with dynamo_app.admin.DynamoModelAdmin: "
            "admin.site.register(Model, DynamoModelAdmin), or subclass it.",
            obj=type(model_admin),
            id="dynamo.E305",
        )
        for site in all_sites
        for model, model_admin in site._registry.items()
        if issubclass(model, Model) and not isinstance(model_admin, DynamoModelAdmin)
    ]


@checks.register("dynamo")
def check_middleware_order(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``RequestCountMiddleware`` counts what runs inside it: listed after
    ``SessionMiddleware``, its line would miss the DynamoDB session's read and
    write, which the debug toolbar's panel counts."""
    from django.conf import settings

    middleware = list(getattr(settings, "MIDDLEWARE", None) or ())
    counting = "dynamo_app.middleware.RequestCountMiddleware"
    sessions = "django.contrib.sessions.middleware.SessionMiddleware"
    if (
        counting not in middleware
        or sessions not in middleware
        or getattr(settings, "SESSION_ENGINE", "") != "dynamo_app.sessions"
        or middleware.index(counting) < middleware.index(sessions)
    ):
        return []
    return [
        checks.Warning(
            f"{counting} is listed after {sessions}, so its log line misses the session's "
            "DynamoDB requests (the debug toolbar's panel counts them).",
            hint="Move it before SessionMiddleware: first in MIDDLEWARE, or right after "
            "debug_toolbar.middleware.DebugToolbarMiddleware.",
            id="dynamo.W001",
        )
    ]
