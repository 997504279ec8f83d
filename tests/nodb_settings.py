"""A project with no relational database at all and its sessions in DynamoDB.

Run in a subprocess by tests/test_sessions_e2e.py, against the suite's server,
region and table prefix (NODB_DYNAMO_ENDPOINT, NODB_DYNAMO_REGION, NODB_DYNAMO_PREFIX).
"""

import os

SECRET_KEY = "tests-only-not-secret"
DEBUG = False
USE_TZ = True
ALLOWED_HOSTS = ["testserver"]
DATABASES: dict = {}
INSTALLED_APPS = ["dynamo_app"]
MIDDLEWARE = ["django.contrib.sessions.middleware.SessionMiddleware"]
ROOT_URLCONF = "tests.session_views"
SESSION_ENGINE = "dynamo_app.sessions"
DYNAMO = {
    "ENABLED": True,
    "ENDPOINT": os.environ["NODB_DYNAMO_ENDPOINT"],
    "REGION": os.environ["NODB_DYNAMO_REGION"],
    "ACCESS_KEY_ID": "testing",
    "SECRET_ACCESS_KEY": "testing",
    "TABLE_PREFIX": os.environ["NODB_DYNAMO_PREFIX"],
    "VERIFY_SCHEMA": True,  # startup checks the session table like any other
}
