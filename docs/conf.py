"""Sphinx configuration of iogate's documentation site: pages in Markdown (MyST), the
reference pages generated from iogate's own tables (_ext/iogate_reference.py).

Build it with ``bash scripts/setup.sh docs`` (warnings are errors), or
``sphinx-build -W --keep-going -n -b html docs build/docs`` in an environment with the
``docs`` extra."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

from iogate import __version__

project = "iogate"
author = "the iogate authors"
copyright = "the iogate authors"
version = release = __version__

extensions = ["myst_parser", "iogate_reference"]
source_suffix = {".md": "markdown"}
exclude_patterns = ["_build", "_ext", "images/README.md"]
myst_heading_anchors = 3
myst_enable_extensions = ["deflist"]
nitpicky = True
# option names stay as written: --json, not an en dash; fio's, not a curly quote
smartquotes = False
html_theme = "furo"
html_title = f"iogate {release}"
html_static_path: list[str] = []
