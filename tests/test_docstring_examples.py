"""The runnable examples in the docstrings run, and show what they say."""

import doctest

import pytest

from lgb_risk import (
    conventions,
    data,
    distributed,
    feval,
    measures,
    metrics,
    objectives,
    risk,
    trec,
)
from lgb_risk.active import moments, relevance, sampling


@pytest.mark.parametrize("module", [conventions, data, distributed, feval, measures, metrics,
                                    objectives, risk, trec, moments, relevance, sampling])
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0 and result.failed == 0, result
