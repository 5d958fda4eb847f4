"""The protocol's data and split ([GEO] §6.1): the dataset a configuration names, the seeded
split of its queries (held-out part for the learned baselines, ``folds`` parts for the units),
each fold's train/validation/test queries, and the rows of a set of queries.

References: [GEO] (:mod:`lgb_risk.references`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from lgb_risk._measuring.segments import offsets_from_group
from lgb_risk.data import LetorData, load_letor
from lgb_risk.experiment import synthetic
from lgb_risk.experiment.config import ExperimentConfig

__all__ = ["load_dataset", "minimum_queries", "repeat_seed", "make_split", "fold_queries",
           "Subsets"]


def load_dataset(config: ExperimentConfig) -> LetorData:
    """The configured dataset: a folder of ``Fold*/`` (Fold1's files pooled), a file or
    synthetic data."""
    data = config.data
    if data.source == "synthetic":
        return synthetic.make_letor(data.queries, data.mean_docs, data.features,
                                    bm25_column=min(config.baselines.column,
                                                    data.features - 1), seed=data.seed)
    if data.path is None:
        raise ValueError("configuration: data.path: a letor source needs a path")
    path = Path(data.path)
    if path.is_dir():
        fold = path / "Fold1"
        files = [fold / f"{part}.txt" for part in ("train", "vali", "test")]
        missing = [str(f) for f in files if not f.is_file()]
        if missing:
            raise FileNotFoundError(f"data folder {path} lacks {', '.join(missing)} (expected "
                                    "Fold1/train.txt, vali.txt and test.txt)")
    elif path.is_file():
        files = [path]
    else:
        raise FileNotFoundError(f"data path {path} does not exist")
    parts = [load_letor(f, n_features=data.n_features) for f in files]
    query_ids = np.concatenate([p.query_ids for p in parts])
    first_file: dict = {}
    for path, part in zip(files, parts):
        for q in part.query_ids.tolist():
            if q in first_file:
                raise ValueError(f"query id {q} appears in both {first_file[q]} and {path}; "
                                 "pooled files must hold different queries")
            first_file[q] = path
    return LetorData(
        X=sp.vstack([p.X for p in parts]).tocsr(), y=np.concatenate([p.y for p in parts]),
        qid=np.concatenate([p.qid for p in parts]), query_ids=query_ids,
        group=np.concatenate([p.group for p in parts]), docids=None)


def minimum_queries(config: ExperimentConfig) -> int:
    """Fewest queries the split can work with: 3 held out, 2 per fold part."""
    return 3 + 2 * config.split.folds


def repeat_seed(config: ExperimentConfig, repeat: int) -> int:
    """The split seed of a repeat: the configured seed for repeat 0 (one split as before),
    seeds derived from it and the repeat number for the others."""
    seed = config.split.seed
    if repeat == 0:
        return seed
    return int(np.random.SeedSequence([seed, repeat]).generate_state(1)[0])


def make_split(query_ids, config: ExperimentConfig, repeat: int = 0) -> dict:
    """The protocol's split of the query ids (strings), seeded; see the module docstring."""
    seed = repeat_seed(config, repeat)
    heldout, folds = config.split.heldout, config.split.folds
    ids = np.array([str(q) for q in query_ids])
    need = minimum_queries(config)
    n_held = int(round(heldout * ids.size))
    if ids.size < need or n_held < 3 or ids.size - n_held < 2 * folds:
        raise ValueError(f"the dataset has {ids.size} queries; a split with heldout="
                         f"{heldout} and {folds} folds needs at least 3 held "
                         f"out and 2 per fold part (at least {need} queries)")
    perm = np.random.default_rng(seed).permutation(ids)
    held, main = perm[:n_held], perm[n_held:]
    n_train = int(round(2 * n_held / 3))
    return {"seed": seed, "heldout_train": held[:n_train].tolist(),
            "heldout_valid": held[n_train:].tolist(),
            "parts": [p.tolist() for p in np.array_split(main, folds)]}


def fold_queries(split: dict, fold: int) -> tuple[list, list, list]:
    """(train, valid, test) query ids of a fold."""
    parts = split["parts"]
    n = len(parts)
    test, valid = parts[fold], parts[(fold + 1) % n]
    train = [q for i, p in enumerate(parts) if i not in (fold, (fold + 1) % n) for q in p]
    return train, valid, test


class Subsets:
    """Rows of a dataset by query id, keeping each query's documents together."""

    def __init__(self, data: LetorData):
        self.data = data
        self.index = {str(q): i for i, q in enumerate(data.query_ids)}
        self.starts = offsets_from_group(data.group)

    def take(self, query_ids):
        """(X, y, group) of these queries, in this order."""
        positions = [self.index[q] for q in query_ids]
        rows = np.concatenate([np.arange(self.starts[i], self.starts[i + 1]) for i in positions])
        return self.data.X[rows], self.data.y[rows], self.data.group[positions]
