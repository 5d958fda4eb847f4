"""Objectives against the naive reference (tests/naive_objectives.py), and their contracts."""

from dataclasses import dataclass
from typing import NamedTuple

import lightgbm as lgb
import numpy as np
import pytest

from lgb_risk import TFARO, TSARO, UCRO, GeoRisk, LambdaMART, TStarFARO, objectives
from lgb_risk._training import training_set
from lgb_risk.objectives import OBJECTIVES
from tests import naive_objectives as ref
from tests.conftest import random_problem

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def problem(seed, k=3, n_queries=25, max_docs=14, tie_levels=None):
    """Random queries (ties, equal labels, single-document and no-relevant queries) and
    baselines placed around the model's NDCG@k so that swaps cross them, some exactly on it.
    An exact tie M = M_b is only placed where M is 0 or 1: elsewhere the kernel's and the
    reference's M may differ in the last bit, and the one-sided slope at the kink with them."""
    rng = np.random.default_rng(seed)
    labels, scores, group = random_problem(rng, n_queries=n_queries, max_docs=max_docs,
                                           max_label=3, tie_levels=tie_levels)
    model, idcg = ref.risk_context(labels.tolist(), scores.tolist(), group.tolist(), k)
    model_arr = np.array(model)
    base = np.clip(model_arr + rng.uniform(-0.25, 0.25, n_queries), 0, 1)
    # On the kink of F where M is exact in any summation order (0 or 1): one-sided slopes.
    kink = (model_arr == 0.0) | (model_arr == 1.0)
    base[kink] = model_arr[kink]
    others = np.clip(base[:, None] + rng.uniform(-0.2, 0.2, (n_queries, 3)), 0, 1)
    return labels, scores, group, model, idcg, base, others


def assert_close(got, want):
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    scale = max(np.abs(want).max(), 1e-12)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * scale)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("ties", [None, 3])
def test_lambdamart_matches_naive_reference(seed, ties):
    labels, scores, group, *_ = problem(seed, tie_levels=ties)
    for kwargs in ({}, {"lambdarank_truncation_level": 4}, {"lambdarank_norm": False},
                   {"sigmoid": 2.0}):
        grad, hess = LambdaMART(exact_sigmoid=True, **kwargs).gradients(scores, labels, group)
        T = kwargs.get("lambdarank_truncation_level", 30)
        want = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(),
                              sigmoid=kwargs.get("sigmoid", 1.0), T=T,
                              norm=kwargs.get("lambdarank_norm", True))
        assert grad.dtype == np.float32 and hess.dtype == np.float32
        assert_close(grad, want[0])
        assert_close(hess, want[1])


@pytest.mark.parametrize("sigmoid", [1.0, 0.7, 2.5])
def test_sigmoid_table_is_lightgbms_loop_bit_for_bit(sigmoid):
    """The vectorised table against LightGBM's loop (rank_objective.hpp), written scalar here:
    entry i = 1 / (1 + exp((i / factor + low) * sigmoid)) with the C library's exp."""
    import math

    table, low, high, factor = training_set.sigmoid_table(sigmoid)
    assert low == -25.0 / sigmoid and high == 25.0 / sigmoid
    assert factor == (1 << 20) / (high - low) and table.size == 1 << 20
    rng = np.random.default_rng(int(sigmoid * 10))
    chunk_edges = [e + d for e in range(0, table.size, training_set.SIGMOID_CHUNK) for d in (-1, 0)]
    for i in [*chunk_edges[1:], table.size - 1, *rng.integers(0, table.size, 4000)]:
        want = 1.0 / (1.0 + math.exp((i / factor + low) * sigmoid))
        assert table[i] == want, (i, table[i], want)


def test_lambdamart_weights_and_faithful_sigmoid_close_to_exact():
    labels, scores, group, *_ = problem(8)
    weights = np.random.default_rng(1).uniform(0.5, 2.0, labels.size)
    grad, hess = LambdaMART(exact_sigmoid=True).gradients(scores, labels, group, weights)
    want = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(),
                          weights=weights.tolist())
    assert_close(grad, want[0])
    assert_close(hess, want[1])
    table_grad, _ = LambdaMART().gradients(scores, labels, group, weights)
    assert np.abs(table_grad - grad).max() < 1e-4 * np.abs(grad).max()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("alpha", [1.0, 5.0])
@pytest.mark.parametrize("k", [2, 3, 10])
def test_ucro_matches_naive_reference(seed, alpha, k):
    labels, scores, group, model, idcg, base, _ = problem(seed, k=k, tie_levels=4)
    obj = UCRO(alpha=alpha, k=k, baseline=base, exact_sigmoid=True)
    grad, hess = obj.gradients(scores, labels, group)
    mult = ref.crossing_multiplier(model, base.tolist(), idcg, [alpha] * len(model), k)
    want = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(), mult)
    assert_close(grad, want[0])
    assert_close(hess, want[1])


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("cls", [TSARO, TFARO])
@pytest.mark.parametrize("definition", ["x_over_sx", "delta_over_se", "jforests"])
def test_tsaro_tfaro_match_naive_reference(seed, cls, definition):
    """Under each definition of TR_q ([TR] Eq. 21, [GEO] §6, Jforests)."""
    alpha, k = 5.0, 3
    labels, scores, group, model, idcg, base, _ = problem(seed, k=k)
    grad, hess = cls(alpha=alpha, k=k, baseline=base, exact_sigmoid=True,
                     tr_definition=definition).gradients(scores, labels, group)
    alphas = ref.saro_alphas(model, base.tolist(), alpha, definition=definition)
    if cls is TSARO:
        mult = ref.crossing_multiplier(model, base.tolist(), idcg, alphas, k)
    else:
        mult = lambda q, i, j, li, lj: 1 + alphas[q]  # noqa: E731
    want = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(), mult)
    assert_close(grad, want[0])
    assert_close(hess, want[1])


def test_tstar_faro_uses_the_mean_of_the_baselines():
    alpha, k = 5.0, 3
    labels, scores, group, model, idcg, _, others = problem(5, k=k)
    got = TStarFARO(alpha=alpha, k=k, baselines=others, exact_sigmoid=True).gradients(
        scores, labels, group)
    alphas = ref.saro_alphas(model, others.mean(axis=1).tolist(), alpha)
    want = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(),
                          lambda q, i, j, li, lj: 1 + alphas[q])
    assert_close(got[0], want[0])
    assert_close(got[1], want[1])


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("delta", ["local", "exact"])
@pytest.mark.parametrize("failed", [False, True])
def test_georisk_matches_naive_reference(seed, delta, failed):
    """``failed``: some queries are failed by every system (e_q = 0), whose pairs get multiplier 1
    and which stay out of the rescaling constant."""
    alpha, k = 2.0, 3
    if failed:
        labels, scores, group, model, idcg, others = _problem_with_failed_queries(seed, k)
    else:
        labels, scores, group, model, idcg, _, others = problem(seed, k=k)
    got = GeoRisk(alpha=alpha, k=k, baselines=others, delta=delta, exact_sigmoid=True
                  ).gradients(scores, labels, group)
    mult = ref.georisk_multiplier(model, others.T.tolist(), idcg, alpha, k,
                                  exact=delta == "exact")
    want = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(), mult)
    assert_close(got[0], want[0])
    assert_close(got[1], want[1])


@pytest.mark.parametrize("seed", range(3))
def test_alpha_zero_reproduces_lambdamart_exactly(seed):
    labels, scores, group, _, _, base, others = problem(seed, k=3, tie_levels=5)
    plain = LambdaMART().gradients(scores, labels, group)
    for cls in ALPHA_ZERO_IS_LAMBDAMART:
        obj = _objective(cls, 0.0, 3, base, others)
        obj.exact_sigmoid = False
        grad, hess = obj.gradients(scores, labels, group)
        assert np.array_equal(grad, plain[0]) and np.array_equal(hess, plain[1]), obj


def _saro(model, idcg, alpha, k, baseline):
    alphas = ref.saro_alphas(model, baseline.tolist(), alpha)
    return ref.crossing_multiplier(model, baseline.tolist(), idcg, alphas, k)


def _faro(model, alpha, baseline):
    alphas = ref.saro_alphas(model, baseline.tolist(), alpha)
    return lambda q, i, j, li, lj: 1 + alphas[q]


#: The naive reference's pair multiplier of every risk-sensitive objective of the registry:
#: class -> function (alpha, k, model, idcg, base, others) -> multiplier (fresh state).
REFERENCES = {
    UCRO: lambda a, k, model, idcg, base, others: ref.crossing_multiplier(
        model, base.tolist(), idcg, [a] * len(model), k),
    TSARO: lambda a, k, model, idcg, base, others: _saro(model, idcg, a, k, base),
    TFARO: lambda a, k, model, idcg, base, others: _faro(model, a, base),
    TStarFARO: lambda a, k, model, idcg, base, others: _faro(model, a, others.mean(axis=1)),
    GeoRisk: lambda a, k, model, idcg, base, others: ref.georisk_multiplier(
        model, others.T.tolist(), idcg, a, k),
}
RISK_CLASSES = [cls for cls in OBJECTIVES.values() if cls.baseline_parameter is not None]
#: GeoRisk's multiplier at α = 0 is still GeoRisk's slope, not 1: every other risk objective
#: reduces to LambdaMART there.
ALPHA_ZERO_IS_LAMBDAMART = [cls for cls in RISK_CLASSES if cls is not GeoRisk]


def test_every_objective_of_the_registry_has_an_independent_reference():
    missing = [cls.__name__ for cls in RISK_CLASSES if cls not in REFERENCES]
    assert not missing, f"no naive reference in tests/naive_objectives.py for {missing}"


def _reference_multiplier(cls, alpha, k, model, idcg, base, others):
    """The naive reference's pair multiplier of each objective class (fresh state)."""
    return REFERENCES[cls](alpha, k, model, idcg, base, others)


def _objective(cls, alpha, k, base, others, **params):
    given = {"baselines": others} if cls.baseline_parameter == "baselines" else {
        "baseline": base}
    return cls(alpha=alpha, k=k, exact_sigmoid=True, **given, **params)




@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("cls", RISK_CLASSES)
@pytest.mark.parametrize("params", [{"norm_includes_risk": True},
                                    {"lambdarank_norm": False},
                                    {"lambdarank_norm": False, "norm_includes_risk": True}])
def test_every_placement_and_normalisation_matches_naive_reference(seed, cls, params):
    """Version 0.1's placement (Σ of log2(1 + Σ)/Σ over the multiplied pairs) and Jforests'
    setting (no per-query normalisation) against the reference, for every risk objective."""
    alpha, k = 3.0, 3
    labels, scores, group, model, idcg, base, others = problem(seed, k=k)
    grad, hess = _objective(cls, alpha, k, base, others, **params).gradients(
        scores, labels, group)
    want = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(),
                          _reference_multiplier(cls, alpha, k, model, idcg, base, others),
                          norm=params.get("lambdarank_norm", True),
                          norm_includes_risk=params.get("norm_includes_risk", False))
    assert_close(grad, want[0])
    assert_close(hess, want[1])


@pytest.mark.parametrize("cls", [TFARO, TStarFARO])
def test_faro_scales_each_query_by_one_plus_alpha_prime(cls):
    """Default placement: each query's Σ|λ| is (1 + α'_q) times LambdaMART's; with the former
    placement much less of that reaches the query."""
    alpha, k = 5.0, 10
    labels, scores, group, model, _, base, others = problem(4, k=k, n_queries=60, max_docs=30)
    baseline = others.mean(axis=1) if cls is TStarFARO else base
    alphas = np.array(ref.saro_alphas(model, baseline.tolist(), alpha))
    query = np.repeat(np.arange(group.size), group)

    def mass(grad):
        return np.bincount(query, weights=np.abs(grad.astype(np.float64)),
                           minlength=group.size)

    plain = mass(LambdaMART().gradients(scores, labels, group)[0])
    moved = plain > 0
    ratios = {}
    for former in (False, True):
        obj = _objective(cls, alpha, k, base, others, norm_includes_risk=former)
        obj.exact_sigmoid = False
        ratios[former] = mass(obj.gradients(scores, labels, group)[0])[moved] / plain[moved]
    np.testing.assert_allclose(ratios[False], 1 + alphas[moved], rtol=1e-5)
    share = (ratios[True] - 1).sum() / alphas[moved].sum()
    assert share < 0.5, share


@pytest.mark.parametrize("params", [{}, {"norm_includes_risk": True},
                                    {"lambdarank_norm": False}])
def test_alpha_zero_is_lambdamart_bit_for_bit_in_every_setting(params):
    labels, scores, group, _, _, base, others = problem(7, k=3, tie_levels=5)
    lambdamart_params = {"lambdarank_norm": params.get("lambdarank_norm", True)}
    plain = LambdaMART(**lambdamart_params).gradients(scores, labels, group)
    for cls in ALPHA_ZERO_IS_LAMBDAMART:
        obj = _objective(cls, 0.0, 3, base, others, **params)
        obj.exact_sigmoid = False
        grad, hess = obj.gradients(scores, labels, group)
        assert np.array_equal(grad, plain[0]) and np.array_equal(hess, plain[1]), cls


def test_georisk_local_multipliers_correlate_with_exact_recomputation():
    """[GEO]'s local update of ΔGeoRisk against recomputing every z, pair by pair through the
    public gradients: with truncation level 1 the only pairs are (top document, j), so the
    document at position j ≥ 1 gets exactly one pair's λ, and its gradient divided by
    LambdaMART's is that pair's multiplier."""
    rng = np.random.default_rng(0)
    k = 10
    labels, scores, group, model, *_ = problem(1, k=k, n_queries=200, max_docs=40)
    others = np.clip(np.array(model)[:, None] + rng.normal(0, 0.2, (200, 4)), 0, 1)
    plain = LambdaMART(lambdarank_truncation_level=1).gradients(scores, labels, group)[0]
    position = np.concatenate([np.argsort(np.argsort(-np.array(s), kind="stable"))
                               for _, s in ref.split_queries(labels.tolist(), scores.tolist(),
                                                             group.tolist())])
    single_pair = (position > 0) & (plain != 0)  # documents below the top, in a pair
    multipliers = {
        delta: GeoRisk(alpha=5, k=k, baselines=others, delta=delta, lambdarank_truncation_level=1
                       ).gradients(scores, labels, group)[0][single_pair] / plain[single_pair]
        for delta in ("local", "exact")}
    assert single_pair.sum() > 2000
    r = np.corrcoef(multipliers["local"], multipliers["exact"])[0, 1]
    print(f"GeoRisk local vs exact multipliers: r = {r:.6f} over {single_pair.sum()} pairs")
    assert r >= 0.999, r


def _dataset(labels, group, **kwargs):
    X = np.random.default_rng(0).normal(size=(len(labels), 3))
    return lgb.Dataset(X, labels, group=group, **kwargs).construct()


@pytest.mark.parametrize("call, message", [
    (lambda d, n: UCRO(alpha=1, baseline=np.zeros(n + 1))(np.zeros(d), _ds()),
     "cover 21 queries but the training set has 20"),
    (lambda d, n: UCRO(alpha=-1, baseline=np.zeros(n))(np.zeros(d), _ds()), "alpha must be"),
    (lambda d, n: UCRO(alpha=1)(np.zeros(d), _ds()), "needs baseline="),
    (lambda d, n: UCRO(alpha=1, baselines=np.zeros((n, 2)))(np.zeros(d), _ds()),
     "unexpected keyword argument 'baselines'"),
    (lambda d, n: UCRO(alpha=1, baseline=np.zeros((n, 2)))(np.zeros(d), _ds()),
     "takes one baseline, got 2 systems"),
    (lambda d, n: UCRO(alpha="5", baseline=np.zeros(n))(np.zeros(d), _ds()),
     "alpha must be a number >= 0, got '5'"),
    (lambda d, n: TFARO(alpha=True, baseline=np.zeros(n))(np.zeros(d), _ds()),
     "alpha must be a number >= 0, got True"),
    (lambda d, n: TSARO(alpha=1, baseline=np.zeros(n), se_update="once")(np.zeros(d), _ds()),
     "se_update must be one of"),
    (lambda d, n: UCRO(alpha=1, baseline=np.zeros(n), norm_includes_risk="no")(np.zeros(d),
                                                                              _ds()),
     "norm_includes_risk must be True or False"),
    (lambda d, n: LambdaMART(lambdarank_norm=0)(np.zeros(d), _ds()),
     "lambdarank_norm must be True or False"),
    (lambda d, n: UCRO(alpha=1, k=0, baseline=np.zeros(n))(np.zeros(d), _ds()),
     "k must be a whole number >= 1"),
    (lambda d, n: GeoRisk(alpha=1, baselines=np.zeros(n), delta="fast")(np.zeros(d), _ds()),
     "delta must be one of"),
    (lambda d, n: UCRO(alpha=1, baseline=np.full(n, np.nan))(np.zeros(d), _ds()),
     "query index 0 is nan"),
    (lambda d, n: LambdaMART()(np.full(d, np.nan), _ds()), "prediction 0 is nan"),
    (lambda d, n: LambdaMART(label_gain=[0, 1])(np.zeros(d), _ds()), "no entry in label_gain"),
    (lambda d, n: LambdaMART()(np.zeros(d), lgb.Dataset(np.zeros((d, 2)), np.zeros(d))
                               .construct()), "needs query groups"),
    (lambda d, n: LambdaMART()(np.zeros(d), np.zeros(d)), "sklearn_objective"),
])
def test_bad_input_is_a_clear_error_at_the_first_call(call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call(DOCS, QUERIES)


RNG = np.random.default_rng(3)
GROUP = RNG.integers(1, 6, 20)
QUERIES, DOCS = GROUP.size, int(GROUP.sum())
LABELS = RNG.integers(0, 3, DOCS)


def _ds():
    return _dataset(LABELS, GROUP, params={"verbose": -1})


def test_usable_with_lgbm_ranker():
    X = np.random.default_rng(0).normal(size=(DOCS, 3))
    base = np.full(QUERIES, 0.5)
    ranker = lgb.LGBMRanker(objective=UCRO(alpha=2, baseline=base).sklearn_objective,
                            n_estimators=5, verbose=-1)
    ranker.fit(X, LABELS, group=GROUP)
    native = lgb.LGBMRanker(objective=LambdaMART().sklearn_objective, n_estimators=5,
                            verbose=-1, deterministic=True, num_threads=1)
    native.fit(X, LABELS, group=GROUP)
    assert ranker.predict(X).shape == (DOCS,) and np.isfinite(native.predict(X)).all()


def test_a_query_longer_than_lightgbms_10000_limit_is_handled():
    """LightGBM refuses queries over 10,000 documents; the objectives compute them."""
    rng = np.random.default_rng(4)
    n = 10_500
    labels = rng.choice(4, size=n, p=[0.7, 0.2, 0.07, 0.03])
    scores = rng.normal(size=n)
    grad, hess = LambdaMART(exact_sigmoid=True).gradients(scores, labels, [n])
    want = ref.lambdamart(labels.tolist(), scores.tolist(), [n])
    assert_close(grad, want[0])
    assert_close(hess, want[1])


def test_se_update_first_keeps_s_x_from_after_the_first_tree():
    """[TR] §6.3: s_x is computed after the first boosting iteration and kept. Calls: the
    initial scores (s_x of that model), after the first tree (s_x taken and frozen), later
    (frozen); training again from the initial scores starts over."""
    alpha, k = 5.0, 3
    labels, initial, group, _, idcg, base, _ = problem(2, k=k)
    rng = np.random.default_rng(9)
    after_first = initial + rng.normal(0, 1.0, initial.size)
    later = after_first + rng.normal(0, 1.0, initial.size)

    def sx_of(scores):
        model, _ = ref.risk_context(labels.tolist(), scores.tolist(), group.tolist(), k)
        return ref.sample_sd(ref.risk_x(model, base.tolist(), alpha))

    def expected(scores, sx):
        model, _ = ref.risk_context(labels.tolist(), scores.tolist(), group.tolist(), k)
        alphas = ref.saro_alphas(model, base.tolist(), alpha, sx=sx)
        mult = ref.crossing_multiplier(model, base.tolist(), idcg, alphas, k)
        return ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(), mult)[0]

    assert len({sx_of(initial), sx_of(after_first), sx_of(later)}) == 3
    first = TSARO(alpha=alpha, k=k, baseline=base, exact_sigmoid=True)
    assert first.se_update == "first"
    every = TSARO(alpha=alpha, k=k, baseline=base, exact_sigmoid=True, se_update="iteration")
    calls = [(initial, sx_of(initial)), (after_first, sx_of(after_first)),
             (later, sx_of(after_first)),
             (initial, sx_of(initial)), (later, sx_of(later)), (after_first, sx_of(later))]
    for scores, sx in calls:
        assert_close(first.gradients(scores, labels, group)[0], expected(scores, sx))
        assert_close(every.gradients(scores, labels, group)[0], expected(scores, None))


def test_new_weights_or_labels_are_not_served_from_the_cache():
    labels, scores, group, *_ = problem(6)
    obj = LambdaMART(exact_sigmoid=True)
    plain = obj.gradients(scores, labels, group)[0]
    weights = np.full(labels.size, 2.0)
    assert_close(obj.gradients(scores, labels, group, weights)[0], 2 * plain)
    changed = labels.copy()
    changed[np.flatnonzero(labels > 0)[:3]] = 0  # same shape, other values
    want = ref.lambdamart(changed.tolist(), scores.tolist(), group.tolist())[0]
    assert_close(obj.gradients(scores, changed, group)[0], want)
    changed[np.flatnonzero(changed > 0)[:2]] = 0  # the same array object, changed in place
    want = ref.lambdamart(changed.tolist(), scores.tolist(), group.tolist())[0]
    assert_close(obj.gradients(scores, changed, group)[0], want)


def test_the_training_set_is_held_in_five_bytes_a_document():
    """One-byte labels and a four-byte order; the inputs are recognised by fingerprint, not by
    a copy of them."""
    labels, scores, group, *_ = problem(2)
    obj = UCRO(alpha=2, baseline=np.full(group.size, 0.5))
    obj.gradients(scores, labels.astype(np.float32), group)
    setup = obj._setup_cache
    assert setup.labels.dtype == np.int8 and setup.order.dtype == np.int32
    assert not any(isinstance(part, np.ndarray) for given in setup.given if given
                   for part in given)
    wide = LambdaMART(label_gain=np.arange(200.0))
    wide.gradients(scores, np.where(labels > 2, 150, labels), group)
    assert wide._setup_cache.labels.dtype == np.int32


def _problem_with_failed_queries(seed, k=3):
    """``problem`` with some queries failed by every system: their relevant documents scored
    below the others (so the model's NDCG@k is 0) and every baseline set to 0 there, so that
    the expected value e_q = S T_q / N is 0; some pairs of them change NDCG@k, some do not."""
    labels, scores, group, _, _, _, others = problem(seed, k=k, n_queries=40, max_docs=14)
    starts = np.concatenate(([0], np.cumsum(group)[:-1]))
    for q in np.flatnonzero(group >= k + 3)[::3]:
        docs = np.arange(starts[q], starts[q] + group[q])
        labels[docs] = 0
        labels[docs[-2:]] = (1, 2)
        scores[docs[-2:]] = scores[docs].min() - np.array([1.0, 2.0])
    model, idcg = ref.risk_context(labels.tolist(), scores.tolist(), group.tolist(), k)
    failed = np.array(model) == 0.0
    others[failed] = 0.0
    assert (failed & (np.array(idcg) > 0)).sum() >= 3  # failed queries with pairs to weigh
    return labels, scores, group, model, idcg, others


@pytest.mark.parametrize("delta", ["local", "exact"])
def test_georisk_pair_multipliers_equal_an_independent_computation(delta):
    """With truncation level 1 each document below the top is in exactly one pair, (top, j): its
    gradient divided by LambdaMART's is that pair's multiplier (the per-query normaliser is
    LambdaMART's in both). Every one is finite, and equals the naive reference's."""
    alpha, k = 5.0, 3
    labels, scores, group, model, idcg, others = _problem_with_failed_queries(1, k)
    plain = LambdaMART(lambdarank_truncation_level=1, exact_sigmoid=True).gradients(
        scores, labels, group)[0].astype(np.float64)
    got = GeoRisk(alpha=alpha, k=k, baselines=others, delta=delta, exact_sigmoid=True,
                  lambdarank_truncation_level=1).gradients(scores, labels, group)[0]
    mult = ref.georisk_multiplier(model, others.T.tolist(), idcg, alpha, k,
                                  exact=delta == "exact")
    checked = 0
    start = 0
    for q, size in enumerate(group):
        order = np.argsort(-scores[start:start + size], kind="stable") + start
        for j in range(1, size):
            doc = order[j]
            if plain[doc] == 0.0:
                continue
            want = mult(q, 0, j, int(labels[order[0]]), int(labels[doc]))
            assert np.isfinite(got[doc])
            np.testing.assert_allclose(got[doc] / plain[doc], want, rtol=2e-5, atol=1e-7)
            checked += 1
        start += size
    assert checked > 50


@pytest.mark.shared_data
def test_georisk_queries_every_system_fails_take_no_more_than_their_share_on_mq2008():
    """[GEO]'s setting on MQ2008 Fold 1 train: five BM25 baselines (LETOR features 21-25), α = 5.
    The queries scored 0 by the model and by every baseline hold at most (1 + α) times their
    share of LambdaMART's |λ| (before the rule they held 44-59% against about 1%), and GeoRisk's
    gradients stay on LambdaMART's scale (the rescaling constant is the mean marginal gain of
    the other queries)."""
    from lgb_risk import metrics
    from lgb_risk.data import load_letor
    from tests.conftest import shared_file

    alpha = 5.0
    train = load_letor(shared_file("mq2008/Fold1/train.txt"), n_features=46)
    X = train.X.toarray()
    baselines = np.column_stack([metrics.ndcg(train.y, X[:, f - 1], train.group, 10)
                                 for f in range(21, 26)])
    query = np.repeat(np.arange(train.group.size), train.group)
    states = [np.random.default_rng(0).normal(size=train.y.size)]
    booster = lgb.train({"objective": "lambdarank", "verbose": -1, "num_threads": 1,
                         "deterministic": True}, lgb.Dataset(X, train.y, group=train.group), 1)
    states.append(booster.predict(X, raw_score=True))
    for scores in states:
        model = metrics.ndcg(train.y, scores, train.group, 10)
        failed = ((model == 0) & (baselines.sum(axis=1) == 0))[query]
        plain = np.abs(LambdaMART().gradients(scores, train.y, train.group)[0]).astype(float)
        geo = np.abs(GeoRisk(alpha=alpha, baselines=baselines).gradients(
            scores, train.y, train.group)[0]).astype(float)
        assert plain[failed].sum() > 0  # failed queries with relevant documents below k
        share_plain = plain[failed].sum() / plain.sum()
        share_geo = geo[failed].sum() / geo.sum()
        scale = geo.sum() / plain.sum()
        print(f"failed queries' share of |λ|: LambdaMART {share_plain:.4f}, "
              f"GeoRisk {share_geo:.4f}; GeoRisk's |λ| / LambdaMART's {scale:.3f}")
        assert share_geo <= (1 + alpha) * share_plain
        assert 0.2 < scale < 5


@pytest.mark.parametrize("cls", [UCRO, TSARO])
def test_a_tie_with_the_baseline_does_not_depend_on_the_last_bit(cls):
    """M = M_b up to one ulp either way (the baseline's NDCG from another code path): the same
    gradients as the exact tie, on queries long enough for many pairs with ΔM = 0."""
    from lgb_risk import metrics

    rng = np.random.default_rng(3)
    labels, scores, group = (rng.integers(0, 3, 600), rng.normal(size=600), np.full(20, 30))
    model = metrics.ndcg(labels, scores, group, 3)
    tied = (model > 0) & (model < 1)
    tied[::2] = False
    base = np.where(tied, model, np.clip(model + rng.uniform(-0.3, 0.3, model.size), 0, 1))
    got = {}
    for name, baseline in (("equal", base), ("above", np.where(tied, np.nextafter(base, 2), base)),
                           ("below", np.where(tied, np.nextafter(base, -1), base))):
        got[name] = cls(alpha=5, k=3, baseline=baseline).gradients(scores, labels, group)[0]
    scale = np.abs(got["equal"]).max()
    for side in ("above", "below"):  # T-SARO's α'_q moves in the last bits with M_b, no more
        assert np.abs(got[side] - got["equal"]).max() <= 1e-6 * scale, side


def test_faro_lever_between_queries_tends_to_less_than_two_as_alpha_grows():
    """T-FARO's docstring: with losses present, max/min of 1 + α'_q over queries falls towards
    at most 2 as α grows."""
    rng = np.random.default_rng(0)
    model, base = rng.uniform(0, 1, 300), rng.uniform(0, 1, 300)
    ratios = []
    for alpha in (1.0, 5.0, 50.0, 1e4):
        weights = 1 + np.array(ref.saro_alphas(model.tolist(), base.tolist(), alpha))
        ratios.append(weights.max() / weights.min())
    assert ratios[1] > ratios[2] > ratios[3], ratios
    assert ratios[-1] < 2.01 < ratios[1], ratios


# -- A new objective, added from outside as the objectives' module docstring describes -------------

class _Halved(NamedTuple):
    """The toy risk state: one weight per query."""

    weight: np.ndarray


def _halved(state, q, delta_m, misordered):
    return state.weight[q]


@dataclass(eq=False, kw_only=True)
class _ToyObjective(objectives.OneBaseline):
    """Every pair of query q weighted by ``weight``."""

    paper_name = "Toy"
    weight: float = 0.5

    def risk_state(self, model_values, initial):
        return _Halved(weight=np.full(model_values.size, float(self.weight)))


@pytest.mark.slow
def test_a_toy_objective_takes_its_settings_from_the_configuration(monkeypatch):
    """The objectives' docstring: a state, a multiplier and a dataclass, about 16 lines; the
    configuration gives it every [objective] key it declares or inherits (sigmoid here), and
    LightGBM trains with it."""
    import inspect

    from lgb_risk.experiment import config as experiment_config

    objectives.multiplier_of(_Halved)(_halved)
    monkeypatch.setitem(objectives.OBJECTIVES, "_ToyObjective", _ToyObjective)
    lines = sum(len([line for line in inspect.getsource(part).splitlines()
                     if line.strip() and not line.strip().startswith(('"""', "#"))])
                for part in (_Halved, _halved, _ToyObjective))
    assert lines <= 16, lines
    config = experiment_config.validate({"learners": {"LambdaMART": [0], "_ToyObjective": [0]},
                                         "objective": {"sigmoid": 2.0, "weight": 0.25}})
    assert experiment_config.objective_parameters(config, "_ToyObjective") == {
        "sigmoid": 2.0, "weight": 0.25}
    labels, scores, group, *_ = problem(5)
    toy = _ToyObjective(baseline=np.zeros(group.size),
                        **experiment_config.objective_parameters(config, "_ToyObjective"))
    assert toy.sigmoid == 2.0 and repr(toy).startswith("_ToyObjective(sigmoid=2.0")
    plain = LambdaMART(sigmoid=2.0).gradients(scores, labels, group)[0]
    np.testing.assert_allclose(toy.gradients(scores, labels, group)[0], 0.25 * plain, rtol=1e-6)
    X = np.random.default_rng(0).normal(size=(labels.size, 3))
    booster = lgb.train({"objective": toy, "verbose": -1}, lgb.Dataset(X, labels, group=group), 3)
    assert booster.current_iteration() == 3


def test_a_setting_reaches_an_objective_whose_initialiser_takes_keywords(monkeypatch):
    """The configuration reads the parameters an objective declares, not its initialiser's
    signature: one written with ``**kwargs`` still receives ``[objective] sigmoid``."""
    from lgb_risk.experiment import config as experiment_config

    class Forwarding(UCRO):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)

    monkeypatch.setitem(objectives.OBJECTIVES, "Forwarding", Forwarding)
    config = experiment_config.validate({"learners": {"LambdaMART": [0], "Forwarding": [1]},
                                         "objective": {"sigmoid": 2.0}})
    params = experiment_config.objective_parameters(config, "Forwarding")
    assert params == {"sigmoid": 2.0}
    assert Forwarding(baseline=np.zeros(3), **params).sigmoid == 2.0


def test_sorting_from_the_last_calls_order_gives_the_one_stable_order():
    """The objective's sort starts from its previous call's ranking; whatever that start (the
    right order, a shuffle, the reverse, which exceeds the insertion budget), the result is the
    stable order by score, ties by index; and a second call's gradients equal a fresh
    objective's."""
    from lgb_risk._measuring.ranking import rerank_by_score
    from lgb_risk._measuring.segments import offsets_from_group

    rng = np.random.default_rng(11)
    for trial in range(40):
        labels, scores, group = random_problem(rng, n_queries=15, max_docs=60,
                                               tie_levels=3 if trial % 2 else None)
        offsets = offsets_from_group(group)
        query = np.repeat(np.arange(group.size), group)
        want = np.lexsort((np.arange(scores.size), -scores, query))  # by query, score, index
        shuffled = np.concatenate([rng.permutation(np.arange(a, b))
                                   for a, b in zip(offsets[:-1], offsets[1:])])
        reverse = np.concatenate([np.arange(b - 1, a - 1, -1)
                                  for a, b in zip(offsets[:-1], offsets[1:])])
        for previous in (want, shuffled, reverse):
            order = previous.copy()
            rerank_by_score(scores, order, offsets)  # in place
            np.testing.assert_array_equal(order, want)
    objective = LambdaMART()
    objective.gradients(scores, labels, group)
    moved = scores + rng.normal(scale=0.3, size=scores.size)
    for got, fresh in zip(objective.gradients(moved, labels, group),
                          LambdaMART().gradients(moved, labels, group)):
        np.testing.assert_array_equal(got, fresh)


def test_the_segment_sort_is_numpys_stable_sort():
    """Every query sorted by key ascending, equal keys by a second key or by position, as
    numpy's stable sort orders them: queries of 0 to 300 documents (across the insertion runs'
    and the merges' boundaries), keys with many ties, negative zeros among them."""
    from lgb_risk._measuring.ranking import argsort_segments
    from lgb_risk._measuring.segments import offsets_from_group

    rng = np.random.default_rng(36)
    group = np.array([0, 1, 2, 15, 16, 17, 31, 32, 33, 64, 100, 129, 300, 7])
    offsets = offsets_from_group(group)
    query = np.repeat(np.arange(group.size), group)
    position = np.arange(group.sum())
    for levels in (3, 40, None):
        primary = (rng.integers(0, levels, position.size) * 0.5 if levels
                   else rng.normal(size=position.size))
        primary[(primary == 0) & (position % 2 == 0)] = -0.0  # equal to the zeros beside
        secondary = rng.integers(0, 3, position.size).astype(np.float64)
        np.testing.assert_array_equal(argsort_segments(primary, secondary, False, offsets),
                                      np.lexsort((position, primary, query)))
        np.testing.assert_array_equal(argsort_segments(primary, secondary, True, offsets),
                                      np.lexsort((position, secondary, primary, query)))


@pytest.mark.parametrize("cls", [TSARO, TFARO, TStarFARO])
def test_a_model_that_ties_its_baseline_everywhere_gets_alpha_over_two(cls):
    """A booster started from the baseline's scores ties it on every query, but its NDCG and
    the baseline's come from different code paths and may differ in the last bit: those
    differences are ties (U-CRO's tolerance), so s_x = 0 and α'_q = α/2 on every query, the
    gradients those of the exactly equal baseline, and for T-FARO (1 + α/2) times
    LambdaMART's."""
    from lgb_risk import metrics

    labels, scores, group = random_problem(np.random.default_rng(11), n_queries=40)
    exact = metrics.ndcg(labels, scores, group, 10)
    inside = (exact > 0) & (exact < 1)  # one ulp up or down, alternately
    noisy = np.where(inside, np.nextafter(exact, np.where(np.arange(exact.size) % 2, 2.0, -1.0)),
                     exact)
    assert not np.array_equal(noisy, exact)
    parameter = "baselines" if cls is TStarFARO else "baseline"
    grads = {name: cls(alpha=6, **{parameter: values}).gradients(scores, labels, group)
             for name, values in (("exact", exact), ("noisy", noisy))}
    np.testing.assert_array_equal(grads["noisy"][0], grads["exact"][0])
    np.testing.assert_array_equal(grads["noisy"][1], grads["exact"][1])
    if cls is TFARO:  # its multiplier is 1 + α'_q = 1 + 3 on every pair of every query
        plain, _ = LambdaMART().gradients(scores, labels, group)
        np.testing.assert_allclose(grads["exact"][0], 4.0 * plain, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("chunk", [1, 50, 1 << 20])
def test_training_idcg_is_metrics_ideal_dcg_bit_for_bit(monkeypatch, chunk):
    """The objectives' IDCG (the ideal ranking by their own sort, measured by their DCG kernel,
    a chunk of queries at a time) against lgb_risk.metrics.ideal_dcg (the top-k selection, or
    past its limit the numpy sum), at LightGBM's truncation, a small cut-off and one past the
    top-k limit; labels with many ties, a label above 127 (four-byte labels) and one-document
    queries."""
    from lgb_risk import metrics

    monkeypatch.setattr(training_set, "IDEAL_CHUNK", chunk)
    rng = np.random.default_rng(37)
    group = np.concatenate([rng.integers(1, 300, 60), [1, 1, 700]])
    labels = rng.integers(0, 5, group.sum())
    labels[rng.integers(0, labels.size, 20)] = 200  # gain table past one byte
    gain_table = np.linspace(0.0, 9.0, 201) ** 1.5
    narrow = training_set.narrow_labels(labels)
    offsets = np.concatenate([[0], np.cumsum(group)])
    cutoffs = (30, 3, 600)
    got = training_set.ideal_dcg(narrow, offsets, gain_table,
                                metrics.discounts(int(group.max())), cutoffs)
    for values, k in zip(got, cutoffs):
        expected = metrics.ideal_dcg(labels, group, k, label_gain=gain_table)
        np.testing.assert_array_equal(values, expected)


def test_the_packed_state_has_every_built_in_states_fields_and_no_other():
    """BuiltinRisk's fields come from the built-in state types: each of their fields once, with
    its type; two states giving one name two types are refused where the module is read."""
    from typing import NamedTuple, get_type_hints

    from lgb_risk._training import lambda_kernel as kernel

    expected = {"kind": int, "per_query": bool}
    for state_type in kernel.BUILT_IN_STATES:
        expected.update(get_type_hints(state_type))
    assert get_type_hints(kernel.BuiltinRisk) == expected
    packed = kernel.packed(kernel.FlatRisk(alpha=np.array([0.5, 2.0])))
    assert packed.kind == kernel.BUILT_IN_STATES.index(kernel.FlatRisk) and packed.per_query
    assert packed.alpha.tolist() == [0.5, 2.0] and packed.model_values.size == 0

    class Clashing(NamedTuple):
        alpha: float  # FlatRisk's alpha is an array

    original = kernel.BUILT_IN_STATES
    try:
        kernel.BUILT_IN_STATES = (*original, Clashing)
        with pytest.raises(TypeError, match="Clashing.alpha is float, but another built-in "
                                            "state's alpha is ndarray"):
            kernel._packed_fields()
    finally:
        kernel.BUILT_IN_STATES = original


def test_lambdamart_measures_a_baseline_with_ndcg_at_10_and_make_objective_takes_class_defaults():
    """Without a measure LambdaMART's target_values are NDCG@10 (a baseline's values for the
    risk objectives' default target); make_objective leaves what it is not given to the class."""
    from lgb_risk import metrics
    from lgb_risk.objectives import make_objective

    labels, scores, group = np.array([2, 0, 1, 0, 1]), np.array([0.1, 0.4, 0.3, 0.2, 0.9]), [3, 2]
    np.testing.assert_array_equal(LambdaMART().target_values(scores, labels, group),
                                  metrics.ndcg(labels, scores, group, 10, ties="stable"))
    made = make_objective("TFARO", baseline=[0.5, 0.5])
    assert (made.alpha, made.k, made.target().label) == (TFARO(baseline=[0.5]).alpha, None,
                                                        "NDCG@10")


def test_every_framework_entry_point_goes_through_gradients():
    """lightgbm.train's call and LGBMRanker's ``sklearn_objective`` reach the objective through
    its public ``gradients``, so that a subclass overriding it (to count, log or stop, as the
    distributed tests do) is called by both."""
    import lightgbm as lgb

    class Counting(LambdaMART):
        calls = 0  # on the class: LGBMRanker works on a copy of the objective

        def gradients(self, preds, labels, group, weight=None):
            type(self).calls += 1
            return super().gradients(preds, labels, group, weight)

    rng = np.random.default_rng(3)
    X, labels, group = rng.normal(size=(30, 2)), rng.integers(0, 3, 30), [10, 10, 10]
    params = {"verbose": -1, "min_data_in_leaf": 2, "num_threads": 1}
    lgb.train({**params, "objective": Counting()}, lgb.Dataset(X, labels, group=group), 3)
    assert Counting.calls == 3
    Counting().lgbm_ranker(n_estimators=2, min_child_samples=2, verbose=-1).fit(X, labels,
                                                                               group=group)
    assert Counting.calls == 5
