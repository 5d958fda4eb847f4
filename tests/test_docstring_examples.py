"""The runnable examples in the docstrings run, and show what they say: every module of the
package, so that an example added anywhere is run."""

import doctest
import importlib
import pkgutil

import pytest

import lgb_risk

#: Modules not imported here: the worker server's set-up ignores Ctrl-C in the process that
#: imports it (it is meant for the forkserver only), and a ``__main__`` (``python -m lgb_risk``,
#: ``python -m lgb_risk.cli``) runs the command line.
NOT_IMPORTED = {"lgb_risk._runtime.worker_server"}

MODULES = sorted(info.name for info in pkgutil.walk_packages(lgb_risk.__path__, "lgb_risk.")
                 if info.name not in NOT_IMPORTED and not info.name.endswith(".__main__"))


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.failed == 0, result


def test_the_modules_with_examples_are_found():
    """The walk finds the package's modules, and the examples of the main ones are run."""
    attempted = {name: doctest.testmod(importlib.import_module(name),
                                       optionflags=doctest.NORMALIZE_WHITESPACE).attempted
                 for name in ("lgb_risk.metrics", "lgb_risk.risk", "lgb_risk.baselines")}
    assert len(MODULES) > 30 and all(attempted.values()), attempted
