"""The settings mypy's Django plugin loads (it runs django.setup()): the suite's own,
with the store switched off so that checking types starts no server and sends nothing.
"""

from tests.settings import *  # noqa: F403
from tests.settings import DYNAMO

DYNAMO = {**DYNAMO, "ENABLED": False}
