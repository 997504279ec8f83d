"""Every concrete model class defined so far, by label: the latest definition of each.

``ModelBase`` registers each concrete model; the checks, commands and PartiQL's
``{ModelName}`` placeholders look models up here. A leaf, so any of them can
import it without importing the model machinery.
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .base import Model

__all__ = ["register_model", "registered_models"]

_models: dict[str, type[Model]] = {}
_lock = threading.Lock()


def register_model(model: type[Model]) -> None:
    with _lock:
        _models[model._meta.label] = model


def registered_models() -> list[type[Model]]:
    """Every concrete model class defined so far (the latest definition of each)."""
    with _lock:
        return list(_models.values())
