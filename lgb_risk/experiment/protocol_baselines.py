"""The protocol's baselines, as per-query values of each of the run's measures on the main
queries ([GEO] §6.1): the feature baseline (BM25, one feature's ranking) and the learned
baselines (LambdaMART, GBRT, a coordinate-ascent linear ranker on the target measure, ridge
regression) trained on the held-out queries.

They are written as :class:`lgb_risk.baselines.BaselineStore` tables, one per measure, which the
units' objectives and the report read; the learned baselines' scores are kept too, so that a
measure added to a finished run is computed without training them again.
"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import scipy.sparse as sp

from lgb_risk import feval, metrics
from lgb_risk.baselines import BaselineStore
from lgb_risk.experiment.config import ExperimentConfig
from lgb_risk.experiment.fixed_order import (
    logistic_regression,
    matvec,
    ridge_regression,
    standardise,
)
from lgb_risk.experiment.measuring import RunMeasures
from lgb_risk.experiment.protocol import Subsets
from lgb_risk.experiment.training import train_booster

__all__ = ["fit_coordinate_ascent", "fit_ridge", "fit_logistic_regression",
           "learned_baseline_scorer", "feature_baseline", "learned_baseline_scores",
           "baseline_store"]

#: Rows standardised and scored at a time by a linear scorer (bounds the dense copy).
_BLOCK_ROWS = 1 << 16


def _dense(X) -> np.ndarray:
    return np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)


def _linear_scorer(mean, scale, w, intercept=0.0):
    """The function X -> ((X − mean) / scale) w + intercept, computed in a fixed order (the
    same bits on any CPU) a block of rows at a time."""
    def score(X_new):
        blocks = [matvec((_dense(X_new[start:start + _BLOCK_ROWS]) - mean) / scale, w)
                  for start in range(0, X_new.shape[0], _BLOCK_ROWS)]
        return (np.concatenate(blocks) if blocks else np.empty(0)) + intercept

    return score


def fit_ridge(X, y, alpha: float = 1.0):
    """Ridge regression of the labels on the standardised features (penalty ``alpha``,
    intercept unpenalised); returns a function scoring a feature matrix.

    The model of scikit-learn's ``make_pipeline(StandardScaler(), Ridge(alpha))``, solved
    exactly with every sum in a fixed order (:mod:`lgb_risk.experiment.fixed_order`), so that its
    predictions are the same bits whichever BLAS kernel the CPU selects.
    """
    dense = _dense(X)
    mean, scale = standardise(dense)
    w, intercept = ridge_regression((dense - mean) / scale, y, alpha)
    return _linear_scorer(mean, scale, w, intercept)


def fit_logistic_regression(X, relevant, C: float = 1.0):
    """L2-regularised logistic regression of ``relevant`` (booleans) on the standardised
    features; returns a function giving the log-odds of a feature matrix (the ranking of
    scikit-learn's ``predict_proba``), computed in a fixed order as :func:`fit_ridge` is."""
    dense = _dense(X)
    mean, scale = standardise(dense)
    w, intercept = logistic_regression((dense - mean) / scale,
                                       np.asarray(relevant, dtype=np.float64), C)
    return _linear_scorer(mean, scale, w, intercept)


def fit_coordinate_ascent(X, y, group, k, *, rounds=3, steps=(0.05, 0.2, 0.5, 1.0, 2.0),
                          convention=None, measure=None):
    """Linear ranker fitted by coordinate ascent on NDCG@k (Metzler & Croft 2007), or on
    ``measure`` (a function of the scores giving per-query values, e.g. ERR@20).

    Features are standardised; the weights start from the single best feature and each feature's
    weight is moved by ± each step while the mean of the measure (NDCG@k under ``convention``,
    see :mod:`lgb_risk.conventions`) improves, for at most ``rounds`` sweeps.
    Returns a function scoring a feature matrix.
    """
    dense = _dense(X)
    mean, scale = standardise(dense)
    Z = (dense - mean) / scale

    def quality(scores):
        if measure is not None:
            return measure(scores).mean()
        return metrics.ndcg(y, scores, group, k, convention=convention).mean()

    singles = [quality(Z[:, f]) for f in range(Z.shape[1])]
    w = np.zeros(Z.shape[1])
    w[int(np.argmax(singles))] = 1.0
    scores = matvec(Z, w)
    best = quality(scores)
    for _ in range(rounds):
        improved = False
        for f in range(Z.shape[1]):
            for step in (*steps, *(-s for s in steps)):
                trial = scores + step * Z[:, f]
                value = quality(trial)
                if value > best + 1e-12:
                    best, scores, improved = value, trial, True
                    w[f] += step
        if not improved:
            break

    return _linear_scorer(mean, scale, w)


def learned_baseline_scorer(name, subsets: Subsets, split: dict, config: ExperimentConfig,
                            measures: RunMeasures):
    """Train one learned baseline on the held-out queries (selected, and coordinate ascent
    fitted, on ``measures.selection``/``target``); return its scoring function."""
    X, y, g = train = subsets.take(split["heldout_train"])
    valid = subsets.take(split["heldout_valid"])
    if name in ("lambdamart", "gbrt"):
        selection = (None if measures.selection is None
                     else feval.metric_feval(measures.selection.text))
        booster, trees = train_booster("lambdarank" if name == "lambdamart" else "regression",
                                       train, valid, config, selection)
        return lambda X_new: booster.predict(X_new, num_iteration=trees)
    missing = np.flatnonzero(np.isnan(X.data)) if sp.issparse(X) else np.flatnonzero(
        np.isnan(np.asarray(X)).ravel())
    if missing.size:
        row = int(np.searchsorted(X.indptr, missing[0], side="right") - 1)
        query = split["heldout_train"][int(np.searchsorted(np.cumsum(g), row, side="right"))]
        raise ValueError(f"feature {int(X.indices[missing[0]]) + 1} of a document of query "
                         f"{query} is NaN (a missing value): the {name} baseline needs complete "
                         "features; fill them, or drop it from [baselines] learned")
    if name == "coordinate_ascent":
        target = measures.target
        return fit_coordinate_ascent(X, y, g, target.k,
                                     measure=lambda scores: measures.compute(target, y, scores, g))
    return fit_ridge(X, y, alpha=1.0)


def _main_queries(split: dict) -> list[str]:
    return [q for part in split["parts"] for q in part]


def baseline_store(scores: np.ndarray, names, subsets: Subsets, split: dict,
                   measures: RunMeasures, measure, metadata: dict) -> BaselineStore:
    """Per-query values of ``measure`` on the main queries of the rankings by each column of
    ``scores`` (one score per main-query document, in split order; ties in row order)."""
    main = _main_queries(split)
    _, y, group = subsets.take(main)
    columns = {name: measures.compute(measure, y, scores[:, i], group)
               for i, name in enumerate(names)}
    return BaselineStore(pd.DataFrame(columns, index=main), measure.written, measure.k, metadata)


def feature_baseline(subsets: Subsets, split: dict, config: ExperimentConfig,
                     measures: RunMeasures, measure) -> BaselineStore:
    """Per-query values of ``measure`` of the feature baseline (BM25) on the main queries."""
    base = config.baselines
    X, _, _ = subsets.take(_main_queries(split))
    if base.column >= X.shape[1]:
        raise ValueError(f"baselines.column must be a column from 0 to {X.shape[1] - 1}, got "
                         f"{base.column}")
    column = _dense(X[:, base.column])
    bad = np.flatnonzero(~np.isfinite(column.ravel()))
    if bad.size:
        _, _, group = subsets.take(_main_queries(split))
        query = _main_queries(split)[int(np.searchsorted(np.cumsum(group), bad[0],
                                                         side="right"))]
        raise ValueError(f"column {base.column} is {float(column.ravel()[bad[0]])} for a "
                         f"document of query {query!r} ({bad.size} such document(s)); a feature "
                         "baseline ranks by finite values")
    return baseline_store(column, [base.feature_name], subsets, split, measures, measure,
                          {base.feature_name: {"source": "feature", "column": base.column,
                                               "ties": "stable"}})


def learned_baseline_scores(subsets: Subsets, split: dict, config: ExperimentConfig,
                            measures: RunMeasures, stream=None) -> np.ndarray:
    """Each learned baseline's scores of the main queries' documents (a column each), trained
    on the held-out queries; a line per baseline trained on ``stream``."""
    X, _, _ = subsets.take(_main_queries(split))
    names = config.baselines.learned
    columns = []
    for i, name in enumerate(names, start=1):
        start = time.perf_counter()
        columns.append(learned_baseline_scorer(name, subsets, split, config, measures)(X))
        if stream is not None:
            print(f"  learned baseline {i}/{len(names)} {name} trained "
                  f"({time.perf_counter() - start:.1f} s)", file=stream, flush=True)
    return np.column_stack(columns)
