"""System checks of every model: the declaration and its declared queries.

Class creation already refuses a wrong model; these checks run the same
rules again under ``manage.py check`` (tag ``dynamo``), so a model changed
after creation (a query or index added at runtime, a field swapped in a
test) is reported with a check id that ``SILENCED_SYSTEM_CHECKS`` knows.
"""

from __future__ import annotations

from django.core import checks

from .base import registered_models
from .declared import check_declared_queries
from .options import Options


def check_models() -> list[checks.CheckMessage]:
    messages: list[checks.CheckMessage] = []
    for model in registered_models():
        meta = Options(model, model._meta.meta, model._meta.fields, model._meta.declared_queries)
        for problem in meta.problems + check_declared_queries(model):
            messages.append(
                checks.Error(problem.message, hint=problem.hint or None, obj=model, id=problem.id)
            )
    return messages
