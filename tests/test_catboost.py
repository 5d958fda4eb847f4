"""ERR@k and NDCG@k against CatBoost's own metrics, the outside reference of the ERR-target
learners (experiments/mq2008_targets.py): CatBoost's ERR reads labels as stopping
probabilities, so it is given (2^g − 1)/2^g_max for grade g."""

import numpy as np
import pytest

from lgb_risk import UCRO, LambdaMART, metrics

catboost_utils = pytest.importorskip("catboost.utils")


def _problem(seed):
    rng = np.random.default_rng(seed)
    group = rng.integers(2, 30, 40)
    labels = rng.integers(0, 4, group.sum())
    scores = rng.normal(size=group.sum())  # continuous: no ties, whose order the tools differ on
    return labels, scores, group, np.repeat(np.arange(group.size), group)


@pytest.mark.parametrize("k", [1, 5, 20])
def test_err_is_catboosts_err_on_stopping_probabilities(k):
    labels, scores, group, qid = _problem(k)
    top = int(labels.max())
    want = catboost_utils.eval_metric(((2.0 ** labels - 1) / 2.0 ** top).tolist(),
                                      scores.tolist(), f"ERR:top={k}", group_id=qid.tolist())[0]
    assert metrics.err(labels, scores, group, k, max_label=top).mean() == pytest.approx(
        want, abs=1e-12)
    objective = UCRO(measure=f"err@{k}", baseline=np.zeros(group.size))
    assert objective.target_values(scores, labels, group).mean() == pytest.approx(want,
                                                                                 abs=1e-12)


@pytest.mark.parametrize("k", [3, 10])
def test_ndcg_is_catboosts_exponential_ndcg(k):
    labels, scores, group, qid = _problem(10 + k)
    want = catboost_utils.eval_metric(labels.astype(float).tolist(), scores.tolist(),
                                      f"NDCG:top={k};type=Exp", group_id=qid.tolist())[0]
    assert metrics.ndcg(labels, scores, group, k).mean() == pytest.approx(want, abs=1e-12)
    assert LambdaMART(measure=f"ndcg@{k}").target_values(scores, labels, group).mean() == \
        pytest.approx(want, abs=1e-12)
