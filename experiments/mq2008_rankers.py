"""Rankers trained on LETOR 4.0 MQ2008 in five rotations, scored on every query once.

Shared by ``ndcg_conventions_mq2008.py`` and ``ue_mq2008.py``. All 784 queries of Fold 1 (train,
vali and test pooled) are split into five seeded query parts; in rotation i, part i is the test
set, part i+1 the validation set (early stopping) and the other three the training set. Every
query is therefore tested exactly once, by a model that never saw it.
"""

from __future__ import annotations

from pathlib import Path

import lightgbm as lgb
import numpy as np
import scipy.sparse as sp

from lgb_risk import feval
from lgb_risk.data import load_letor
from lgb_risk.experiment.protocol_baselines import (
    fit_coordinate_ascent,
    fit_logistic_regression,
    fit_ridge,
)

K = 10
SEED = 2012
PARTS = 5
LIGHTGBM = {"learning_rate": 0.05, "num_leaves": 15, "min_data_in_leaf": 20, "verbose": -1,
            "num_threads": 1, "deterministic": True, "seed": SEED, "metric": "None"}
ROUNDS, PATIENCE = 500, 20


class Pool:
    """All MQ2008 queries: features, labels, query sizes, and document offsets per query."""

    def __init__(self, folder: Path):
        parts = [load_letor(folder / "Fold1" / f"{name}.txt", n_features=46)
                 for name in ("train", "vali", "test")]
        self.X = sp.vstack([p.X for p in parts]).tocsr()
        self.y = np.concatenate([p.y for p in parts])
        self.group = np.concatenate([p.group for p in parts])
        self.starts = np.concatenate(([0], np.cumsum(self.group)))

    def rows(self, queries):
        return np.concatenate([np.arange(self.starts[q], self.starts[q + 1]) for q in queries])

    def take(self, queries):
        rows = self.rows(queries)
        return self.X[rows], self.y[rows], self.group[queries]


def rotations(n_queries: int):
    """(train, valid, test) query indices of the five rotations."""
    order = np.random.default_rng(SEED).permutation(n_queries)
    parts = np.array_split(order, PARTS)
    for i in range(PARTS):
        train = np.concatenate([parts[j] for j in range(PARTS) if j not in (i, (i + 1) % PARTS)])
        yield np.sort(train), np.sort(parts[(i + 1) % PARTS]), np.sort(parts[i])


def _booster(objective, train, valid, stopping_convention):
    train_set = lgb.Dataset(train[0], train[1], group=train[2])
    valid_set = lgb.Dataset(valid[0], valid[1], group=valid[2], reference=train_set)
    return lgb.train({**LIGHTGBM, "objective": objective}, train_set, ROUNDS,
                     valid_sets=[valid_set],
                     feval=feval.metric_feval(f"ndcg@{K}", convention=stopping_convention),
                     callbacks=[lgb.early_stopping(PATIENCE, verbose=False)])


def fit(learner: str, train, valid, convention=None):
    """Train ``learner`` (early stopping / coordinate ascent on NDCG@10 under ``convention``);
    return a function scoring a feature matrix."""
    if learner in ("LambdaMART", "GBRT"):
        booster = _booster("lambdarank" if learner == "LambdaMART" else "regression", train,
                           valid, convention)
        return lambda X: booster.predict(X, num_iteration=booster.best_iteration)
    if learner == "CoordAscent":
        return fit_coordinate_ascent(*train, K, convention=convention)
    if learner == "BM25":
        return lambda X: X[:, 24].toarray().ravel()
    from sklearn.ensemble import RandomForestRegressor

    X, y, _ = train
    if learner == "Ridge":  # computed in a fixed order: the same bits on any CPU
        return fit_ridge(X, y, alpha=1.0)
    if learner == "RandomForest":
        model = RandomForestRegressor(n_estimators=100, min_samples_leaf=20, max_features=0.3,
                                      random_state=SEED, n_jobs=1).fit(X, y)
        return model.predict
    if learner == "LogReg":  # ranks by log-odds, the order of the probability of relevance
        return fit_logistic_regression(X, y > 0, C=1.0)
    raise ValueError(f"unknown learner {learner!r}")


def test_scores(pool: Pool, learner: str, convention=None) -> np.ndarray:
    """Scores of every document of the pool, each query scored by the rotation testing it."""
    scores = np.full(pool.y.size, np.nan)
    for train, valid, test in rotations(pool.group.size):
        model = fit(learner, pool.take(train), pool.take(valid), convention)
        scores[pool.rows(test)] = model(pool.take(test)[0])
    assert np.all(np.isfinite(scores))
    return scores
