"""Sphinx configuration of the manual: MyST markdown pages, Furo, autodoc.

Built by ``bin/docs`` (and by tests/test_docs.py) with warnings as errors, so a broken
link, a missing page or an undocumented public name fails the build.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import django

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "docs" / "_ext")]
# autodoc imports the package, which needs settings: the test suite's, store switched off.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tests.typing_settings")
django.setup()

from dynamo_app import __version__  # noqa: E402

project = "dynamo_app"
author = "dynamo_app contributors"
copyright = "dynamo_app contributors, MIT License"
version = release = __version__

extensions = ["myst_parser", "sphinx.ext.autodoc", "reference"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_ext"]
myst_heading_anchors = 3
smartquotes_action = "qe"  # curly quotes and ellipses; "--option" stays two hyphens
myst_enable_extensions = ["deflist"]
suppress_warnings = [
    "myst.header",  # pages keep their own heading levels, as on GitHub
    # A type hint naming a class that two modules define (partiql.Result, backfill.Result)
    # links to one of them; page links and MyST references are checked all the same.
    "ref.python",
]

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": True, "show-inheritance": True}

html_theme = "furo"
html_title = f"dynamo_app {release}"
