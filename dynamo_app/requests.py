"""``dynamo_app.requests``, kept because the docs name it.

The home of this module is ``dynamo_app.client.requests``. Importing this path gives that
module itself (``sys.modules``), so ``import``, ``from ... import``, assigning its
attributes and ``mock.patch`` strings all reach the one module.
"""

import sys
from typing import TYPE_CHECKING

from .client import requests as _home

if TYPE_CHECKING:
    from .client.requests import *  # noqa: F403

sys.modules[__name__] = _home
