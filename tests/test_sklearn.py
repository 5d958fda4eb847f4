"""RiskRanker, the scikit-learn estimator: the same model as lightgbm.train with the objective,
query ids per row, baselines per row, scores, and scikit-learn's machinery (clone, Pipeline,
GridSearchCV with GroupKFold, metadata routing, DataFrames, sparse X, check_estimator)."""

import lightgbm as lgb
import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
import sklearn
from sklearn.base import clone
from sklearn.model_selection import GridSearchCV, GroupKFold
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from lgb_risk import UCRO, BaselineStore, GeoRisk, RiskRanker, metrics, risk
from lgb_risk.sklearn import queries_of_rows

SMALL = {"n_estimators": 15, "min_child_samples": 5, "num_leaves": 7, "random_state": 0,
         "n_jobs": 1}


def _problem(seed=0, n_queries=40, docs=10):
    rng = np.random.default_rng(seed)
    qid = np.repeat(np.arange(100, 100 + n_queries), docs)
    X = rng.normal(size=(qid.size, 5))
    y = np.clip(np.round(X[:, 0] + X[:, 1] + rng.normal(size=qid.size)), 0, 3).astype(int)
    bm25 = X[:, 0] + rng.normal(scale=1.5, size=qid.size)
    return X, y, qid, bm25


def _group(qid):
    return np.unique(qid, return_counts=True)[1]


def test_the_model_is_lightgbm_trained_with_the_objective():
    """fit is lightgbm.train with the objective, its baseline the per-query NDCG@10 of the
    baseline's scores (computed here by the metrics), and the same parameters."""
    X, y, qid, bm25 = _problem()
    group = _group(qid)
    model = RiskRanker("UCRO", alpha=5, **SMALL).fit(X, y, qid=qid, baseline=bm25)
    baseline = metrics.ndcg(y, bm25, group, 10)
    booster = lgb.train({"objective": UCRO(alpha=5, baseline=baseline), "metric": "None",
                         "learning_rate": 0.1, "num_leaves": 7, "min_data_in_leaf": 5,
                         "seed": 0, "num_threads": 1, "verbose": -1},
                        lgb.Dataset(X, y, group=group), num_boost_round=15)
    np.testing.assert_array_equal(model.predict(X), booster.predict(X))
    plain = RiskRanker(**SMALL).fit(X, y, qid=qid)
    assert not np.array_equal(plain.predict(X), model.predict(X))


def test_query_ids_must_be_adjacent_and_name_the_first_row_that_returns():
    assert [a.tolist() for a in queries_of_rows(["b", "b", "a"])] == [["b", "a"], [2, 1]]
    with pytest.raises(ValueError, match=r"qid: row 4 returns to query 1, whose rows ended at "
                                         r"row 1"):
        queries_of_rows([1, 1, 2, 2, 1, 3])
    X, y, qid, _ = _problem()
    shuffled = np.random.default_rng(0).permutation(qid.size)
    with pytest.raises(ValueError, match="rows of a query must be adjacent"):
        RiskRanker(**SMALL).fit(X[shuffled], y[shuffled], qid=qid[shuffled])
    with pytest.raises(ValueError, match="needs the query of every row: qid="):
        RiskRanker(**SMALL).fit(X, y)
    with pytest.raises(ValueError, match="needs baseline="):
        RiskRanker("TSARO", **SMALL).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match=r"baseline score of row 3 \(query 100, system 0\) is "
                                         r"nan"):
        RiskRanker("UCRO", **SMALL).fit(X, y, qid=qid, baseline=np.where(
            np.arange(y.size) == 3, np.nan, 1.0))
    with pytest.raises(ValueError, match="objective must be one of LambdaMART, UCRO"):
        RiskRanker("URCO").fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="lgbm_params sets 'metric'"):
        RiskRanker(lgbm_params={"metric": "ndcg"}).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="score_measure: unknown measure 'ndgc@10'"):
        RiskRanker(score_measure="ndgc@10").fit(X, y, qid=qid)


def test_several_baselines_and_a_store_by_query_id():
    """GeoRisk against two baselines given as scores per row equals GeoRisk given their
    per-query NDCG@10 as a BaselineStore keyed by query id."""
    X, y, qid, bm25 = _problem(1)
    group = _group(qid)
    other = X[:, 1] + np.random.default_rng(2).normal(size=qid.size)
    scores = np.column_stack([bm25, other])
    by_rows = RiskRanker("GeoRisk", alpha=5, **SMALL).fit(X, y, qid=qid, baseline=scores)
    ids = np.unique(qid)
    store = BaselineStore(pd.DataFrame({name: metrics.ndcg(y, s, group, 10)
                                        for name, s in (("bm25", bm25), ("other", other))},
                                       index=ids))
    by_store = RiskRanker("GeoRisk", alpha=5, **SMALL).fit(X, y, qid=qid, baseline=store)
    np.testing.assert_array_equal(by_rows.predict(X), by_store.predict(X))
    assert isinstance(by_store.objective_, GeoRisk)


def test_score_is_the_named_measure_or_a_risk_measure_against_the_baseline():
    X, y, qid, bm25 = _problem(3)
    group = _group(qid)
    model = RiskRanker("TFARO", alpha=2, **SMALL).fit(X, y, qid=qid, baseline=bm25)
    scores = model.predict(X)
    assert model.score(X, y, qid=qid) == pytest.approx(metrics.ndcg(y, scores, group, 10).mean())
    err = clone(model).set_params(score_measure="err@5").fit(X, y, qid=qid, baseline=bm25)
    assert err.score(X, y, qid=qid) == pytest.approx(
        metrics.err(y, scores, group, 5, max_label=int(y.max())).mean())
    urisk = clone(model).set_params(score_measure="urisk", score_alpha=5)
    urisk.fit(X, y, qid=qid, baseline=bm25)
    assert urisk.score(X, y, qid=qid, baseline=bm25) == pytest.approx(risk.urisk(
        metrics.ndcg(y, scores, group, 10), metrics.ndcg(y, bm25, group, 10), alpha=5))


def test_clone_pipeline_sparse_input_and_routing_of_qid():
    """In a Pipeline with a scaler, on sparse X (load_letor's), with qid and the baseline routed
    by scikit-learn's metadata routing to the ranker's fit and score."""
    X, y, qid, bm25 = _problem(4)
    sparse = sp.csr_matrix(X)
    with sklearn.config_context(enable_metadata_routing=True):
        ranker = RiskRanker("UCRO", alpha=1, **SMALL).set_fit_request(
            qid=True, baseline=True).set_score_request(qid=True, baseline=True)
        pipe = Pipeline([("scale", StandardScaler(with_mean=False)), ("rank", ranker)])
        pipe.fit(sparse, y, qid=qid, baseline=bm25)
        scaled = StandardScaler(with_mean=False).fit_transform(sparse)
        alone = clone(ranker).fit(scaled, y, qid=qid, baseline=bm25)
        np.testing.assert_allclose(pipe.predict(sparse), alone.predict(scaled))
        assert pipe.score(sparse, y, qid=qid, baseline=bm25) == pytest.approx(
            alone.score(scaled, y, qid=qid))
    assert clone(ranker).get_params()["alpha"] == 1


def test_grid_search_over_learner_and_alpha_with_group_kfold():
    """GridSearchCV(GroupKFold) over objective × α with qid and baseline routed: each
    candidate's fold score is the NDCG@10 of a model fitted here on that fold's training
    queries."""
    X, y, qid, bm25 = _problem(5, n_queries=45)
    grid = {"objective": ["LambdaMART", "UCRO"], "alpha": [1.0, 5.0]}
    cv = GroupKFold(n_splits=3)
    with sklearn.config_context(enable_metadata_routing=True):
        ranker = RiskRanker(**SMALL).set_fit_request(qid=True, baseline=True).set_score_request(
            qid=True, baseline=True)
        search = GridSearchCV(ranker, grid, cv=cv).fit(X, y, qid=qid, baseline=bm25,
                                                       groups=qid)
    assert len(search.cv_results_["params"]) == 4
    candidate = search.cv_results_["params"].index({"objective": "UCRO", "alpha": 5.0})
    train, test = next(iter(cv.split(X, y, groups=qid)))
    by_hand = RiskRanker("UCRO", alpha=5.0, **SMALL).fit(X[train], y[train], qid=qid[train],
                                                         baseline=bm25[train])
    assert search.cv_results_["split0_test_score"][candidate] == pytest.approx(
        metrics.ndcg(y[test], by_hand.predict(X[test]), _group(qid[test]), 10).mean())


def test_a_dataframe_with_a_query_id_column_needs_no_routing():
    """The query id in a DataFrame column travels with the rows through GridSearchCV; the
    feature names are kept and the column is not a feature."""
    X, y, qid, _ = _problem(6, n_queries=30)
    frame = pd.DataFrame(X, columns=[f"f{i}" for i in range(5)]).assign(query=qid)
    model = RiskRanker(qid_column="query", **SMALL).fit(frame, y)
    assert model.n_features_in_ == 5 and list(model.feature_names_in_) == [
        f"f{i}" for i in range(5)]
    np.testing.assert_array_equal(model.predict(frame),
                                  RiskRanker(**SMALL).fit(X, y, qid=qid).predict(X))
    search = GridSearchCV(RiskRanker(qid_column="query", **SMALL),
                          {"learning_rate": [0.05, 0.2]}, cv=GroupKFold(3)).fit(frame, y,
                                                                                groups=qid)
    assert search.best_score_ > 0
    with pytest.raises(ValueError, match="qid= and qid_column='query' both give the rows' queries"):
        model.score(frame, y, qid=qid)
    positional = RiskRanker(qid_column=5, **SMALL).fit(np.column_stack([X, qid]), y)
    np.testing.assert_array_equal(positional.predict(np.column_stack([X, qid])),
                                  model.predict(frame))


class _QueriesOfFive(RiskRanker):
    """RiskRanker with the rows' queries made up when none are given (five rows each), so that
    scikit-learn's checks, which pass X and y only, reach the estimator's own behaviour."""

    def fit(self, X, y, *, qid=None, baseline=None):
        return super().fit(X, y, qid=_made_up(X) if qid is None else qid, baseline=baseline)

    def score(self, X, y, *, qid=None, baseline=None, sample_weight=None):
        return super().score(X, y, qid=_made_up(X) if qid is None else qid, baseline=baseline,
                             sample_weight=sample_weight)


def _made_up(X):
    n = X.shape[0] if hasattr(X, "shape") and len(X.shape) else len(X) if np.ndim(X) else 0
    return np.arange(n) // 5


def test_scikit_learns_estimator_checks():
    """check_estimator: given query ids, every check passes (input validation, NaN kept for
    LightGBM's missing values and infinity refused, pickling, idempotence, subset and order
    invariance of predict, n_features_in_, sparse input, ...). Without them (the checks pass
    X and y only) the checks that fit fail, each saying that the rows' queries are needed."""
    from sklearn.utils.estimator_checks import check_estimator

    def failures(estimator):
        results = check_estimator(estimator, on_fail=None)
        assert len(results) >= 40
        return [r for r in results if r["status"] == "failed"]

    assert not failures(_QueriesOfFive(n_estimators=3, min_child_samples=1))
    failed = failures(RiskRanker(n_estimators=3))
    assert failed
    reasons = {r["check_name"]: " ".join(str(e) for e in (
        r["exception"], r["exception"].__cause__, r["exception"].__context__)) for r in failed}
    assert all("needs the query of every row" in reason for reason in reasons.values()), reasons


def test_group_sizes_a_baseline_feature_and_early_stopping_on_an_evaluation_set():
    """LightGBM's and PyTerrier's conventions: group= instead of qid=, the baseline as a feature
    column, eval_set/eval_group with early stopping on its NDCG@10 (the model kept is the
    curve's best iteration, as lightgbm.train keeps it)."""
    X, y, qid, bm25 = _problem(7, n_queries=60)
    group = _group(qid)
    with_bm25 = np.column_stack([X, bm25])
    by_qid = RiskRanker("UCRO", alpha=5, **SMALL).fit(with_bm25, y, qid=qid, baseline=bm25)
    by_group = RiskRanker("UCRO", alpha=5, baseline_feature=5, **SMALL).fit(with_bm25, y,
                                                                           group=group)
    np.testing.assert_array_equal(by_group.predict(with_bm25), by_qid.predict(with_bm25))
    assert by_group.score(with_bm25, y, group=group) == by_qid.score(with_bm25, y, qid=qid)
    with pytest.raises(ValueError, match="baseline= was given and baseline_feature=5 too"):
        by_group.fit(with_bm25, y, group=group, baseline=bm25)
    with pytest.raises(ValueError, match="qid= and group= both give the rows' queries"):
        by_group.fit(with_bm25, y, qid=qid, group=group)
    train, valid = slice(0, 400), slice(400, None)
    stopping = RiskRanker(n_estimators=80, learning_rate=0.3, min_child_samples=5,
                          early_stopping_rounds=5, random_state=0, n_jobs=1)
    stopping.fit(X[train], y[train], group=group[:40], eval_set=[(X[valid], y[valid])],
                 eval_group=[group[40:]])
    curve = stopping.evals_result_["valid_0"]["ndcg@10[default]"]
    assert stopping.best_iteration_ == int(np.argmax(curve)) + 1 < len(curve)
    kept = stopping.booster_.predict(X[valid], num_iteration=stopping.best_iteration_)
    np.testing.assert_array_equal(stopping.predict(X[valid]), kept)
    with pytest.raises(ValueError, match="early_stopping_rounds needs eval_set="):
        clone(stopping).fit(X, y, qid=qid)


def test_a_search_without_metadata_routing_fails_at_once_saying_what_to_do():
    """Without routing, qid reaches fit but not score: instead of a NaN per fold and a
    best_params_, every fit fails at once with the advice, and the search raises it."""
    X, y, qid, _ = _problem(7, n_queries=30)
    search = GridSearchCV(RiskRanker(**SMALL), {"alpha": [1.0, 5.0]}, cv=GroupKFold(3))
    with pytest.raises(ValueError, match="enable_metadata_routing"):
        search.fit(X, y, qid=qid, groups=qid)


def test_a_pandas_baseline_is_aligned_by_index_or_refused():
    """A Series indexed like X but in another order is taken by label, as pandas aligns; one
    whose labels are not X's rows is refused."""
    X, y, qid, bm25 = _problem(8, n_queries=20)
    frame = pd.DataFrame(X, index=np.arange(1000, 1000 + len(y)))
    in_order = pd.Series(bm25, index=frame.index)
    shuffled = in_order.sample(frac=1.0, random_state=0)
    ranker = RiskRanker("UCRO", alpha=5, score_measure="urisk", **SMALL)
    expected = clone(ranker).fit(frame, y, qid=qid, baseline=bm25)
    got = clone(ranker).fit(frame, y, qid=qid, baseline=shuffled)
    np.testing.assert_array_equal(got.predict(frame), expected.predict(frame))
    assert got.score(frame, y, qid=qid, baseline=shuffled) == pytest.approx(
        expected.score(frame, y, qid=qid, baseline=bm25), abs=1e-15)
    with pytest.raises(ValueError, match="row 1000 has no baseline"):
        clone(ranker).fit(frame, y, qid=qid, baseline=pd.Series(bm25))


def test_a_misspelt_lightgbm_parameter_is_refused_with_the_nearest_name():
    X, y, qid, _ = _problem(9, n_queries=10)
    with pytest.raises(ValueError, match="'num_leave' is not a LightGBM parameter "
                                         r"\(did you mean 'num_leaves'\?\)"):
        RiskRanker(lgbm_params={"num_leave": 31}, **SMALL).fit(X, y, qid=qid)


def test_bad_rows_queries_and_baselines_are_named():
    """Each answer names the argument, the row or column, and what was expected, instead of
    numpy's or pandas' message."""
    X, y, qid, bm25 = _problem(10, n_queries=8)
    small = {**SMALL, "n_estimators": 2}
    cases = [
        (dict(qid=[None] * len(y)), "qid of row 0 is None: every row needs a query id"),
        (dict(qid=pd.Series([1] * 40 + ["a"] * 40)),
         r"qid mixes types \(int first at row 0, str first at row 40\)"),
        (dict(qid=qid, baseline=["w"] * len(y)), "baseline must hold numbers .* value 0 is 'w'"),
        (dict(qid=qid, baseline=np.zeros((len(y), 0))), r"baseline has no system \(shape"),
    ]
    for arguments, message in cases:
        with pytest.raises(ValueError, match=message):
            RiskRanker("GeoRisk", **small).fit(X, y, **arguments)
    with pytest.raises(ValueError, match=r"qid_column 9 is out of range: X has 6 columns"):
        RiskRanker(qid_column=9, **small).fit(np.column_stack([X, qid]), y)
    frame = pd.DataFrame(X).assign(kind=["news", "blog"] * 40)
    with pytest.raises(ValueError, match=r"column 'kind' of X holds .* not numbers.*"
                                         r"'categorical_feature': \[5\]"):
        RiskRanker(**small).fit(frame, y, qid=qid)
    model = RiskRanker(**small).fit(X, y, qid=qid)
    weights = np.ones(len(y))
    weights[5] = np.nan
    with pytest.raises(ValueError, match="sample_weight of row 5 is nan; weights must be finite"):
        model.score(X, y, qid=qid, sample_weight=weights)


def test_ctrl_c_inside_a_kernel_during_fit_is_a_keyboard_interrupt(monkeypatch):
    """numba returns a kernel stopped by Ctrl-C as SystemError caused by the
    KeyboardInterrupt: fit raises the KeyboardInterrupt a user expects."""
    from lgb_risk._training import lambda_kernel

    def stopped(*args, **kwargs):
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as stop:
            raise SystemError("CPUDispatcher(<function _cached_kernel>) returned a result with "
                              "an exception set") from stop

    monkeypatch.setattr(lambda_kernel, "lambdarank_gradients", stopped)
    X, y, qid, bm25 = _problem(11, n_queries=6)
    with pytest.raises(KeyboardInterrupt):
        RiskRanker("UCRO", **SMALL).fit(X, y, qid=qid, baseline=bm25)


def test_parameters_are_checked_once_at_fit_alpha_and_k_as_the_objectives_declare_them():
    """The estimator's own parameters by scikit-learn's constraints; alpha and k, which it
    passes on, by the objectives' declarations: the same message as the objective gives."""
    from lgb_risk import UCRO

    X, y, qid, bm25 = _problem(12, n_queries=6)
    for name, value in [("alpha", -1), ("alpha", True), ("k", 0), ("k", 2.5)]:
        with pytest.raises(ValueError) as from_objective:
            UCRO(**{name: value}, baseline=np.zeros(6)).validate_params()
        with pytest.raises(ValueError) as from_estimator:
            RiskRanker("UCRO", **{name: value}, **SMALL).fit(X, y, qid=qid, baseline=bm25)
        assert str(from_estimator.value) == str(from_objective.value), (name, value)
    with pytest.raises(ValueError, match="n_estimators == 0, must be >= 1"):
        RiskRanker(**{**SMALL, "n_estimators": 0}).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="learning_rate must be an instance of"):
        RiskRanker(**{**SMALL, "learning_rate": "fast"}).fit(X, y, qid=qid)
    with pytest.raises(TypeError, match="qid_column must be str or Integral or None, got 2.5"):
        RiskRanker(**{**SMALL, "qid_column": 2.5}).fit(X, y, qid=qid)
    with pytest.raises(ValueError, match="learning_rate must be a number > 0, got inf"):
        RiskRanker(**{**SMALL, "learning_rate": np.inf}).fit(X, y, qid=qid)


def test_each_parameter_of_the_estimator_is_declared_once_with_its_signatures_default():
    """Every ``__init__`` parameter is a record of ``_PARAMETERS`` with the signature's default,
    or one of the four the objectives declare (checked and documented as they declare them),
    and its docstring entry is the record's."""
    import inspect
    import textwrap

    signature = inspect.signature(RiskRanker.__init__).parameters
    records = {record.name: record for record in RiskRanker._PARAMETERS}
    assert set(signature) - {"self"} == set(records) | {"objective", "alpha", "k", "measure"}
    for name, record in records.items():
        assert record.default == signature[name].default, name
        assert textwrap.indent(record.entry(), "    ") in RiskRanker.__doc__, name


def test_a_risk_ranker_toward_err_trains_the_objective_toward_err_and_scores_in_it():
    """``measure="err@5"``: the objective's baselines are ERR@5 of the baseline's ranking (a loop
    over its definition), the booster is lightgbm.train's with UCRO(measure="err@5"), and a risk
    score compares ERR@5."""
    import lightgbm as lgb

    from lgb_risk import UCRO
    from tests import naive
    from tests.conftest import split_queries

    X, y, qid, bm25 = _problem(5)
    group = _group(qid)
    top = int(y.max())

    def err5(scores):
        return np.array([naive.err(a, b, 5, top)
                         for a, b in split_queries(y.tolist(), list(scores), group.tolist())])

    model = RiskRanker("UCRO", alpha=3, measure="err@5", **SMALL).fit(X, y, qid=qid,
                                                                      baseline=bm25)
    np.testing.assert_allclose(np.ravel(model.objective_.baseline), err5(bm25), atol=1e-12)
    assert model.objective_.target().label == "ERR@5"
    params = model._lightgbm_params(UCRO(alpha=3, measure="err@5", baseline=err5(bm25)))
    booster = lgb.train(params, lgb.Dataset(X, y, group=group, params={"verbose": -1}),
                        num_boost_round=SMALL["n_estimators"])
    np.testing.assert_array_equal(booster.predict(X), model.predict(X))
    scored = clone(model).set_params(score_measure="urisk", score_alpha=5).fit(
        X, y, qid=qid, baseline=bm25)
    assert scored.score(X, y, qid=qid, baseline=bm25) == pytest.approx(
        risk.urisk(err5(scored.predict(X)), err5(bm25), alpha=5), abs=1e-12)
    with pytest.raises(ValueError, match="k=10 contradicts measure='err@5'"):
        RiskRanker("UCRO", k=10, measure="err@5").fit(X, y, qid=qid, baseline=bm25)
