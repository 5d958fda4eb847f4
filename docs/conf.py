"""Sphinx configuration of lgb_risk's API reference (``python -m sphinx -W docs docs/_build``)."""

import sys
from pathlib import Path

import lgb_risk

sys.path.insert(0, str(Path(__file__).parent / "_ext"))  # the command-line reference directive

project = "lgb_risk"
release = version = lgb_risk.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode",
              "sphinx.ext.doctest", "lgb_risk_cli"]
# The guide's examples run with ``python -m sphinx -b doctest docs ...`` (the tests do).
doctest_global_setup = "import numpy as np"
# Only the guide's testcode blocks: the docstrings' examples run in the tests, each in its module.
doctest_test_doctest_blocks = ""
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_typehints = "none"
napoleon_use_ivar = True  # attributes as fields: autodoc documents the members themselves
# Attribute names that several classes share (``group``, ``alpha``) make ambiguous references.
suppress_warnings = ["ref.python"]
exclude_patterns = ["_build", "_ext"]
html_theme = "alabaster"
