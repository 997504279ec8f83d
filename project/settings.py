"""Settings of the demo project, read through django-environ.

Every DYNAMO key can come from the environment (or an optional ``.env`` file
next to manage.py) as ``DYNAMO_<KEY>``. The defaults are for development: DEBUG,
the embedded local DynamoDB and auto-migration. For production, see
docs/howto/production.md.
"""

import importlib.util
import os
import sys
from pathlib import Path

import environ

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False)  # optional; missing is fine


def as_written(name: str) -> str:
    """A variable exactly as set. django-environ treats a leading ``$`` as a reference
    to another variable and would turn ``${AWS_SECRET_ACCESS_KEY}`` into an empty string."""
    return os.environ.get(name, "")


DEBUG = env.bool("DJANGO_DEBUG", default=True)
# Development gets a throwaway key; without DEBUG, DJANGO_SECRET_KEY must be set.
SECRET_KEY = env.str(
    "DJANGO_SECRET_KEY", default="dev-only-insecure-key-change-me" if DEBUG else env.NOTSET
)
ALLOWED_HOSTS = env.list("DJANGO_ALLOWED_HOSTS", default=["127.0.0.1", "localhost"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "dynamo_app",
    "project.roster",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "project.urls"
WSGI_APPLICATION = "project.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Users (django.contrib.auth) stay in SQLite; everything else lives in DynamoDB.
DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{BASE_DIR / 'db.sqlite3'}")}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# `manage.py test` gets a throwaway DynamoDB, and each TestCase test empty tables.
TEST_RUNNER = "dynamo_app.test.runner.DynamoTestRunner"

DYNAMO = {
    "ENABLED": env.bool("DYNAMO_ENABLED", default=True),
    "REGION": env.str("DYNAMO_REGION", default=""),
    "ENDPOINT": env.str("DYNAMO_ENDPOINT", default="embedded"),
    # Credentials may be written as ${NAME}: dynamo_app expands them (and masks the values).
    "ACCESS_KEY_ID": as_written("DYNAMO_ACCESS_KEY_ID"),
    "SECRET_ACCESS_KEY": as_written("DYNAMO_SECRET_ACCESS_KEY"),
    "SESSION_TOKEN": as_written("DYNAMO_SESSION_TOKEN"),
    "TABLE_PREFIX": env.str("DYNAMO_TABLE_PREFIX", default="demo-"),
    "TABLE_NAMES": env.dict("DYNAMO_TABLE_NAMES", default={}),
    "TIMEOUT": env.str("DYNAMO_TIMEOUT", default="10s"),
    "MAX_IDLE_CONNS": env.int("DYNAMO_MAX_IDLE_CONNS", default=10),
    "ASYNC_THREADS": env.int("DYNAMO_ASYNC_THREADS", default=10),
    "VERIFY_SCHEMA": env.bool("DYNAMO_VERIFY_SCHEMA", default=True),
    "AUTO_MIGRATE": env.bool("DYNAMO_AUTO_MIGRATE", default=DEBUG),
    # Where the embedded server keeps its tables ("" = .dynamo-local.pickle in BASE_DIR).
    "LOCAL_STATE_FILE": env.str("DYNAMO_LOCAL_STATE_FILE", default=""),
    # Capacity units per request, in the log and the toolbar ("off", "total", "indexes").
    "RETURN_CONSUMED_CAPACITY": env.str(
        "DYNAMO_RETURN_CONSUMED_CAPACITY", default="total" if DEBUG else "off"
    ),
}
if env.str("DYNAMO_TABLE_RESOLVER", default=""):
    DYNAMO["TABLE_RESOLVER"] = env.str("DYNAMO_TABLE_RESOLVER")

SESSION_ENGINE = "dynamo_app.sessions"

if DEBUG:
    # One log line per view: "GET /teams/ (roster:teams): 3 DynamoDB requests, 4.2 ms, ...".
    # First, so that it counts the session's requests too (as the toolbar, put before it).
    MIDDLEWARE.insert(0, "dynamo_app.middleware.RequestCountMiddleware")
# Not in a test run (manage.py test, pytest), as the toolbar's documentation advises.
TESTING = sys.argv[1:2] == ["test"] or "PYTEST_VERSION" in os.environ
if DEBUG and not TESTING and importlib.util.find_spec("debug_toolbar") is not None:
    # With the [debug-toolbar] extra: the toolbar, and a panel listing each DynamoDB request.
    from debug_toolbar.settings import PANELS_DEFAULTS

    INSTALLED_APPS.append("debug_toolbar")
    MIDDLEWARE.insert(0, "debug_toolbar.middleware.DebugToolbarMiddleware")
    INTERNAL_IPS = ["127.0.0.1"]
    DEBUG_TOOLBAR_PANELS = [*PANELS_DEFAULTS, "dynamo_app.contrib.debug_toolbar.RequestsPanel"]
    # Collapsed to its handle on a first visit, so it covers no link of the page.
    DEBUG_TOOLBAR_CONFIG = {"SHOW_COLLAPSED": True}

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
STATIC_URL = "static/"
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "roster:teams"
LOGOUT_REDIRECT_URL = "roster:teams"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "loggers": {"dynamo_app": {"handlers": ["console"], "level": "INFO"}},
}
