"""The objectives under xgboost.dask: on a real two-worker cluster, each worker's gradients equal
one machine's gradients for the same predictions of the whole training set, call after call
(the risk state taken over both workers' queries), with the baseline a FeatureBaseline scored
on each worker's rows; a baseline array is refused there with the way out."""

import dataclasses
import logging

import numpy as np
import pytest

from lgb_risk import TFARO, TSARO, UCRO, GeoRisk, LambdaMART, TStarFARO, metrics
from lgb_risk._runtime.dask_client import scheduler_workers
from lgb_risk.baselines import FeatureBaseline
from tests.conftest import random_problem

xgb = pytest.importorskip("xgboost")
pytest.importorskip("xgboost.dask")
pytest.importorskip("distributed")
da = pytest.importorskip("dask.array")

import xgboost.dask  # noqa: E402,F401  (xgb.dask)
from distributed import Client, LocalCluster  # noqa: E402

#: Every test here starts processes, clusters or tools: outside the quick loop.
pytestmark = pytest.mark.slow

PARAMS = {"tree_method": "hist", "eta": 0.3, "max_depth": 3, "min_child_weight": 1e-3,
          "nthread": 1}
ROUNDS = 3


@pytest.fixture(scope="module")
def client():
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                      dashboard_address=":0", silence_logs=logging.ERROR) as cluster:
        # the default client while the module runs: xgboost.dask looks one up even when given one
        with Client(cluster) as c:
            yield c


@pytest.fixture(scope="module")
def problem():
    """60 queries; column 0 numbers the rows, columns 1 and 2 are noisy copies of the label
    (the baselines' scores), 3 to 5 noise."""
    rng = np.random.default_rng(5)
    labels, _, group = random_problem(rng, n_queries=60, max_docs=20)
    n = labels.size
    X = np.column_stack([np.arange(n, dtype=float), labels + rng.normal(0, 1.0, n),
                         labels + rng.normal(0, 2.0, n), rng.normal(size=(n, 3))])
    return X, labels.astype(float), group


def _dask_matrix(client, X, y, group):
    """The rows as two partitions of whole queries, one on each worker."""
    qid = np.repeat(np.arange(group.size), group)
    cut = int(np.cumsum(group)[group.size // 2 - 1])
    workers = sorted(scheduler_workers(client))  # not the client's cached view (see there)
    parts = {"X": [], "y": [], "qid": []}
    for rows, worker in ((slice(0, cut), workers[0]), (slice(cut, None), workers[1])):
        for name, values in (("X", X[rows]), ("y", y[rows]), ("qid", qid[rows])):
            future = client.scatter(values, workers=[worker])
            parts[name].append(da.from_delayed(future, shape=values.shape, dtype=values.dtype))
    return xgb.dask.DaskDMatrix(client, da.concatenate(parts["X"]), da.concatenate(parts["y"]),
                                qid=da.concatenate(parts["qid"]))


def _recording(objective, folder):
    """The objective, saving each call's rows, predictions and gradients in ``folder``."""
    calls = [0]

    def obj(preds, dtrain):
        from xgboost import collective

        grad, hess = objective.xgboost_objective(preds, dtrain)
        rows = np.asarray(dtrain.get_data()[:, 0].toarray()).ravel().astype(np.int64)
        np.savez(folder / f"call{calls[0]}-rank{collective.get_rank()}.npz", rows=rows,
                 preds=preds, grad=grad, hess=hess)
        calls[0] += 1
        return grad, hess

    return obj


def _feature_ndcg(X, y, group, columns):
    return np.column_stack([metrics.ndcg(y, X[:, c], group, 10, ties="stable")
                            for c in columns])


CASES = {
    "LambdaMART": (LambdaMART(), {}),
    "U-CRO": (UCRO(alpha=5, baseline=FeatureBaseline(1)), {"baseline": [1]}),
    "T-SARO": (TSARO(alpha=5, baseline=FeatureBaseline(1)), {"baseline": [1]}),
    "T-FARO": (TFARO(alpha=5, baseline=FeatureBaseline(2)), {"baseline": [2]}),
    "T*-FARO": (TStarFARO(alpha=5, baselines=FeatureBaseline([1, 2])), {"baselines": [1, 2]}),
    "GeoRisk": (GeoRisk(alpha=5, baselines=FeatureBaseline([1, 2])), {"baselines": [1, 2]}),
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_worker_gets_the_gradients_of_one_machine(client, problem, tmp_path, name):
    X, y, group = problem
    objective, baseline_columns = CASES[name]
    booster = xgb.dask.train(client, PARAMS, _dask_matrix(client, X, y, group),
                             num_boost_round=ROUNDS, obj=_recording(objective, tmp_path))
    assert booster["booster"].num_boosted_rounds() == ROUNDS
    # One machine, the same predictions of every row, call after call (T-SARO's s_x is frozen
    # after the first tree: the calls are replayed in order on one object).
    reference = dataclasses.replace(objective, **{
        parameter: _feature_ndcg(X, y, group, columns).squeeze(axis=1)
        if parameter == "baseline" else _feature_ndcg(X, y, group, columns)
        for parameter, columns in baseline_columns.items()})
    for call in range(ROUNDS):
        saved = [np.load(tmp_path / f"call{call}-rank{rank}.npz") for rank in (0, 1)]
        rows = np.concatenate([s["rows"] for s in saved])
        assert np.array_equal(np.sort(rows), np.arange(y.size))  # both workers, all rows
        preds = np.empty(y.size)
        preds[rows] = np.concatenate([s["preds"] for s in saved])
        want_grad, want_hess = reference.gradients(preds, y, group)
        for s in saved:
            np.testing.assert_allclose(s["grad"], want_grad[s["rows"]], rtol=1e-5, atol=1e-7)
            np.testing.assert_allclose(s["hess"], want_hess[s["rows"]], rtol=1e-5, atol=1e-7)
        if call == ROUNDS - 1 and name != "LambdaMART":
            # the risk term is in play: the gradients differ from LambdaMART's
            plain, _ = LambdaMART().gradients(preds, y, group)
            assert not np.allclose(plain, want_grad, atol=1e-6)


def test_a_baseline_array_is_refused_with_the_way_out(client, problem):
    X, y, group = problem
    baseline = _feature_ndcg(X, y, group, [1]).ravel()
    with pytest.raises(Exception, match=r"UCRO under xgboost\.dask: each worker holds some of "
                                        r"the queries.*baseline=FeatureBaseline\(column\)"):
        xgb.dask.train(client, PARAMS, _dask_matrix(client, X, y, group), num_boost_round=1,
                       obj=UCRO(alpha=5, baseline=baseline).xgboost_objective)


def test_a_feature_baseline_on_one_machine_equals_its_scores_given_as_an_array(problem):
    X, y, group = problem
    dtrain = xgb.DMatrix(X, y, qid=np.repeat(np.arange(group.size), group))
    preds = np.random.default_rng(0).normal(size=y.size)
    got = GeoRisk(alpha=5, baselines=FeatureBaseline([1, 2])).xgboost_objective(preds, dtrain)
    want = GeoRisk(alpha=5, baselines=_feature_ndcg(X, y, group, [1, 2])).gradients(
        preds, y, group)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_feature_baseline_refusals(problem):
    X, y, group = problem
    dtrain = xgb.DMatrix(X, y, qid=np.repeat(np.arange(group.size), group))
    with pytest.raises(ValueError, match=r"FeatureBaseline column 9 does not exist: the training "
                                         r"rows have 6 features \(columns 0 to 5\)"):
        UCRO(baseline=FeatureBaseline(9)).xgboost_objective(np.zeros(y.size), dtrain)
    with pytest.raises(ValueError, match="columns must be column positions >= 0, got -1"):
        FeatureBaseline(-1)
    with pytest.raises(ValueError, match="a FeatureBaseline is scored on the training rows, "
                                         "which only XGBoost's DMatrix keeps"):
        UCRO(baseline=FeatureBaseline(1)).gradients(np.zeros(y.size), y, group)
