"""The suite uses dynamo_app.testing's fixtures exactly as a user's project would."""

import os

import pytest

# Never let boto3's credential chain probe an instance-metadata address.
os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The engine leg runs only the tests that use the run's store (tests/engine_leg.py)."""
    from tests.engine_leg import select

    select(config, items)


@pytest.fixture(autouse=True)
def handle_calls(monkeypatch, request):
    """The operations sent through the handle in this test (tests/app_operations.py);
    any, in a test that the engine leg leaves out, fails it (tests/engine_leg.py)."""
    from dynamo_app.client.handle import Handle
    from tests.app_operations import Recorded, recording
    from tests.engine_leg import check_sent

    recorded = Recorded()
    monkeypatch.setattr(Handle, "call", recording(Handle.call, recorded))
    yield recorded
    check_sent(request.node, recorded.every)


@pytest.fixture(autouse=True)
def app_operations(handle_calls):
    """The operations dynamo_app sends in this test; one the IAM policy does not
    list fails the test."""
    from dynamo_app.deploy.iam import OPERATIONS

    sent = handle_calls.app
    yield sent
    unlisted = sent - {op.name for op in OPERATIONS}
    assert not unlisted, (
        f"dynamo_app sent {sorted(unlisted)}, which dynamo_app.deploy.iam.OPERATIONS does not "
        "list: add it there (with the IAM actions that authorise it), so the IAM policy allows it."
    )


@pytest.fixture
def declared():
    """``declared(definition)`` registers a table definition for this test only; the
    tables of models the test declares (classes local to it) are unregistered after
    it too. Not those with ``Meta.unique`` or ``Meta.stream``: the model classes stay
    in dynamo_app's model registry, where the integrity check and the stream
    consumer of later tests read their tables."""
    from dynamo_app.models.registry import registered_models
    from dynamo_app.tables import registry

    before = {d.declared_name: d for d in registry.definitions()}
    models_before = set(registered_models())
    names = []

    def register(definition):
        registry.register(definition)
        names.append(definition.declared_name)
        return definition

    yield register
    local = [m for m in registered_models() if m not in models_before]
    names += [
        m._meta.table_name
        for m in local
        if "<locals>" in m.__qualname__ and not (m._meta.unique or m._meta.stream)
    ]
    for name in names:
        registry.unregister(name)
        if name in before:
            registry.register(before[name])


@pytest.fixture
def declare(dynamo_db, declared):
    """``declared`` on fresh tables: what it registers, the store does not have yet."""
    return declared


@pytest.fixture
def hook():
    """``hook(event, handler)`` registers a botocore event handler on the handle's
    client for this test."""
    from dynamo_app.client.handle import get_handle

    added = []

    def add(event, handler):
        events = get_handle().client.meta.events
        events.register(event, handler)
        added.append((events, event, handler))

    yield add
    for events, event, handler in added:
        events.unregister(event, handler)


@pytest.fixture
def session_db(request, dynamo_server):
    """Fresh tables, the session table among them (tests/sessions_support.py)."""
    from tests.sessions_support import session_tables

    with session_tables(request) as handle:
        yield handle


@pytest.fixture
def slept(dynamo_db, monkeypatch) -> list[float]:
    """The retries' backoff waits in this test, recorded instead of slept."""
    waits: list[float] = []
    monkeypatch.setattr(dynamo_db.retry, "sleep", waits.append)
    return waits


@pytest.fixture
def no_sleep(dynamo_db, slept):
    """The test's handle (``dynamo_db``), its retries not sleeping (``slept``)."""
    return dynamo_db


@pytest.fixture
def root(client, db):
    """Django's test client, logged in as a superuser."""
    from django.contrib.auth.models import User

    client.force_login(User.objects.create_superuser("root", "root@example.com", "pw"))
    return client


@pytest.fixture
def module_urls(request, db, dynamo_db):
    """The test module's own ``urlpatterns`` (its admin site, say) as the URLconf, on
    fresh tables: ``pytestmark = pytest.mark.usefixtures("module_urls")``."""
    from django.test import override_settings

    with override_settings(ROOT_URLCONF=request.module.__name__):
        yield dynamo_db


@pytest.fixture(scope="session")
def chromium(live_server, tmp_path_factory: pytest.TempPathFactory):
    """This worker's headless Chromium (tests/browser_support.py), started once. It quits
    before pytest-django's live server stops, as Django's SeleniumTestCase does: a connection
    it keeps alive would otherwise end in a server thread after the database was taken back."""
    from tests.browser_support import start_chromium

    driver = start_chromium(tmp_path_factory.mktemp("chromium-profile"))
    yield driver
    driver.quit()


@pytest.fixture
def browser(dynamo_server, chromium, live_server):
    """Chromium as a new visitor (one tab, no cookies) of pytest-django's live server, a
    thread of this process serving the run's DynamoDB and this test's settings. (The run's
    store first: live_server's per-test settings change would otherwise undo the store's.)"""
    from tests.browser_support import Browser, serve_current_settings

    serve_current_settings(live_server)
    return Browser(chromium, live_server.url).reset()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say how much of the manuals ran, and what did not and why (tests/test_readme.py)."""
    reports = [r for rs in terminalreporter.stats.values() for r in rs if hasattr(r, "nodeid")]
    if any(r.nodeid.startswith("tests/test_readme.py") for r in reports):
        from tests.test_readme import summary

        terminalreporter.write_line(summary())
