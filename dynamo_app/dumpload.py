"""``dynamo_app.dumpload``, kept because the docs name it.

The home of this module is ``dynamo_app.data.dumpload``. Importing this path gives that
module itself (``sys.modules``), so ``import``, ``from ... import``, assigning its
attributes and ``mock.patch`` strings all reach the one module.
"""

import sys
from typing import TYPE_CHECKING

from .data import dumpload as _home

if TYPE_CHECKING:
    from .data.dumpload import *  # noqa: F403

sys.modules[__name__] = _home
