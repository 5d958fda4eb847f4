"""Training-time evaluation: ``feval`` callables for ``lightgbm.train`` and ``LGBMRanker``.

Each factory returns a callable that LightGBM's two APIs both accept:

* ``lightgbm.train(..., feval=f)`` calls ``f(preds, eval_data)``;
* ``LGBMRanker().fit(..., eval_metric=f)`` calls ``f(y_true, y_pred, weight, group)``;

and it returns ``(name, value, is_higher_better)``, usable for early stopping with
``params["metric"] = "None"``. Risk measures compare the per-query NDCG@k of the model with the
baselines of the set being evaluated: one set's baselines directly, or a mapping from each
``lightgbm.Dataset`` to its baselines (``lightgbm.train`` with several validation sets)::

    feval = risk_feval({valid: bm25_valid}, measure="urisk", alpha=5)
    lightgbm.train(params | {"metric": "None"}, train, valid_sets=[valid], feval=feval,
                   callbacks=[lightgbm.early_stopping(20)])

Baselines are an array aligned to the set's queries — shape (n_queries,) for one baseline,
(n_queries, n_systems) for several — or a ``BaselineStore`` with ``query_ids=``, checked as the
objectives check theirs (:func:`lgb_risk.baselines.aligned_baselines`).

References: [GEO] (:mod:`lgb_risk.references`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

from lgb_risk import measures as registry
from lgb_risk import risk
from lgb_risk._inputs.validation import check_alpha, check_choice, check_k
from lgb_risk._training.shards import EvaluationShard
from lgb_risk.measures import Judged

if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from lgb_risk._inputs.type_aliases import ArrayLike, ConventionLike

__all__ = ["metric_feval", "ndcg_feval", "risk_feval"]



#: The values of LightGBM's ``metric`` parameter that compute no metric of LightGBM's own.
_NO_METRIC = {"", "none", "null", "na", "custom"}


def _refuse_stopping_on_lightgbms_metric(name: str) -> None:
    """Refuse, when called from ``lightgbm.train`` (which ``LGBMRanker.fit`` calls), early
    stopping on the first metric while LightGBM computes metrics of its own: they come before
    every ``feval``, so training would stop on LightGBM's metric (``ndcg@1`` for LGBMRanker)
    and not on this one, without a word."""
    import sys
    import types

    frame: types.FrameType | None = sys._getframe(2)
    while frame is not None and not (frame.f_code.co_name == "train" and
                                     frame.f_globals.get("__name__") == "lightgbm.engine"):
        frame = frame.f_back
    if frame is None:
        return
    params = frame.f_locals.get("params") or {}
    callbacks = frame.f_locals.get("callbacks_set") or ()
    first_only = params.get("first_metric_only") or any(
        getattr(callback, "first_metric_only", False) for callback in callbacks)
    metric = params.get("metric")
    metrics = [metric] if isinstance(metric, str) or metric is None else list(metric)
    own = [m for m in metrics if m is not None and str(m).lower() not in _NO_METRIC]
    if first_only and own:
        raise ValueError(
            f"early stopping with first_metric_only=True would stop on LightGBM's own metric "
            f"{own[0]!r}, which LightGBM evaluates before the feval {name}: pass metric='None' "
            "(LGBMRanker(metric='None', ...) or params['metric'] = 'None'), or build the "
            "ranker with objective.lgbm_ranker()")


class _Feval:
    """A named evaluation, callable as LightGBM's train-API ``feval`` and as its scikit-learn API
    ``eval_metric``: per-query values ``per_query(labels, preds, group)``, then one number
    ``aggregate(values, dataset)``.

    ``shard`` is None on one machine; on each rank of a distributed training
    (:mod:`lgb_risk.distributed`) it gathers the per-query values of every rank's part of the
    evaluation set, in the set's query order, so that every rank aggregates the same values.
    """

    def __init__(self, name: str, per_query: Callable, aggregate: Callable, *,
                 by_dataset: bool = False) -> None:
        self.name = name
        self.per_query = per_query
        self.aggregate = aggregate
        #: Whether the values depend on which ``lightgbm.Dataset`` is evaluated (baselines given
        #: by Dataset), which a distributed training, whose ranks hold parts of a set, cannot use.
        self.by_dataset = by_dataset
        self.shard: EvaluationShard | None = None

    def __call__(self, preds_or_labels, data_or_preds, weight=None, group=None):
        if hasattr(data_or_preds, "get_group"):  # lightgbm.train: (preds, Dataset)
            dataset = data_or_preds
            labels, preds, group = dataset.get_label(), preds_or_labels, dataset.get_group()
            if group is None:
                raise ValueError("the evaluation Dataset has no query groups (group=...)")
        else:  # LGBMRanker: (y_true, y_pred, weight, group)
            dataset, labels, preds = None, preds_or_labels, data_or_preds
            if group is None:
                raise ValueError(f"{self.name} needs query groups: use it with LGBMRanker "
                                 "(eval_group=...) or lightgbm.train")
        _refuse_stopping_on_lightgbms_metric(self.name)
        values = self.per_query(labels, preds, group)
        if self.shard is not None:
            values = self.shard.gather(values)
        return self.name, float(self.aggregate(values, dataset)), True

    def __repr__(self):
        return f"<feval {self.name}>"


def metric_feval(measure: str = "ndcg@10", *, convention: ConventionLike | None = None,
                 **overrides: Any) -> Callable[..., tuple[str, float, bool]]:
    """``feval`` giving the mean of a registered measure (higher is better).

    Parameters
    ----------
    measure : str
        ``NAME@K`` or ``NAME`` of :mod:`lgb_risk.measures` (``ndcg@10``, ``ap@10``, ``err@20``).
    convention : str, optional
        A tool's conventions (:mod:`lgb_risk.conventions`): ``convention="lightgbm"`` reproduces
        LightGBM's built-in ``ndcg@k`` and ``map@k``.
    **overrides
        Single choices overriding the convention (``empty="zero"``, ``label_gain=[0, 1, 3]``).

    Returns
    -------
    callable
        ``(preds, eval_data)`` or ``(y_true, y_pred, weight, group)`` → ``(name, mean,
        True)``, the name the measure and its convention (``"ndcg@10[default]"``,
        ``"ndcg@10[lightgbm]"``: never LightGBM's own metric name); queries whose value is
        NaN (``empty="skip"``) are left out of the mean.

    Examples
    --------
    >>> f = metric_feval("p@1")
    >>> f([1, 0, 0, 1], [0.9, 0.1, 0.8, 0.2], None, [2, 2])  # y_true, y_pred, weight, group
    ('p@1[default]', 0.5, True)
    """
    spec = registry.parse(measure)
    conv = spec.convention(convention, **overrides)  # a bad choice is refused now

    def per_query(labels, preds, group):
        return spec.compute(Judged(labels, preds, group), convention, **overrides)

    return _Feval(f"{spec.text}[{_convention_label(conv, overrides)}]", per_query,
                  lambda values, dataset: np.nanmean(values))


def _convention_label(conv, overrides) -> str:
    """The convention an feval's name carries: its name, then any single choice given
    (``default``, ``lightgbm``, ``default, empty=one``), so that it never reads as LightGBM's
    own metric of the same measure."""
    given = [f"{key}={value if isinstance(value, (str, int)) else 'table'}"
             for key, value in overrides.items() if value is not None]
    return ", ".join([conv.name, *given])


def ndcg_feval(k: int | None = 10, *, convention: ConventionLike | None = None,
               label_gain: str | ArrayLike | None = None,
               empty: str | None = None) -> Callable[..., tuple[str, float, bool]]:
    """``feval`` giving mean NDCG@k: :func:`metric_feval` of ``ndcg@k``
    (``convention="lightgbm"`` reproduces LightGBM's built-in ``ndcg`` metric).

    Examples
    --------
    >>> ndcg_feval(1)([2, 0, 0, 1], [0.2, 0.1, 0.4, 0.3], None, [2, 2])
    ('ndcg@1[default]', 0.5, True)
    """
    return metric_feval(f"ndcg@{check_k(k)}", convention=convention, label_gain=label_gain,
                        empty=empty)


def risk_feval(baselines: Any, *, query_ids: ArrayLike | None = None, measure: str = "urisk",
               alpha: float = 1.0, k: int | None = 10, convention: ConventionLike | None = None,
               label_gain: str | ArrayLike | None = None,
               effectiveness: str | None = None) -> Callable[..., tuple[str, float, bool]]:
    """``feval`` giving a risk measure of the model's NDCG@k (or ``effectiveness``) against the
    set's baselines.

    Parameters
    ----------
    baselines : array, BaselineStore, or Mapping[lightgbm.Dataset, either]
        The baselines of the evaluated set: an array aligned to its queries, (n_queries,) or
        (n_queries, n_systems), or a store with ``query_ids``; a mapping gives each
        ``lightgbm.Dataset`` its own (``lightgbm.train`` with several validation sets). Every
        value must be a finite NDCG in [0, 1], as for the objectives.
    query_ids : array-like, or Mapping[lightgbm.Dataset, array-like], optional
        The evaluated set's query ids in its order, to align a BaselineStore (by Dataset, like
        ``baselines``, when that is a mapping).
    measure : {"urisk", "trisk", "zrisk", "georisk"}
        A name of :data:`lgb_risk.risk.RISK_MEASURES`:
        URisk/TRisk against one baseline, or against the per-query mean of several (T*Risk);
        ZRisk/GeoRisk of the model row within the model plus all baselines ([GEO] Eqs. 6-7).
        All are higher-is-better. TRisk is reported as 0 where undefined (every x_q equal).
    alpha : float >= 0
    k : int
        NDCG cut-off; a BaselineStore must hold ndcg@k.
    convention : str, optional
        Conventions of the model's NDCG@k (:mod:`lgb_risk.conventions`); a query with no
        relevant document counts 0 unless the convention says otherwise.
    label_gain : optional
        As LightGBM's parameter; overrides the convention's gain.
    effectiveness : str, optional
        The measure the model and the baselines are compared in, from
        :mod:`lgb_risk.measures` (``"err@20"``, ``"ap@100"``), in place of NDCG@k (then ``k``
        is not used); a BaselineStore must hold it.

    Returns
    -------
    callable
        ``(preds, eval_data)`` or ``(y_true, y_pred, weight, group)`` → ``(name, value, True)``,
        name like ``"urisk@10[a=5, default]"`` (the measure, α and the convention of the
        model's NDCG@k), or ``"urisk(ERR@20)[a=5, default]"`` with ``effectiveness``.

    Examples
    --------
    >>> f = risk_feval([0.5, 1.0], measure="urisk", alpha=5, k=1)  # BM25's NDCG@1 per query
    >>> f([2, 0, 0, 1], [0.2, 0.1, 0.4, 0.3], None, [2, 2])  # y_true, y_pred, weight, group
    ('urisk@1[a=5, default]', -2.75, True)
    """
    check_choice(measure, "measure", risk.RISK_MEASURES)
    against = risk.RISK_MEASURES[measure].against
    alpha = check_alpha(alpha)
    k = check_k(k)
    from lgb_risk.baselines import BaselineStore, aligned_baselines

    given = list(baselines.values()) if isinstance(baselines, Mapping) else [baselines]
    if any(isinstance(b, tuple) and len(b) == 2 and isinstance(b[0], BaselineStore)
           for b in given):
        raise TypeError("risk_feval takes a BaselineStore and its query ids as "
                        "risk_feval(store, query_ids=ids) (by Dataset: "
                        "risk_feval({valid: store}, query_ids={valid: ids})), not a "
                        "(store, ids) pair")
    if effectiveness is not None and k != 10:  # k is NDCG@k's: with effectiveness, unused
        raise ValueError(f"risk_feval got k={k} and effectiveness={effectiveness!r}: k is the "
                         "cut-off of the default NDCG@k, and effectiveness names its own "
                         f"(write the cut-off into it, e.g. {effectiveness.split('@')[0]}@{k}); "
                         "give one of them")
    compared = registry.parse(effectiveness if effectiveness is not None else f"ndcg@{k}")
    aligned: dict = {}

    def baselines_of(dataset, n_queries):
        if not isinstance(baselines, Mapping):
            key = None
        elif dataset is None:
            raise ValueError("risk_feval got baselines by lightgbm.Dataset, but LGBMRanker "
                             "passes no Dataset; give the evaluation set's baselines directly")
        elif dataset not in baselines:
            raise ValueError(f"risk_feval has no baselines for this evaluation Dataset; give "
                             f"one per Dataset in valid_sets (it has {len(baselines)})")
        else:
            key = dataset
        if key is None and None in aligned and len(aligned[None]) != n_queries:
            raise ValueError(f"risk_feval got one set of baselines, for {len(aligned[None])} "
                             f"queries, and now evaluates a set of {n_queries}: with several "
                             "valid_sets give each its own, risk_feval({valid_1: baselines_1, "
                             "valid_2: baselines_2}, query_ids={...})")
        if key not in aligned:
            ids = query_ids if key is None or query_ids is None else query_ids.get(key)
            aligned[key] = aligned_baselines(baselines if key is None else baselines[key],
                                             n_queries, query_ids=ids,
                                             measure=compared.under(convention,
                                                                    label_gain=label_gain),
                                             owner=f"risk_feval({measure})",
                                             the_set="the evaluated set")
        return aligned[key]

    def per_query(labels, preds, group):
        return compared.compute(Judged(labels, preds, group), convention, label_gain=label_gain)

    def aggregate(model, dataset):
        value = float(against(model[None, :], baselines_of(dataset, model.size).T, alpha)[0])
        return 0.0 if np.isnan(value) else value  # TRisk where undefined (every x_q equal)

    conv = compared.convention(convention, label_gain=label_gain)
    overrides = {"label_gain": label_gain}
    name = f"{measure}@{k}" if effectiveness is None else f"{measure}({compared.label})"
    return _Feval(f"{name}[a={alpha:g}, {_convention_label(conv, overrides)}]",
                  per_query, aggregate,
                  by_dataset=isinstance(baselines, Mapping))
