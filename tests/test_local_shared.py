"""ENDPOINT = "embedded": one store per project, shared by its processes, never
silently split - proved with a tiny project's real ``manage.py`` processes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from dynamo_app.local import server as local
from dynamo_app.local import state as local_state
from dynamo_app.testing import moto_only
from tests.local_project import ROOT, Project

pytestmark = [moto_only, pytest.mark.processes]

NOTES = "from notes.models import Note; print(sorted(n.text for n in Note.objects.scan()))"
ENDPOINT = "from dynamo_app.client.handle import get_handle; print(get_handle().endpoint_url)"
UNVERIFIED = 'DYNAMO["VERIFY_SCHEMA"] = False\n'  # no tables needed to start


@pytest.fixture
def make_project(tmp_path: Path) -> Any:
    made: list[Project] = []

    def make(settings: str = "") -> Project:
        root = tmp_path / f"project{len(made)}"
        root.mkdir()
        made.append(Project(root, settings))
        return made[-1]

    yield make
    for project in made:
        project.close()
        assert project.server() is None


@pytest.fixture
def project(make_project: Any) -> Project:
    return make_project()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=30) as response:
        return json.loads(response.read())


def _wait(predicate: Any, what: str, timeout: float = 60) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if result := predicate():
                return result
        except OSError:
            pass
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def _servers_for(state_file: Path) -> list[str]:
    """The running background servers for ``state_file`` (from ``ps``)."""
    listing = subprocess.run(["ps", "-ww", "-eo", "args"], capture_output=True, text=True).stdout
    return [
        line
        for line in listing.splitlines()
        if "dynamo_app.local.shared" in line and str(state_file) in line
    ]


def test_runserver_shell_and_migrate_share_one_store_that_survives_restarts(project):
    migrated = project.manage("dynamo_migrate")
    assert migrated.returncode == 0, migrated.stderr
    server = project.server()
    assert server is not None  # outlives the command, tables and all

    port = _free_port()
    project.popen("runserver", f"127.0.0.1:{port}")  # with the autoreloader: two processes
    site = f"http://127.0.0.1:{port}"
    _wait(lambda: _get(f"{site}/notes/"), "runserver")
    assert _get(f"{site}/add/web/") == {"added": "web"}
    project.shell("from notes.models import Note; Note.objects.create(text='shell')")
    assert _get(f"{site}/notes/") == {"notes": ["shell", "web"]}

    (project.root / "notes" / "models.py").touch()  # a code reload: a new serving process
    _wait(lambda: "reloading" in project.log.read_text(), "the reload")
    _wait(lambda: _get(f"{site}/notes/") == {"notes": ["shell", "web"]}, "the reloaded site")
    assert project.server()["pid"] == server["pid"]  # one server all along
    assert len(_servers_for(project.state_file)) == 1

    project.close()  # runserver, then the server: everything stopped
    _wait(lambda: _servers_for(project.state_file) == [], "the server's exit")
    assert "['shell', 'web']" in project.shell(NOTES)  # a new server, from the state file
    assert project.server()["pid"] != server["pid"]


def test_processes_starting_at_once_start_one_server(make_project):
    project = make_project(UNVERIFIED)
    (project.root / "notes" / "sub").mkdir()
    starting = [
        project.popen(
            "shell", "-c", ENDPOINT, cwd=project.root / "notes" / "sub" if n % 2 else None
        )
        for n in range(4)
    ]  # half of them from another folder: still the project's one store
    for process in starting:
        assert process.wait(timeout=120) == 0, project.log.read_text()
    urls = {line for line in project.log.read_text().splitlines() if line.startswith("http")}
    assert urls == {project.server()["url"]}
    assert len(_servers_for(project.state_file)) == 1


def test_the_server_stops_when_no_process_has_used_it_for_a_while(tmp_path):
    state = tmp_path / "local.pickle"
    clients = local_state.open_lock(local_state.sidecar(state, ".clients"))
    local_state.flock(clients, exclusive=False)  # this test process uses it
    server = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"from pathlib import Path; from dynamo_app.local.shared import serve; "
            f"serve(Path({str(state)!r}), idle_stop=0.5)",
        ],
        cwd=ROOT,
    )
    try:
        _wait(lambda: local_state.owner(state), "the server")
        time.sleep(1.5)
        assert server.poll() is None  # in use: it stays
        os.close(clients)  # as when the last process using it ends
        assert server.wait(timeout=30) == 0
        assert local_state.owner(state) is None
    finally:
        if server.poll() is None:
            server.kill()


def test_a_server_from_another_moto_version_is_refused(make_project, monkeypatch):
    """A foreground server on the project's state file is used by its processes;
    one running another moto version (another virtualenv) is refused, not split from."""
    project = make_project(UNVERIFIED)
    foreground = local.LocalServer(state_file=project.state_file).start()
    try:
        assert project.shell(ENDPOINT).splitlines()[-1] == foreground.url
    finally:
        foreground.stop()
    moto = local_state.moto_version()
    monkeypatch.setattr(local_state, "moto_version", lambda: "0.0-elsewhere")
    other = local.LocalServer(state_file=project.state_file).start()
    try:
        refused = project.manage("shell", "-c", ENDPOINT)
    finally:
        other.stop()
    assert refused.returncode != 0
    assert "LocalServerError" in refused.stderr
    assert f"runs moto 0.0-elsewhere, this process has moto {moto}" in refused.stderr
    assert "dynamo_local --stop" in refused.stderr


def test_a_file_named_by_mistake_is_refused_and_left_untouched(make_project):
    project = make_project('DYNAMO["LOCAL_STATE_FILE"] = "db.sqlite3"\n')
    sqlite = project.root / "db.sqlite3"
    sqlite.write_bytes(b"SQLite format 3\x00 the project's users")
    refused = project.manage("shell", "-c", NOTES)
    assert refused.returncode != 0
    assert "StateFileError" in refused.stderr and "DYNAMO['LOCAL_STATE_FILE']" in refused.stderr
    assert sqlite.read_bytes() == b"SQLite format 3\x00 the project's users"
    assert not list(project.root.glob("db.sqlite3?*"))  # nothing created beside it


STARTED = """
import sys
from django.core.management import execute_from_command_line

sys.argv[0] = "manage.py"
try:
    execute_from_command_line(sys.argv)
except SystemExit:
    pass
from dynamo_app import handle
print("moto" in sys.modules, handle._handle is not None)
"""


@pytest.mark.parametrize("args", [["dynamo_local", "--help"], ["help", "dynamo_local"], []])
def test_asking_for_help_starts_nothing(project, args):
    done = project.run("-c", STARTED, *args, DJANGO_SETTINGS_MODULE="tinyproj.settings")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1] == "False False"  # no server, no client
    assert not list(project.root.glob(".dynamo-local*"))


def test_dynamo_local_needs_no_aws_credentials(make_project):
    project = make_project('DYNAMO.update(ENDPOINT="http://127.0.0.1:8001", REGION="eu-west-1")\n')
    project.env.update(AWS_SHARED_CREDENTIALS_FILE="/nonexistent", AWS_CONFIG_FILE="/nonexistent")
    process = project.popen("dynamo_local", "--port", "0")
    line = _wait(
        lambda: "listening on" in project.log.read_text() and project.log.read_text(), "the server"
    )
    url = line.split("listening on ", 1)[1].split()[0]
    assert local.answers(url)
    process.send_signal(signal.SIGTERM)  # as `dynamo_local --stop` does
    assert process.wait(timeout=30) == 0
    assert "Stopped." in project.log.read_text()


def test_a_test_run_never_uses_the_projects_store(project):
    done = project.manage("test")
    assert done.returncode == 0, done.stderr
    assert not list(project.root.glob(".dynamo-local*"))


@pytest.mark.parametrize(
    "settings, code",
    [
        ("", "import django; django.setup()"),  # a model in an installed app
        (
            'SESSION_ENGINE = "dynamo_app.sessions"',
            "import django; django.setup(); import dynamo_app.sessions",
        ),
        (
            "",
            "import django; django.setup(); from dynamo_app.client.handle import get_handle; "
            "get_handle()",
        ),
    ],
)
def test_using_dynamo_app_without_it_in_installed_apps_is_an_error(make_project, settings, code):
    apps = '["notes"]' if "sessions" not in settings and "get_handle" not in code else "[]"
    project = make_project(f"INSTALLED_APPS = {apps}\n{settings}\n")
    done = project.python(code)
    assert done.returncode != 0
    assert "NotInstalled" in done.stderr
    assert 'needs "dynamo_app" in INSTALLED_APPS' in done.stderr
