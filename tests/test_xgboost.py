"""The objectives in XGBoost: xgboost.train(obj=objective.xgboost_objective) gets the same
gradients as on LightGBM for the DMatrix's queries and per-query weights, trains a ranker of
XGBoost's own rank:ndcg quality on MQ2008, and U-CRO lowers Risk against BM25 there."""

import numpy as np
import pytest
import scipy.sparse as sp

from lgb_risk import TFARO, UCRO, LambdaMART, metrics, significance
from lgb_risk.data import load_letor
from tests.conftest import random_problem, shared_file

xgb = pytest.importorskip("xgboost")


@pytest.mark.parametrize("make", [LambdaMART, lambda: TFARO(alpha=3, baseline=BASELINE),
                                  lambda: UCRO(alpha=3, baseline=BASELINE, measure="err@5")])
def test_xgboost_objective_is_the_objective_on_the_dmatrix_queries(make):
    labels, scores, group = random_problem(np.random.default_rng(0), n_queries=30)
    qid = np.repeat(np.arange(group.size), group)
    dtrain = xgb.DMatrix(np.zeros((labels.size, 1)), labels, qid=qid)
    grad, hess = make().xgboost_objective(scores, dtrain)
    want_grad, want_hess = make().gradients(scores, labels, group)
    np.testing.assert_array_equal(grad, want_grad)
    np.testing.assert_array_equal(hess, want_hess)
    query_weight = np.random.default_rng(1).uniform(0.5, 2.0, group.size)
    dtrain.set_weight(query_weight)  # XGBoost's ranking weights: one per query
    grad, hess = make().xgboost_objective(scores, dtrain)
    want_grad, want_hess = make().gradients(scores, labels, group, np.repeat(query_weight, group))
    np.testing.assert_array_equal(grad, want_grad)
    np.testing.assert_array_equal(hess, want_hess)


BASELINE = np.random.default_rng(2).uniform(0, 1, 30)


def test_a_dmatrix_without_queries_is_refused():
    dtrain = xgb.DMatrix(np.zeros((4, 1)), np.array([1, 0, 1, 0]))
    with pytest.raises(ValueError, match="LambdaMART needs query groups: build the DMatrix "
                                         "with qid="):
        LambdaMART().xgboost_objective(np.zeros(4), dtrain)


@pytest.mark.shared_data
@pytest.mark.slow
def test_on_mq2008_as_good_as_rank_ndcg_and_u_cro_lowers_risk():
    """All 784 MQ2008 queries in 5 query folds; 100 rounds at η = 0.05, depth 6 (our hessians
    with LightGBM's min_sum_hessian_in_leaf as min_child_weight). LambdaMART through the
    adapter and XGBoost's rank:ndcg: the paired difference of NDCG@10 within what a paired
    t-test detects; U-CRO at α = 5: lower Risk against BM25 (feature 25) than LambdaMART."""
    parts = [load_letor(shared_file(f"mq2008/Fold1/{name}.txt"), n_features=46)
             for name in ("train", "vali", "test")]
    X = sp.vstack([p.X for p in parts]).tocsr()
    y, qid, group = (np.concatenate([getattr(p, a) for p in parts])
                     for a in ("y", "qid", "group"))
    fold_of_query = np.arange(group.size) % 5
    fold = np.repeat(fold_of_query, group)
    bm25 = X[:, 24].toarray().ravel()
    common = {"eta": 0.05, "max_depth": 6, "tree_method": "hist", "seed": 0, "nthread": 2}
    ndcg = {"rank:ndcg": [], "LambdaMART": [], "U-CRO": [], "BM25": []}
    for f in range(5):
        train, test = fold != f, fold == f
        dtrain = xgb.DMatrix(X[train], y[train], qid=qid[train])
        dtest = xgb.DMatrix(X[test], y[test], qid=qid[test])
        train_group, test_group = group[fold_of_query != f], group[fold_of_query == f]
        bm25_train = metrics.ndcg(y[train], bm25[train], train_group, 10)
        ndcg["BM25"].append(metrics.ndcg(y[test], bm25[test], test_group, 10))
        for name, params, objective in [
                ("rank:ndcg", {"objective": "rank:ndcg"}, None),
                ("LambdaMART", {"min_child_weight": 1e-3}, LambdaMART().xgboost_objective),
                ("U-CRO", {"min_child_weight": 1e-3},
                 UCRO(alpha=5, baseline=bm25_train).xgboost_objective)]:
            booster = xgb.train({**common, **params}, dtrain, 100, obj=objective)
            ndcg[name].append(metrics.ndcg(y[test], booster.predict(dtest), test_group, 10))
    ndcg = {name: np.concatenate(values) for name, values in ndcg.items()}
    test = significance.paired_t_test(ndcg["LambdaMART"], ndcg["rank:ndcg"])
    assert abs(ndcg["LambdaMART"].mean() - ndcg["rank:ndcg"].mean()) < test.detectable
    assert ndcg["LambdaMART"].mean() > ndcg["BM25"].mean() + 0.02

    def risk(name):
        return np.maximum(ndcg["BM25"] - ndcg[name], 0).mean()

    assert risk("U-CRO") < risk("LambdaMART")


def test_a_missing_feature_baseline_value_is_refused_and_the_instance_names_the_adapter():
    """A NaN in the baseline's column is missing in XGBoost's DMatrix (get_data() drops it):
    refused like the dense path's NaN, not ranked as 0; passing the objective itself as obj=
    says to pass .xgboost_objective."""
    from lgb_risk import UCRO
    from lgb_risk.baselines import FeatureBaseline

    rng = np.random.default_rng(3)
    X = rng.uniform(0.1, 1.0, size=(40, 3))
    y = rng.integers(0, 3, 40)
    qid = np.repeat(np.arange(4), 10)
    X[13, 1] = np.nan
    dtrain = xgb.DMatrix(X, y, qid=qid)
    objective = UCRO(alpha=5, baseline=FeatureBaseline(1))
    with pytest.raises(ValueError, match="column 1 is missing in training row 13"):
        objective.xgboost_objective(np.zeros(40), dtrain)
    UCRO(alpha=5, baseline=FeatureBaseline(0)).xgboost_objective(np.zeros(40), dtrain)
    with pytest.raises(TypeError, match=r"obj=UCRO\(...\).xgboost_objective"):
        xgb.train({"verbosity": 0}, dtrain, 1, obj=objective)
