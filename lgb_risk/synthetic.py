"""Seeded synthetic data for demonstrations and tests that must run without ../shared data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["make_trec_collection", "write_trec_collection"]


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
