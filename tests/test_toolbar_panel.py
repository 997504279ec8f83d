"""The django-debug-toolbar panel: rendered in the demo project as a developer
runs it (DEBUG on, the toolbar installed), and a clear error without the extra."""

from __future__ import annotations

import importlib
import json
import os
import re
import sys

import pytest
from django.conf import settings

from dynamo_app.exceptions import MissingDependency
from dynamo_app.testing import TEST_CREDENTIALS
from tests.process_support import run_python

# In the demo project, with DEBUG: a team page, then the panel as the toolbar fetches it.
VISIT = """
import json, re
import django
django.setup()
from django.test import Client
client = Client()
assert client.post("/teams/new/", {"name": "Owls", "city": "Nagoya"}).status_code == 302
page = client.get("/teams/owls/")
request_id = re.search(r'data-request-id="([^"]+)"', page.content.decode()).group(1)
panel = client.get(
    "/__debug__/render_panel/", {"request_id": request_id, "panel_id": "RequestsPanel"}
)
print(json.dumps({"page": page.content.decode(), "panel": panel.json()["content"]}))
"""


def test_the_panel_lists_the_pages_requests_in_the_demo(dynamo_db):
    environ = {k: v for k, v in os.environ.items() if k not in ("PYTEST_VERSION", "DJANGO_DEBUG")}
    environ.update(
        DJANGO_SETTINGS_MODULE="project.settings",
        DATABASE_URL="sqlite://:memory:",
        DJANGO_ALLOWED_HOSTS="testserver",
        DYNAMO_ENDPOINT=settings.DYNAMO["ENDPOINT"],
        DYNAMO_REGION=settings.DYNAMO["REGION"],
        DYNAMO_ACCESS_KEY_ID=TEST_CREDENTIALS["ACCESS_KEY_ID"],
        DYNAMO_SECRET_ACCESS_KEY=TEST_CREDENTIALS["SECRET_ACCESS_KEY"],
        DYNAMO_TABLE_PREFIX="panel-",  # created at startup: AUTO_MIGRATE is on with DEBUG
    )
    done = run_python("-c", VISIT, env=environ)
    assert done.returncode == 0, done.stderr
    shown = json.loads(done.stdout.splitlines()[-1])
    assert 'id="djDebug"' in shown["page"] and "RequestsPanel" in shown["page"]
    assert 'data-default-show="false"' in shown["page"]  # collapsed: it covers no link
    panel = shown["panel"]
    # The team page reads the team, its roster and its events with one Query of the shared
    # Roster table, then adds the view to a shard of its counter and reads the shards back.
    assert "DynamoDB requests, " in panel and " capacity units" in panel
    assert "Query" in panel and "panel-roster" in panel and not re.search(r"\bGetItem", panel)
    assert "UpdateItem" in panel and "BatchGetItem" in panel and "panel-dynamo_counters" in panel
    # Parameters shown with names, values masked (the team id is a key value).
    assert "KeyConditionExpression" in panel and "********" in panel
    assert "owls" not in panel and "Nagoya" not in panel
    # RequestCountMiddleware's line counts the same requests, the session's write included.
    (line,) = [x for x in done.stderr.splitlines() if x.startswith("GET /teams/owls/ ")]
    counted = re.search(r": (\d+) DynamoDB requests?, ", line)
    shown = re.search(r"(\d+) DynamoDB requests?, ", panel)
    assert counted and shown and counted[1] == shown[1], (line, panel)
    assert "panel-dynamo_sessions" in panel


def test_without_the_toolbar_the_panel_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "debug_toolbar.panels", None)  # import fails
    monkeypatch.delitem(sys.modules, "dynamo_app.contrib.debug_toolbar", raising=False)
    with pytest.raises(MissingDependency, match=r"django-dynamo-app\[debug-toolbar\]"):
        importlib.import_module("dynamo_app.contrib.debug_toolbar")
