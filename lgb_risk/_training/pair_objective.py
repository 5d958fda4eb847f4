"""The base of every objective: :class:`PairObjective`, whose gradients the pair kernel
computes pair by pair, with the entry points of each framework that calls it (``lightgbm.train``'s
``objective(preds, Dataset)``, ``LGBMRanker``'s ``sklearn_objective``, XGBoost's
``xgboost_objective``, :mod:`lgb_risk._training.xgboost_gradients`).

A gradient call takes the training set's derived data (:mod:`lgb_risk._training.training_set`,
made at the first call), ranks every query by the current scores, asks the objective for this
iteration's risk state, and runs the pair kernel (:mod:`lgb_risk._training.lambda_kernel`). What
the objective supplies is :class:`PairObjective`'s contract, in one place at the top of the class;
:class:`~lgb_risk.objectives.LambdaMART` supplies it, and every risk objective is a LambdaMART
that supplies another risk state.
"""

from __future__ import annotations

import abc
import copy
import warnings
import weakref
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from lgb_risk import measures as registry
from lgb_risk import metrics
from lgb_risk._inputs.parameters import validate
from lgb_risk._inputs.validation import check_labels
from lgb_risk._measuring.ranking import dcg_at_k_of_order, document_order, rerank_by_score
from lgb_risk._runtime.kernel_calls import interruptible
from lgb_risk._training import lambda_kernel as kernel
from lgb_risk._training import xgboost_gradients
from lgb_risk._training.training_set import (
    TrainingSet,
    checked_labels,
    default_target,
    err_max_label,
    gain_table,
    prepare,
)

if TYPE_CHECKING:
    from lgb_risk._inputs.type_aliases import ArrayLike
    from lgb_risk._training.shards import ObjectiveShard


class PairObjective(abc.ABC):
    """An objective computed pair by pair by the pair kernel: the framework entry points and the
    gradient call, for a subclass that supplies the contract below (its parameters, its target
    measure and its risk state each iteration)."""

    # -- the contract: what an objective supplies ------------------------------------------------

    #: The target measure's text (``"ndcg@10"``, ``"err(max_label=4)@20"``); None for LambdaMART's
    #: ΔNDCG with IDCG at the truncation level.
    measure: str | None
    #: The gain of each label; None for LightGBM's 2**l − 1.
    label_gain: Any
    #: Which baseline parameter the objective takes: None, ``"baseline"`` or ``"baselines"``.
    baseline_parameter: ClassVar[str | None] = None

    @abc.abstractmethod
    def target(self) -> registry.MeasureSpec | None:
        """The target measure as parsed (:mod:`lgb_risk.measures`); None for LambdaMART's
        default, LightGBM's ΔNDCG with no cut-off of its own."""

    @abc.abstractmethod
    def risk_state(self, model_values: np.ndarray, initial: bool) -> kernel.RiskState:
        """The risk state of this iteration: the hook a new objective implements.

        Parameters
        ----------
        model_values : ndarray (n_queries,)
            The current model's value of the target measure (NDCG@k, 0 where IDCG@k = 0, or
            ERR@k) on every training query, in the Dataset's order; over all training queries
            also on a rank of a distributed training.
        initial : bool
            Whether the predictions are still the initial ones (T-SARO's s_x rule).

        Returns
        -------
        NamedTuple
            A state type registered with :func:`lgb_risk._training.lambda_kernel.multiplier_of`,
            whose multiplier the kernel applies to every pair;
            :class:`~lgb_risk._training.lambda_kernel.NoRisk` (every multiplier 1) for
            LambdaMART.
        """

    def _prepare_risk(self, setup: TrainingSet) -> None:
        """Hook: align the baselines to a new training set (its first call); none by default."""
        return None

    def _predictions_initial(self, scores: np.ndarray) -> bool:
        """Hook: whether these are a training run's initial predictions (T-SARO's s_x rule);
        never, by default."""
        return False

    def _norm_includes_risk(self) -> bool:
        """Hook: whether a query's normaliser log2(1 + Σ)/Σ takes Σ over the multiplied pairs
        (by default over LambdaMART's own, so that the multipliers reach the trees)."""
        return False

    def __post_init__(self) -> None:
        """Start without a training set: its derived data is made at the first call."""
        self._setup_cache: TrainingSet | None = None
        #: None on one machine; set by :mod:`lgb_risk.distributed` (and by
        #: :mod:`lgb_risk._training.xgboost_gradients` under ``xgboost.dask``) on each rank of a
        #: training set split across machines: which training queries are here, and how to
        #: gather the rest.
        self.shard: ObjectiveShard | None = None
        #: The lightgbm.Dataset whose weights were last checked (:func:`_warn_of_filled_weights`).
        self._weights_checked_in: weakref.ref | None = None

    # -- entry points --------------------------------------------------------------------------

    def __call__(self, preds, train_data):
        """Gradients and hessians for ``lightgbm.train``: ``(preds, Dataset) -> (grad, hess)``.

        The Dataset's weights arrive as LightGBM keeps them: it replaces a NaN weight by 0
        and an infinite one by a huge finite number when it builds the Dataset, before any
        objective sees it. Such a weight cannot be refused here, so a training set with a
        weight of 0 or above 1e30 is warned about at the first call (``LGBMRanker`` refuses a
        NaN or infinite ``sample_weight`` itself; :meth:`gradients`, which gets the weights as
        given, refuses them)."""
        return _lightgbm_call(self, preds, train_data)

    def sklearn_objective(self, y_true: ArrayLike, y_pred: ArrayLike, weight: ArrayLike,
                          group: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
        """The objective with LGBMRanker's signature ``(y_true, y_pred, weight, group)``."""
        if group is None:
            raise ValueError(f"{type(self).__name__} needs query groups (fit(..., group=...))")
        return self.gradients(y_pred, y_true, group, weight)

    def xgboost_objective(self, preds: ArrayLike, dtrain: Any) -> tuple[np.ndarray, np.ndarray]:
        """The objective with XGBoost's signature ``(preds, DMatrix) -> (grad, hess)``, for
        ``xgboost.train(params, dtrain, obj=objective.xgboost_objective)`` and
        ``xgboost.dask.train(client, params, dtrain, obj=objective.xgboost_objective)``.

        The queries are the DMatrix's groups (``DMatrix(X, y, qid=...)`` or ``set_group``), in
        its order, as a baseline array or ``query_ids`` must be; a
        :class:`~lgb_risk.baselines.FeatureBaseline` is scored on the DMatrix's own rows.
        XGBoost weighs a ranking by query (one weight per group), so each query's weight is
        given to all its documents. The hessians are LambdaMART's, small at the start of
        training (ρ(1 − ρ) times a ΔNDCG): XGBoost's default ``min_child_weight=1`` then stops
        trees early, where LightGBM's ``min_sum_hessian_in_leaf`` is 1e-3; pass
        ``min_child_weight=1e-3`` for the trees LightGBM would grow.

        Under ``xgboost.dask`` each worker's partitions must hold whole queries (a query split
        between workers becomes two queries, as for XGBoost's own ``rank:ndcg``); the risk
        state is taken over all workers' queries, as on one machine, and the baseline must be a
        ``FeatureBaseline`` (an array cannot follow the workers' share of the queries).
        """
        return xgboost_gradients.gradients(self, preds, dtrain)

    def lgbm_ranker(self, **params: Any) -> Any:
        """``lightgbm.LGBMRanker`` training with this objective, LightGBM's own metrics off.

        ``LGBMRanker(objective=obj.sklearn_objective)`` alone computes LightGBM's ``ndcg@1`` to
        ``ndcg@5`` and lists them before an ``eval_metric`` of :mod:`lgb_risk.feval`, so that
        ``early_stopping(first_metric_only=True)`` stops on LightGBM's ``ndcg@1``. Here
        ``metric="None"`` unless ``params`` names a metric, which is then warned about.

        >>> from lgb_risk import LambdaMART
        >>> ranker = LambdaMART().lgbm_ranker(n_estimators=50)
        >>> ranker.get_params()["metric"]
        'None'
        """
        return _lgbm_ranker(self, params)

    def gradients(self, preds: ArrayLike, labels: ArrayLike, group: ArrayLike,
                  weight: ArrayLike | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Gradients and hessians (float32 arrays) of all documents for the current scores.

        Parameters
        ----------
        preds : array-like, shape (n_documents,)
            Current raw scores.
        labels : array-like, shape (n_documents,)
            Relevance labels, whole numbers within ``label_gain``.
        group : array-like of int, shape (n_queries,)
            Query sizes.
        weight : array-like, shape (n_documents,), optional
            Document weights.

        Returns
        -------
        grad, hess : ndarray of float32, shape (n_documents,)
        """
        with interruptible():  # Ctrl-C inside a kernel stays a KeyboardInterrupt
            return self._gradients(preds, labels, group, weight)

    def _gradients(self, preds, labels, group, weight):
        setup = self._setup(labels, group, weight)
        scores = np.asarray(preds, dtype=np.float64)
        if scores.shape != setup.labels.shape:
            raise ValueError(f"predictions have shape {scores.shape}, the training set has "
                             f"{setup.labels.size} documents")
        if scores.size and not (np.isfinite(scores.min()) and np.isfinite(scores.max())):
            bad = int(np.flatnonzero(~np.isfinite(scores))[0])  # NaN or ±inf makes min or max so
            raise ValueError(f"prediction {bad} is {float(scores[bad])}: predictions must be "
                             "finite (a diverging model? lower the learning rate)")
        if setup.order is None:  # the first call ranks from the documents' own order
            setup.order = document_order(setup.offsets)
        rerank_by_score(scores, setup.order, setup.offsets)
        order = setup.order
        ranking = kernel.Ranking(scores, setup.labels, order, setup.offsets, setup.weights)
        return kernel.lambdarank_gradients(ranking, setup.constants,
                                           self._iteration_state(scores, order, setup))

    def _iteration_state(self, scores, order, setup):
        """This iteration's risk state for the training set's queries. On a shard of a
        distributed training set (:mod:`lgb_risk.distributed`), the per-query values of the
        target measure and the initial-predictions flag of every shard are gathered first, the
        state is computed over all training queries by the same code as on one machine, and
        this shard's queries are kept."""
        if self.baseline_parameter is None:
            return kernel.NoRisk()
        model_values = self._model_values(order, setup)
        initial = self._predictions_initial(scores)
        shard = self.shard
        if shard is None:
            return self.risk_state(model_values, initial)
        model_values, initial = shard.gather(model_values, initial)
        return kernel.for_queries(self.risk_state(model_values, initial), shard.queries)

    def _model_values(self, order, setup) -> np.ndarray:
        """The target measure of the current ranking of every training query: NDCG@k (0 where
        IDCG@k = 0) or ERR@k."""
        const = setup.constants
        if const.target_err:
            return kernel.err_at_k_of_order(order, setup.offsets, setup.labels,
                                            const.stop_probability, const.risk_k)
        dcg = dcg_at_k_of_order(order, setup.offsets, setup.labels, const.gain_table,
                                const.discounts, const.risk_k)
        return dcg * const.inv_ideal_dcg_at_k

    def target_values(self, scores: ArrayLike, labels: ArrayLike,
                      group: ArrayLike) -> np.ndarray:
        """The target measure of every query ranked by ``scores`` (ties in input order), as the
        objective measures its model — the values a baseline array must hold.

        >>> from lgb_risk import UCRO
        >>> UCRO(measure="err@2", baseline=[0.5]).target_values([0.9, 0.1], [2, 0], [2])
        array([0.75])
        """
        spec = self.target() or registry.parse(default_target(None))
        assert spec.k is not None  # a target has its cut-off (checked with the parameter)
        if spec.measure.name == "err":
            return metrics.err(labels, scores, group, spec.k, ties="stable",
                               max_label=err_max_label(check_labels(labels), spec))
        return metrics.ndcg(labels, scores, group, spec.k, ties="stable",
                            label_gain=gain_table(self.label_gain))

    def with_max_label(self, highest: int) -> Any:
        """This objective, or a copy whose ERR target names l_max = ``highest`` where the
        measure leaves it unset: for a training set split across machines (each would otherwise
        take the highest label of its own part). Other targets are returned as they are."""
        spec = self.target()
        written = None if spec is None else spec.with_unset("max_label", max(1, int(highest)))
        if written is None or written is spec:
            return self
        fixed = copy.copy(self)  # a subclass's own attributes kept; no setup or shard shared
        fixed.measure = written.label
        fixed.__post_init__()
        return fixed

    def check_labels(self, labels: ArrayLike) -> np.ndarray:
        """The training labels as int64, refused where this objective cannot train on them:
        not whole numbers >= 0, without a gain in ``label_gain``, or above an ERR target's
        ``max_label``; the error names the document's position in ``labels``."""
        return checked_labels(labels, self.label_gain, self.target())

    # -- parameters and the training set -------------------------------------------------------

    def validate_params(self) -> None:
        """Raise ValueError naming the first invalid parameter (checked at the first call):
        each declared parameter's own check (:mod:`lgb_risk._inputs.parameters`)."""
        validate(self)

    def _setup(self, labels, group, weight) -> TrainingSet:
        """The training set's derived data, made at the first call on it (and kept)."""
        cached = self._setup_cache
        if cached is not None and cached.matches(labels, group, weight):
            return cached
        self.validate_params()
        setup = prepare(self, labels, group, weight)
        self._prepare_risk(setup)
        self._setup_cache = setup
        return setup


def _lightgbm_call(objective: Any, preds: Any, train_data: Any) -> tuple[np.ndarray, np.ndarray]:
    """``objective.gradients`` of a LightGBM Dataset's labels, groups and weights; a call with
    another framework's arguments is refused, naming the entry point it needs."""
    name = type(objective).__name__
    if isinstance(train_data, np.ndarray):
        raise TypeError(f"{name} was called as (y_true, y_pred): for LGBMRanker pass "
                        f"objective={name}(...).sklearn_objective")
    if type(train_data).__module__.split(".")[0] == "xgboost":
        raise TypeError(f"{name} was called with an XGBoost {type(train_data).__name__}: for "
                        f"xgboost.train pass obj={name}(...).xgboost_objective")
    group = train_data.get_group()
    if group is None:
        raise ValueError(f"{name} needs query groups: build the training Dataset with "
                         "group=... (query sizes)")
    weight = train_data.get_weight()
    checked = objective._weights_checked_in
    if weight is not None and (checked is None or checked() is not train_data):
        _warn_of_filled_weights(np.asarray(weight))
        objective._weights_checked_in = weakref.ref(train_data)  # once per Dataset
    return objective.gradients(preds, train_data.get_label(), group, weight)


#: A weight above this in a Dataset LightGBM built stands for an infinite one it replaced.
_HUGE_WEIGHT = 1e30


def _warn_of_filled_weights(weights: np.ndarray) -> None:
    """Warn where the weights of a Dataset LightGBM built hold 0 or a huge number, which is
    what LightGBM makes of NaN and inf without a word (a weight of 0 given on purpose trains as
    given)."""
    filled = np.flatnonzero((weights == 0) | (weights > _HUGE_WEIGHT))
    if filled.size:
        first = int(filled[0])
        warnings.warn(
            f"{filled.size} document weight(s) of the training Dataset are 0 or above "
            f"{_HUGE_WEIGHT:g} (first: document {first}, weight {float(weights[first]):g}): "
            "LightGBM replaces a NaN weight by 0 and an infinite one by a huge number when it "
            "builds the Dataset, without a word. If yours were NaN or inf, fix them "
            "(numpy.isfinite) and build the Dataset again; weights of 0 given on purpose "
            "train as given", UserWarning, stacklevel=3)


def _lgbm_ranker(objective: Any, params: dict) -> Any:
    """``lightgbm.LGBMRanker(objective=objective.sklearn_objective, metric="None", **params)``;
    a metric named in ``params`` is warned about (it would come before the fevals)."""
    import lightgbm as lgb

    if "objective" in params:
        raise ValueError("lgbm_ranker sets objective= itself (this objective)")
    metric = params.setdefault("metric", "None")
    if metric not in ("None", "none", "", None, []):
        warnings.warn(f"metric={metric!r}: LightGBM's own metrics come before an eval_metric of "
                      "lgb_risk.feval, so early_stopping(first_metric_only=True) stops on "
                      "LightGBM's first metric; pass no metric to stop on the feval",
                      UserWarning, stacklevel=3)
    return lgb.LGBMRanker(objective=objective.sklearn_objective, **params)
