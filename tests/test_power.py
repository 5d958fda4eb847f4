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
    with pytest.raises(ValueError, match="difference must be non-zero"):
        significance.topics_needed(0.1, 0.0)
    with pytest.raises(ValueError, match="power must be in"):
        significance.topics_needed(0.1, 0.02, power=1.0)
    with pytest.raises(ValueError, match="sd and difference are both 0"):
        significance.t_test_power(0.0, 0.0, 10)
    with pytest.raises(ValueError, match="n >= 2"):
        significance.detectable_difference(0.1, 1)


NOT_FINITE = [np.nan, np.inf, -np.inf]


@pytest.mark.parametrize("value", NOT_FINITE)
def test_nan_and_inf_are_refused_by_name_everywhere(value):
    calls = {
        "sd": [lambda: significance.topics_needed(value, 0.02),
               lambda: significance.t_test_power(value, 0.02, 10),
               lambda: significance.detectable_difference(value, 10)],
        "difference": [lambda: significance.topics_needed(0.1, value),
                       lambda: significance.t_test_power(0.1, value, 10)],
        "power": [lambda: significance.topics_needed(0.1, 0.02, power=value),
                  lambda: significance.detectable_difference(0.1, 10, power=value)],
        "level": [lambda: significance.topics_needed(0.1, 0.02, level=value),
                  lambda: significance.t_test_power(0.1, 0.02, 10, level=value),
                  lambda: significance.detectable_difference(0.1, 10, level=value)],
    }
    for name, tried in calls.items():
        for call in tried:
            with pytest.raises(ValueError, match=f"^{name} must be"):
                call()


@pytest.mark.parametrize("sd", [0.0, 1e-300, 1e-200, 1e-100, 3e-17, 1e-12])
def test_a_near_constant_difference_needs_two_topics(sd):
    """A run that beats the baseline by 0.1 on every topic has, in floating point, an sd of
    3e-17: any two topics show the difference. scipy's noncentral t is NaN there."""
    assert significance.topics_needed(sd, 0.1) == 2
    assert significance.topics_needed(sd, -0.1, comparisons=7, power=0.99, level=0.001) == 2
    assert significance.t_test_power(sd, 0.1, 2) == pytest.approx(1.0)
    assert significance.detectable_difference(sd, 50) <= 0.1


def test_a_constant_difference_answers_two_topics_on_the_command_line(tmp_path):
    import io

    import pandas as pd

    from tests.test_cli import run_cli

    rng = np.random.default_rng(5)
    base = rng.uniform(0.1, 0.8, 30)
    lines = ["system,topic,score"]
    for name, values in (("bm25", base), ("mine", base + 0.1)):
        lines += [f"{name},{t + 1},{float(v)!r}" for t, v in enumerate(values)]
    (tmp_path / "scores.csv").write_text("\n".join(lines) + "\n")
    with np.errstate(all="raise"):
        code, out, err = run_cli("power", tmp_path / "scores.csv", "--baseline", "bm25",
                                 "--alpha", 0, "--format", "csv")
    assert code == 0, err
    row = pd.read_csv(io.StringIO(out)).iloc[0]
    assert row["needed"] == 2 and row["needed_low"] == 2 and row["needed_high"] == 2
    assert row["needed_resampled"] == 2 and row["sd"] < 1e-15


def test_a_power_at_or_below_the_level_is_refused_naming_both(tmp_path):
    from tests.test_cli import run_cli

    for power in (0.03, 0.05):
        with pytest.raises(ValueError, match=rf"power \({power:g}\) must be above level "
                                             r"\(0.05\)"):
            significance.topics_needed(0.1, 0.02, power=power)
        with pytest.raises(ValueError, match=r"power .* must be above level"):
            significance.detectable_difference(0.1, 20, power=power)
    scores = _scores_csv(tmp_path)
    code, _, err = run_cli("power", scores, "--baseline", "bm25", "--power", 0.03,
                           "--level", 0.05)
    assert code == 2 and "--power 0.03 must be above --level 0.05" in err


def _scores_csv(tmp_path, missing=()):
    """A per-topic CSV of two runs on 20 topics; ``missing`` topics left out of ``mine``."""
    rng = np.random.default_rng(6)
    base = rng.uniform(0.1, 0.8, 20)
    mine = np.clip(base + rng.normal(0.05, 0.1, 20), 0, 1)
    lines = ["system,topic,score"] + [f"bm25,{t + 1},{float(v)!r}" for t, v in enumerate(base)]
    lines += [f"mine,{t + 1},{float(v)!r}" for t, v in enumerate(mine) if t + 1 not in missing]
    path = tmp_path / "scores.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_draws_without_simulate_is_refused(tmp_path):
    from tests.test_cli import run_cli

    code, _, err = run_cli("power", _scores_csv(tmp_path), "--baseline", "bm25", "--draws", 50)
    assert code == 2 and "--draws sets the simulations' draws: give --simulate too" in err


def test_a_run_lacking_topics_in_a_per_topic_table_is_refused_naming_run_and_topics(tmp_path):
    from tests.test_cli import run_cli

    path = _scores_csv(tmp_path, missing=(4, 17))
    code, out, err = run_cli("power", path, "--baseline", "bm25")
    assert code == 2 and out == ""
    assert f"{path}: run 'mine' has no score for topic(s) 4, 17" in err


def test_power_table_refuses_a_nan_score_and_a_single_topic():
    import pandas as pd

    from lgb_risk.power import power_table

    scores = pd.DataFrame([[0.1, 0.2, 0.3], [0.2, np.nan, 0.4]], index=["bm25", "mine"],
                          columns=["t1", "t2", "t3"])
    with pytest.raises(ValueError, match=r"run 'mine' has no finite score for topic\(s\) t2"):
        power_table(scores, "bm25")
    one = pd.DataFrame([[0.1], [0.2]], index=["bm25", "mine"], columns=["t1"])
    with pytest.raises(ValueError, match="one topic has no variance"):
        power_table(one, "bm25")


def test_no_numpy_or_scipy_warning_reaches_the_user():
    """Zeros, ties, a constant difference and sign flips, with every warning an error."""
    import warnings

    import pandas as pd

    from lgb_risk.power import power_table

    rng = np.random.default_rng(8)
    base = rng.uniform(0.0, 0.5, 25)
    runs = {"bm25": base, "same_but_one": np.r_[base[:-1], base[-1] + 0.01],
            "constant": base + 0.05, "noise": np.clip(base + rng.normal(0, 0.1, 25), 0, 1)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        table = power_table(pd.DataFrame(runs).T, "bm25", [0, 5], difference=0.02,
                            pilot_resamples=400)
    assert table.loc[table["run"] == "constant", "needed"].tolist() == [2, 2]


def _naive_interval(x, resamples, seed, answer, confidence=0.95):
    """A percentile bootstrap written here: the documented draws (one (resamples, topics)
    array of indices from ``numpy.random.default_rng(seed)``), each resample's answer by a
    loop, and its order statistics."""
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, x.size, (resamples, x.size))
    answers = np.array([answer(x[i]) for i in indices], dtype=float)
    order = np.sort(answers)
    k = int(round(resamples * (1 - confidence) / 2))
    # the k-th smallest and the (resamples - k)-th: the first values whose empirical
    # distribution reaches 2.5% and 97.5% (of 2,000: the 50th and the 1,950th)
    return (order[k - 1], order[resamples - k - 1]), answers


def test_the_intervals_are_a_percentile_bootstrap_of_the_whole_answer():
    from lgb_risk.power import topic_set_answers

    rng = np.random.default_rng(9)
    x = np.where(rng.uniform(size=60) < 0.4, 0.0, rng.normal(0.03, 0.1, 60))
    answers = topic_set_answers(x, difference=0.05, comparisons=3, pilot_resamples=400,
                                seed=4)
    observed = x.mean()

    def needed(sample):
        if np.sign(sample.mean()) != np.sign(observed):
            return np.inf  # the other direction: no number of topics shows this one
        sd = sample.std(ddof=1)
        return significance.topics_needed(sd, sample.mean(), comparisons=3)

    (low, high), each = _naive_interval(x, 400, 4, needed)
    assert (answers["needed_low"], answers["needed_high"]) == (low, high)
    assert answers["sign_flips"] == pytest.approx(np.mean(np.isinf(each)))
    (low, high), _ = _naive_interval(
        x, 300, 4, lambda s: significance.topics_needed(s.std(ddof=1), 0.05, comparisons=3))
    assert (answers["needed_for_difference_low"], answers["needed_for_difference_high"]) == (
        low, high)
    (low, high), _ = _naive_interval(x, 400, 4, lambda s: significance.detectable_difference(
        s.std(ddof=1), 60, comparisons=3))
    assert answers["detectable_low"] == pytest.approx(low, rel=1e-9)
    assert answers["detectable_high"] == pytest.approx(high, rel=1e-9)
    assert answers["needed"] == significance.topics_needed(x.std(ddof=1), observed,
                                                           comparisons=3)


def test_a_difference_whose_sign_is_uncertain_is_not_determined():
    """More than 2.5% of the resamples on the other side of 0: the upper end is unbounded
    and the answer NaN, whatever the point estimate; at most 2.5%: a number."""
    from lgb_risk.power import topic_set_answers

    rng = np.random.default_rng(10)
    noisy = rng.normal(0.0, 0.1, 80)
    noisy += 0.1 * 1.0 / np.sqrt(80) - noisy.mean()  # one standard error from 0
    answers = topic_set_answers(noisy, pilot_resamples=1000)
    _, each = _naive_interval(noisy, 1000, 0, lambda s: -1.0 if s.mean() <= 0 else 1.0)
    assert answers["sign_flips"] == pytest.approx(np.mean(each < 0)) and answers[
        "sign_flips"] > 0.025
    assert np.isnan(answers["needed"]) and answers["needed_high"] == np.inf
    assert np.isnan(answers["needed_resampled"])
    clear = noisy + 0.05  # five standard errors
    answers = topic_set_answers(clear, pilot_resamples=1000)
    assert answers["sign_flips"] <= 0.025 and np.isfinite(answers["needed_high"])
    assert answers["needed_low"] <= answers["needed"] <= answers["needed_high"]


def test_the_interval_covers_the_true_answer_about_as_often_as_it_says():
    """Pilots of 80 topics from one normal population whose answer is known: the 90%
    intervals cover it in about 90% of pilots (percentile intervals of a skewed answer are a
    little short; at least 80% of 120 pilots)."""
    from lgb_risk.power import topic_set_answers

    sd, delta = 0.1, 0.03
    truth = significance.topics_needed(sd, delta)
    rng = np.random.default_rng(11)
    covered = 0
    for _ in range(120):
        pilot = rng.normal(delta, sd, 80)
        answers = topic_set_answers(pilot, confidence=0.9, pilot_resamples=400,
                                    seed=int(rng.integers(1 << 30)))
        covered += answers["needed_low"] <= truth <= answers["needed_high"]
    assert covered / 120 >= 0.8


def _monte_carlo_power(x, n, draws, seed, level=0.05):
    """The paired t-test (scipy) on ``draws`` sets of n topics drawn with replacement."""
    rng = np.random.default_rng(seed)
    sets = x[rng.integers(0, x.size, (draws, n))]
    with np.errstate(all="ignore"):
        p = stats.ttest_1samp(sets, 0.0, axis=1).pvalue
    return float(np.mean(np.nan_to_num(p, nan=1.0) < level))


def test_the_resampled_answer_reaches_the_power_in_a_monte_carlo_of_its_own():
    """A skewed pilot with many ties at 0 (a risk-weighted loss difference): at the resampled
    answer scipy's t-test on fresh draws rejects in about the asked share, and a fifth fewer
    topics do not reach it; the normal-theory answer differs."""
    rng = np.random.default_rng(12)
    x = np.where(rng.uniform(size=400) < 0.7, 0.0, -rng.exponential(0.06, 400) + 0.012)
    n = significance.topics_needed_by_resampling(x, draws=2000, seed=1)
    draws = 4000
    se = np.sqrt(0.8 * 0.2 / draws)
    assert _monte_carlo_power(x, n, draws, seed=99) >= 0.8 - 3 * se - 0.02
    fewer = int(n * 0.8)
    assert _monte_carlo_power(x, fewer, draws, seed=98) < 0.8
    t_answer = significance.topics_needed(x.std(ddof=1), x.mean())
    assert t_answer != n
    # on normal differences the two answers agree within the Monte Carlo error
    normal = rng.normal(0.02, 0.1, 400)
    by_t = significance.topics_needed(normal.std(ddof=1), normal.mean())
    assert significance.topics_needed_by_resampling(normal, seed=2) == pytest.approx(by_t,
                                                                                      rel=0.1)


def test_the_resampled_answer_takes_a_constant_and_refuses_nothing_to_detect():
    assert significance.topics_needed_by_resampling(np.full(30, 0.1) + 1e-17) == 2
    with pytest.raises(ValueError, match="every difference is 0"):
        significance.topics_needed_by_resampling(np.zeros(30))
    with pytest.raises(ValueError, match="topic 3 holds nan"):
        significance.topics_needed_by_resampling([0.1, 0.2, np.nan])
    with pytest.raises(ValueError, match="100 topics do not reach power 0.8"):
        significance.topics_needed_by_resampling(np.r_[np.full(50, -1.0), np.full(51, 1.0)],
                                                 most=100)


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
