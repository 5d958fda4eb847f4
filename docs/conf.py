"""Sphinx configuration of lgb_risk's manual
(``python -m sphinx -W -b html docs docs/_build/html``)."""

import sys
from pathlib import Path

import lgb_risk

sys.path.insert(0, str(Path(__file__).parent / "_ext"))  # the generated reference directives

project = "lgb_risk"
release = version = lgb_risk.__version__
extensions = ["sphinx.ext.autodoc", "sphinx.ext.autosummary", "sphinx.ext.napoleon",
              "sphinx.ext.viewcode", "sphinx.ext.doctest", "myst_nb", "lgb_risk_cli",
              "lgb_risk_reference"]
# The examples (docs/examples/*.md, MyST notebooks) run at every build, their output shown; an
# error in one fails the build.
nb_execution_mode = "force"
nb_execution_timeout = 180
nb_execution_raise_on_error = True
nb_merge_streams = True
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
exclude_patterns = ["_build", "_ext", "_templates", "_static"]
html_theme = "furo"
html_title = f"lgb_risk {version}"
html_static_path = ["_static"]
html_css_files = ["lgb_risk.css"]  # a column that shows a 98-character line of code whole
_CODE = {"code-font-size": "75%"}
html_theme_options = {"light_css_variables": _CODE, "dark_css_variables": _CODE}

# scikit-learn adds these to every estimator; RiskRanker's page documents its own methods.
_SKLEARN_GENERATED = {"set_fit_request", "set_score_request", "set_params", "get_params",
                      "get_metadata_routing"}


def _skip_sklearn_generated(app, what, name, obj, skip, options):
    return True if name in _SKLEARN_GENERATED else None


def setup(app):
    app.connect("autodoc-skip-member", _skip_sklearn_generated)
