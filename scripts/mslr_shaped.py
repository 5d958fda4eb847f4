"""The benchmarks' one data generator: synthetic data shaped like MSLR-WEB10K/30K.

Documents per query log-normal around 120 (1 to 1,000), labels 0-4 with MSLR-WEB's frequencies
(about half 0), 136 float32 features of which the first 20 carry relevance signal and column
``BM25_COLUMN`` (feature 110) is a BM25-like score: the label plus Gaussian noise.
``n_features=0`` gives the queries and labels only (``X`` is None), for benchmarks of the
metrics, which rank by a score of their own.
"""

from __future__ import annotations

import numpy as np

#: 0-based column of the BM25-like feature (feature 110, as BM25 is in MSLR-WEB).
BM25_COLUMN = 109


def mslr_shaped(n_queries: int, *, n_features: int = 136, seed: int = 0):
    """``(X, labels, group)`` of ``n_queries`` MSLR-shaped queries (module docstring)."""
    if n_features and n_features <= BM25_COLUMN:
        raise ValueError(f"n_features must be 0 or > {BM25_COLUMN} (the BM25-like column)")
    rng = np.random.default_rng(seed)
    group = np.clip(rng.lognormal(np.log(120), 0.6, n_queries).astype(np.int64), 1, 1000)
    n = int(group.sum())
    labels = rng.choice(5, size=n, p=[0.52, 0.32, 0.13, 0.02, 0.01])
    if not n_features:
        return None, labels, group
    X = rng.normal(size=(n, n_features)).astype(np.float32)
    X[:, :20] += labels[:, None] * rng.uniform(0.05, 0.4, 20).astype(np.float32)
    X[:, BM25_COLUMN] = labels + rng.normal(scale=1.5, size=n)
    return X, labels, group
