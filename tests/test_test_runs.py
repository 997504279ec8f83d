"""Test runs never touch the configured store.

``manage.py test`` and ``pytest`` run as real processes, on the demo project and
on a fresh one, with settings pointing at a development store that holds data:
a live server behind a door that counts every request (as a URL, or as AWS
through ``AWS_ENDPOINT_URL_DYNAMODB``), or the embedded server's
``LOCAL_STATE_FILE``. After the run the data is the same, the door saw no
request, the state file is byte for byte the same, and the tests inside the run
saw empty tables of a store of their own.
"""

from __future__ import annotations

import contextlib
import http.server
import json
import os
import subprocess
import sys
import textwrap
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from django.core.exceptions import ImproperlyConfigured

from dynamo_app.test import runner, store

REPO = Path(__file__).resolve().parent.parent
REGIONS = ("us-east-1", "eu-west-1")
DEV_CREDENTIALS = {"aws_access_key_id": "dev", "aws_secret_access_key": "dev"}
TEAMS = 16

# A development store in a process of its own (moto's data is per process).
DEV_STORE = """
import sys
from dynamo_app.local.server import LocalServer
server = LocalServer(state_file=sys.argv[1] or None).start()
print(server.url, flush=True)
sys.stdin.read()
server.stop()
"""


@contextlib.contextmanager
def dev_store(state_file: Path | None = None) -> Iterator[str]:
    """A development store with the demo's and the fresh project's tables and data."""
    command = [sys.executable, "-c", DEV_STORE, str(state_file or "")]
    process = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=clean_env()
    )
    try:
        url = process.stdout.readline().strip()  # type: ignore[union-attr]
        assert url.startswith("http://127.0.0.1:"), url
        for region in REGIONS:
            seed(client(url, region))
        yield url
    finally:
        process.stdin.close()  # type: ignore[union-attr]
        process.wait(timeout=60)


def client(url: str, region: str) -> Any:
    return boto3.client("dynamodb", endpoint_url=url, region_name=region, **DEV_CREDENTIALS)


def seed(dynamo: Any) -> None:
    key = [{"AttributeName": "league", "KeyType": "HASH"}]
    key.append({"AttributeName": "team_id", "KeyType": "RANGE"})
    attributes = [{"AttributeName": n, "AttributeType": "S"} for n in ("league", "team_id")]
    dynamo.create_table(
        TableName="demo-team",
        KeySchema=key,
        AttributeDefinitions=attributes,
        BillingMode="PAY_PER_REQUEST",
    )
    for n in range(TEAMS):
        item = {"league": {"S": "demo"}, "team_id": {"S": f"team-{n}"}, "name": {"S": f"T{n}"}}
        dynamo.put_item(TableName="demo-team", Item=item)
    dynamo.create_table(
        TableName="fresh-note",
        KeySchema=[{"AttributeName": "note_id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "note_id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    item = {"note_id": {"S": "n1"}, "text": {"S": "development"}}
    dynamo.put_item(TableName="fresh-note", Item=item)


def contents(url: str) -> dict[str, Any]:
    """Every table and item of the store, in every region used here."""
    found = {}
    for region in REGIONS:
        dynamo = client(url, region)
        for name in dynamo.list_tables()["TableNames"]:
            items = dynamo.scan(TableName=name, ConsistentRead=True)["Items"]
            found[f"{region}/{name}"] = sorted(json.dumps(i, sort_keys=True) for i in items)
    return found


class CountingDoor(http.server.ThreadingHTTPServer):
    """The development store's only way in: records every request, then forwards it."""

    def __init__(self, target: str) -> None:
        super().__init__(("127.0.0.1", 0), _Forward)
        self.target = target
        self.requests: list[str] = []
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Forward(http.server.BaseHTTPRequestHandler):
    server: CountingDoor

    def do_POST(self) -> None:
        self.server.requests.append(self.headers.get("X-Amz-Target") or self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        skip = {"host", "content-length", "connection"}
        headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
        request = urllib.request.Request(
            self.server.target + self.path, data=body, headers=headers, method=self.command
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                status, data, sent = response.status, response.read(), response.headers
        except urllib.error.HTTPError as error:
            status, data, sent = error.code, error.read(), error.headers
        self.send_response(status)
        for name, value in sent.items():
            if name.lower() not in {"content-length", "connection", "transfer-encoding"}:
                self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST

    def log_message(self, *args: Any) -> None:
        pass


@contextlib.contextmanager
def untouched(store: str) -> Iterator[CountingDoor]:
    """A counting door to ``store`` for the block; after it, no request came
    through and the store holds what it held."""
    before = contents(store)
    counting = CountingDoor(store)
    try:
        yield counting
    finally:
        counting.shutdown()
        counting.server_close()
    assert counting.requests == []
    assert contents(store) == before


def clean_env(**extra: str) -> dict[str, str]:
    """This environment without the suite's own settings and engine choice."""
    keep = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DYNAMO_", "DJANGO_", "PYTEST_", "AWS_"))
    }
    return {**keep, "AWS_EC2_METADATA_DISABLED": "true", **extra}


def run(command: list[str], cwd: Path, **environ: str) -> str:
    result = subprocess.run(
        [sys.executable, *command],
        cwd=cwd,
        env=clean_env(**environ),
        capture_output=True,
        text=True,
        timeout=300,
    )
    output = result.stdout + result.stderr
    return f"exit {result.returncode}\n{output}"


@pytest.fixture(scope="module")
def live_store() -> Iterator[str]:
    with dev_store() as url:
        yield url


@pytest.fixture(scope="module")
def state_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The embedded server's state file after a development session: data, then stopped."""
    path = tmp_path_factory.mktemp("dev") / ".dynamo-local.pickle"
    with dev_store(path):
        pass
    assert path.stat().st_size > 0
    return path


def file_state(path: Path) -> tuple[Any, ...]:
    """The file's bytes and identity, and what else its directory holds (a lock,
    a temporary copy, an ``*.unreadable`` file would show)."""
    stat = path.stat()
    return path.read_bytes(), stat.st_ino, stat.st_mtime_ns, sorted(os.listdir(path.parent))


# --- the demo project: manage.py test ------------------------------------------


@pytest.mark.processes
def test_demo_manage_py_test_leaves_a_development_store_untouched(live_store, tmp_path):
    assert len(contents(live_store)["us-east-1/demo-team"]) == TEAMS
    with untouched(live_store) as counting:
        environ = {
            "DYNAMO_ENDPOINT": counting.url,
            "DYNAMO_REGION": "us-east-1",
            "DYNAMO_ACCESS_KEY_ID": "dev",
            "DYNAMO_SECRET_ACCESS_KEY": "dev",
            "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        }
        # The demo's own tests: without a label, discovery also finds the suite's
        # django.test.TestCase classes in tests/.
        output = run(["manage.py", "test", "project"], REPO, **environ)
        assert output.startswith("exit 0"), output
        assert "Ran 4 tests" in output and "\nOK" in output


@pytest.mark.processes
def test_demo_manage_py_test_never_opens_the_state_file(state_file, tmp_path):
    before = file_state(state_file)
    environ = {
        "DYNAMO_ENDPOINT": "embedded",
        "DYNAMO_LOCAL_STATE_FILE": str(state_file),
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
    }
    output = run(["manage.py", "test", "project.roster.tests.SampleTeamsTests"], REPO, **environ)
    assert output.startswith("exit 0"), output
    assert "Ran 2 tests" in output
    assert "started the embedded local DynamoDB" not in output
    assert file_state(state_file) == before


# --- a fresh project: manage.py test, with and without the runner, and pytest ---

FRESH = {
    "manage.py": """
        import os, sys
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "fresh.settings")
        from django.core.management import execute_from_command_line
        execute_from_command_line(sys.argv)
    """,
    "fresh/__init__.py": "",
    "fresh/settings.py": """
        import os
        SECRET_KEY = "fresh-project"
        DEBUG = True
        USE_TZ = True
        INSTALLED_APPS = ["django.contrib.contenttypes", "dynamo_app", "notes"]
        DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
        DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
        DYNAMO = {
            "ENABLED": True,
            "ENDPOINT": os.environ["FRESH_ENDPOINT"],
            "REGION": os.environ["FRESH_REGION"],
            "ACCESS_KEY_ID": "dev",
            "SECRET_ACCESS_KEY": "dev",
            "TABLE_PREFIX": "fresh-",
            "AUTO_MIGRATE": True,
            "LOCAL_STATE_FILE": os.environ.get("FRESH_STATE_FILE", ""),
        }
        if os.environ.get("FRESH_RUNNER"):
            TEST_RUNNER = "dynamo_app.test.runner.DynamoTestRunner"
    """,
    "notes/__init__.py": "",
    "notes/models.py": """
        from dynamo_app import models

        class Note(models.Model):
            note_id = models.StringField(partition_key=True)
            text = models.StringField()
    """,
    # Django's way: plain test cases, no fixture, no change for DynamoDB.
    "notes/tests.py": """
        from django.test import SimpleTestCase, TestCase, TransactionTestCase
        from dynamo_app.exceptions import AccessNotAllowed
        from notes.models import Note

        class NoteTests(TestCase):
            def test_1_create(self):
                Note.objects.create(note_id="n1", text="test")  # AlreadyExists on the dev store

            def test_2_starts_with_empty_tables(self):
                self.assertEqual(list(Note.objects.scan()), [])
                Note.objects.create(note_id="n1", text="test")

        class TransactionalNoteTests(TransactionTestCase):
            def test_starts_with_empty_tables(self):
                self.assertEqual(list(Note.objects.scan()), [])
                Note.objects.create(note_id="n1", text="test")

        class ClassWideDataTests(TestCase):
            @classmethod
            def setUpTestData(cls):
                Note.objects.create(note_id="n2", text="class-wide")

            def test_1_changes_the_class_data(self):
                self.assertEqual([n.note_id for n in Note.objects.scan()], ["n2"])
                Note.objects.get(note_id="n2").delete()

            def test_2_starts_with_it_again(self):
                self.assertEqual([n.note_id for n in Note.objects.scan()], ["n2"])

        class NoDatabaseTests(SimpleTestCase):
            def test_is_refused(self):
                with self.assertRaisesMessage(AccessNotAllowed, "DynamoDB access not allowed"):
                    Note.objects.get(note_id="n1")
    """,
    # pytest's way: the fixture, or the mark; nothing else reaches DynamoDB.
    "notes/test_pytest_style.py": """
        import pytest
        from dynamo_app.exceptions import AccessNotAllowed
        from notes.models import Note

        def test_with_the_fixture(dynamo_db):
            Note.objects.create(note_id="n1", text="test")

        def test_with_the_fixture_again(dynamo_db):
            assert list(Note.objects.scan()) == []
            Note.objects.create(note_id="n1", text="test")

        @pytest.mark.dynamo_db
        def test_with_the_mark():
            Note.objects.create(note_id="n1", text="test")

        def test_without_the_fixture_is_refused_naming_it():
            with pytest.raises(AccessNotAllowed, match='use the "dynamo_db" fixture'):
                Note.objects.get(note_id="n1")
    """,
    "pytest.ini": """
        [pytest]
        DJANGO_SETTINGS_MODULE = fresh.settings
        python_files = tests.py test_*.py
        addopts = -p no:cacheprovider
    """,
}


@pytest.fixture(scope="module")
def fresh(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("fresh")
    for name, text in FRESH.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(text).lstrip())
    return root


# Not marked `processes`, unlike its neighbours: the runner leans on Django's and
# unittest's private internals (its --parallel workers), so every Python/Django line runs it.
@pytest.mark.parametrize("processes", ["1", "2"])
def test_fresh_project_manage_py_test_with_the_runner(fresh, live_store, processes):
    """Each --parallel worker gets a store of its own, as it gets a database."""
    with untouched(live_store) as counting:
        environ = {"FRESH_ENDPOINT": counting.url, "FRESH_REGION": "us-east-1", "FRESH_RUNNER": "1"}
        output = run(["manage.py", "test", "--parallel", processes], fresh, **environ)
        assert output.startswith("exit 0"), output
        assert "Ran 6 tests" in output


@pytest.mark.processes
def test_fresh_project_manage_py_test_without_the_runner_refuses_dynamodb(fresh, live_store):
    """The one settings line forgotten, and the configured store is AWS: the run
    fails, naming the line, and AWS hears nothing."""
    with untouched(live_store) as counting:
        environ = {"FRESH_ENDPOINT": "", "FRESH_REGION": "eu-west-1"}
        environ["AWS_ENDPOINT_URL_DYNAMODB"] = counting.url
        output = run(["manage.py", "test"], fresh, **environ)
        assert output.startswith("exit 1"), output
        assert "FAILED (errors=4)" in output  # 3 tests and ClassWideDataTests' class setup
        assert output.count("TEST_RUNNER = 'dynamo_app.test.runner.DynamoTestRunner'") == 4


@pytest.mark.processes
def test_fresh_project_pytest_against_aws_settings(fresh, live_store):
    with untouched(live_store) as counting:
        environ = {"FRESH_ENDPOINT": "", "FRESH_REGION": "eu-west-1"}
        environ["AWS_ENDPOINT_URL_DYNAMODB"] = counting.url
        output = run(["-m", "pytest", "-q", "-p", "no:xdist"], fresh, **environ)
        assert output.startswith("exit 0"), output
        assert "10 passed" in output


@pytest.mark.processes
def test_fresh_project_pytest_with_the_embedded_state_file(fresh, state_file):
    """The documented development settings: embedded server, state file with data."""
    before = file_state(state_file)
    environ = {
        "FRESH_ENDPOINT": "embedded",
        "FRESH_REGION": "",
        "FRESH_STATE_FILE": str(state_file),
    }
    output = run(["-m", "pytest", "-q", "-p", "no:xdist"], fresh, **environ)
    assert output.startswith("exit 0"), output
    assert "10 passed" in output
    assert file_state(state_file) == before


# --- a throwaway server only ---------------------------------------------------


def test_a_test_endpoint_that_is_the_configured_one_is_refused(monkeypatch):
    from django.test import override_settings

    monkeypatch.setattr(store, "EXTERNAL_ENDPOINT", "http://127.0.0.1:8001")
    with override_settings(DYNAMO={"ENABLED": True, "ENDPOINT": "http://127.0.0.1:8001/"}):
        with pytest.raises(ImproperlyConfigured, match="DYNAMO_TEST_ENDPOINT is the configured"):
            store.TestStore().start()


def test_parallel_workers_do_not_share_a_test_endpoint(monkeypatch):
    monkeypatch.setattr(runner, "EXTERNAL_ENDPOINT", "http://127.0.0.1:4566")
    with pytest.raises(ImproperlyConfigured, match="--parallel with DYNAMO_TEST_ENDPOINT"):
        runner.DynamoTestRunner(parallel=2).setup_databases(aliases=set())
