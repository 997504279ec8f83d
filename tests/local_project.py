"""A tiny Django project in a temporary folder, set up as the README says
(``ENDPOINT = "embedded"``), for tests that run its ``manage.py`` in real processes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from dynamo_app import local_shared

ROOT = Path(__file__).resolve().parent.parent

FILES = {
    "manage.py": """
        import os
        import sys

        os.environ["DJANGO_SETTINGS_MODULE"] = "tinyproj.settings"
        from django.core.management import execute_from_command_line

        execute_from_command_line(sys.argv)
    """,
    "tinyproj/__init__.py": "",
    "tinyproj/settings.py": """
        from pathlib import Path

        BASE_DIR = Path(__file__).resolve().parent.parent
        SECRET_KEY = "tiny-not-secret"
        DEBUG = True
        ALLOWED_HOSTS = ["127.0.0.1"]
        USE_TZ = True
        INSTALLED_APPS = ["dynamo_app", "notes"]
        DATABASES = {}
        ROOT_URLCONF = "tinyproj.urls"
        DYNAMO = {"ENABLED": True, "ENDPOINT": "embedded", "TABLE_PREFIX": "tiny-"}
    """,
    "tinyproj/urls.py": """
        from django.http import JsonResponse
        from django.urls import path

        from notes.models import Note


        def add(request, text):
            Note.objects.create(text=text)
            return JsonResponse({"added": text})


        def notes(request):
            return JsonResponse({"notes": sorted(n.text for n in Note.objects.scan())})


        urlpatterns = [path("add/<text>/", add), path("notes/", notes)]
    """,
    "notes/__init__.py": "",
    "notes/models.py": """
        from dynamo_app import models


        class Note(models.Model):
            text = models.StringField(partition_key=True)
    """,
}


class Project:
    """The tiny project at ``root``: run its ``manage.py``, find its state file."""

    def __init__(self, root: Path) -> None:
        self.root = root
        for name, text in FILES.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(textwrap.dedent(text))
        self.state_file = root / local_shared.DEFAULT_STATE_FILE
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("AWS_", "DJANGO_", "DYNAMO_", "PYTEST_"))
        }
        self.env.update(PYTHONPATH=str(ROOT), AWS_EC2_METADATA_DISABLED="true")

    def manage(self, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def shell(self, code: str) -> str:
        """Run ``code`` in ``manage.py shell -c``; its output (the process must succeed)."""
        done = self.manage("shell", "-c", textwrap.dedent(code))
        assert done.returncode == 0, done.stderr
        return done.stdout

    def popen(self, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "manage.py", *args],
            cwd=self.root,
            env=self.env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )

    def server(self) -> dict | None:
        """What the running shared server says about itself, or None."""
        return local_shared.owner(self.state_file.resolve())

    def stop_server(self) -> None:
        local_shared.stop(self.state_file.resolve())
