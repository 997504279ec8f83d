"""A project with no relational database at all and its sessions in DynamoDB.

Run in a subprocess by tests/test_sessions_e2e.py, against the test's store
(tests/process_support.py) under the table prefix it gives (NODB_DYNAMO_PREFIX).
"""

import os

from tests.process_support import store_section

SECRET_KEY = "tests-only-not-secret"
DEBUG = False
USE_TZ = True
ALLOWED_HOSTS = ["testserver"]
DATABASES: dict = {}
INSTALLED_APPS = ["dynamo_app"]
MIDDLEWARE = ["django.contrib.sessions.middleware.SessionMiddleware"]
ROOT_URLCONF = "tests.session_views"
SESSION_ENGINE = "dynamo_app.sessions"
DYNAMO = store_section(
    TABLE_PREFIX=os.environ["NODB_DYNAMO_PREFIX"],
    VERIFY_SCHEMA=True,  # startup checks the session table like any other
)
