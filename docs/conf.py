"""Sphinx configuration of lgb_risk's API reference (``python -m sphinx -W docs docs/_build``)."""

import lgb_risk

project = "lgb_risk"
release = version = lgb_risk.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.viewcode"]
napoleon_google_docstring = False
napoleon_numpy_docstring = True
autodoc_member_order = "bysource"
autodoc_default_options = {"members": True, "undoc-members": False}
autodoc_typehints = "none"
napoleon_use_ivar = True  # attributes as fields: autodoc documents the members themselves
# Attribute names that several classes share (``group``, ``alpha``) make ambiguous references.
suppress_warnings = ["ref.python"]
exclude_patterns = ["_build"]
html_theme = "alabaster"
