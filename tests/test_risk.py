"""Risk measures against the papers' numbers, scipy's t-test and naive loops."""

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from lgb_risk import risk

DATA = pd.read_csv(__file__.replace("test_risk.py", "data/geo_table3.csv"))
TABLE3 = DATA.pivot(index="system", columns="topic", values="score")  # [GEO] Table 3

# [GEO] Table 4 (α = 0): per-topic z of the system against baseline s1, and its ZRisk.
TABLE4 = {
    "s2": ([0.3689, 0.2000, 0.0000, -0.1690, -0.2858], 0.1141),
    "s3": ([0.2988, 0.1581, 0.0000, -0.1225, -0.1917], 0.1427),
    "s4": ([0.3077, 0.1599, 0.0000, -0.1209, -0.1884], 0.1583),
    "s5": ([0.3689, 0.0000, 0.0845, -0.2739, -0.1088], 0.0708),
    "s6": ([0.2121, 0.2739, -0.1000, 0.0000, -0.2858], 0.1002),
    "s7": ([0.2799, 0.1422, 0.0000, -0.1057, -0.1669], 0.1496),
    "s8": ([0.2792, 0.1445, -0.0001, -0.1097, -0.1732], 0.1408),
}
# "s1 vs. sX" rows of Table 4: ZRisk of s1 with sX as the baseline.
TABLE4_REVERSED = {"s2": -0.1141, "s3": -0.1427, "s4": -0.1445, "s5": -0.0708, "s6": -0.1002,
                   "s7": -0.1446, "s8": -0.1442}
# [GEO] Table 5: (ZRisk, GeoRisk) of each system within all eight, α = 0, 1, 5, 10.
TABLE5 = {
    0: {"s1": (-0.049, 0.386), "s2": (0.026, 0.388), "s3": (0.006, 0.387), "s4": (0.005, 0.354),
        "s5": (0.006, 0.387), "s6": (0.005, 0.387), "s7": (-0.001, 0.374), "s8": (0.001, 0.397)},
    1: {"s1": (-0.727, 0.364), "s2": (-0.312, 0.378), "s3": (-0.069, 0.385),
        "s4": (-0.063, 0.352), "s5": (-0.541, 0.370), "s6": (-0.539, 0.370),
        "s7": (-0.008, 0.374), "s8": (-0.010, 0.396)},
    5: {"s1": (-3.442, 0.271), "s2": (-1.668, 0.333), "s3": (-0.368, 0.376),
        "s4": (-0.336, 0.344), "s5": (-2.727, 0.296), "s6": (-2.718, 0.297),
        "s7": (-0.036, 0.373), "s8": (-0.052, 0.395)},
    10: {"s1": (-6.835, 0.160), "s2": (-3.362, 0.274), "s3": (-0.742, 0.364),
         "s4": (-0.677, 0.334), "s5": (-5.460, 0.203), "s6": (-5.442, 0.204),
         "s7": (-0.072, 0.372), "s8": (-0.106, 0.393)},
}


@pytest.mark.parametrize("system", sorted(TABLE4))
def test_single_baseline_zrisk_reproduces_geo_table4(system):
    pair = TABLE3.loc[[system, "s1"]].to_numpy()
    z_topics, z_total = TABLE4[system]
    assert risk.zscores(pair)[0] == pytest.approx(z_topics, abs=5e-5)
    assert risk.zrisk(pair, alpha=0)[0] == pytest.approx(z_total, abs=5e-5)
    reversed_pair = TABLE3.loc[["s1", system]].to_numpy()
    assert risk.zrisk(reversed_pair, alpha=0)[0] == pytest.approx(TABLE4_REVERSED[system],
                                                                   abs=5e-5)


@pytest.mark.parametrize("alpha", sorted(TABLE5))
def test_population_zrisk_georisk_reproduce_geo_table5(alpha):
    z = risk.zrisk(TABLE3.to_numpy(), alpha)
    geo = risk.georisk(TABLE3.to_numpy(), alpha)
    for i, system in enumerate(TABLE3.index):
        want_z, want_geo = TABLE5[alpha][system]
        assert z[i] == pytest.approx(want_z, abs=5e-4)
        assert geo[i] == pytest.approx(want_geo, abs=5e-4)


def _random_pair(seed, c=50):
    rng = np.random.default_rng(seed)
    base = rng.uniform(0, 1, c)
    return np.clip(base + rng.normal(0, 0.2, c), 0, 1), base


@pytest.mark.parametrize("seed", range(5))
def test_urisk_is_mean_difference_at_alpha_zero_and_ugain_minus_alpha_frisk(seed):
    s, b = _random_pair(seed)
    assert risk.urisk(s, b, alpha=0) == pytest.approx(np.mean(s - b), abs=1e-15)
    d = s - b
    frisk, freward = np.mean(np.maximum(-d, 0)), np.mean(np.maximum(d, 0))
    for alpha in (1, 5, 10):
        assert risk.urisk(s, b, alpha) == pytest.approx(freward - frisk - alpha * frisk, abs=1e-14)


@pytest.mark.parametrize("seed", range(5))
def test_trisk_p_value_is_paired_t_test_at_alpha_zero(seed):
    s, b = _random_pair(seed)
    result = risk.trisk(s, b, alpha=0)
    ref = stats.ttest_rel(s, b)
    assert result.trisk == pytest.approx(ref.statistic, rel=1e-12)
    assert result.p_value == pytest.approx(ref.pvalue, rel=1e-10)


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("alpha", [0, 1, 5])
def test_jackknife_by_leave_one_out_loop(seed, alpha):
    s, b = _random_pair(seed, c=37)
    result = risk.trisk(s, b, alpha)
    c = s.size
    theta = [risk.urisk(np.delete(s, i), np.delete(b, i), alpha) for i in range(c)]
    theta_dot = np.mean(theta)
    se_j = np.sqrt((c - 1) / c * sum((t - theta_dot) ** 2 for t in theta))
    assert result.se_jackknife == pytest.approx(se_j, abs=1e-12)
    assert abs(result.se_jackknife - result.se) < 1e-12
    x = np.where(s - b >= 0, s - b, (1 + alpha) * (s - b))
    assert result.tr == pytest.approx(x / np.std(x, ddof=1), abs=1e-12)
    tj = [(c - 1) * (result.urisk - theta[i]) / (np.sqrt(c) * se_j) for i in range(c)]
    assert result.tj == pytest.approx(tj, abs=1e-10)
    assert result.tj == pytest.approx((x - x.mean()) / np.std(x, ddof=1), abs=1e-10)


def test_tstar_risk_is_trisk_against_baseline_mean():
    rng = np.random.default_rng(9)
    system = rng.uniform(size=30)
    baselines = rng.uniform(size=(4, 30))
    got = risk.tstar_risk(system, baselines, alpha=5)
    want = risk.trisk(system, baselines.mean(axis=0), alpha=5)
    assert got.trisk == want.trisk and got.p_value == want.p_value


def _naive_summary(s, b):
    wins = sum(1 for x, y in zip(s, b) if x > y)
    losses = sum(1 for x, y in zip(s, b) if x < y)
    reward = sum(max(x - y, 0) for x, y in zip(s, b)) / len(s)
    loss = sum(max(y - x, 0) for x, y in zip(s, b)) / len(s)
    big = sum(1 for x, y in zip(s, b) if y > 0 and x < 0.8 * y)
    return [sum(s) / len(s), reward, loss, reward / loss, wins, losses, wins / losses, big]


def test_summary_single_and_macro_average():
    rng = np.random.default_rng(2)
    s = rng.uniform(size=40)
    bs = rng.uniform(size=(3, 40))
    bs[0, :5] = 0.0
    one = risk.summary(s, bs[0])
    assert one.tolist() == pytest.approx(_naive_summary(s, bs[0]))
    macro = risk.summary(s, bs)
    assert macro.tolist() == pytest.approx(np.mean([_naive_summary(s, b) for b in bs], axis=0))


def test_nan_policy():
    s = np.array([0.1, np.nan, 0.5, 0.2])
    b = np.array([0.2, 0.3, 0.1, 0.1])
    with pytest.raises(ValueError, match="query index 1"):
        risk.urisk(s, b)
    assert risk.urisk(s, b, 0, nan_policy="omit") == pytest.approx(np.mean([-0.1, 0.4, 0.1]))


@pytest.mark.parametrize("call, message", [
    (lambda: risk.urisk([0.1, 0.2], [0.1]), "same queries"),
    (lambda: risk.urisk([0.1, 0.2], [0.1, 0.3], alpha=-1), "alpha must be"),
    (lambda: risk.trisk([0.1, 0.2], [0.1, 0.2]), "undefined"),
    (lambda: risk.trisk([0.1], [0.2]), "at least 2 queries"),
    (lambda: risk.zrisk([[0.1, -0.2], [0.3, 0.1]]), "row 0, query column 1"),
    (lambda: risk.zrisk([[0.1, 0.2]]), "n_systems >= 2"),
])
def test_bad_input_is_a_specific_error(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_trisk_if_defined():
    s, b = _random_pair(3)
    assert risk.trisk_if_defined(s, b, 5).trisk == risk.trisk(s, b, 5).trisk
    assert risk.trisk_if_defined(s, s, 5) is None
    assert risk.trisk_if_defined(s[:1], b[:1], 5) is None


@pytest.mark.parametrize("df", [1, 2, 3, 7, 49, 150, 999])
def test_student_t_p_value_matches_scipy_over_a_grid(df):
    """The two-sided p of the paired t-test, from the C math library (no scipy at start-up)."""
    from lgb_risk._measuring.distributions import student_t_two_sided_p

    for t in (0.0, 1e-3, 0.1, 0.5, 1.0, 1.96, 2.5, 4.0, 8.0, 20.0, 100.0):
        want = 2.0 * stats.t.sf(t, df)
        assert student_t_two_sided_p(t, df) == pytest.approx(want, rel=1e-11, abs=0)
        assert student_t_two_sided_p(-t, df) == student_t_two_sided_p(t, df)
    # df = 1 is Cauchy: p = 1 - (2/pi) atan(t), exact where scipy's t.sf loses digits near 0
    if df == 1:
        assert student_t_two_sided_p(1e-8, 1) == pytest.approx(1 - 2 / np.pi * 1e-8, rel=1e-15)


def test_normal_cdf_matches_scipy():
    from lgb_risk._measuring.distributions import normal_cdf

    z = np.linspace(-30, 30, 601)
    np.testing.assert_allclose(normal_cdf(z), stats.norm.cdf(z), rtol=1e-12, atol=0)


def test_risk_table_rows_equal_the_measures_system_by_system():
    """The table's vectorised columns equal each measure called on one system (and on the
    [system, baseline] pair), NaN where TRisk is undefined and on the baseline's own row."""
    rng = np.random.default_rng(3)
    matrix = rng.uniform(0, 1, size=(5, 30))
    matrix[4] = matrix[1]  # equals the baseline: TRisk undefined
    systems = ["a", "bm25", "c", "d", "copy"]
    scores = pd.DataFrame(matrix, index=systems)
    table = risk.risk_table(scores, alphas=[0, 1, 5], baseline="bm25")
    assert len(table) == 15
    for row in table.itertuples():
        i, s, b = systems.index(row.run), matrix[systems.index(row.run)], matrix[1]
        assert row.mean == pytest.approx(s.mean(), abs=1e-15)
        assert row.zrisk == pytest.approx(risk.zrisk(matrix, row.alpha)[i], abs=1e-12)
        assert row.georisk == pytest.approx(risk.georisk(matrix, row.alpha)[i], abs=1e-12)
        tstar = risk.trisk(s, matrix.mean(axis=0), row.alpha)
        assert row.tstar_risk == pytest.approx(tstar.trisk, abs=1e-12)
        if row.run in ("bm25", "copy"):
            assert np.isnan(row.trisk) and np.isnan(row.trisk_p)
            if row.run == "bm25":
                assert np.isnan([row.urisk, row.zrisk_baseline, row.georisk_baseline]).all()
            continue
        result = risk.trisk(s, b, row.alpha)
        assert row.urisk == pytest.approx(risk.urisk(s, b, row.alpha), abs=1e-15)
        assert (row.trisk, row.trisk_p) == pytest.approx((result.trisk, result.p_value), abs=1e-12)
        pair = np.vstack([s, b])
        assert row.zrisk_baseline == pytest.approx(risk.zrisk(pair, row.alpha)[0], abs=1e-12)
        assert row.georisk_baseline == pytest.approx(risk.georisk(pair, row.alpha)[0], abs=1e-12)


def test_tj_is_finite_where_the_jackknife_underflows():
    """x_q a few ulps apart: s_x > 0 but every θ_(q) is the same double (SE_J = 0); TJ_q is
    then (x_q − x̄)/s_x, which it equals exactly, rather than 0/0."""
    x = np.array([float.fromhex(h) for h in ["0x1.0000000000002p-1"] * 4 + ["0x1.0p-1"]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = risk.trisk(x, np.zeros(5), 1.0)
    assert result.se_jackknife == 0 and result.se > 0
    assert np.all(np.isfinite(result.tj)) and result.tj[-1] < 0 <= result.tj[:-1].min()


@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("n_baselines", [1, 3])
def test_the_risk_measure_registry_scores_each_system_against_the_baselines(seed, n_baselines):
    """Every registered risk measure, system by system, against a hand-written loop: x_q and
    its mean and t statistic against the baselines' mean; ZRisk and GeoRisk of the system's
    row of [system; baselines] by the z-scores written out ([GEO] Eqs. 5-7)."""
    rng = np.random.default_rng(seed)
    systems, baselines, alpha = rng.uniform(0, 1, (4, 30)), rng.uniform(0, 1, (n_baselines, 30)), 3
    assert set(risk.RISK_MEASURES) == {"urisk", "trisk", "zrisk", "georisk"}
    for i, s in enumerate(systems):
        mean_b = baselines.mean(axis=0)
        x = np.array([d if d >= 0 else (1 + alpha) * d for d in s - mean_b])
        matrix = np.vstack([s, baselines])
        e = np.outer(matrix.sum(axis=1), matrix.sum(axis=0)) / matrix.sum()
        z = (matrix[0] - e[0]) / np.sqrt(e[0])
        zrisk = sum(v if v >= 0 else (1 + alpha) * v for v in z)
        expected = {"urisk": x.mean(), "trisk": x.mean() / (x.std(ddof=1) / np.sqrt(x.size)),
                    "zrisk": zrisk,
                    "georisk": np.sqrt(s.mean() * stats.norm.cdf(zrisk / s.size))}
        for name, measure in risk.RISK_MEASURES.items():
            got = measure.against(systems, baselines, alpha)
            assert got.shape == (4,)
            assert got[i] == pytest.approx(expected[name], rel=1e-12), name


def test_the_large_loss_count_is_named_by_its_fraction():
    """summary's count of losses beyond a fraction of the baseline, by a loop, under the name
    that says the fraction (a 30% fraction is not reported as loss_gt_20)."""
    system, baseline = np.array([0.5, 0.1, 0.75, 0.0]), np.array([0.6, 0.5, 0.9, 0.0])
    for fraction, name in ((0.2, "loss_gt_20"), (0.3, "loss_gt_30"), (0.125, "loss_gt_12.5")):
        fields = risk.summary(system, baseline, loss_fraction=fraction)
        expected = sum(b > 0 and s < (1 - fraction) * b for s, b in zip(system, baseline))
        assert name in fields.index and fields[name] == expected
        assert not any(f.startswith("loss_gt") and f != name for f in fields.index)
    with pytest.raises(ValueError, match=r"loss_fraction must be in \(0, 1\), got 20"):
        risk.summary(system, baseline, loss_fraction=20)


def test_the_risk_table_counts_wins_losses_ties_and_large_losses_against_the_baseline():
    """Counted by a loop over the queries; the baseline's own row has none; the large-loss
    column is named by its fraction."""
    rng = np.random.default_rng(4)
    values = np.round(rng.uniform(0, 1, (3, 50)), 1)  # rounded: ties occur
    values[1, :5] = 0.0
    scores = pd.DataFrame(values, index=["base", "a", "b"])
    table = risk.risk_table(scores, alphas=[1], baseline="base", loss_fraction=0.3)
    base = values[0]
    for i, system in ((1, "a"), (2, "b")):
        row = table.set_index("run").loc[system]
        s = values[i]
        assert row["wins"] == sum(x > y for x, y in zip(s, base))
        assert row["losses"] == sum(x < y for x, y in zip(s, base))
        assert row["ties"] == sum(x == y for x, y in zip(s, base))
        assert row["loss_gt_30"] == sum(y > 0 and x < 0.7 * y for x, y in zip(s, base))
    assert pd.isna(table.set_index("run").loc["base", "wins"])


def test_the_randomisation_test_of_urisk_is_the_exact_sign_flip_test_to_sampling_error():
    """Against the p-value over all 2^n sign flips of δ_q, enumerated here: within three
    standard errors of 9,999 seeded draws; seeded, so repeated exactly."""
    import itertools

    rng = np.random.default_rng(21)
    system, baseline = rng.uniform(size=11), rng.uniform(size=11)
    delta = system - baseline
    for alpha in (0.0, 5.0):
        def urisk_of(d, alpha=alpha):
            return np.mean(np.where(d >= 0, d, (1 + alpha) * d))

        observed = abs(urisk_of(delta))
        flips = [abs(urisk_of(delta * np.array(signs))) >= observed - 1e-15
                 for signs in itertools.product((1.0, -1.0), repeat=delta.size)]
        exact = np.mean(flips)
        got = risk.urisk_randomisation_p(system, baseline, alpha)
        assert got == risk.urisk_randomisation_p(system, baseline, alpha)
        assert abs(got - exact) < 3 * np.sqrt(exact * (1 - exact) / 9999) + 1e-4, alpha
    assert np.isnan(risk.urisk_randomisation_p(system, system, 1.0))
