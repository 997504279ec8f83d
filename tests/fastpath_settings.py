"""A project using dynamo_app alone, run in a subprocess by tests/test_fastpath.py
against the test's store (tests/process_support.py)."""

from tests.process_support import store_section

SECRET_KEY = "tests-only-not-secret"
USE_TZ = True
DATABASES: dict = {}
INSTALLED_APPS = ["dynamo_app"]
DYNAMO = store_section(VERIFY_SCHEMA=False)  # the app's own tables are the suite's business
