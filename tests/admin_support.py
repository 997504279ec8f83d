"""Shared by the admin tests: the address of an object's change page and the change
form as a user would send it back. (The logged-in superuser, ``root``, and a test
module's own admin site, ``module_urls``, are fixtures: tests/conftest.py.)"""

from __future__ import annotations

from typing import Any

from django.contrib.admin.utils import quote

from dynamo_app import models
from dynamo_app.admin import object_id


def change_url(obj: models.Model) -> str:
    """The change page of ``obj`` on an admin site at /admin/."""
    meta = obj._meta
    return f"/admin/{meta.app_label}/{meta.model_name}/{quote(object_id(obj))}/change/"


def form_data(page: Any, **values: Any) -> dict[str, Any]:
    """The change form as shown (hidden version included), with ``values`` typed in."""
    form = page.context["adminform"].form
    data = {name: form[name].value() for name in form.fields if not form.fields[name].disabled}
    return {k: v for k, v in {**data, **values}.items() if v is not None}
