"""Relevance models for active evaluation: each document's probability of every grade ([AE] §4).

Active evaluation needs p(y_z | x, z; θ) for every pool document, as a matrix ``P`` (n_documents ×
G, rows summing to 1), trained on labelled queries outside the pool and fixed while sampling.

- :func:`relevance_probabilities` with ``kind="multiclass"`` (default): a LightGBM multiclass model
  on the query-document features; ``kind="ordinal"``: [AE] §5.1's form, G − 1 binary models of
  1[y ≥ c], c = 1..G−1 (cumulative), made non-increasing in c, P(y = c) = P(y ≥ c) − P(y ≥ c+1).
- :func:`calibrate_scores`: an ordered-logit calibration of a ranker's scores,
  P(y ≤ c | s) = σ(θ_c − β s) (McCullagh 1980), fitted by maximum likelihood on labelled
  (score, grade) pairs — for a ranker that gives no probabilities.
- :func:`uniform_relevance`: every grade equally likely ([AE]'s "active uniD" baseline).

References: [AE] (:mod:`lgb_risk.references`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import lightgbm as lgb
import numpy as np
from scipy import optimize, special

from lgb_risk._inputs.validation import check_labels

if TYPE_CHECKING:
    from typing import Any

    from lgb_risk._inputs.type_aliases import ArrayLike

__all__ = ["relevance_probabilities", "calibrate_scores", "uniform_relevance"]

_DEFAULT_PARAMS = {"learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 20,
                   "verbose": -1, "num_threads": 1, "deterministic": True, "seed": 0}


def uniform_relevance(n_docs: int, n_grades: int) -> np.ndarray:
    """P with every grade equally likely for every document ([AE] "active uniD").

    >>> uniform_relevance(2, 4).tolist()
    [[0.25, 0.25, 0.25, 0.25], [0.25, 0.25, 0.25, 0.25]]
    """
    if n_docs < 1 or n_grades < 2:
        raise ValueError(f"need n_docs >= 1 and n_grades >= 2, got {n_docs}, {n_grades}")
    return np.full((int(n_docs), int(n_grades)), 1.0 / n_grades)


def _training_labels(y, n_grades):
    labels = check_labels(y, "y_train")
    if isinstance(n_grades, bool) or not isinstance(n_grades, (int, np.integer)) or n_grades < 2:
        raise ValueError(f"n_grades must be a whole number >= 2, got {n_grades!r}")
    over = np.flatnonzero(labels >= n_grades)
    if over.size:
        raise ValueError(f"label {int(labels[over[0]])} at position {int(over[0])} is not a "
                         f"grade 0..{n_grades - 1}")
    return labels


def _same_features(X_train, X, name: str) -> None:
    """``X`` holds the features the model is trained on: as many columns as ``X_train``."""
    train_shape, shape = np.shape(X_train), np.shape(X)
    if len(shape) != 2 or len(train_shape) != 2 or shape[1] != train_shape[1]:
        raise ValueError(f"{name} has shape {shape}, X_train {train_shape}: the model reads "
                         f"the same {train_shape[-1]} features of every document; give "
                         f"{name} those columns, in X_train's order")


def relevance_probabilities(X_train: ArrayLike, y_train: ArrayLike, X_pool: ArrayLike,
                            n_grades: int, *, kind: str = "multiclass", params: Any = None,
                            num_boost_round: int = 200, X_valid: ArrayLike | None = None,
                            y_valid: ArrayLike | None = None,
                            early_stopping: int = 20) -> np.ndarray:
    """Grade probabilities of the pool documents from a model trained on labelled documents.

    Parameters
    ----------
    X_train, y_train : features and grades 0..G−1 of labelled documents (outside the pool).
    X_pool : features of the pool's documents.
    n_grades : int
        G.
    kind : {"multiclass", "ordinal"}
        One multiclass model, or G − 1 cumulative binary models ([AE] §5.1).
    params : dict, optional
        LightGBM parameters over the defaults (learning rate 0.05, 15 leaves).
    num_boost_round : int
    X_valid, y_valid : optional
        Validation documents for early stopping on the model's log-loss.

    Returns
    -------
    ndarray, shape (n_pool_documents, n_grades)

    Examples
    --------
    >>> X = np.array([[0.1], [0.9], [0.2], [0.8], [0.15], [0.85]] * 5)
    >>> y = np.array([0, 1, 0, 1, 0, 1] * 5)
    >>> P = relevance_probabilities(X, y, X[:2], 2, num_boost_round=5,
    ...                             params={"min_data_in_leaf": 1, "verbose": -1})
    >>> P.shape, bool(P[1, 1] > P[0, 1])  # the second document more likely relevant
    ((2, 2), True)
    """
    labels = _training_labels(y_train, n_grades)
    if kind not in ("multiclass", "ordinal"):
        raise ValueError(f"kind must be 'multiclass' or 'ordinal', got {kind!r}")
    _same_features(X_train, X_pool, "X_pool")
    if X_valid is not None:
        _same_features(X_train, X_valid, "X_valid")
    if np.shape(X_train)[0] != labels.size:
        raise ValueError(f"X_train has {np.shape(X_train)[0]} rows but y_train "
                         f"{labels.size} labels: one label per training document")
    base = {**_DEFAULT_PARAMS, **(params or {})}

    valid_labels = None if y_valid is None else _training_labels(y_valid, n_grades)

    def fit(target, valid_target, objective):
        train = lgb.Dataset(X_train, target, params={"verbose": -1})
        valid = ([] if valid_target is None
                 else [lgb.Dataset(X_valid, valid_target, reference=train)])
        callbacks = [lgb.early_stopping(early_stopping, verbose=False)] if valid else []
        model = lgb.train({**base, **objective}, train, num_boost_round, valid_sets=valid,
                          callbacks=callbacks)
        return model.predict(X_pool, num_iteration=model.best_iteration or None)

    if kind == "multiclass":
        probs = fit(labels, valid_labels, {"objective": "multiclass", "num_class": n_grades})
        return probs / probs.sum(axis=1, keepdims=True)
    at_least = np.ones((np.shape(X_pool)[0], n_grades + 1))
    at_least[:, n_grades] = 0.0
    for grade in range(1, n_grades):
        at_least[:, grade] = fit(
            (labels >= grade).astype(np.float64),
            None if valid_labels is None else (valid_labels >= grade).astype(np.float64),
            {"objective": "binary"})
    # P(y >= c) must not increase with c: running minimum, then difference.
    at_least = np.minimum.accumulate(np.clip(at_least, 0.0, 1.0), axis=1)
    return at_least[:, :-1] - at_least[:, 1:]


def calibrate_scores(scores_labelled: ArrayLike, labels: ArrayLike, scores_pool: ArrayLike,
                     n_grades: int) -> np.ndarray:
    """Ordered-logit calibration of a ranker's scores into grade probabilities.

    P(y ≤ c | s) = σ(θ_c − β s) for c = 0..G−2, θ increasing, fitted by maximum likelihood on
    labelled (score, grade) pairs, then applied to the pool's scores. Not in [AE]: a cheap model
    for a ranker that gives no probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> grades = rng.integers(0, 3, 2000)
    >>> P = calibrate_scores(grades + rng.normal(size=2000), grades, [-1.0, 3.0], 3)
    >>> bool(P[0, 0] > 0.8 and P[1, 2] > 0.8)
    True
    """
    y = _training_labels(labels, n_grades)
    s = np.asarray(scores_labelled, dtype=np.float64)
    pool = np.asarray(scores_pool, dtype=np.float64)
    if s.shape != y.shape or not np.all(np.isfinite(s)) or not np.all(np.isfinite(pool)):
        raise ValueError("calibration needs finite scores, one per labelled document, and "
                         "finite pool scores")
    scale = s.std() or 1.0
    z, z_pool = (s - s.mean()) / scale, (pool - s.mean()) / scale

    def cumulative(params, values):
        beta, first, gaps = params[0], params[1], np.exp(params[2:])
        cuts = first + np.concatenate(([0.0], np.cumsum(gaps)))
        inner = special.expit(cuts[None, :] - beta * values[:, None])
        return np.hstack([np.zeros((values.size, 1)), inner, np.ones((values.size, 1))])

    def negative_log_likelihood(params):
        c = cumulative(params, z)
        p = c[np.arange(y.size), y + 1] - c[np.arange(y.size), y]
        return -np.sum(np.log(np.maximum(p, 1e-300)))

    start = np.concatenate(([1.0, -1.0], np.zeros(n_grades - 2)))
    fitted = optimize.minimize(negative_log_likelihood, start, method="L-BFGS-B").x
    c = cumulative(fitted, z_pool)
    return np.diff(c, axis=1)
