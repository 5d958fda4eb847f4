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


def test_a_weight_lightgbm_filled_in_is_warned_about_naming_the_document():
    """LightGBM replaces a NaN weight by 0 (and inf by a huge number) when it builds the
    Dataset, before the objective sees it: lightgbm.train then warns, naming the first such
    document, once per training set; finite, positive weights train in silence. (LGBMRanker
    refuses a NaN or infinite sample_weight itself.)"""
    import warnings

    import lightgbm as lgb

    from lgb_risk import LambdaMART

    rng = np.random.default_rng(0)
    X, labels, group = rng.normal(size=(40, 3)), rng.integers(0, 3, 40), [10, 10, 10, 10]
    params = {"verbose": -1, "min_data_in_leaf": 2, "num_threads": 1}
    for given, first in (([1.0] * 7 + [np.nan] + [1.0] * 32, 7),
                         ([1.0] * 12 + [np.inf] + [1.0] * 27, 12)):
        data = lgb.Dataset(X, labels, group=group, weight=given, params=params)
        with pytest.warns(UserWarning, match=rf"first: document {first}, .*NaN weight") as seen:
            lgb.train({**params, "objective": LambdaMART()}, data, num_boost_round=3)
        assert sum("document weight" in str(w.message) for w in seen) == 1  # once, not per round
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lgb.train({**params, "objective": LambdaMART()},
                  lgb.Dataset(X, labels, group=group, weight=np.full(40, 0.5), params=params), 3)


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


# -- each refusal names its cause: the tail of weak answers ----------------------------------


@pytest.fixture(scope="module")
def demo_runs(tmp_path_factory):
    from lgb_risk.experiment import synthetic

    return synthetic.write_trec_collection(tmp_path_factory.mktemp("demo"), n_topics=20,
                                           docs_per_topic=30, n_runs=3)


def test_a_header_is_plain_text_escaped_and_an_empty_one_refused(demo_runs, tmp_path):
    """``--header ndcg@20=50%_x`` once ended the LaTeX early; it is escaped as the caption is,
    in the paper's table and in a table of chosen columns; an empty header is refused."""
    qrels, runs = demo_runs
    for extra in ([], ["--columns", "run", "ndcg@20"]):
        code, out, err = run_cli("evaluate", qrels, *runs, "--baseline", "run1", "--alpha", 5,
                                 "--format", "latex", "--header", "ndcg@20=50%_x", *extra)
        assert code == 0, err
        assert "50\\%\\_x" in out and "50%_x" not in out
    code, _, err = run_cli("evaluate", qrels, *runs, "--baseline", "run1", "--format", "latex",
                           "--header", "ndcg@20=")
    assert code == 2 and "expected COLUMN=TEXT with TEXT the header" in err


def test_latex_labels_for_a_measure_not_shown_are_refused(demo_runs):
    qrels, runs = demo_runs
    summary = trec.summarise(qrels, runs, ["ndcg@20"], baseline="run1", alpha=5)
    with pytest.raises(ValueError, match="labels names 'err@20', which the table does not "
                                         "show; its measures: ndcg@20"):
        summary.latex(labels={"err@20": "ERR"})
    assert "50\\%\\_x" in summary.latex(labels={"ndcg@20": "50%_x"})


def test_risk_ranker_score_on_grades_above_the_training_names_the_remedy():
    from lgb_risk.sklearn import RiskRanker

    rng = np.random.default_rng(0)
    X, y, qid = rng.normal(size=(200, 3)), rng.integers(0, 3, 200), np.repeat(np.arange(20), 10)
    higher = y.copy()
    higher[5] = 4
    ranker = RiskRanker(n_estimators=3, score_measure="err@20").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"y holds grade 4, above the highest grade of the "
                                         r"training labels, 2, .* score_measure=\"err\(max_label"
                                         r"=4\)@20\""):
        ranker.score(X, higher, qid=qid)
    fixed = RiskRanker(n_estimators=3, score_measure="err(max_label=4)@20").fit(X, y, qid=qid)
    assert 0 < fixed.score(X, higher, qid=qid) < 1


def test_summarise_takes_one_measure_as_text_and_refuses_none(demo_runs):
    qrels, runs = demo_runs
    one = trec.summarise(qrels, runs, "ndcg@20", baseline="run1", alpha=5)
    assert one.measures == ("ndcg@20",)
    with pytest.raises(ValueError, match="measures is empty"):
        trec.summarise(qrels, runs, [], baseline="run1")
    with pytest.raises(TypeError, match="give alphas= or alpha="):
        trec.summarise(qrels, runs, "ndcg@20", baseline="run1", alpha=5, alphas=[1])


def test_figures_onto_a_file_or_under_one_are_refused_before_drawing(demo_runs, tmp_path):
    qrels, runs = demo_runs
    summary = trec.summarise(qrels, runs, "ndcg@20", baseline="run1", alpha=[0, 5])
    a_file = _write(tmp_path / "a_file", "x")
    with pytest.raises(ValueError, match="exists and is a file, not a folder"):
        summary.write_figures(a_file)
    with pytest.raises(ValueError, match="a_file is a file, so no folder can be made under it"):
        summary.write_figures(a_file / "sub")
    assert a_file.read_text() == "x"


def test_risk_feval_refuses_a_cutoff_its_measure_would_ignore_and_one_array_for_two_sets():
    import lightgbm as lgb

    from lgb_risk import LambdaMART

    with pytest.raises(ValueError, match=r"risk_feval got k=5 and effectiveness='ndcg@10'.*"
                                         r"ndcg@5"):
        feval.risk_feval([0.5, 0.5], k=5, effectiveness="ndcg@10")
    rng = np.random.default_rng(0)
    X, y, group = rng.normal(size=(200, 3)), rng.integers(0, 3, 200), np.full(20, 10)
    one_array = feval.risk_feval(rng.uniform(size=20))
    with pytest.raises(ValueError, match="one set of baselines, for 20 queries, and now "
                                         "evaluates a set of 10"):
        lgb.train({"objective": LambdaMART(), "verbose": -1, "metric": "None"},
                  lgb.Dataset(X, y, group=group), 2,
                  valid_sets=[lgb.Dataset(X, y, group=group),
                              lgb.Dataset(X[:100], y[:100], group=group[:10])],
                  feval=one_array)


@pytest.mark.parametrize("call, message", [
    (lambda: metrics.rank_biased_precision([1, 0], [0.2, 0.1], [2], persistence="0.8"),
     "persistence must be a probability in \\(0, 1\\), got '0.8'"),
    (lambda: metrics.bpref([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.6], [2, 2], n_nonrelevant=[-1, 2]),
     r"n_nonrelevant\[0\] is -1: a whole-number count at least the 1 judged non-relevant"),
    (lambda: metrics.bpref([1, 0, 1, 0], [0.9, 0.8, 0.7, 0.6], [2, 2], n_relevant=[0, 1]),
     r"n_relevant\[0\] is 0: a whole-number count at least the 1 relevant"),
    (lambda: metrics.ndcg(np.array(["a", "b"]), [0.2, 0.1], [2]),
     r"labels must be relevance grades .* got <U1 values, the first 'a' \(Unknown label "
     "type: map text labels to grades first"),
    (lambda: validate({"training": {"selection": "rbp(p=2)@10"}}),
     r"got 'rbp\(p=2\)@10': measure 'rbp\(p=2\)@10': p must be a probability"),
])
def test_measures_and_configuration_name_the_argument_at_fault(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_empty_figures_are_refused():
    from lgb_risk import plots

    with pytest.raises(ValueError, match="systems is an empty mapping"):
        plots.win_loss_histogram({}, [0.1, 0.2])
    with pytest.raises(ValueError, match="risk_reward has nothing to draw"):
        plots.risk_reward({})


def test_a_query_id_beyond_64_bits_is_named_by_file_and_line(tmp_path):
    path = _write(tmp_path / "big.txt", "1 qid:1 1:0.5\n1 qid:18446744073709551617 1:0.5\n")
    with pytest.raises(ValueError, match=r"big.txt:2: query id 18446744073709551617 is beyond "
                                         "the 64-bit whole numbers"):
        data.load_letor(path)


def test_an_out_folder_that_cannot_be_written_is_refused_before_any_work(tmp_path,
                                                                         monkeypatch):
    """Under a file, or where nothing can be written (a read-only file system: os.access
    says so; as root only a read-only mount shows it, so the test asks os.access to)."""
    import os

    a_file = _write(tmp_path / "a_file", "x")
    code, _, err = run_cli("run", "--out", a_file / "run")
    assert code == 2 and "a_file is a file, so no folder can be made under it" in err
    locked = tmp_path / "locked"
    locked.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: False if str(path) == str(locked)
                        else real(path, mode))
    code, _, err = run_cli("run", "--out", locked / "run")
    assert code == 2 and "cannot write into its parent" in err and "again" not in err
    assert list(locked.iterdir()) == []


def test_a_tie_rule_a_binary_measure_lacks_is_refused_with_the_command_lines_remedy(demo_runs):
    qrels, runs = demo_runs
    code, _, err = run_cli("evaluate", qrels, runs[0], "--measures", "p@5", "--convention",
                           "sklearn")
    assert code == 2 and "p(ties=stable)@10" in err and "(on the command line too)" in err
    code, _, err = run_cli("evaluate", qrels, runs[0], "--measures", "p(ties=stable)@5",
                           "--convention", "sklearn")
    assert code == 0, err


def test_xgboost_query_ids_out_of_the_dmatrixs_order_are_refused():
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(60, 3)), rng.integers(0, 3, 60)
    qid = np.repeat([3, 5, 9], 20)
    store = BaselineStore(pd.DataFrame({"bm25": [0.5, 0.4, 0.6]}, index=[3, 5, 9]))
    objective = UCRO(alpha=5, baseline=store, query_ids=[5, 3, 9])
    with pytest.raises(ValueError, match=r"query_ids go from 5 \(query 0\) to 3 \(query 1\)"):
        xgb.train({"tree_method": "hist"}, xgb.DMatrix(X, y, qid=qid), 1,
                  obj=objective.xgboost_objective)


def test_a_json_file_given_as_a_per_topic_table_is_named_as_json(tmp_path):
    path = _write(tmp_path / "run.json", '{"1": {"d1": 1.0, "d2": 0.5},\n "2": {"d3": 0.2}}\n')
    code, _, err = run_cli("risk", path)
    assert code == 2 and f"{path}:1: a JSON document, not a CSV table" in err
    assert "Unnamed" not in err
