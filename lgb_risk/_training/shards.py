"""What an objective and a ``feval`` need when their data set is split across machines.

On one machine their ``shard`` is None. Each rank of a distributed training
(:mod:`lgb_risk.distributed`) or worker of ``xgboost.dask``
(:mod:`lgb_risk._training.xgboost_gradients`) sets it to an object of these types, so that every
rank computes the risk state, or aggregates an evaluation, over the whole set as one machine would.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np


class ObjectiveShard(Protocol):
    """A rank's training queries within the whole training set (``LambdaMART.shard``)."""

    #: Positions of this rank's queries among the whole set's queries, in its order.
    queries: np.ndarray
    #: The number of queries of the whole set.
    n_queries: int

    def gather(self, model_values: np.ndarray, initial: bool) -> tuple[np.ndarray, bool]:
        """Every rank's per-query NDCG@k, in the whole set's query order, and whether every
        rank's predictions are still the initial ones."""
        ...


class EvaluationShard(Protocol):
    """A rank's part of an evaluation set (``feval``'s ``shard``)."""

    def gather(self, values: np.ndarray) -> np.ndarray:
        """Every rank's per-query values, in the whole set's query order."""
        ...
