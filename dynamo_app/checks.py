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
