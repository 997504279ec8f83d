"""Settings of the worker processes of tests/test_backfill.py: the suite's own,
with DYNAMO as the parent test has it (the run's test server), and no other app."""

import json
import os

from tests.settings import *  # noqa: F403

DYNAMO = json.loads(os.environ["BACKFILL_TEST_DYNAMO"])
INSTALLED_APPS = ["dynamo_app"]
