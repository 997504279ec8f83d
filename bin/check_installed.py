"""Run by bin/check-dist in a clean venv holding the built distribution and its
runtime dependencies only: what a user gets from the plain install."""

import importlib
import pkgutil
import sys
from importlib import resources
from pathlib import Path

import django
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

settings.configure(
    BASE_DIR=Path.cwd(),  # a temporary folder: where the embedded server would keep its tables
    INSTALLED_APPS=["dynamo_app"],
    DYNAMO={"ENABLED": True, "ENDPOINT": "embedded", "REGION": "us-east-1"},
)

import dynamo_app  # noqa: E402

where = Path(dynamo_app.__file__).parent
assert where.is_relative_to(sys.prefix), f"imported {where}, not the installed copy"
assert resources.files("dynamo_app").joinpath("py.typed").is_file(), "py.typed is missing"

# The plain install has no moto: startup with the embedded server names the extra.
try:
    django.setup()
except ImproperlyConfigured as exc:
    assert type(exc).__name__ == "MissingDependency", repr(exc)
    assert 'pip install "django-dynamo-app[local]"' in str(exc), str(exc)
else:
    sys.exit("the embedded server started without moto installed")

# The debug-toolbar panel, without its extra, names the extra; its template is shipped.
PANEL = "dynamo_app.contrib.debug_toolbar"
try:
    importlib.import_module(PANEL)
except ImproperlyConfigured as exc:
    assert type(exc).__name__ == "MissingDependency", repr(exc)
    assert 'pip install "django-dynamo-app[debug-toolbar]"' in str(exc), str(exc)
else:
    sys.exit("the debug-toolbar panel imported without django-debug-toolbar installed")
template = "templates/dynamo_app/debug_toolbar_panel.html"
assert resources.files("dynamo_app").joinpath(template).is_file(), f"{template} is missing"
# So are the admin's (dynamo_app.admin).
for page in ("change_list", "delete_confirmation", "delete_selected_confirmation", "unavailable"):
    template = f"templates/dynamo_app/admin/{page}.html"
    assert resources.files("dynamo_app").joinpath(template).is_file(), f"{template} is missing"

# Every other module imports, dynamo_app.testing included (its helpers need no pytest; the
# fixtures it loads under pytest, dynamo_app.test.plugin, need the test extra;
# dynamo_app.contrib.rest_framework and the fields' serializer helpers need the drf extra,
# and say so).
DRF_MODULES = ("dynamo_app.contrib.rest_framework", "dynamo_app.models.serializerfields")
EXTRAS = {"dynamo_app.test.plugin", *DRF_MODULES, PANEL}
modules = [
    m.name
    for m in pkgutil.walk_packages(dynamo_app.__path__, "dynamo_app.")
    if m.name not in EXTRAS
]
for name in modules:
    importlib.import_module(name)
for name in DRF_MODULES:
    try:
        importlib.import_module(name)
    except ImproperlyConfigured as exc:
        assert 'pip install "django-dynamo-app[drf]"' in str(exc), str(exc)
    else:
        sys.exit(f"{name} imported without Django REST framework")
print(f"ok: {len(modules)} modules from {where}, py.typed, the [local] [debug-toolbar] [drf] hints")
