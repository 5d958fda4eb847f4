"""Sphinx configuration of lgb_risk's manual
(``python -m sphinx -W -b html docs docs/_build/html``)."""

import sys
from pathlib import Path

import lgb_risk

sys.path.insert(0, str(Path(__file__).parent / "_ext"))  # the generated reference directives

project = "lgb_risk"
release = version = lgb_risk.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon",
              "sphinx.ext.viewcode", "sphinx.ext.doctest", "lgb_risk_cli", "lgb_risk_reference"]
# One page per public module (api.rst's lists), written into docs/api/ at each build.
autosummary_generate = True
templates_path = ["_templates"]
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
exclude_patterns = ["_build", "_ext", "_templates"]
html_theme = "alabaster"

# scikit-learn adds these to every estimator; RiskRanker's page documents its own methods.
_SKLEARN_GENERATED = {"set_fit_request", "set_score_request", "set_params", "get_params",
                      "get_metadata_routing"}


def _skip_sklearn_generated(app, what, name, obj, skip, options):
    return True if name in _SKLEARN_GENERATED else None


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_generated)
