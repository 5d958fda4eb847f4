"""Property-based tests (hypothesis) of the invariants the formulas promise, on random inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from lgb_risk import metrics, risk
from lgb_risk.objectives import OBJECTIVES

PROPERTY = settings(max_examples=60, deadline=None)


def _objective(cls, alpha, baselines):
    """An objective with the baseline argument its class takes (columns of ``baselines``)."""
    if cls.baseline_parameter is None:
        return cls()
    if cls.baseline_parameter == "baseline":
        return cls(alpha=alpha, baseline=baselines[:, 0])
    return cls(alpha=alpha, baselines=baselines)


@st.composite
def rankings(draw, max_queries=6, max_docs=12, max_label=4):
    """Labels, integer-valued scores (so that adding a constant keeps ties and order exact),
    and query sizes."""
    group = draw(st.lists(st.integers(1, max_docs), min_size=1, max_size=max_queries))
    n = sum(group)
    labels = draw(arrays(np.int64, n, elements=st.integers(0, max_label)))
    scores = draw(arrays(np.float64, n, elements=st.integers(-20, 20).map(float)))
    return labels, scores, np.array(group)


@PROPERTY
@given(rankings(), st.integers(1, 12), st.integers(-1000, 1000))
@pytest.mark.slow
def test_ndcg_in_unit_interval_and_shift_invariant(problem, k, shift):
    labels, scores, group = problem
    for convention in (None, "lightgbm", "letor4", "trec_eval"):
        value = metrics.ndcg(labels, scores, group, k, convention=convention)
        assert np.all((value >= 0) & (value <= 1 + 1e-12))
        shifted = metrics.ndcg(labels, scores + shift, group, k, convention=convention)
        np.testing.assert_array_equal(shifted, value)


per_query = arrays(np.float64, st.integers(2, 30), elements=st.floats(0, 1))


@PROPERTY
@given(per_query, st.data(), st.floats(0, 20))
def test_urisk_is_mean_gain_minus_alpha_frisk(system, data, alpha):
    baseline = data.draw(arrays(np.float64, system.size, elements=st.floats(0, 1)))
    delta = system - baseline
    want = delta.mean() - alpha * np.maximum(-delta, 0).mean()
    assert np.isclose(risk.urisk(system, baseline, alpha), want, rtol=0, atol=1e-12)


@PROPERTY
@given(per_query, st.data(), st.floats(0, 20))
def test_trisk_is_urisk_over_its_standard_error(system, data, alpha):
    baseline = data.draw(arrays(np.float64, system.size, elements=st.floats(0, 1)))
    result = risk.trisk_if_defined(system, baseline, alpha)
    if result is None:
        return
    delta = system - baseline
    x = np.where(delta < 0, (1 + alpha) * delta, delta)
    se = x.std(ddof=1) / np.sqrt(x.size)
    assert np.isclose(result.trisk, x.mean() / se, rtol=1e-9, atol=1e-9)
    assert np.isclose(result.urisk, x.mean(), rtol=0, atol=1e-12)


@PROPERTY
@given(st.integers(2, 5), st.integers(1, 25), st.data(), st.floats(0, 10))
def test_zrisk_and_georisk_invariant_to_permuting_queries(n_systems, n_queries, data, alpha):
    matrix = data.draw(arrays(np.float64, (n_systems, n_queries), elements=st.floats(0, 1)))
    permutation = data.draw(st.permutations(range(n_queries)))
    for measure in (risk.zrisk, risk.georisk):
        np.testing.assert_allclose(measure(matrix[:, permutation], alpha),
                                   measure(matrix, alpha), rtol=1e-12, atol=1e-12)


@PROPERTY
@given(rankings(max_label=2), st.data())
@pytest.mark.slow
def test_objective_gradients_sum_to_zero_per_query_and_alpha_zero_is_lambdamart(problem, data):
    labels, scores, group = problem
    n_queries = group.size
    lambdamart, _ = OBJECTIVES["LambdaMART"]().gradients(scores, labels, group)
    query = np.repeat(np.arange(n_queries), group)
    for name, cls in OBJECTIVES.items():
        baselines = data.draw(arrays(np.float64, (n_queries, 2), elements=st.floats(0, 1)))
        for alpha in (0.0, 3.0):
            objective = _objective(cls, alpha, baselines)
            grad, _ = objective.gradients(scores, labels, group)
            sums = np.bincount(query, weights=grad.astype(np.float64), minlength=n_queries)
            assert np.all(np.abs(sums) <= 1e-5 * (1 + np.abs(grad).max())), name
            if alpha == 0.0 and name != "GeoRisk":
                np.testing.assert_array_equal(grad, lambdamart, err_msg=name)
