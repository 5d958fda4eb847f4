"""Training with lightgbm.train on the real data: native equivalence, U-CRO's effect, feval."""

import json

import lightgbm as lgb
import numpy as np
import pytest

from lgb_risk import TFARO, UCRO, BaselineStore, LambdaMART, feval, metrics, risk
from lgb_risk.data import load_letor
from tests.conftest import shared_file

pytestmark = pytest.mark.shared_data

FAITHFUL = {"num_threads": 1, "deterministic": True, "verbose": -1}


def _train(objective, X, y, group, rounds=100, weight=None, **params):
    train_set = lgb.Dataset(X, y, group=group, weight=weight, params={"verbose": -1})
    return lgb.train({**FAITHFUL, **params, "objective": objective}, train_set, rounds)


def _assert_same_models(native, ours, X_test):
    trees_native = native.dump_model()["tree_info"]
    trees_ours = ours.dump_model()["tree_info"]
    assert len(trees_native) == len(trees_ours) == 100
    for t, (a, b) in enumerate(zip(trees_native, trees_ours)):
        assert json.dumps(a["tree_structure"]) == json.dumps(b["tree_structure"]), f"tree {t}"
    assert np.abs(native.predict(X_test) - ours.predict(X_test)).max() <= 1e-9


def _lightgbm_example():
    data = {part: load_letor(shared_file(f"lightgbm_example/rank.{part}"), n_features=300)
            for part in ("train", "test")}
    return data["train"], data["test"]


def _mq2008():
    return (load_letor(shared_file("mq2008/Fold1/train.txt"), n_features=46),
            load_letor(shared_file("mq2008/Fold1/test.txt"), n_features=46))


@pytest.mark.parametrize("dataset", [_lightgbm_example, _mq2008])
@pytest.mark.slow
def test_lambdamart_builds_the_native_lambdarank_model(dataset):
    train, test = dataset()
    native = _train("lambdarank", train.X, train.y, train.group)
    ours = _train(LambdaMART(), train.X, train.y, train.group)
    _assert_same_models(native, ours, test.X)


@pytest.mark.slow
def test_lambdamart_native_equivalence_with_weights_and_params():
    train, test = _mq2008()
    weight = np.random.default_rng(0).uniform(0.5, 2.0, train.y.size)
    params = {"sigmoid": 2.0, "lambdarank_truncation_level": 10}
    native = _train("lambdarank", train.X, train.y, train.group, weight=weight, **params)
    ours = _train(LambdaMART(sigmoid=2.0, lambdarank_truncation_level=10), train.X, train.y,
                  train.group, weight=weight)
    _assert_same_models(native, ours, test.X)


@pytest.mark.slow
def test_ucro_losses_against_bm25_do_not_grow_with_alpha():
    """MQ2008 Fold 1, BM25 (feature 25) as baseline: training queries whose NDCG@10 falls
    below BM25's after 100 rounds, for α = 0, 1, 5, 10 (measured: 16, 10, 2, 2; with the
    placement of version 0.1, the multiplier inside the normaliser's Σ: 16, 12, 12, 11)."""
    train, _ = _mq2008()
    store = BaselineStore.from_feature(train.X, train.y, train.group, train.query_ids,
                                       letor_feature=25, name="bm25")
    bm25 = store.align(train.query_ids)[:, 0]
    below = []
    for alpha in (0, 1, 5, 10):
        model = _train(UCRO(alpha=alpha, baseline=store, query_ids=train.query_ids), train.X,
                       train.y, train.group, learning_rate=0.02)
        ndcg = metrics.ndcg(train.y, model.predict(train.X), train.group, 10)
        below.append(int(np.sum(ndcg < bm25)))
    print("U-CRO training queries below BM25 for alpha 0, 1, 5, 10:", below)
    assert below[0] > 0
    assert all(later <= earlier for earlier, later in zip(below, below[1:])), below
    assert below[2] <= below[0] // 2, below  # the emphasis reaches the trees


@pytest.mark.slow
def test_feval_early_stopping_with_per_set_baselines():
    train, test = _mq2008()
    valid = load_letor(shared_file("mq2008/Fold1/vali.txt"), n_features=46)
    sets, baselines, query_ids = {}, {}, {}
    for name, part in (("valid", valid), ("test", test)):
        sets[name] = lgb.Dataset(part.X, part.y, group=part.group, params={"verbose": -1})
        baselines[sets[name]] = BaselineStore.from_feature(part.X, part.y, part.group,
                                                           part.query_ids, letor_feature=25)
        query_ids[sets[name]] = part.query_ids
    evals = {}
    model = lgb.train(
        {**FAITHFUL, "objective": LambdaMART(), "metric": "None"},
        lgb.Dataset(train.X, train.y, group=train.group, params={"verbose": -1}),
        num_boost_round=200, valid_sets=[sets["valid"], sets["test"]],
        valid_names=["valid", "test"],
        feval=[feval.ndcg_feval(10),
               feval.risk_feval(baselines, query_ids=query_ids, measure="urisk", alpha=5)],
        callbacks=[lgb.early_stopping(10, first_metric_only=True, verbose=False),
                   lgb.record_evaluation(evals)])
    assert model.best_iteration < 200
    best = model.best_iteration - 1
    scores = model.predict(test.X, num_iteration=model.best_iteration)
    ndcg = metrics.ndcg(test.y, scores, test.group, 10)
    bm25 = baselines[sets["test"]].align(test.query_ids)[:, 0]
    assert evals["test"]["ndcg@10[default]"][best] == pytest.approx(ndcg.mean(), abs=1e-12)
    x = np.where(ndcg >= bm25, ndcg - bm25, 6 * (ndcg - bm25))
    assert evals["test"]["urisk@10[a=5, default]"][best] == pytest.approx(x.mean(), abs=1e-12)


@pytest.mark.slow
def test_tfaro_scales_each_querys_gradients_by_one_plus_alpha_prime_on_mq2008():
    """Under T-FARO each query's Σ|λ| is (1 + α'_q) times LambdaMART's, in every iteration
    tested (the scores of a native lambdarank model after 0, 1, 10 and 50 trees), with
    α'_q = α (1 − Φ(x_q / s_x)) recomputed here and s_x kept from after the first tree."""
    from scipy import stats

    train, _ = _mq2008()
    store = BaselineStore.from_feature(train.X, train.y, train.group, train.query_ids,
                                       letor_feature=25, name="bm25")
    bm25 = store.align(train.query_ids)[:, 0]
    booster = _train("lambdarank", train.X, train.y, train.group, rounds=50)
    alpha = 5.0
    objective = TFARO(alpha=alpha, baseline=store, query_ids=train.query_ids)
    query = np.repeat(np.arange(train.group.size), train.group)

    def mass(grad):
        return np.bincount(query, weights=np.abs(grad.astype(np.float64)),
                           minlength=train.group.size)

    s_x = {}
    for trees in (0, 1, 10, 50):
        scores = (np.zeros(train.y.size) if trees == 0
                  else booster.predict(train.X, num_iteration=trees, raw_score=True))
        x = risk.risk_deltas(metrics.ndcg(train.y, scores, train.group, 10), bm25, alpha)
        s_x[trees] = x.std(ddof=1)
        alpha_prime = alpha * (1 - stats.norm.cdf(x / s_x[min(trees, 1)]))
        plain = mass(LambdaMART().gradients(scores, train.y, train.group)[0])
        risky = mass(objective.gradients(scores, train.y, train.group)[0])
        moved = plain > 0
        assert moved.sum() > 300  # of 471: the others have no relevant document
        np.testing.assert_allclose(risky[moved] / plain[moved], 1 + alpha_prime[moved],
                                   rtol=2e-5, err_msg=f"after {trees} trees")
    assert len(set(s_x.values())) == 4  # s_x does change: keeping it is a choice


def test_lgbm_ranker_stops_on_the_feval_not_on_lightgbms_ndcg_at_1():
    """LGBMRanker(objective=obj.sklearn_objective) lists LightGBM's ndcg@1.. first, so that
    early_stopping(first_metric_only=True) would stop on ndcg@1: the feval refuses it;
    obj.lgbm_ranker() turns LightGBM's metrics off, and the model kept is the feval's best
    iteration."""
    import inspect

    rng = np.random.default_rng(3)
    group = np.full(80, 12)
    X = rng.normal(size=(group.sum(), 5))
    y = np.clip((X[:, 0] + rng.normal(scale=1.0, size=X.shape[0])).round().astype(int), 0, 3)
    train, valid = slice(0, 480), slice(480, None)
    fit = {"group": group[:40], "eval_group": [group[40:]], "eval_metric": [feval.ndcg_feval(10)],
           "callbacks": [lgb.early_stopping(5, first_metric_only=True, verbose=False)]}
    if "eval_X" in inspect.signature(lgb.LGBMRanker.fit).parameters:  # lightgbm >= 4.7
        fit.update(eval_X=(X[valid],), eval_y=(y[valid],))
    else:
        fit.update(eval_set=[(X[valid], y[valid])])
    settings = {"n_estimators": 80, "learning_rate": 0.3, "min_child_samples": 5, "verbose": -1}
    trap = lgb.LGBMRanker(objective=LambdaMART().sklearn_objective, **settings)
    with pytest.raises(ValueError, match="would stop on LightGBM's own metric 'ndcg'"):
        trap.fit(X[train], y[train], **fit)
    ranker = LambdaMART().lgbm_ranker(**settings)
    ranker.fit(X[train], y[train], **fit)
    curve = ranker.evals_result_["valid_0"]
    assert list(curve) == ["ndcg@10[default]"]
    assert ranker.best_iteration_ == int(np.argmax(curve["ndcg@10[default]"])) + 1
    with pytest.warns(UserWarning, match="LightGBM's own metrics come before"):
        LambdaMART().lgbm_ranker(metric="ndcg")
