"""Settings for dynamo_app's own test suite.

DYNAMO names the embedded local server, as a project's development settings
would; a test run never starts it: ``dynamo_app.testing`` gives the run a server
of its own and every test that asks fresh tables.
"""

SECRET_KEY = "tests-only-not-secret"
DEBUG = False
USE_TZ = True
INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.contenttypes",
    "django.contrib.auth",
    "django.contrib.sessions",
    "django.contrib.messages",
    "dynamo_app",
    "project.roster",  # the demo's models and templates (tests/test_demo_*.py)
    "django.contrib.staticfiles",  # the live server serves the apps' CSS (tests/test_browser_*.py)
]
DATABASES = {"default": {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}}
DYNAMO = {"ENABLED": True, "ENDPOINT": "embedded", "TABLE_PREFIX": "test-"}
ROOT_URLCONF = "tests.urls"
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
# What django.contrib.admin needs (tests/test_admin.py; `manage.py check` asks for it).
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
STATIC_URL = "static/"
