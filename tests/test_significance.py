"""Paired tests and their detectable differences against hand computation, exact enumeration
and Monte Carlo simulation."""

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from lgb_risk import risk
from lgb_risk.significance import (
    detectable_mean_difference,
    paired_randomisation_test,
    paired_t_test,
)


def test_paired_t_test_equals_the_textbook_formula():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(size=40), rng.uniform(size=40)
    d = a - b
    t = d.mean() / (d.std(ddof=1) / math.sqrt(d.size))
    got = paired_t_test(a, b)
    assert got.difference == pytest.approx(d.mean())
    assert got.p_value == pytest.approx(2 * stats.t.sf(abs(t), d.size - 1), rel=1e-10)
    assert got.n == 40


def test_detectable_difference_is_found_with_the_stated_power_by_simulation():
    """Differences drawn with mean = the detectable difference: the t-test rejects in 80% of
    6,000 simulated experiments (±1.5 points: three standard errors)."""
    rng = np.random.default_rng(1)
    n, sd = 25, 0.3
    effect = detectable_mean_difference(sd, n)
    d = rng.normal(effect, sd, size=(6000, n))
    p = 2 * stats.t.sf(np.abs(d.mean(axis=1) / (d.std(axis=1, ddof=1) / math.sqrt(n))), n - 1)
    assert abs((p < 0.05).mean() - 0.8) < 0.015, (p < 0.05).mean()
    assert effect == pytest.approx((stats.t.ppf(0.975, n - 1) + stats.t.ppf(0.8, n - 1))
                                   * sd / math.sqrt(n), rel=0.02)


def test_randomisation_test_agrees_with_exact_enumeration():
    """Every one of the 2^12 relabellings enumerated: the p-value, and the null distribution's
    spread behind the detectable difference."""
    rng = np.random.default_rng(2)
    a = rng.uniform(size=12)
    b = a - rng.normal(0.05, 0.1, size=12)
    d = a - b
    null = np.array([np.mean(d * np.array(signs))
                     for signs in itertools.product((1, -1), repeat=12)])
    exact_p = np.mean(np.abs(null) >= abs(d.mean()) - 1e-15)
    got = paired_randomisation_test(lambda rows: rows.mean(axis=1), a, b, resamples=40000)
    assert got.difference == pytest.approx(d.mean())
    assert abs(got.p_value - exact_p) < 0.01, (got.p_value, exact_p)
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert got.detectable == pytest.approx(z * null.std(), rel=0.03)


def test_randomisation_test_of_georisk_swaps_whole_queries():
    """GeoRisk against fixed baselines: swapping a query's two values changes both systems'
    GeoRisk; a model better on every query is significant, identical models give NaN."""
    rng = np.random.default_rng(3)
    baselines = rng.uniform(0.1, 0.9, size=(3, 200))
    b = rng.uniform(0.1, 0.9, size=200)
    a = np.minimum(b + 0.05, 1.0)

    def stat(rows):
        return risk.georisk_against(rows, baselines, 5)

    got = paired_randomisation_test(stat, a, b, resamples=500)
    assert got.difference > 0 and got.p_value == pytest.approx(1 / 501)
    same = paired_randomisation_test(stat, b, b, resamples=50)
    assert math.isnan(same.p_value) and same.difference == 0


@pytest.mark.parametrize("call, message", [
    (lambda: paired_t_test([1, 2, 3], [1, 2]), "two vectors of the same queries"),
    (lambda: paired_t_test([1, np.nan], [1, 2]), "query index 1 is not"),
    (lambda: paired_randomisation_test(np.mean, [1, 2], [2, 1], resamples=0), "resamples"),
    (lambda: detectable_mean_difference(1.0, 10, power=1.5), "0 < power"),
])
def test_bad_input_is_refused(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_corrected_p_values_against_scipy_and_by_hand():
    """Benjamini-Hochberg equals scipy.stats.false_discovery_control; Holm and Bonferroni equal
    a hand computation on a worked example; undefined tests (NaN) stay NaN and do not count."""
    from scipy import stats

    from lgb_risk.significance import corrected_p_values

    rng = np.random.default_rng(0)
    for size in (1, 2, 7, 40):
        p = rng.uniform(0, 0.2, size)
        np.testing.assert_allclose(corrected_p_values(p, "bh"),
                                   stats.false_discovery_control(p), rtol=1e-12)
    p = np.array([0.01, 0.04, 0.03, 0.005])  # sorted: 0.005, 0.01, 0.03, 0.04; m = 4
    # Holm: 4 x 0.005 = 0.02, 3 x 0.01 = 0.03, 2 x 0.03 = 0.06, 1 x 0.04 = 0.04 -> running max
    np.testing.assert_allclose(corrected_p_values(p, "holm"), [0.03, 0.06, 0.06, 0.02])
    np.testing.assert_allclose(corrected_p_values(p, "bonferroni"), [0.04, 0.16, 0.12, 0.02])
    with_nan = corrected_p_values(np.array([0.01, np.nan, 0.04]), "bonferroni")
    assert np.isnan(with_nan[1]) and with_nan[[0, 2]].tolist() == [0.02, 0.08]
    with pytest.raises(ValueError, match="correction must be one of bonferroni, holm, bh"):
        corrected_p_values(p, "sidak")


def test_the_risk_table_corrects_trisk_p_over_the_systems_against_the_baseline():
    import pandas as pd

    from lgb_risk import risk
    from lgb_risk.significance import corrected_p_values

    rng = np.random.default_rng(1)
    scores = pd.DataFrame(rng.uniform(0, 1, (5, 40)), index=[f"s{i}" for i in range(5)])
    table = risk.risk_table(scores, alphas=[0, 5], baseline="s0", correction="holm")
    for _, block in table.groupby("alpha"):
        others = block[block["run"] != "s0"]
        np.testing.assert_allclose(others["trisk_p_holm"],
                                   corrected_p_values(others["trisk_p"].to_numpy(), "holm"))
        assert np.isnan(block.loc[block["run"] == "s0", "trisk_p_holm"]).all()
    with pytest.raises(ValueError, match="needs a baseline"):
        risk.risk_table(scores, alphas=[5], correction="bh")


def test_the_tests_answer_their_edge_cases_specifically():
    """A numpy integer is a whole number of resamples; a statistic giving one number for all
    rows, or the arguments in the wrong order, are named; a constant shift has p = 0 (t is
    infinite), as the docstring says, and equal runs no test."""
    rng = np.random.default_rng(4)
    a = rng.uniform(size=30)
    b = a - rng.uniform(0.0, 0.1, size=30)
    mean = lambda rows: rows.mean(axis=1)  # noqa: E731
    assert paired_randomisation_test(mean, a, b, resamples=np.int64(99)) == \
        paired_randomisation_test(mean, a, b, resamples=99)
    with pytest.raises(ValueError, match=r"to 2 values, one per row .* returned shape \(\)"):
        paired_randomisation_test(lambda rows: float(rows.mean()), a, b)
    with pytest.raises(TypeError, match=r"paired_randomisation_test\(statistic, a, b\)"):
        paired_randomisation_test(a, b, mean)
    with pytest.raises(ValueError, match="resamples must be"):
        paired_randomisation_test(mean, a, b, resamples=0)
    shifted = paired_t_test([0.5, 0.75, 0.25], [0.25, 0.5, 0.0])
    assert shifted.p_value == 0.0 and shifted.difference == 0.25
    assert np.isnan(paired_t_test(a, a).p_value)
