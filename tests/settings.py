"""Settings for dynamo_app's own test suite.

DYNAMO uses the embedded local server; ``dynamo_app.testing`` reuses it and
gives every test fresh tables.
"""

SECRET_KEY = "tests-only-not-secret"
DEBUG = False
USE_TZ = True
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.sessions",
    "dynamo_app",
    "project.roster",  # the demo's models and templates (tests/test_demo_*.py)
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
DYNAMO = {"ENABLED": True, "ENDPOINT": "embedded", "TABLE_PREFIX": "test-"}
ROOT_URLCONF = "tests.urls"
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
