"""Django system checks (``manage.py check``, tag ``dynamo``)."""

from __future__ import annotations

from typing import Any

from django.core import checks


@checks.register("dynamo")
def check_models(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Every registered model's declarations, checked before the first request."""
    from .models.checks import check_models as model_problems

    return model_problems()
