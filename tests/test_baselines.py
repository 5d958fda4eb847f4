"""BaselineStore: construction from every source, alignment, persistence, refusals."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from lgb_risk import UCRO, BaselineStore, GeoRisk, metrics, trec
from tests import naive
from tests.conftest import random_problem, split_queries


def _problem():
    rng = np.random.default_rng(0)
    labels, scores, group = random_problem(rng, n_queries=12, max_docs=9)
    X = np.column_stack([rng.normal(size=labels.size), scores])
    return X, labels, group, np.arange(100, 100 + group.size)


def test_from_feature_is_ndcg_of_ranking_by_that_feature():
    X, labels, group, qids = _problem()
    store = BaselineStore.from_feature(sp.csr_matrix(X), labels, group, qids, letor_feature=2,
                                       name="bm25", k=5)
    assert store.names == ["bm25"] and (store.measure, store.k) == ("ndcg", 5)
    want = [naive.ndcg(y, s, 5) for y, s in split_queries(labels, X[:, 1], group)]
    assert store.align(qids)[:, 0] == pytest.approx(want, abs=1e-12)
    assert store.metadata["bm25"]["column"] == 1


def test_align_reorders_by_id_and_lists_missing_ids():
    X, labels, group, qids = _problem()
    store = BaselineStore.from_scores(X[:, 1], labels, group, qids, "model")
    values = store.align(qids)[:, 0]
    assert store.align(qids[::-1])[:, 0] == pytest.approx(values[::-1])
    assert store.align([str(q) for q in qids[:3]])[:, 0] == pytest.approx(values[:3])
    with pytest.raises(ValueError, match="no value for 2 of 4 query ids: 7, 8"):
        store.align([100, 7, 101, 8])


def test_merge_select_and_measure_checks():
    X, labels, group, qids = _problem()
    a = BaselineStore.from_feature(X, labels, group, qids, column=0, name="f1")
    b = BaselineStore.from_feature(X, labels, group, qids, column=1, name="f2")
    both = a.merge(b)
    assert both.names == ["f1", "f2"] and both.align(qids).shape == (group.size, 2)
    assert both.select("f2").names == ["f2"]
    other_k = BaselineStore.from_feature(X, labels, group, qids, column=1, name="f3", k=5)
    with pytest.raises(ValueError, match="cannot mix baselines computed with NDCG@10 and NDCG@5"):
        both.merge(other_k)
    with pytest.raises(ValueError, match="a baseline named 'f1'"):
        a.merge(a)
    with pytest.raises(ValueError, match="unknown baseline"):
        both.select("bm25")
    with pytest.raises(ValueError, match="column must be a column of X from 0 to 1, got -1"):
        BaselineStore.from_feature(X, labels, group, qids, column=-1)
    with pytest.raises(ValueError, match="letor_feature must be a LETOR feature number from 1 "
                                         "to 2, got 0"):
        BaselineStore.from_feature(X, labels, group, qids, letor_feature=0)


def test_one_feature_numbering_column_from_0_or_letor_feature_from_1():
    """column=j and letor_feature=j+1 name the same column, the one FeatureBaseline(j) reads;
    the former form (LETOR's number as feature=, or positional) is refused, saying what to
    write, and never read as a column."""
    from lgb_risk.baselines import FeatureBaseline

    X, labels, group, qids = _problem()
    by_column = BaselineStore.from_feature(X, labels, group, qids, column=1, name="f")
    by_letor = BaselineStore.from_feature(X, labels, group, qids, letor_feature=2, name="f")
    assert by_column.table.equals(by_letor.table)
    ndcg10 = lambda s, y, g: metrics.ndcg(y, s, g, 10)  # noqa: E731
    np.testing.assert_array_equal(by_column.align(qids)[:, 0],
                                  FeatureBaseline(1).values(X, labels, group, ndcg10)[:, 0])
    with pytest.raises(TypeError, match=r"write letor_feature=2, or column=1"):
        BaselineStore.from_feature(X, labels, group, qids, feature=2)
    with pytest.raises(TypeError, match=r"by keyword: column=.*letor_feature="):
        BaselineStore.from_feature(X, labels, group, qids, 2, "f")
    with pytest.raises(TypeError, match="one of the two"):
        BaselineStore.from_feature(X, labels, group, qids, column=1, letor_feature=2)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_save_and_load_lose_nothing(tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow", reason="Parquet needs pyarrow (not a dependency)")
    X, labels, group, qids = _problem()
    store = BaselineStore.from_feature(X, labels, group, qids, column=0, name="f1").merge(
        BaselineStore.from_scores(X[:, 1] + 1e-13, labels, group, qids, "model"))
    path = tmp_path / f"store{suffix}"
    store.save(path)
    loaded = BaselineStore.load(path)
    assert loaded.names == store.names and (loaded.measure, loaded.k) == ("ndcg", 10)
    assert np.array_equal(loaded.align(qids), store.align(qids))
    assert loaded.metadata == store.metadata
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"store{suffix}",
                                                          f"store{suffix}.meta.json"]


def test_from_table_and_trec(tmp_path):
    frame = pd.DataFrame({"query_id": [1, 2, 1, 2], "system": ["a", "a", "b", "b"],
                          "value": [0.1, 0.2, 0.3, 0.4]})
    store = BaselineStore.from_table(frame)
    assert store.align([2, 1]).tolist() == [[0.2, 0.4], [0.1, 0.3]]
    with pytest.raises(ValueError, match="system 'b' has no value for query '2'"):
        BaselineStore.from_table(frame.iloc[:3])
    from lgb_risk.experiment import synthetic
    qrels, runs = synthetic.make_trec_collection(n_topics=5, docs_per_topic=20, n_runs=2)
    trec_store = trec.baseline_store(qrels, runs, "err@20")
    # ERR's l_max is the collection's highest grade (max_label=4 by default), named in the store
    assert (trec_store.measure, trec_store.k) == ("err(max_label=4)", 20)
    assert trec_store.names == ["run1", "run2"]


def test_a_store_is_named_by_every_parameter_and_choice_its_values_depend_on():
    """A store of ERR with l_max 3, of RBP with p = 0.5 or of linear-gain NDCG is labelled
    so, passes only the check for that measure, and is refused by an objective measuring
    another: its values computed in the test by the metrics functions directly."""
    from lgb_risk import metrics
    from lgb_risk.experiment import synthetic
    qrels, runs = synthetic.make_trec_collection(n_topics=5, docs_per_topic=20, n_runs=2)
    err5 = trec.baseline_store(qrels, runs, "err(max_label=5)@20")
    assert err5.label == "ERR(max_label=5)@20"
    err5.require_measure("err(max_label=5)@20")
    with pytest.raises(ValueError, match=r"computed with ERR\(max_label=5\)@20, but "
                                         r"ERR\(max_label=4\)@20 is needed"):
        err5.require_measure("err(max_label=4)@20")
    with pytest.raises(ValueError, match=r"computed with ERR\(max_label=5\)@20, but ERR@20 is "
                                         r"needed \(ERR's grades"):
        err5.require_measure("err@20")
    rbp = trec.baseline_store(qrels, runs, "rbp(p=0.5)@10")
    assert rbp.label == "RBP(p=0.5)@10"
    with pytest.raises(ValueError, match=r"but RBP@10 is needed"):
        rbp.require_measure("rbp@10")
    linear = trec.baseline_store(qrels, runs, "ndcg(label_gain=linear)@10")
    assert linear.label == "NDCG(label_gain=linear)@10"
    # the exponential gain is the default: written or not, one measure
    exponential = trec.baseline_store(qrels, runs, "ndcg(label_gain=exponential)@10")
    assert exponential.label == "NDCG@10"
    exponential.require_measure("ndcg@10")

    X, labels, group, qids = _problem()
    store = BaselineStore.from_feature(X, labels, group, qids, column=0, name="f1",
                                       label_gain="linear")
    assert store.label == "NDCG(label_gain=linear)@10"
    assert np.allclose(store.table["f1"].to_numpy(),
                       metrics.ndcg(labels, X[:, 0], group, 10, label_gain="linear"))
    with pytest.raises(ValueError, match=r"computed with NDCG\(label_gain=linear\)@10, but "
                                         r"NDCG@10 is needed"):
        UCRO(alpha=3, baseline=store, query_ids=qids).gradients(X[:, 1], labels, group)
    # an objective whose gain is linear takes it, and refuses the exponential store
    linear_gain = [float(i) for i in range(31)]
    UCRO(alpha=3, baseline=store, query_ids=qids,
         label_gain=linear_gain).gradients(X[:, 1], labels, group)
    default = BaselineStore.from_feature(X, labels, group, qids, column=0, name="f1")
    with pytest.raises(ValueError, match=r"but NDCG\(label_gain=linear\)@10 is needed"):
        UCRO(alpha=3, baseline=default, query_ids=qids,
             label_gain=linear_gain).gradients(X[:, 1], labels, group)
    with pytest.raises(ValueError, match="neither exponential .* nor linear"):
        BaselineStore.from_feature(X, labels, group, qids, column=0, name="f1",
                                       label_gain=[0, 2, 9, 20])
    # an ERR objective measures l_max on its labels: a store of another l_max is refused
    top = int(labels.max())
    err_store = BaselineStore(default.table, f"err(max_label={top + 1})", 20)
    with pytest.raises(ValueError, match=rf"but ERR\(max_label={top}\)@20 is needed"):
        UCRO(alpha=3, baseline=err_store, query_ids=qids,
             measure="err@20").gradients(X[:, 1], labels, group)
    same = BaselineStore(default.table, f"err(max_label={top})", 20)
    UCRO(alpha=3, baseline=same, query_ids=qids, measure="err@20").gradients(X[:, 1], labels,
                                                                             group)


def test_a_saved_store_keeps_its_measure_in_full(tmp_path):
    X, labels, group, qids = _problem()
    store = BaselineStore.from_feature(X, labels, group, qids, column=0, name="f1",
                                       label_gain="linear")
    store.save(tmp_path / "s.csv")
    assert BaselineStore.load(tmp_path / "s.csv").label == "NDCG(label_gain=linear)@10"


def test_a_feval_under_another_gain_refuses_a_store_of_the_default_gain():
    from lgb_risk import feval
    X, labels, group, qids = _problem()
    store = BaselineStore.from_feature(X, labels, group, qids, column=0, name="f1")
    f = feval.risk_feval(store, query_ids=qids, convention="trec_eval")
    with pytest.raises(ValueError, match=r"but NDCG\(label_gain=linear\)@10 is needed"):
        f(labels, X[:, 0], None, group)
    assert np.isfinite(feval.risk_feval(store, query_ids=qids)(labels, X[:, 0], None, group)[1])


def test_objectives_take_a_store_with_query_ids():
    X, labels, group, qids = _problem()
    store = BaselineStore.from_feature(X, labels, group, qids, column=0, name="f1")
    direct = UCRO(alpha=3, baseline=store.align(qids)[:, 0]).gradients(X[:, 1], labels, group)
    via_store = UCRO(alpha=3, baseline=store, query_ids=qids).gradients(X[:, 1], labels, group)
    assert np.array_equal(direct[0], via_store[0])
    with pytest.raises(ValueError, match="needs query_ids="):
        UCRO(alpha=3, baseline=store).gradients(X[:, 1], labels, group)
    with pytest.raises(ValueError, match="computed with NDCG@10, but NDCG@5 is needed"):
        UCRO(alpha=3, k=5, baseline=store, query_ids=qids).gradients(X[:, 1], labels, group)
    two = store.merge(BaselineStore.from_feature(X, labels, group, qids, column=1, name="f2"))
    with pytest.raises(ValueError, match="takes one baseline, got 2"):
        UCRO(alpha=3, baseline=two, query_ids=qids).gradients(X[:, 1], labels, group)
    with pytest.raises(ValueError, match="no value for 1 of"):
        GeoRisk(alpha=3, baselines=two, query_ids=np.r_[qids[:-1], 999]).gradients(
            X[:, 1], labels, group)
