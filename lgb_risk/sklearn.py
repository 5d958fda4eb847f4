"""A scikit-learn estimator: risk-sensitive LambdaMART with a query id per row.

:class:`RiskRanker` trains any objective of :data:`lgb_risk.objectives.OBJECTIVES` with
LightGBM, takes the query of every row as XGBoost's rankers do (``qid``, or a column of a
DataFrame), the baseline as a score per row (so that cross-validation splits it with the rows)
or a :class:`~lgb_risk.baselines.BaselineStore`, and scores a fitted model with a named measure:
NDCG@k by default, or a risk measure against the baseline. Its parameters live in ``__init__``,
so ``clone``, ``Pipeline`` and ``GridSearchCV`` over the learner and α work as for any
estimator.

``qid`` and ``baseline`` are per-row metadata: with scikit-learn's metadata routing
(``sklearn.set_config(enable_metadata_routing=True)``) request them with
``RiskRanker(...).set_fit_request(qid=True, baseline=True).set_score_request(qid=True,
baseline=True)`` and pass them to ``GridSearchCV.fit``; without routing, keep the query id in a
DataFrame column (``qid_column=``), which every splitter carries with the rows.
"""

from __future__ import annotations

import textwrap
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_scalar, validate_data

from lgb_risk import measures as registry
from lgb_risk._inputs import rows
from lgb_risk._inputs.parameters import Bounds, OfType, Parameter
from lgb_risk._inputs.rows import *  # noqa: F403 (its __all__ is this module's too)
from lgb_risk._inputs.rows import aligned_to_rows, check_numeric_features, n_rows, queries_of_rows
from lgb_risk._inputs.validation import (
    check_group,
    check_labels,
    check_lightgbm_parameter_names,
    is_number,
)
from lgb_risk._training.training_set import default_target
from lgb_risk.baselines import BaselineStore, aligned_baselines

if TYPE_CHECKING:
    from collections.abc import Sequence

    from lgb_risk._inputs.type_aliases import ArrayLike

__all__ = ["RiskRanker"]
__all__ += rows.__all__  # what the estimator reads from rows

#: How the features are checked at the boundary: sparse CSR/CSC kept, NaN allowed (LightGBM's
#: missing values), infinity and complex numbers refused.
_ARRAYS = {"accept_sparse": ("csr", "csc"), "ensure_all_finite": "allow-nan"}

#: LightGBM parameters the estimator sets itself.
_SET_BY_THE_ESTIMATOR = ("objective", "metric", "num_iterations", "n_estimators",
                         "num_boost_round", "num_round", "num_trees", "num_rounds", "n_iter")


def _included_ends(bounds: Bounds) -> str:
    """``check_scalar``'s ``include_boundaries`` for a :class:`Bounds` check."""
    left = bounds.minimum is not None and not bounds.above
    right = bounds.maximum is not None and not bounds.below
    return {(True, True): "both", (True, False): "left", (False, True): "right",
            (False, False): "neither"}[left, right]


def _in_unrouted_model_selection() -> bool:
    """Whether this call comes from scikit-learn's model selection (a search or a
    cross-validation) with metadata routing off: per-row metadata then reaches ``fit`` but not
    ``score``."""
    import sys
    import types

    import sklearn

    if sklearn.get_config().get("enable_metadata_routing"):
        return False
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("sklearn.model_selection"):
            return True
        frame = frame.f_back
    return False


class RiskRanker(BaseEstimator):
    """Risk-sensitive LambdaMART as a scikit-learn ranker.

    The model is trained by ``lightgbm.train`` with the objective ``objective`` (LambdaMART,
    U-CRO, T-SARO, T-FARO, T*-FARO or GeoRisk; :mod:`lgb_risk.objectives` gives each formula)
    at risk sensitivity ``alpha``, against the baseline given to :meth:`fit`.

    Parameters
    ----------
    objective : str, default "LambdaMART"
        {objective names}
    {alpha}
    {k}
    measure : str, optional
        The objective's target measure, ``"ndcg@k"`` (the default, k = ``k``) or ``"err@k"``
        (see :class:`~lgb_risk.objectives.LambdaMART`): the baselines, the risk state, the
        evaluation sets' per-round measure and a risk ``score_measure`` all use it.
    {parameters}

    Attributes
    ----------
    booster_ : lightgbm.Booster
    best_iteration_ : int
        The number of trees :meth:`predict` uses (all of them without early stopping).
    evals_result_ : dict
        NDCG@k of each ``eval_set`` per round (``{"valid_0": {"ndcg@10[default]": [...]}}``).
    objective_ : the fitted objective instance
    max_label_ : int
        The training labels' highest grade (at least 1): ERR's l_max, in training and in
        :meth:`score`, wherever a measure leaves ``max_label`` unset.
    n_features_in_ : int
    feature_names_in_ : ndarray of str (when X is a DataFrame)

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> qid = np.repeat(np.arange(60), 12)
    >>> X = rng.normal(size=(qid.size, 4))
    >>> y = np.clip(np.round(X[:, 0] + rng.normal(size=qid.size)), 0, 3).astype(int)
    >>> bm25 = X[:, 0] + rng.normal(size=qid.size)        # the baseline's score of every row
    >>> model = RiskRanker("UCRO", alpha=5, n_estimators=20, min_child_samples=5)
    >>> model = model.fit(X, y, qid=qid, baseline=bm25)
    >>> model.predict(X[:3]).shape, 0 < model.score(X, y, qid=qid) <= 1
    ((3,), True)
    """

    #: The estimator's own parameters, declared once: each is checked once, at :meth:`fit` (a
    #: number's bounds by scikit-learn's :func:`~sklearn.utils.check_scalar`), and written into
    #: this docstring; ``__init__`` stores them as given. ``objective``, ``alpha``, ``k`` and
    #: ``measure`` are the objectives' own, checked and documented as the objectives declare them.
    _PARAMETERS: ClassVar[tuple[Parameter, ...]] = (
        Parameter("objective_params", None, OfType((dict,), optional=True), show_default=False,
                  doc="The objective's other parameters (``sigmoid``, ``se_update``, "
                      "``tr_definition``, ``delta``, ...), as its class declares them."),
        Parameter("n_estimators", 100, Bounds(integer=True, minimum=1), doc="Boosting rounds."),
        Parameter("learning_rate", 0.1, Bounds(minimum=0, above=True),
                  doc="LightGBM's shrinkage of each tree."),
        Parameter("num_leaves", 31, Bounds(integer=True, minimum=2),
                  doc="LightGBM's most leaves in a tree."),
        Parameter("min_child_samples", 20, Bounds(integer=True, minimum=0),
                  doc="LightGBM's ``min_data_in_leaf``."),
        Parameter("lgbm_params", None, OfType((dict,), optional=True), show_default=False,
                  doc="Any other ``lightgbm.train`` parameter; ``objective`` and ``metric`` are "
                      "the estimator's own."),
        Parameter("random_state", None, Bounds(integer=True, optional=True), show_default=False,
                  doc="LightGBM's ``seed``."),
        Parameter("n_jobs", None, Bounds(integer=True, optional=True), show_default=False,
                  doc="LightGBM's ``num_threads`` (default: LightGBM's choice)."),
        Parameter("qid_column", None, OfType((str, Integral), optional=True),
                  kind="str or int, optional", show_default=False,
                  doc="The column of ``X`` that holds each row's query id (a DataFrame column "
                      "name, or a position in an array); it is not a feature. Without it, "
                      ":meth:`fit` and :meth:`score` take ``qid=``."),
        Parameter("baseline_feature", None, Bounds(integer=True, minimum=0, optional=True),
                  show_default=False,
                  doc="The 0-based column of ``X`` (after removing ``qid_column``) that is the "
                      "baseline's score of every row (LETOR's feature 25, BM25 in MQ2008, is "
                      "column 24), e.g. the first-stage retrieval score of a PyTerrier pipeline "
                      "(``pt.ltr.score_to_feature()``): :meth:`fit` and :meth:`score` then take "
                      "no ``baseline=``, and no row order can misalign it. It stays a feature."),
        Parameter("early_stopping_rounds", None, Bounds(integer=True, minimum=1, optional=True),
                  show_default=False,
                  doc="With ``eval_set`` given to :meth:`fit`: stop after this many rounds "
                      "without gain in the first evaluation set's NDCG@k, and keep the best "
                      "iteration."),
        Parameter("score_measure", "ndcg@10", OfType((str,)),
                  doc="What :meth:`score` returns: the mean over queries of a measure of "
                      ":mod:`lgb_risk.measures` (``\"ndcg@10\"``, ``\"err@20\"``, "
                      "``\"ndcg(label_gain=linear)@5\"``), or a risk measure of "
                      ":data:`lgb_risk.risk.RISK_MEASURES` (``\"urisk\"``, ``\"trisk\"``, "
                      "``\"zrisk\"``, ``\"georisk\"``) of the model's NDCG@k against the "
                      "baseline given to :meth:`score`, at ``score_alpha``. Every one is "
                      "higher-is-better."),
        Parameter("score_alpha", 1.0, Bounds(minimum=0),
                  doc="α of a risk ``score_measure`` (fixed, so that models trained at "
                      "different α compare)."),
    )

    def __init__(self, objective: str = "LambdaMART", alpha: float = 1.0,
                 k: int | None = None, measure: str | None = None, *,
                 objective_params: dict | None = None, n_estimators: int = 100,
                 learning_rate: float = 0.1, num_leaves: int = 31, min_child_samples: int = 20,
                 lgbm_params: dict | None = None, random_state: int | None = None,
                 n_jobs: int | None = None, qid_column: str | int | None = None,
                 baseline_feature: int | None = None, early_stopping_rounds: int | None = None,
                 score_measure: str = "ndcg@10", score_alpha: float = 1.0):
        self.objective = objective
        self.alpha = alpha
        self.k = k
        self.measure = measure
        self.objective_params = objective_params
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.num_leaves = num_leaves
        self.min_child_samples = min_child_samples
        self.lgbm_params = lgbm_params
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.qid_column = qid_column
        self.baseline_feature = baseline_feature
        self.early_stopping_rounds = early_stopping_rounds
        self.score_measure = score_measure
        self.score_alpha = score_alpha

    def _check_params(self) -> None:
        """Refuse a parameter of the wrong type or out of its bounds, naming it."""
        for declared_parameter in self._PARAMETERS:
            name, check = str(declared_parameter.name), declared_parameter.check
            value = getattr(self, name)
            if isinstance(check, Bounds) and not (value is None and check.optional):
                check_scalar(value, name, Integral if check.integer else Real,
                             min_val=check.minimum, max_val=check.maximum,
                             include_boundaries=_included_ends(check))
            declared_parameter.validate(value, name)  # a type, or a number that is not finite

    # -- fitting ---------------------------------------------------------------------------

    def fit(self, X: ArrayLike, y: ArrayLike, *, qid: ArrayLike | None = None,
            group: ArrayLike | None = None, baseline: ArrayLike | BaselineStore | None = None,
            eval_set: Sequence[tuple[Any, ArrayLike]] | None = None,
            eval_group: Sequence[ArrayLike] | None = None) -> RiskRanker:
        """Train on rows ``X`` with relevance labels ``y``.

        Parameters
        ----------
        X : array-like, sparse matrix or DataFrame, shape (n_samples, n_features)
        y : array-like of int, shape (n_samples,)
            Relevance grades.
        qid : array-like, shape (n_samples,), optional
            The query of every row (rows of a query adjacent); or ``qid_column``, or ``group``.
        group : array-like of int, optional
            LightGBM's query sizes instead of ``qid`` (as PyTerrier's ``form="ltr"`` passes
            them); the queries are then numbered 0, 1, ... in row order.
        baseline : array-like (n_samples,) or (n_samples, n_systems), or BaselineStore
            The baseline systems' score of every row (a first-stage score such as BM25, or a
            feature column), each ranking its query's rows: the objective measures their
            NDCG@k per query. Or a store of per-query NDCG@k keyed by query id. Not used by
            LambdaMART; not given with ``baseline_feature``.
        eval_set : list of (X, y), optional
            Evaluation sets (LightGBM's and PyTerrier's convention), with ``eval_group``, their
            query sizes: NDCG@k per round in ``evals_result_``; early stopping on the first with
            ``early_stopping_rounds``.
        eval_group : list of array-like of int, optional
        """
        import lightgbm as lgb

        from lgb_risk.objectives import OBJECTIVES, check_parameter, make_objective

        self._check_params()  # once, at the boundary
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {', '.join(OBJECTIVES)}, got "
                             f"{self.objective!r}")
        cls = OBJECTIVES[self.objective]
        target = self._target()
        alpha = float(check_parameter("alpha", self.alpha))
        self._score_target()  # a wrong score_measure is refused before training
        if qid is not None and _in_unrouted_model_selection():
            raise ValueError(
                "RiskRanker.fit got qid= inside scikit-learn's model selection without metadata "
                "routing: the test folds' score would get no query ids and every score would be "
                "NaN. Either enable routing (sklearn.set_config(enable_metadata_routing=True); "
                "RiskRanker(...).set_fit_request(qid=True, baseline=True).set_score_request("
                "qid=True, baseline=True)), or keep the query id in a column of X "
                "(qid_column=), which every splitter carries with the rows")
        baseline = aligned_to_rows(baseline, X, "fit")
        features, query_ids, group = self._rows(X, qid, "fit", group)
        check_numeric_features(features, "fit")
        features, y = validate_data(self, features, y, reset=True, **_ARRAYS)
        labels = check_labels(y, "y")
        if labels.size < 2:
            raise ValueError(f"RiskRanker needs at least 2 rows to rank (n_samples = "
                             f"{labels.size})")
        # ERR's l_max where the measures leave it unset: the training labels' highest, kept so
        # that score() measures every fold on the training's scale, not on its own labels'.
        self.max_label_ = max(1, int(labels.max(initial=0)))
        values = None
        if cls.baseline_parameter is not None:
            baseline = self._baseline_of_rows(baseline, features, "fit")
            values = self._baseline_values(baseline, labels, group, query_ids, target, "fit")
        objective = make_objective(self.objective, alpha=alpha, baseline=values,
                                   query_ids=query_ids, measure=target.text,
                                   **dict(self.objective_params or {}))
        objective.validate_params()
        params = self._lightgbm_params(objective)
        train_set = lgb.Dataset(features, labels, group=group, params={"verbose": -1})
        valid_sets = self._evaluation_sets(eval_set, eval_group, train_set)
        self.evals_result_: dict = {}
        callbacks = [lgb.record_evaluation(self.evals_result_)]
        if self.early_stopping_rounds is not None:
            if not valid_sets:
                raise ValueError("early_stopping_rounds needs eval_set= (and eval_group=) in "
                                 "fit")
            callbacks.append(lgb.early_stopping(self.early_stopping_rounds,
                                                first_metric_only=True, verbose=False))
        from lgb_risk.feval import metric_feval

        self.booster_ = lgb.train(params, train_set, num_boost_round=self.n_estimators,
                                  valid_sets=valid_sets,
                                  feval=metric_feval(target.text) if valid_sets
                                  else None, callbacks=callbacks)
        self.best_iteration_ = (self.booster_.best_iteration or
                                self.booster_.current_iteration())
        self.objective_ = objective
        return self

    def _evaluation_sets(self, eval_set, eval_group, train_set) -> list:
        """``eval_set``'s (X, y) pairs with ``eval_group``'s query sizes, as LightGBM Datasets
        checked like the training rows."""
        import lightgbm as lgb

        if eval_set is None:
            if eval_group is not None:
                raise ValueError("eval_group was given without eval_set")
            return []
        if eval_group is None or len(eval_group) != len(eval_set):
            raise ValueError("eval_set needs eval_group: the query sizes of each evaluation "
                             "set, in a list as long as eval_set")
        sets = []
        for index, ((X_valid, y_valid), sizes) in enumerate(zip(eval_set, eval_group)):
            features, _ = self._split_query_column(X_valid)
            features = validate_data(self, features, reset=False, **_ARRAYS)
            labels = check_labels(y_valid, f"eval_set[{index}]'s y")
            sizes = check_group(sizes, labels.size, f"eval_set[{index}]'s y")
            sets.append(lgb.Dataset(features, labels, group=sizes, reference=train_set,
                                    params={"verbose": -1}))
        return sets

    def _baseline_of_rows(self, baseline, features, method: str):
        """``baseline`` as given, or the ``baseline_feature`` column of the features."""
        column = self.baseline_feature
        if column is None:
            return baseline
        if baseline is not None:
            raise ValueError(f"{method}: baseline= was given and baseline_feature={column!r} "
                             "too; give one")
        n_features = features.shape[1]
        if isinstance(column, bool) or not isinstance(column, (int, np.integer)) or not (
                0 <= column < n_features):
            raise ValueError(f"baseline_feature must be a feature position from 0 to "
                             f"{n_features - 1}, got {column!r}")
        values = features[:, int(column)]
        return np.asarray(values.toarray() if hasattr(values, "toarray") else values).ravel()

    def _lightgbm_params(self, objective) -> dict:
        given = dict(self.lgbm_params or {})
        check_lightgbm_parameter_names(given, "lgbm_params")
        clash = [key for key in given if key in _SET_BY_THE_ESTIMATOR]
        if clash:
            raise ValueError(f"lgbm_params sets {clash[0]!r}, which RiskRanker sets itself "
                             "(the objective is `objective`, the rounds `n_estimators`, and "
                             "no LightGBM metric is computed)")
        params: dict[str, Any] = {
            "learning_rate": self.learning_rate, "num_leaves": self.num_leaves,
            "min_data_in_leaf": self.min_child_samples, "verbose": -1, **given,
            "objective": objective, "metric": "None"}
        if self.random_state is not None:
            params["seed"] = self.random_state
        if self.n_jobs is not None:
            params["num_threads"] = self.n_jobs
        return params

    def _split_query_column(self, X):
        """``X`` without the ``qid_column`` (the features), and that column (None without
        one)."""
        column = self.qid_column
        if column is None:
            return X, None
        if hasattr(X, "columns"):
            if column not in X.columns:
                raise ValueError(f"qid_column {column!r} is not a column of X (columns: "
                                 f"{', '.join(map(str, X.columns[:10]))} ...)")
            return X.drop(columns=[column]), X[column].to_numpy()
        if isinstance(column, bool) or not isinstance(column, (int, np.integer)):
            raise ValueError(f"qid_column {column!r} names a column, but X has no column "
                             "names (not a DataFrame): give its position")
        dense = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
        width = dense.shape[1] if dense.ndim == 2 else 0
        if not 0 <= column < width:
            raise ValueError(f"qid_column {column} is out of range: X has {width} columns "
                             f"(positions 0 to {width - 1})")
        return np.delete(dense, int(column), axis=1), dense[:, int(column)]

    def _rows(self, X, qid, method: str, group=None):
        """The features (without the query-id column), the query ids and the query sizes."""
        features, in_column = self._split_query_column(X)
        given = [name for name, value in (("qid=", qid), ("group=", group),
                                          (f"qid_column={self.qid_column!r}", in_column))
                 if value is not None]
        if len(given) > 1:
            raise ValueError(f"{method}: {' and '.join(given)} both give the rows' queries; "
                             "give one")
        if in_column is not None:
            qid = in_column
        elif group is not None:
            sizes = check_group(group, n_rows(features), "X")
            qid = np.repeat(np.arange(sizes.size), sizes)
        elif qid is None:
            raise ValueError(f"RiskRanker.{method} needs the query of every row: qid=... (one "
                             "id per row, a query's rows adjacent), or qid_column= naming the "
                             "column of X that holds it, or group= (query sizes)")
        query_ids, group = queries_of_rows(qid)
        if group.sum() != n_rows(features):
            raise ValueError(f"qid has {group.sum()} ids but X has {n_rows(features)} rows")
        return features, query_ids, group

    def _target(self) -> registry.MeasureSpec:
        """The target measure: ``measure``, else NDCG@k; each checked as the objectives declare
        them, and ``k`` beside a measure only as the measure's own cut-off."""
        from lgb_risk.objectives import check_parameter

        if self.k is not None:
            check_parameter("k", self.k)
        if self.measure is None:
            return registry.parse(default_target(self.k))
        spec = registry.parse(check_parameter("measure", self.measure))
        if self.k is not None and spec.k != self.k:
            raise ValueError(f"k={self.k} contradicts measure={self.measure!r}: give the "
                             "cut-off once, in the measure")
        return spec

    @staticmethod
    def _baseline_values(baseline, labels, group, query_ids, target: registry.MeasureSpec,
                         method: str):
        """Per-query target measure of each baseline (n_queries, n_systems), or the store as
        given."""
        if baseline is None:
            raise ValueError(f"RiskRanker.{method} needs baseline=: the baseline's score of "
                             "every row (n_samples,) or of several baselines (n_samples, "
                             f"n_systems), or a BaselineStore of their {target.label} by query "
                             "id")
        if isinstance(baseline, BaselineStore):
            return baseline
        try:
            scores = np.asarray(baseline, dtype=np.float64)
        except (TypeError, ValueError):
            given = np.asarray(baseline, dtype=object).ravel()
            position = next(i for i, v in enumerate(given) if not is_number(v))
            raise ValueError(f"baseline must hold numbers (a score per row); value {position} "
                             f"is {given[position]!r}") from None
        if scores.ndim == 1:
            scores = scores[:, None]
        if scores.ndim == 2 and scores.shape[1] == 0:
            raise ValueError(f"baseline has no system (shape {scores.shape}): give a score per "
                             "row, (n_samples,), or per row and system, (n_samples, n_systems)")
        if scores.ndim != 2 or scores.shape[0] != labels.size:
            raise ValueError(f"baseline must hold a score per row ({labels.size} rows), as "
                             f"(n_samples,) or (n_samples, n_systems); got shape "
                             f"{np.shape(baseline)}")
        bad = np.argwhere(~np.isfinite(scores))
        if bad.size:
            row, system = (int(v) for v in bad[0])
            query = query_ids[np.searchsorted(np.cumsum(group), row, side="right")].item()
            raise ValueError(f"baseline score of row {row} (query {query!r}, system {system}) "
                             f"is {scores[row, system]}: baseline scores must be finite")
        return np.column_stack([target.compute(registry.Judged(labels, column, group))
                                for column in scores.T])

    # -- predicting and scoring ------------------------------------------------------------

    def _check_fitted(self, method: str) -> None:
        if not hasattr(self, "booster_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError(f"this RiskRanker is not fitted yet: call fit before {method}")

    def predict(self, X: ArrayLike) -> np.ndarray:
        """The model's score of every row (higher ranks first)."""
        self._check_fitted("predict")
        features, _ = self._split_query_column(X)
        features = validate_data(self, features, reset=False, **_ARRAYS)
        return np.asarray(self.booster_.predict(features, num_iteration=self.best_iteration_))

    def _score_target(self):
        """``score_measure`` parsed: ("risk", name) or ("measure", MeasureSpec)."""
        from lgb_risk.objectives import check_parameter
        from lgb_risk.risk import RISK_MEASURES

        text = str(self.score_measure).strip().lower()
        if text in RISK_MEASURES:
            check_parameter("alpha", self.score_alpha)
            return "risk", text
        try:
            return "measure", registry.parse(self.score_measure)
        except ValueError as error:
            raise ValueError(f"score_measure: {error}; or a risk measure, one of "
                             f"{', '.join(RISK_MEASURES)}") from None

    def score(self, X: ArrayLike, y: ArrayLike, *, qid: ArrayLike | None = None,
              group: ArrayLike | None = None, baseline: ArrayLike | BaselineStore | None = None,
              sample_weight: ArrayLike | None = None) -> float:
        """The fitted model's ``score_measure`` on rows ``X`` with labels ``y``: the mean over
        queries of a measure, or a risk measure of its NDCG@k against ``baseline`` (as in
        :meth:`fit`) at ``score_alpha``. Higher is better. The rows' queries as in :meth:`fit`.

        ``sample_weight`` (one per row, equal within a query) weights the queries in the mean
        of a measure; a risk measure takes none (scikit-learn's Pipeline passes
        ``sample_weight=None`` to every final step)."""
        from lgb_risk.risk import RISK_MEASURES

        self._check_fitted("score")
        kind, target = self._score_target()
        baseline = aligned_to_rows(baseline, X, "score")
        features, query_ids, sizes = self._rows(X, qid, "score", group)
        labels = check_labels(y, "y")
        if labels.size != sizes.sum():
            raise ValueError(f"y has {labels.size} labels but X has {sizes.sum()} rows")
        scores = self.predict(X)
        weights = None if sample_weight is None else self._query_weights(sample_weight, sizes)
        if kind == "measure":
            self._check_grades_in_scale(labels, target, "score_measure")
        else:
            self._check_grades_in_scale(labels, self._target(), "measure")
        if kind == "measure":
            target = target.with_unset("max_label", self.max_label_)  # training's scale
            values = target.compute(registry.Judged(labels, scores, sizes))
            return float(np.average(values, weights=weights))
        if weights is not None:
            raise ValueError(f"sample_weight weights queries in the mean of a measure; the risk "
                             f"measure {target!r} takes no weights")
        measured = self._target().with_unset("max_label", self.max_label_)
        features = validate_data(self, features, reset=False, **_ARRAYS)
        baseline = self._baseline_of_rows(baseline, features, "score")
        base = self._baseline_values(baseline, labels, sizes, query_ids, measured, "score")
        base = aligned_baselines(base, sizes.size, query_ids=query_ids, measure=measured.text,
                                 owner="RiskRanker.score", parameter="baseline",
                                 the_set="the scored rows")
        model = measured.compute(registry.Judged(labels, scores, sizes))
        return float(RISK_MEASURES[target].against(model[None, :], base.T,
                                                   self.score_alpha)[0])

    def _check_grades_in_scale(self, labels: np.ndarray, measure: Any, parameter: str) -> None:
        """A measure scaled by the highest grade (ERR's l_max) takes it from the training
        labels where it sets none: a scored grade above it is refused, naming the remedy."""
        unset = measure.parameter_values().get("max_label", 0) is None
        top = int(labels.max(initial=0))
        if unset and self.max_label_ is not None and top > self.max_label_:
            k = "" if measure.k is None else f"@{measure.k}"
            raise ValueError(
                f"y holds grade {top}, above the highest grade of the training labels, "
                f"{self.max_label_}, by which {measure.label} is scaled; write the "
                f"collection's highest grade into the measure: "
                f"{parameter}=\"{measure.measure.name}(max_label={top}){k}\"")

    @staticmethod
    def _query_weights(sample_weight, group) -> np.ndarray:
        """One weight per query from one per row (equal within each query)."""
        w = np.asarray(sample_weight, dtype=np.float64)
        if w.shape != (int(group.sum()),):
            raise ValueError(f"sample_weight must hold one weight per row ({group.sum()}), got "
                             f"shape {w.shape}")
        bad = np.flatnonzero(~np.isfinite(w) | (w < 0))
        if bad.size:
            raise ValueError(f"sample_weight of row {int(bad[0])} is {w[bad[0]]}; weights must "
                             "be finite and >= 0")
        starts = np.concatenate([[0], np.cumsum(group)[:-1]])
        first = w[starts]
        differs = np.flatnonzero(w != np.repeat(first, group))
        if differs.size:
            raise ValueError(f"sample_weight of row {int(differs[0])} differs from its query's "
                             "first row: a ranking's weight is its query's (one per query)")
        if first.sum() <= 0:
            raise ValueError("sample_weight must not be 0 on every row")
        return first

    # -- scikit-learn's estimator protocol -------------------------------------------------

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.estimator_type = "ranker"
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = True
        tags.target_tags.required = True
        return tags


def _documented(cls: type[RiskRanker]) -> type[RiskRanker]:
    """Fill ``RiskRanker``'s parameter entries: the names of
    :data:`~lgb_risk.objectives.OBJECTIVES`, the objectives' declared ``alpha`` and ``k``, and
    the estimator's own records."""
    from lgb_risk._inputs.parameters import fill, parameter_of
    from lgb_risk.objectives import OBJECTIVES

    baselines = {None: "no baseline, ``alpha`` unused", "baseline": "one baseline",
                 "baselines": "one or several"}
    names = ", ".join(f'``"{name}"`` ({baselines[c.baseline_parameter]})'
                      for name, c in OBJECTIVES.items())
    doc = fill(cls.__doc__ or "", "{objective names}", textwrap.fill(
        f"A name of :data:`lgb_risk.objectives.OBJECTIVES`: {names}.", 88), cls.__name__)
    one_baseline = OBJECTIVES["UCRO"]
    for name in ("alpha", "k"):
        doc = fill(doc, "{" + name + "}", parameter_of(one_baseline, name).entry(), cls.__name__)
    own = "\n".join(declared_parameter.entry() for declared_parameter in cls._PARAMETERS)
    cls.__doc__ = fill(doc, "{parameters}", own, cls.__name__)
    return cls


_documented(RiskRanker)
