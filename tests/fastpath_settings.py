"""A project using dynamo_app alone, run in a subprocess by tests/test_fastpath.py
against the suite's server, region and table prefix (FASTPATH_DYNAMO_ENDPOINT,
FASTPATH_DYNAMO_REGION, FASTPATH_DYNAMO_PREFIX)."""

import os

SECRET_KEY = "tests-only-not-secret"
USE_TZ = True
DATABASES: dict = {}
INSTALLED_APPS = ["dynamo_app"]
DYNAMO = {
    "ENABLED": True,
    "ENDPOINT": os.environ["FASTPATH_DYNAMO_ENDPOINT"],
    "REGION": os.environ["FASTPATH_DYNAMO_REGION"],
    "ACCESS_KEY_ID": "testing",
    "SECRET_ACCESS_KEY": "testing",
    "TABLE_PREFIX": os.environ["FASTPATH_DYNAMO_PREFIX"],
    "VERIFY_SCHEMA": False,  # the app's own tables are the suite's business
}
