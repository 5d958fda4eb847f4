"""The objectives' target measure (``measure=``): ERR@k against exhaustive swap enumeration, the
risk multipliers with ERR in place of NDCG, the α = 0 identities, NDCG@k as before."""

import lightgbm as lgb
import numpy as np
import pytest

from lgb_risk import TFARO, TSARO, UCRO, BaselineStore, GeoRisk, LambdaMART, TStarFARO, metrics
from lgb_risk.feval import risk_feval
from lgb_risk.objectives import OBJECTIVES, make_objective
from tests import naive
from tests import naive_objectives as ref
from tests.conftest import random_problem, split_queries
from tests.test_objectives import assert_close

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def err_problem(seed, k, n_queries=20, max_docs=12, max_label=3):
    """Random queries with ties and equal labels, the reference's ERR@k of the current ranking,
    the ranked labels, each pair's swap change evaluated by the measure itself, and baselines
    placed around the model's ERR@k so that swaps cross them."""
    rng = np.random.default_rng(seed)
    labels, scores, group = random_problem(rng, n_queries=n_queries, max_docs=max_docs,
                                           max_label=max_label, tie_levels=4)
    top = max(1, int(labels.max()))
    model, ranked = ref.err_context(labels.tolist(), scores.tolist(), group.tolist(), k, top)

    def change(q, i, j):
        return ref.err_swap_change(ranked[q], i, j, k, top)

    base = np.clip(np.array(model) + rng.uniform(-0.2, 0.2, n_queries), 0, 1)
    others = np.clip(base[:, None] + rng.uniform(-0.2, 0.2, (n_queries, 3)), 0, 1)
    return labels, scores, group, model, change, base, others


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("k", [1, 3, 20])
@pytest.mark.parametrize("settings", [{}, {"lambdarank_norm": False},
                                      {"lambdarank_truncation_level": 2}, {"sigmoid": 2.0}])
def test_err_target_lambdamart_is_every_swap_enumerated(seed, k, settings):
    """Each pair weighs |ERR@k(swapped) − ERR@k|, the swap evaluated by ERR's definition."""
    labels, scores, group, _, change, _, _ = err_problem(seed, k)
    grad, hess = LambdaMART(measure=f"err@{k}", exact_sigmoid=True, **settings).gradients(
        scores, labels, group)
    want = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(), change=change,
                          sigmoid=settings.get("sigmoid", 1.0),
                          T=settings.get("lambdarank_truncation_level", 30),
                          norm=settings.get("lambdarank_norm", True))
    assert_close(grad, want[0])
    assert_close(hess, want[1])


def test_err_max_label_is_the_measures_or_the_training_sets():
    labels, scores, group, *_ = err_problem(7, 5, max_label=2)
    ranked = [ref.ranked_positions_labels(y, s)
              for y, s in split_queries(labels.tolist(), scores.tolist(), group.tolist())]
    for written, top in (("err@5", 2), ("err(max_label=4)@5", 4)):
        grad, _ = LambdaMART(measure=written, exact_sigmoid=True).gradients(scores, labels, group)
        def change(q, i, j, top=top):
            return ref.err_swap_change(ranked[q], i, j, 5, top)

        want, _ = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(),
                                 change=change)
        assert_close(grad, want)
    with pytest.raises(ValueError, match=r"label 2 of document \d+ exceeds max_label=1"):
        LambdaMART(measure="err(max_label=1)@5").gradients(scores, labels, group)


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("alpha", [1.0, 5.0])
def test_ucro_and_tsaro_with_err_follow_the_papers_multipliers(seed, alpha):
    """F(M) = M − M_b, or (1 + α_q)(M − M_b) below the baseline, M and M_b ERR@k; each pair's m =
    (F(M + ΔM) − F(M)) / ΔM with ΔM the swap's change of ERR@k."""
    k = 4
    labels, scores, group, model, change, base, _ = err_problem(seed, k)
    alphas = {UCRO: [alpha] * len(model), TSARO: ref.saro_alphas(model, base.tolist(), alpha)}
    for cls, alpha_of_query in alphas.items():
        got = cls(alpha=alpha, measure=f"err@{k}", baseline=base, exact_sigmoid=True).gradients(
            scores, labels, group)
        multiplier = ref.crossing_multiplier(model, base.tolist(), None, alpha_of_query, k,
                                             change=change)
        want = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(), multiplier,
                              change=change)
        assert_close(got[0], want[0])
        assert_close(got[1], want[1])


@pytest.mark.parametrize("seed", range(2))
def test_faro_variants_with_err_weight_each_query_by_its_tr_q(seed):
    alpha, k = 5.0, 4
    labels, scores, group, model, change, base, others = err_problem(seed, k)
    for cls, baseline in ((TFARO, base), (TStarFARO, others)):
        parameter = cls.baseline_parameter
        got = cls(alpha=alpha, measure=f"err@{k}", exact_sigmoid=True,
                  **{parameter: baseline}).gradients(scores, labels, group)
        against = baseline if baseline.ndim == 1 else baseline.mean(axis=1)
        alphas = ref.saro_alphas(model, against.tolist(), alpha)
        want = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(),
                              lambda q, i, j, li, lj, alphas=alphas: 1 + alphas[q],
                              change=change)
        assert_close(got[0], want[0])
        assert_close(got[1], want[1])


@pytest.mark.parametrize("delta", ["local", "exact"])
def test_georisk_with_err_follows_the_papers_marginal_gains(delta):
    alpha, k = 2.0, 4
    labels, scores, group, model, change, _, others = err_problem(3, k)
    got = GeoRisk(alpha=alpha, measure=f"err@{k}", baselines=others, delta=delta,
                  exact_sigmoid=True).gradients(scores, labels, group)
    multiplier = ref.georisk_multiplier(model, others.T.tolist(), None, alpha, k,
                                        exact=delta == "exact", change=change)
    want = ref.lambdamart(labels.tolist(), scores.tolist(), group.tolist(), multiplier,
                          change=change)
    assert_close(got[0], want[0])
    assert_close(got[1], want[1])


@pytest.mark.parametrize("name", [n for n in OBJECTIVES if n not in ("LambdaMART", "GeoRisk")])
@pytest.mark.parametrize("measure", ["err@3", "err(max_label=4)@10", "ndcg@5"])
def test_alpha_zero_is_the_targets_lambdamart_bit_for_bit(name, measure):
    labels, scores, group, _, _, base, others = err_problem(11, 3)
    baseline = others if OBJECTIVES[name].baseline_parameter == "baselines" else base
    plain = LambdaMART(measure=measure).gradients(scores, labels, group)
    risky = make_objective(name, alpha=0.0, baseline=baseline, measure=measure).gradients(
        scores, labels, group)
    np.testing.assert_array_equal(risky[0], plain[0])
    np.testing.assert_array_equal(risky[1], plain[1])


def test_ndcg_measure_is_the_former_k_and_lambdamart_stays_native():
    labels, scores, group, _, _, base, _ = err_problem(2, 5)
    np.testing.assert_array_equal(
        UCRO(alpha=3, measure="ndcg@5", baseline=base).gradients(scores, labels, group)[0],
        UCRO(alpha=3, k=5, baseline=base).gradients(scores, labels, group)[0])
    np.testing.assert_array_equal(LambdaMART(measure="ndcg@10").gradients(scores, labels,
                                                                          group)[0],
                                  LambdaMART().gradients(scores, labels, group)[0])


def test_ucro_toward_err_trains_in_lightgbm_and_raises_training_err():
    rng = np.random.default_rng(5)
    group = np.full(60, 20)
    X = rng.normal(size=(group.sum(), 6))
    labels = np.clip(np.round(X[:, 0] + 0.5 * X[:, 1] + rng.normal(0, 0.7, X.shape[0])), 0, 3)
    bm25 = X[:, 1]  # a weak baseline: one feature
    base = metrics.err(labels, bm25, group, 20, max_label=3)
    objective = UCRO(alpha=5, measure="err@20", baseline=base)
    params = {"objective": objective, "learning_rate": 0.1, "num_leaves": 7, "verbose": -1,
              "min_data_in_leaf": 5, "num_threads": 1}
    booster = lgb.train(params, lgb.Dataset(X, labels, group=group), num_boost_round=30)
    trained = metrics.err(labels, booster.predict(X), group, 20, max_label=3)
    assert trained.mean() > base.mean() + 0.05
    np.testing.assert_allclose(objective.target_values(booster.predict(X), labels, group),
                               trained, rtol=0, atol=1e-12)


def test_a_store_of_another_measure_is_refused_and_the_right_one_taken():
    labels, scores, group, *_ = err_problem(4, 20, n_queries=3)
    ids = ["a", "b", "c"]
    err20 = metrics.err(labels, scores, group, 20, max_label=3)
    ndcg_store = BaselineStore.from_scores(scores, labels, group, ids, "bm25", k=20)
    err_store = BaselineStore(ndcg_store.table.assign(bm25=err20), "err(max_label=3)", 20)
    with pytest.raises(ValueError, match=r"computed with NDCG@20, but ERR\(max_label=3\)@20 is "
                                         "needed"):
        UCRO(measure="err@20", baseline=ndcg_store, query_ids=ids).gradients(scores, labels,
                                                                             group)
    # a store that does not say its l_max could hold another ERR: refused, saying why
    unnamed = BaselineStore(err_store.table, "err", 20)
    with pytest.raises(ValueError, match=r"computed with ERR@20, but ERR\(max_label=3\)@20 is "
                                         r"needed \(ERR's grades"):
        UCRO(measure="err@20", baseline=unnamed, query_ids=ids).gradients(scores, labels, group)
    by_store = UCRO(alpha=2, measure="err@20", baseline=err_store, query_ids=ids)
    by_array = UCRO(alpha=2, measure="err@20", baseline=err20)
    np.testing.assert_array_equal(by_store.gradients(scores, labels, group)[0],
                                  by_array.gradients(scores, labels, group)[0])


@pytest.mark.parametrize("measure, message", [
    ("ap@10", "target is ndcg@k or err@k"),
    ("err", "target is ndcg@k or err@k"),
    ("ndcg(label_gain=linear)@10", "takes no convention choices"),
    (10, "must be a measure such as"),
])
def test_a_measure_the_kernel_cannot_target_is_refused(measure, message):
    with pytest.raises(ValueError, match=message):
        UCRO(measure=measure, baseline=[0.5]).gradients([0.1, 0.2], [1, 0], [2])


def test_k_and_a_measure_with_another_cut_off_are_refused():
    with pytest.raises(ValueError, match=r"k=5 contradicts measure='err@20'"):
        UCRO(k=5, measure="err@20", baseline=[0.5]).gradients([0.1, 0.2], [1, 0], [2])


def test_risk_feval_compares_err_per_query_as_a_loop_does():
    labels, scores, group, *_ = err_problem(9, 20)
    base = np.random.default_rng(0).uniform(0, 1, group.size)
    name, value, higher = risk_feval(base, measure="urisk", alpha=5, effectiveness="err@20")(
        labels, scores, None, group)
    top = int(labels.max())
    model = [naive.err(y, s, 20, top)
             for y, s in split_queries(labels.tolist(), scores.tolist(), group.tolist())]
    want = np.mean([m - b if m >= b else 6 * (m - b) for m, b in zip(model, base)])
    assert name == "urisk(ERR@20)[a=5, default]" and higher
    assert value == pytest.approx(want, abs=1e-12)


def test_a_split_training_set_measures_err_with_the_whole_sets_highest_label():
    """On a part of the training set lacking the top grade, ERR's l_max would drop: the
    distributed and XGBoost-on-Dask paths write the whole set's in (``with_max_label``)."""
    labels, scores, group, _, _, base, _ = err_problem(6, 5, max_label=3)
    part = np.flatnonzero(np.repeat(np.arange(group.size), group) < 4)
    low = np.minimum(labels[part], 2)  # a part without grade 3
    objective = UCRO(alpha=2, measure="err@5", baseline=base[:4])
    fixed = objective.with_max_label(3)
    assert fixed.target().label == "ERR(max_label=3)@5" and objective.measure == "err@5"
    own, whole = (o.gradients(scores[part], low, group[:4])[0] for o in (objective, fixed))
    assert not np.array_equal(own, whole)
    np.testing.assert_array_equal(
        whole, UCRO(alpha=2, measure="err(max_label=3)@5", baseline=base[:4]).gradients(
            scores[part], low, group[:4])[0])
    assert UCRO(k=5, baseline=base).with_max_label(3).target().label == "NDCG@5"
    given = UCRO(measure="err(max_label=4)@5", baseline=base)
    assert given.with_max_label(3) is given
