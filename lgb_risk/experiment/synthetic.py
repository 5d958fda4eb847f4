"""Seeded synthetic data for demonstrations and tests that must run without ../shared data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

__all__ = ["make_trec_collection", "write_trec_collection", "make_letor"]


def make_trec_collection(n_topics: int = 40, docs_per_topic: int = 100, n_runs: int = 4,
                         seed: int = 0) -> tuple[pd.DataFrame, dict[str, pd.DataFrame]]:
    """A small TREC-style test collection: graded qrels (0-4, some −2) and several runs.

    Each run scores documents by grade plus noise; runs differ in noise level, and every topic
    has its own difficulty, so runs win and lose on different topics (which is what risk
    measures look at).

    Returns
    -------
    qrels : DataFrame with columns topic, docno, grade
    runs : dict name -> DataFrame with columns topic, docno, rank, score
    """
    rng = np.random.default_rng(seed)
    topics = np.repeat([str(101 + t) for t in range(n_topics)], docs_per_topic)
    docnos = np.array([f"doc-{t:03d}-{d:04d}" for t in range(n_topics)
                       for d in range(docs_per_topic)])
    grades = rng.choice([-2, 0, 1, 2, 3, 4], size=topics.size,
                        p=[0.03, 0.72, 0.14, 0.06, 0.03, 0.02])
    qrels = pd.DataFrame({"topic": topics, "docno": docnos, "grade": grades})
    difficulty = np.repeat(rng.uniform(0.5, 3.0, n_topics), docs_per_topic)
    runs = {}
    for r in range(n_runs):
        noise = rng.normal(scale=difficulty * (0.8 + 0.4 * r), size=topics.size)
        score = np.round(np.maximum(grades, 0) + noise, 4)
        frame = pd.DataFrame({"topic": topics, "docno": docnos, "score": score})
        frame = frame.sort_values(["topic", "score"], ascending=[True, False], kind="mergesort")
        frame["rank"] = frame.groupby("topic").cumcount() + 1
        runs[f"run{r + 1}"] = frame[["topic", "docno", "rank", "score"]].reset_index(drop=True)
    return qrels, runs


def write_trec_collection(directory, **kwargs) -> tuple[Path, list[Path]]:
    """Write :func:`make_trec_collection` as ``qrels.txt`` and ``runs/NAME.txt`` in TREC formats.

    Returns the qrels path and the run paths.
    """
    out = Path(directory)
    (out / "runs").mkdir(parents=True, exist_ok=True)
    qrels, runs = make_trec_collection(**kwargs)
    qrels_path = out / "qrels.txt"
    with open(qrels_path, "w", encoding="utf-8") as fh:
        for t, d, g in qrels.itertuples(index=False):
            fh.write(f"{t} 0 {d} {g}\n")
    run_paths = []
    for name, frame in runs.items():
        path = out / "runs" / f"{name}.txt"
        with open(path, "w", encoding="utf-8") as fh:
            for t, d, rank, score in frame.itertuples(index=False):
                fh.write(f"{t} Q0 {d} {rank} {score:.4f} {name}\n")
        run_paths.append(path)
    return qrels_path, run_paths


def make_letor(n_queries: int = 300, mean_docs: float = 40.0, n_features: int = 20,
               bm25_column: int = 0, seed: int = 0):
    """A learning-to-rank dataset shaped like MSLR-WEB, small enough to train on in seconds.

    Documents per query are log-normal around ``mean_docs`` (at least 2, at most 10x the mean);
    labels 0-4 with MSLR-like frequencies (about half 0). Each query has a latent difficulty that
    blurs how features relate to relevance, so models and baselines win on different queries.
    Column ``bm25_column`` (0-based) is a BM25-like score: relevance plus query-dependent noise.
    Half of the other features carry relevance signal of varying strength, the rest are noise.

    Returns
    -------
    lgb_risk.data.LetorData
        With query ids 1..n_queries and no document ids.
    """
    from lgb_risk.data import LetorData

    if n_queries < 1 or mean_docs < 2 or n_features < 2 or not 0 <= bm25_column < n_features:
        raise ValueError("make_letor needs n_queries >= 1, mean_docs >= 2, n_features >= 2 and "
                         f"bm25_column in 0..n_features - 1, got {n_queries}, {mean_docs}, "
                         f"{n_features}, {bm25_column}")
    rng = np.random.default_rng(seed)
    group = np.clip(rng.lognormal(np.log(mean_docs), 0.5, n_queries).astype(np.int64), 2,
                    int(10 * mean_docs))
    n = int(group.sum())
    qid = np.repeat(np.arange(1, n_queries + 1), group)
    labels = rng.choice(5, size=n, p=[0.5, 0.3, 0.14, 0.04, 0.02])
    difficulty = np.repeat(rng.uniform(0.5, 4.0, n_queries), group)
    strength = np.where(np.arange(n_features) % 2 == 0, rng.uniform(0.05, 0.5, n_features), 0.0)
    X = rng.normal(size=(n, n_features)) * difficulty[:, None] + labels[:, None] * strength
    X[:, bm25_column] = labels * 0.6 + rng.gamma(2.0, 0.6 * difficulty)
    return LetorData(X=sp.csr_matrix(X), y=labels.astype(np.int64), qid=qid,
                     query_ids=np.arange(1, n_queries + 1), group=group, docids=None)
