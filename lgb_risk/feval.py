"""Training-time evaluation: ``feval`` callables for ``lightgbm.train`` (SPEC.md §1-§2).

Each factory returns ``feval(preds, eval_data) -> (name, value, is_higher_better)``, LightGBM's
convention, usable for early stopping with ``params["metric"] = "None"``. Risk measures compare the
per-query NDCG@k of the model with the baselines of *that* validation set, given as a mapping
from each ``lightgbm.Dataset`` to its baselines::

    feval = risk_feval({valid: bm25_valid}, measure="urisk", alpha=5)
    lightgbm.train(params | {"metric": "None"}, train, valid_sets=[valid], feval=feval,
                   callbacks=[lightgbm.early_stopping(20)])

Baselines are an array aligned to the Dataset's queries — shape (n_queries,) for one baseline,
(n_queries, n_systems) for several — or a pair ``(BaselineStore, query_ids)``.
"""

from __future__ import annotations

import numpy as np

from lgb_risk import measures as registry
from lgb_risk import risk
from lgb_risk._validation import check_alpha, check_choice, check_k
from lgb_risk.conventions import resolve
from lgb_risk.measures import Judged

__all__ = ["metric_feval", "ndcg_feval", "risk_feval"]

RISK_MEASURES = ("urisk", "trisk", "zrisk", "georisk")


def _judged(preds, eval_data):
    group = eval_data.get_group()
    if group is None:
        raise ValueError("the evaluation Dataset has no query groups (group=...)")
    return Judged(eval_data.get_label(), preds, group)


def metric_feval(measure="ndcg@10", *, convention=None, **overrides):
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
        ``feval(preds, eval_data) -> (measure, mean, True)``; queries whose value is NaN
        (``empty="skip"``) are left out of the mean.
    """
    spec = registry.parse(measure)
    resolve(convention, **overrides)  # refuse a bad choice now, not at the first iteration

    def feval(preds, eval_data):
        values = spec.compute(_judged(preds, eval_data), convention, **overrides)
        return spec.text, float(np.nanmean(values)), True

    return feval


def ndcg_feval(k=10, *, convention=None, label_gain=None, empty=None):
    """``feval`` giving mean NDCG@k: :func:`metric_feval` of ``ndcg@k``
    (``convention="lightgbm"`` reproduces LightGBM's built-in ``ndcg`` metric)."""
    return metric_feval(f"ndcg@{check_k(k)}", convention=convention, label_gain=label_gain,
                        empty=empty)


def _aligned_baselines(spec, n_queries, k):
    from lgb_risk.baselines import BaselineStore

    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], BaselineStore):
        store, query_ids = spec
        store.require_measure("ndcg", k)
        matrix = store.align(query_ids)
    else:
        matrix = np.asarray(spec, dtype=np.float64)
        matrix = matrix[:, None] if matrix.ndim == 1 else matrix
    if matrix.ndim != 2 or matrix.shape[0] != n_queries:
        raise ValueError(f"baselines cover {matrix.shape[0]} queries but the evaluation Dataset "
                         f"has {n_queries}")
    if not np.all(np.isfinite(matrix)):
        raise ValueError("baselines hold a non-finite value")
    return matrix


def risk_feval(baselines, *, measure="urisk", alpha=1.0, k=10, convention=None,
               label_gain=None):
    """``feval`` giving a risk measure of the model's NDCG@k against each set's baselines.

    Parameters
    ----------
    baselines : Mapping[lightgbm.Dataset, array or (BaselineStore, query_ids)]
        The baselines of every Dataset the function will be called on.
    measure : {"urisk", "trisk", "zrisk", "georisk"}
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

    Returns
    -------
    callable
        ``feval(preds, eval_data) -> (name, value, True)``, name like ``"urisk@10[a=5]"``.
    """
    check_choice(measure, "measure", RISK_MEASURES)
    alpha = check_alpha(alpha)
    k = check_k(k)
    name = f"{measure}@{k}[a={alpha:g}]"
    ndcg_at_k = registry.parse(f"ndcg@{k}")
    aligned = {}

    def feval(preds, eval_data):
        if eval_data not in baselines:
            raise ValueError(f"risk_feval has no baselines for this evaluation Dataset; give "
                             f"one per Dataset in valid_sets (it has {len(baselines)})")
        model = ndcg_at_k.compute(_judged(preds, eval_data), convention, label_gain=label_gain)
        if eval_data not in aligned:
            aligned[eval_data] = _aligned_baselines(baselines[eval_data], model.size, k)
        base = aligned[eval_data]
        if measure in ("zrisk", "georisk"):
            matrix = np.vstack([model, base.T])
            fn = risk.zrisk if measure == "zrisk" else risk.georisk
            return name, float(fn(matrix, alpha)[0]), True
        reference = base.mean(axis=1)
        if measure == "urisk":
            return name, risk.urisk(model, reference, alpha), True
        result = risk.trisk_if_defined(model, reference, alpha)
        return name, 0.0 if result is None else result.trisk, True

    return feval
