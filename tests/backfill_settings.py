"""Settings of the worker processes of tests/test_backfill.py: the suite's own,
with DYNAMO as the parent test has it (tests/process_support.py), and no other app."""

from tests.process_support import store_section
from tests.settings import *  # noqa: F403

DYNAMO = store_section()
INSTALLED_APPS = ["dynamo_app"]
