"""A tiny Django project in a temporary folder, set up as the docs say
(``ENDPOINT = "embedded"``), for tests that run its ``manage.py`` in real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

from dynamo_app.local import shared as local_shared

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

    def __init__(self, root: Path, settings: str = "") -> None:
        """``settings``: lines added at the end of the project's settings module."""
        self.root = root
        for name, text in FILES.items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_text(textwrap.dedent(text))
        with (root / "tinyproj/settings.py").open("a") as file:
            file.write(textwrap.dedent(settings))
        self.state_file = (root / local_shared.DEFAULT_STATE_FILE).resolve()
        self.log = root / "processes.log"
        self.processes: list[subprocess.Popen[str]] = []
        self.env = {
            key: value
            for key, value in os.environ.items()
            if not key.startswith(("AWS_", "DJANGO_", "DYNAMO_", "PYTEST_"))
        }
        self.env.update(
            PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", AWS_EC2_METADATA_DISABLED="true"
        )

    def manage(self, *args: str) -> subprocess.CompletedProcess[str]:
        return self.run("manage.py", *args)

    def python(self, code: str) -> subprocess.CompletedProcess[str]:
        """Run ``code`` in a Python process with the project's settings."""
        return self.run("-c", textwrap.dedent(code), DJANGO_SETTINGS_MODULE="tinyproj.settings")

    def run(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, *args],
            cwd=self.root,
            env={**self.env, **env},
            capture_output=True,
            text=True,
            timeout=120,
        )

    def shell(self, code: str) -> str:
        """Run ``code`` in ``manage.py shell -c``; its output (the process must succeed)."""
        done = self.manage("shell", "-c", textwrap.dedent(code))
        assert done.returncode == 0, done.stderr
        return done.stdout

    def popen(self, *args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
        """``manage.py *args`` in the background (in a process group of its own,
        ended by ``close()``), its output in ``self.log``."""
        process = subprocess.Popen(
            [sys.executable, self.root / "manage.py", *args],
            cwd=cwd or self.root,
            env=self.env,
            stdout=self.log.open("a"),
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,
        )
        self.processes.append(process)
        return process

    def server(self) -> dict[str, Any] | None:
        """What the project's running shared server says about itself, or None."""
        return local_shared.owner(self.state_file)

    def stop_server(self) -> None:
        local_shared.stop(self.state_file)

    def close(self) -> None:
        """End what the test started: background commands, then the server."""
        for process in self.processes:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=30)
        self.stop_server()
