"""How many topics a test needs: the exact noncentral-t answer checked against scipy's
distribution and a search written here, the inverse, a Monte Carlo check that the stated power
is reached, the simulated power of tests with no closed form, and ``lgb-risk power``."""

import itertools

import numpy as np
import pytest
from scipy import stats

from lgb_risk import risk, significance


def _power_by_scipy(sd, difference, n, level):
    """Both tails of the noncentral t, straight from scipy (the reference)."""
    df, critical = n - 1, stats.t.ppf(1 - level / 2, n - 1)
    shift = difference * np.sqrt(n) / sd
    far = stats.nct.cdf(-critical, df, shift)
    return stats.nct.sf(critical, df, shift) + (0.0 if np.isnan(far) else far)


GRID = list(itertools.product([0.05, 0.2], [0.01, 0.05], [0.7, 0.8, 0.9], [0.01, 0.05]))


@pytest.mark.parametrize("sd, difference, power, level", GRID)
def test_topics_needed_is_the_first_n_whose_noncentral_t_power_reaches_the_target(
        sd, difference, power, level):
    n = significance.topics_needed(sd, difference, power=power, level=level)
    assert _power_by_scipy(sd, difference, n, level) >= power
    assert n == 2 or _power_by_scipy(sd, difference, n - 1, level) < power
    # a linear search from 2, written here
    first = next(m for m in range(2, 10 * n + 10)
                 if _power_by_scipy(sd, difference, m, level) >= power)
    assert n == first
    # its inverse: at n topics the detectable difference is at most the difference
    detectable = significance.detectable_difference(sd, n, power=power, level=level)
    assert detectable <= abs(difference) * (1 + 1e-9)
    assert _power_by_scipy(sd, detectable, n, level) == pytest.approx(power, abs=1e-9)
    if n > 2:
        assert significance.detectable_difference(sd, n - 1, power=power,
                                                  level=level) > abs(difference)


def test_comparisons_divide_the_level_and_need_more_topics():
    one = significance.topics_needed(0.1, 0.03)
    seven = significance.topics_needed(0.1, 0.03, comparisons=7)
    assert seven == significance.topics_needed(0.1, 0.03, level=0.05 / 7) > one
    assert significance.t_test_power(0.1, 0.03, seven, comparisons=7) >= 0.8


def test_the_stated_power_is_reached_in_monte_carlo():
    """Draw n topics' differences from a normal of the given sd and mean, run scipy's paired
    t-test 4,000 times: the rejections' share is the stated power within 3 standard errors."""
    sd, difference = 0.1, 0.03
    n = significance.topics_needed(sd, difference)
    rng = np.random.default_rng(7)
    draws = 4000
    d = rng.normal(difference, sd, size=(draws, n))
    p = stats.ttest_1samp(d, 0.0, axis=1).pvalue
    share = float(np.mean(p < 0.05))
    stated = significance.t_test_power(sd, difference, n)
    se = np.sqrt(stated * (1 - stated) / draws)
    assert abs(share - stated) < 3 * se
    assert stated >= 0.8


def test_bad_arguments_are_refused_by_name():
    with pytest.raises(ValueError, match="difference must be a finite non-zero number"):
        significance.topics_needed(0.1, 0.0)
    with pytest.raises(ValueError, match="power must be in"):
        significance.topics_needed(0.1, 0.02, power=1.0)
    with pytest.raises(ValueError, match="sd must be > 0"):
        significance.t_test_power(0.0, 0.02, 10)
    with pytest.raises(ValueError, match="n >= 2"):
        significance.detectable_difference(0.1, 1)


def test_simulated_power_of_the_sign_test_matches_the_binomial():
    """Wins and losses by simulation against the exact binomial power of the sign test for a
    pilot whose topics win with probability 0.7 (no ties)."""
    pilot = np.array([1.0] * 70 + [-1.0] * 30)
    n = 40
    power, se = significance.simulated_power(lambda t: significance.sign_test(pilot[t]),
                                             pilot.size, n, draws=2000, seed=3)
    # exact: P(two-sided binomial test rejects) for wins ~ Binomial(n, 0.7)
    exact = sum(stats.binom.pmf(w, n, 0.7) for w in range(n + 1)
                if stats.binomtest(w, n, 0.5).pvalue < 0.05)
    assert abs(power - exact) < 3 * se + 1e-3
    needed = significance.topics_needed_by_simulation(
        lambda t: significance.sign_test(pilot[t]), pilot.size, draws=300, seed=3)
    assert significance.simulated_power(lambda t: significance.sign_test(pilot[t]),
                                        pilot.size, needed, draws=300, seed=3)[0] >= 0.8


def test_the_risk_tests_take_the_risk_weighted_differences():
    """URisk's t-test is a t-test of x_q at α: topics_needed from their sd and mean."""
    rng = np.random.default_rng(2)
    base = rng.uniform(0.2, 0.6, 200)
    system = np.clip(base + rng.normal(0.02, 0.1, 200), 0, 1)
    x = risk.risk_deltas(system, base, 5)
    n = significance.topics_needed(x.std(ddof=1), x.mean())
    assert _power_by_scipy(x.std(ddof=1), x.mean(), n, 0.05) >= 0.8


def test_the_command_line_and_the_api_give_one_table(tmp_path):
    """``lgb-risk power`` on runs and qrels, on the per-topic CSV of the same runs, and
    ``summarise(...).power()`` agree; each row's ``needed`` is topics_needed of its x_q."""
    import io

    import pandas as pd

    from lgb_risk import trec
    from lgb_risk.data import run_name
    from lgb_risk.experiment import synthetic
    from tests.test_cli import run_cli

    qrels, runs = synthetic.write_trec_collection(tmp_path, n_topics=30, docs_per_topic=20,
                                                  n_runs=3)
    options = ["--baseline", "run1", "--alpha", 0, 5, "--correction", "holm", "--difference",
               0.02, "--format", "csv", "--decimals", 12]
    code, out, err = run_cli("power", *runs, "--qrels", qrels, "--measure", "ndcg@20",
                             *options)
    assert code == 0, err
    from_runs = pd.read_csv(io.StringIO(out))
    assert list(from_runs["run"]) == ["run2", "run2", "run3", "run3"]
    run_cli("evaluate", qrels, *runs, "--per-topic", "--format", "csv", "-o",
            tmp_path / "pt.csv")
    code, out, _ = run_cli("power", tmp_path / "pt.csv", "--measure", "ndcg@20", *options)
    pd.testing.assert_frame_equal(pd.read_csv(io.StringIO(out)), from_runs)
    summary = trec.summarise(qrels, {run_name(r): r for r in runs}, ["ndcg@20"],
                             baseline="run1", alphas=[0, 5], correction="holm")
    api = summary.power(difference=0.02)
    np.testing.assert_allclose(api["needed"], from_runs["needed"])
    per_topic = summary.per_topic("ndcg@20")
    for row in api.itertuples():
        x = risk.risk_deltas(per_topic.loc[row.run].to_numpy(),
                             per_topic.loc["run1"].to_numpy(), row.alpha)
        assert row.needed == significance.topics_needed(x.std(ddof=1), x.mean(),
                                                        comparisons=2)
        assert row.needed_for_difference == significance.topics_needed(
            x.std(ddof=1), 0.02, comparisons=2)
    code, _, err = run_cli("power", tmp_path / "pt.csv", "--measure", "ndcg@20",
                           "--baseline", "nosuch")
    assert code == 2 and "--baseline 'nosuch' is not among the runs" in err


def test_a_randomisation_p_value_near_a_decision_gets_more_flips_and_no_other_changes():
    """Far from 0.05 the result is that of the flips asked for, bit for bit; near it the same
    seeded stream is extended until the Monte Carlo error cannot move the decision."""
    mean = lambda rows: rows.mean(axis=1)  # noqa: E731
    rng = np.random.default_rng(0)
    far_a = rng.uniform(size=40)
    far = significance.paired_randomisation_test(mean, far_a, far_a - 0.2, resamples=999)
    same = significance.paired_randomisation_test(mean, far_a, far_a - 0.2, resamples=999,
                                                  decide_at=(0.05,))
    assert same == far and far.p_error == pytest.approx(np.sqrt(far.p_value
                                                                * (1 - far.p_value) / 999))
    near = None
    for seed in range(200):  # a pilot whose 999-flip p-value lies near 0.05
        b = np.random.default_rng(seed).normal(0.5, 0.1, 50)
        a = b + np.random.default_rng(seed + 1000).normal(0.028, 0.1, 50)
        plain = significance.paired_randomisation_test(mean, a, b, resamples=999)
        if abs(plain.p_value - 0.05) < 3 * plain.p_error:
            near = (a, b, plain)
            break
    assert near is not None
    a, b, plain = near
    decided = significance.paired_randomisation_test(mean, a, b, resamples=999,
                                                     decide_at=(0.05,))
    assert decided.p_error < plain.p_error
    assert (abs(decided.p_value - 0.05) >= significance.DECISION_MARGIN_SE * decided.p_error
            or decided.p_error <= np.sqrt(0.25 / (999 * significance.MOST_RESAMPLES_FACTOR)))


def test_a_paired_tests_queries_needed_is_topics_needed_of_its_differences():
    rng = np.random.default_rng(4)
    a, b = rng.uniform(size=60), rng.uniform(size=60)
    t = significance.paired_t_test(a + 0.05, b)
    d = a + 0.05 - b
    assert t.queries_needed(comparisons=3) == significance.topics_needed(
        d.std(ddof=1), d.mean(), comparisons=3)
    r = significance.paired_randomisation_test(lambda rows: rows.mean(axis=1), a + 0.05, b,
                                               resamples=999)
    z = stats.norm.ppf(1 - 0.05 / 2) + stats.norm.ppf(0.8)
    assert r.queries_needed() == np.ceil((z * r.spread / r.difference) ** 2)
    assert r.detectable == pytest.approx(z * r.spread / np.sqrt(60))
