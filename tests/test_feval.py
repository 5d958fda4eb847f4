"""feval factories against direct computation."""

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest

from lgb_risk import UCRO, BaselineStore, feval, risk
from tests import naive
from tests.conftest import random_problem, split_queries


def _eval_set(seed):
    rng = np.random.default_rng(seed)
    labels, scores, group = random_problem(rng, n_queries=15, max_docs=10)
    X = rng.normal(size=(labels.size, 2))
    return lgb.Dataset(X, labels, group=group, params={"verbose": -1}).construct(), scores


def test_ndcg_and_risk_fevals_match_naive_per_set():
    one, preds_one = _eval_set(1)
    two, preds_two = _eval_set(2)
    rng = np.random.default_rng(0)
    base = {one: rng.uniform(0, 1, 15), two: rng.uniform(0, 1, (15, 3))}
    for ds, preds in ((one, preds_one), (two, preds_two)):
        labels, group = ds.get_label().astype(int), ds.get_group()
        model = np.array([naive.ndcg(y, s, 10) for y, s in split_queries(labels, preds, group)])
        assert feval.ndcg_feval(10)(preds, ds) == ("ndcg@10[default]",
                                                   pytest.approx(model.mean()), True)
        b = np.asarray(base[ds]).reshape(15, -1)
        ref = b.mean(axis=1)
        x = np.where(model >= ref, model - ref, 3 * (model - ref))
        name, value, higher = feval.risk_feval(base, measure="urisk", alpha=2)(preds, ds)
        assert (name, higher) == ("urisk@10[a=2, default]", True)
        assert value == pytest.approx(x.mean())
        t = feval.risk_feval(base, measure="trisk", alpha=2)(preds, ds)[1]
        assert t == pytest.approx(x.mean() / (x.std(ddof=1) / np.sqrt(15)))
        matrix = np.vstack([model, b.T])
        geo = feval.risk_feval(base, measure="georisk", alpha=2)(preds, ds)[1]
        assert geo == pytest.approx(risk.georisk(matrix, 2)[0])
        z = feval.risk_feval(base, measure="zrisk", alpha=2)(preds, ds)[1]
        assert z == pytest.approx(risk.zrisk(matrix, 2)[0])


def test_risk_feval_refuses_an_unknown_set_and_bad_parameters():
    one, preds = _eval_set(1)
    other, _ = _eval_set(2)
    fn = feval.risk_feval({other: np.zeros(15)})
    with pytest.raises(ValueError, match="no baselines for this evaluation Dataset"):
        fn(preds, one)
    with pytest.raises(ValueError, match="measure must be one of"):
        feval.risk_feval({}, measure="frisk")
    with pytest.raises(ValueError, match="alpha must be"):
        feval.risk_feval({}, alpha=-1)
    store = BaselineStore.from_table(
        pd.DataFrame({"query_id": range(15), "system": "b", "value": 0.5}), k=5)
    with pytest.raises(ValueError, match="NDCG@5, but NDCG@10 is needed"):
        feval.risk_feval({one: store}, query_ids={one: range(15)})(preds, one)
    with pytest.raises(TypeError, match=r"risk_feval\(store, query_ids=ids\)"):
        feval.risk_feval({one: (store, range(15))})


@pytest.mark.parametrize("measure", ["urisk", "trisk", "georisk"])
def test_risk_feval_checks_baselines_as_the_objectives_do(measure):
    """A percentage given for a fraction is refused, naming the query, wherever it enters."""
    one, preds = _eval_set(1)
    percent = np.full(15, 52.0)
    with pytest.raises(ValueError, match=r"NDCG@10 of query index 0 is 52.0; expected a finite "
                                         r"NDCG in \[0, 1\] \(a percentage"):
        feval.risk_feval(percent, measure=measure, alpha=5)(preds, one)
    with pytest.raises(ValueError, match=r"NDCG@10 of query index 0 is 52.0"):
        UCRO(alpha=5, baseline=percent).gradients(preds, one.get_label(), one.get_group())


def test_early_stopping_on_the_first_metric_refuses_lightgbms_own_metric_before_the_feval():
    """LGBMRanker with a callable objective computes LightGBM's ndcg@1..5 before an lgb_risk
    feval: first_metric_only would stop on ndcg@1 without a word; it is refused, and works
    with metric='None'."""
    import lightgbm as lgb

    from lgb_risk import LambdaMART
    from lgb_risk.feval import ndcg_feval

    rng = np.random.default_rng(0)
    X, y, group = rng.normal(size=(400, 5)), rng.integers(0, 3, 400), [10] * 40
    stop = [lgb.early_stopping(2, first_metric_only=True, verbose=False)]
    fit = {"group": group, "eval_set": [(X, y)], "eval_group": [group],
           "eval_metric": ndcg_feval(10), "callbacks": stop}
    ranker = lgb.LGBMRanker(objective=LambdaMART().sklearn_objective, n_estimators=3,
                            verbose=-1)
    with pytest.raises(ValueError, match="stop on LightGBM's own metric 'ndcg'.*ndcg@10"):
        ranker.fit(X, y, **fit)
    ranker.set_params(metric="None").fit(X, y, **fit)
    (recorded,) = ranker.evals_result_.values()
    assert len(recorded) == 1 and next(iter(recorded)).startswith("ndcg@10")  # the feval alone
    with pytest.raises(ValueError, match="metric='None'"):
        lgb.train({"objective": LambdaMART(), "metric": "ndcg", "verbose": -1},
                  lgb.Dataset(X, y, group=group), 2, feval=ndcg_feval(10), callbacks=stop,
                  valid_sets=[lgb.Dataset(X, y, group=group)])
