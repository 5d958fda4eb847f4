"""XGBoost's side of the objectives: the queries, weights and feature baselines of a DMatrix,
and on an ``xgboost.dask`` worker the other workers' queries through XGBoost's collective.

Under ``xgboost.dask`` each worker calls the objective with its own rows. A risk-sensitive
objective's state (T-FARO's s_x, GeoRisk's column sums) is taken over every training query, as
on one machine: each worker's per-query NDCG@k and baseline values are all-gathered (an
all-reduce sum of zero-padded vectors, exact) in rank order, the state is computed over them by
the same code, and each worker keeps its own queries' part — the scheme of
:mod:`lgb_risk.distributed`. The state depends on the set of queries, not their order.
"""

from __future__ import annotations

import dataclasses
import weakref
from typing import Any

import numpy as np

from lgb_risk.baselines import FeatureBaseline


def gradients(objective: Any, preds: Any, dtrain: Any) -> tuple[np.ndarray, np.ndarray]:
    """``objective``'s gradients on a DMatrix: its groups, per-query weights and baselines."""
    name = type(objective).__name__
    pointer = np.asarray(dtrain.get_uint_info("group_ptr"), dtype=np.int64)
    if pointer.size < 2:
        raise ValueError(f"{name} needs query groups: build the DMatrix with qid=... (or "
                         "set_group)")
    group = np.diff(pointer)
    weight = dtrain.get_weight()
    if weight.size == group.size:
        weight = np.repeat(weight, group)
    elif weight.size not in (0, pointer[-1]):
        raise ValueError(f"the DMatrix has {weight.size} weights for {group.size} queries of "
                         f"{pointer[-1]} documents: give one weight per query")
    _check_query_order(objective, name)
    labels = dtrain.get_label()
    prepared = _prepared(objective, dtrain, labels, group)
    return prepared.gradients(preds, labels, group, weight if weight.size else None)


def _check_query_order(objective: Any, name: str) -> None:
    """``query_ids`` in the DMatrix's order of queries: XGBoost requires its ``qid`` sorted, so
    its groups run in increasing query id; ids in another order would align the baselines
    to the wrong queries."""
    ids = getattr(objective, "query_ids", None)
    if ids is None:
        return
    ids = np.asarray(ids)
    if ids.dtype.kind not in "iuf":
        raise ValueError(f"{name}: query_ids must be the DMatrix's qid values (numbers, as "
                         f"XGBoost's qid), got {ids.dtype} values")
    back = np.flatnonzero(np.diff(ids) <= 0)
    if back.size:
        i = int(back[0])
        raise ValueError(f"{name}: query_ids go from {ids[i].item()!r} (query {i}) to "
                         f"{ids[i + 1].item()!r} (query {i + 1}): a DMatrix's queries run in "
                         "increasing qid (XGBoost requires its qid sorted), so query_ids must "
                         "too, or the baselines would be aligned to other queries; sort them")


class _Prepared:
    """The objective ready for one DMatrix (its feature baselines scored, its shard set)."""

    def __init__(self, dtrain: Any, labels: np.ndarray, group: np.ndarray, objective: Any):
        self.dtrain_id = id(dtrain)
        self.labels = labels.copy()
        self.group = group.copy()
        self.objective = objective

    def matches(self, dtrain, labels, group) -> bool:
        return (self.dtrain_id == id(dtrain) and np.array_equal(self.labels, labels)
                and np.array_equal(self.group, group))


#: Each objective as last prepared for a DMatrix, kept here (not on the objective) for as long
#: as the objective lives.
_PREPARED: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _prepared(given_objective, dtrain, labels, group):
    cached = _PREPARED.get(given_objective)
    if cached is not None and cached.matches(dtrain, labels, group):
        return cached.objective
    objective = given_objective
    shard = _CollectiveShard.of_this_worker(group.size)
    if shard is not None:  # every worker measures ERR with all workers' highest label
        objective = objective.with_max_label(shard.highest(int(np.max(labels, initial=0))))
    parameter = objective.baseline_parameter
    given = getattr(objective, parameter) if parameter else None
    if isinstance(given, FeatureBaseline):
        objective.validate_params()
        rows = dtrain.get_data()
        baseline = given.values(rows, labels, group,
                                objective.target_values)  # checks the columns exist
        _refuse_missing_values(rows, given.columns)
        if shard is not None:
            baseline = shard.allgather(baseline)
        ready = dataclasses.replace(objective, **{parameter: baseline, "query_ids": None})
    elif shard is not None and given is not None:
        raise ValueError(
            f"{type(objective).__name__} under xgboost.dask: each worker holds some of the "
            f"queries, in an order {parameter}= given as an array or BaselineStore cannot "
            f"follow; give {parameter}=FeatureBaseline(column) (a feature column of the rows, "
            "scored on each worker)")
    elif shard is None:
        return objective  # nothing to prepare: the DMatrix's queries are all here
    else:
        ready = dataclasses.replace(objective)  # the caller's object keeps no worker's shard
    ready.shard = shard
    _PREPARED[given_objective] = _Prepared(dtrain, labels, group, ready)
    return ready


def _refuse_missing_values(rows: Any, columns: list) -> None:
    """Refuse a feature-baseline column with a missing value in the DMatrix's rows (a CSR
    matrix holding the values XGBoost keeps: a NaN, or an entry absent from sparse input, is
    not there), which would otherwise rank as 0."""
    picked = rows[:, columns].tocsc()
    for position, column in enumerate(columns):
        present = np.zeros(rows.shape[0], dtype=bool)
        present[picked.indices[picked.indptr[position]:picked.indptr[position + 1]]] = True
        if not present.all():
            row = int(np.flatnonzero(~present)[0])
            raise ValueError(
                f"FeatureBaseline: column {column} is missing in training row {row} of the "
                "DMatrix (XGBoost keeps NaN, and entries absent from sparse input, as missing "
                "values); a feature baseline ranks by a value for every document: fill the "
                "column, or give the baseline as per-query NDCG values")


class _CollectiveShard:
    """A worker's queries within all workers' queries, in rank order (``LambdaMART.shard``)."""

    def __init__(self, queries: np.ndarray, n_queries: int):
        self.queries = queries
        self.n_queries = n_queries

    @classmethod
    def of_this_worker(cls, n_local: int) -> _CollectiveShard | None:
        from xgboost import collective

        if not collective.is_distributed() or collective.get_world_size() < 2:
            return None
        counts = np.zeros(collective.get_world_size(), dtype=np.float64)
        counts[collective.get_rank()] = n_local
        counts = collective.allreduce(counts, collective.Op.SUM).astype(np.int64)
        start = int(counts[:collective.get_rank()].sum())
        return cls(np.arange(start, start + n_local), int(counts.sum()))

    def allgather(self, values: np.ndarray) -> np.ndarray:
        """Every worker's rows of ``values`` (one per local query), in rank order."""
        from xgboost import collective

        values = np.asarray(values, dtype=np.float64)
        whole = np.zeros((self.n_queries,) + values.shape[1:], dtype=np.float64)
        whole[self.queries] = values
        return collective.allreduce(whole, collective.Op.SUM).reshape(whole.shape)

    def highest(self, value: int) -> int:
        """The largest of every worker's ``value``."""
        from xgboost import collective

        return int(collective.allreduce(np.array([value], dtype=np.int64),
                                        collective.Op.MAX)[0])

    def gather(self, model_values: np.ndarray, initial: bool) -> tuple[np.ndarray, bool]:
        from xgboost import collective

        every_initial = collective.allreduce(np.array([int(bool(initial))], dtype=np.int32),
                                             collective.Op.MIN)
        return self.allgather(model_values), bool(every_initial[0])
