"""Bad input never passes silently: each case gets a specific error (what, where, what was
expected) or a loud warning, and nothing is written."""

import inspect

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from lgb_risk import UCRO, BaselineStore, data, feval, metrics, risk, trec
from lgb_risk.experiment.config import validate
from lgb_risk.experiment.protocol import Subsets, load_dataset
from lgb_risk.experiment.protocol_baselines import learned_baseline_scorer
from tests.test_cli import run_cli


def _write(path, text):
    path.write_text(text)
    return path


def test_query_ids_reused_across_pooled_files(tmp_path):
    fold = tmp_path / "Fold1"
    fold.mkdir()
    _write(fold / "train.txt", "1 qid:1 1:0.5\n0 qid:2 1:0.1\n")
    _write(fold / "vali.txt", "1 qid:3 1:0.5\n")
    _write(fold / "test.txt", "1 qid:2 1:0.5\n")
    config = validate({"data": {"source": "letor", "path": str(tmp_path), "n_features": 1}})
    with pytest.raises(ValueError, match=r"query id 2 appears in both .*train.txt and "
                                         r".*test.txt"):
        load_dataset(config)


# -- baselines ------------------------------------------------------------------------------------

def test_baselines_outside_the_measures_range_are_refused():
    labels, scores, group = np.array([1, 0, 2, 0]), np.array([0.3, 0.1, 0.2, 0.4]), [2, 2]
    objective = UCRO(alpha=5, baseline=[55.0, 0.4], query_ids=["q1", "q2"])
    with pytest.raises(ValueError, match=r"baseline NDCG@10 of query 'q1' is 55.0; expected a "
                                         r"finite NDCG in \[0, 1\] \(a percentage"):
        objective.gradients(scores, labels, group)
    with pytest.raises(ValueError, match=r"baseline 'bm25' has NDCG@10 = 1.5 for query 'q2', "
                                         r"outside \[0.0, 1.0\]"):
        BaselineStore(pd.DataFrame({"bm25": [0.5, 1.5]}, index=["q1", "q2"]))
    # DCG is not bounded by 1; other ranges are given explicitly
    assert BaselineStore(pd.DataFrame({"bm25": [3.5]}, index=["q1"]), "dcg").table.size == 1
    store = BaselineStore(pd.DataFrame({"x": [-0.5]}, index=["q1"]), bounds=(-1.0, 1.0))
    assert store.table.iloc[0, 0] == -0.5


def test_nan_in_the_baseline_feature_names_the_query():
    X = sp.csr_matrix(np.array([[1.0, 0.2], [np.nan, 0.1], [0.5, 0.3]]))
    with pytest.raises(ValueError, match=r"column 0 is nan for a document of query 'b'"):
        BaselineStore.from_feature(X, [1, 0, 1], [1, 2], ["a", "b"], letor_feature=1)


def test_nan_feature_under_the_ridge_baseline_names_feature_and_query():
    X = sp.csr_matrix(np.array([[1.0, 0.2], [0.4, np.nan], [0.5, 0.3], [0.1, 0.1]]))
    letor = data.LetorData(X=X, y=np.array([1, 0, 1, 0]), qid=np.array([5, 5, 6, 6]),
                           query_ids=np.array([5, 6]), group=np.array([2, 2]), docids=None)
    split = {"heldout_train": ["5", "6"], "heldout_valid": ["6"]}
    with pytest.raises(ValueError, match=r"feature 2 of a document of query 5 is NaN .* the "
                                         r"ridge baseline needs complete features"):
        learned_baseline_scorer("ridge", Subsets(letor), split, {}, None)


def test_corrupt_saved_store_is_named(tmp_path):
    store = BaselineStore(pd.DataFrame({"bm25": [0.5, 0.25]}, index=["q1", "q2"]))
    path = tmp_path / "b.csv"
    store.save(path)
    path.write_text(path.read_text().replace("0.25", "0.2x5"))
    with pytest.raises(ValueError, match=r"b.csv:3: column 'bm25' holds '0.2x5', not a number"):
        BaselineStore.load(path)
    (tmp_path / "b.csv.meta.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"b.csv.meta.json: not JSON"):
        BaselineStore.load(path)


# -- parameters -----------------------------------------------------------------------------------

@pytest.mark.parametrize("alpha", ["5", True, None, [1.0]])
def test_alpha_must_be_a_number(alpha):
    with pytest.raises(ValueError, match="alpha must be a number >= 0"):
        risk.urisk([0.5, 0.4], [0.3, 0.6], alpha)
    with pytest.raises(ValueError, match="alpha must be a number >= 0"):
        feval.risk_feval([0.5], alpha=alpha)


def test_bad_weights_are_named_by_position():
    labels, scores, group = np.array([1, 0, 2, 0]), np.zeros(4), [2, 2]
    for weight, message in (([1, 1, np.nan, 1], r"weight of document 2 is nan"),
                            ([1, -1, 1, 1], r"weight of document 1 is -1.0")):
        with pytest.raises(ValueError, match=message):
            UCRO(alpha=1, baseline=[0.5, 0.5]).gradients(scores, labels, group, weight)


def test_label_gain_error_names_the_users_position():
    """The position is the document's place in the input, not in the ranking."""
    labels, scores = np.array([0, 1, 3, 0]), np.array([0.1, 0.9, 0.5, 0.7])
    with pytest.raises(ValueError, match=r"label 3 at position 2 has no entry in label_gain"):
        metrics.ndcg(labels, scores, [4], 3, label_gain=[0, 1, 3])


# -- command line ---------------------------------------------------------------------------------

def test_output_into_a_missing_folder_names_it_and_writes_nothing(tmp_path):
    target = tmp_path / "absent" / "out.csv"
    code, out, err = run_cli("risk", "tests/data/geo_table3.csv", "-o", target)
    assert code == 2 and "the folder" in err and str(tmp_path / "absent") in err
    assert not (tmp_path / "absent").exists()


def test_run_topics_the_qrels_do_not_score_are_said(tmp_path):
    qrels = _write(tmp_path / "q.txt", "1 0 a 1\n1 0 b 0\n")
    run = _write(tmp_path / "r.txt", "1 Q0 a 1 2.0 x\n1 Q0 b 2 1.0 x\n9 Q0 c 1 1.0 x\n")
    code, _, err = run_cli("evaluate", qrels, run, "--measures", "ndcg@10")
    assert code == 0 and "ranks 1 topic(s) the qrels do not score" in err and "(9)" in err
    frame = trec.evaluate_run(data.read_qrels(qrels), data.read_run(run), ["ndcg@10"])
    assert frame.attrs["unscored_topics"] == ["9"]


# -- fevals in LightGBM's scikit-learn API --------------------------------------------------------

def test_fevals_work_as_lgbmranker_eval_metric():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    group = np.full(40, 10)
    X = rng.normal(size=(400, 5))
    y = np.clip((X[:, 0] + rng.normal(scale=0.5, size=400)).round().astype(int), 0, 3)
    valid_X, valid_y = X[200:], y[200:]
    bm25 = metrics.ndcg(valid_y, valid_X[:, 1], group[20:], 10)
    ranker = lgb.LGBMRanker(n_estimators=5, verbose=-1, min_child_samples=5)
    evaluated = ({"eval_X": (valid_X,), "eval_y": (valid_y,)}
                 if "eval_X" in inspect.signature(ranker.fit).parameters
                 else {"eval_set": [(valid_X, valid_y)]})  # lightgbm >= 4.7 / before
    ranker.fit(X[:200], y[:200], group=group[:20], **evaluated, eval_group=[group[20:]],
               eval_at=[10],
               eval_metric=[feval.ndcg_feval(10), feval.risk_feval(bm25, alpha=5)])
    results = ranker.evals_result_["valid_0"]
    preds = ranker.predict(valid_X, raw_score=True)
    want = metrics.ndcg(valid_y, preds, group[20:], 10).mean()
    assert results["ndcg@10[default]"][-1] == pytest.approx(want, abs=1e-12)
    assert results["urisk@10[a=5, default]"][-1] == pytest.approx(
        risk.urisk(metrics.ndcg(valid_y, preds, group[20:], 10), bm25, 5), abs=1e-12)


def test_negative_score_in_a_risk_table_names_system_and_query():
    scores = pd.DataFrame([[0.5, -0.2], [0.4, 0.3]], index=["model", "bm25"],
                          columns=["q1", "q2"])
    with pytest.raises(ValueError, match=r"system 'model' on query 'q2' is -0.2"):
        risk.risk_table(scores, alphas=[1])
