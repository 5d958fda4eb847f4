"""A store of per-query baseline effectiveness, keyed by query id.

A :class:`BaselineStore` holds one column per named baseline system and one row per query id,
together with the measure (name and cut-off k) the values were computed with. Risk-sensitive
objectives and ``feval`` functions take a store plus the query ids of their data set and align it
themselves; a missing id is an error, never a silent fill.

Query ids are kept as strings, so that LETOR's integer ids and TREC's topic strings align alike
(``10002`` and ``"10002"`` are the same query).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from lgb_risk import measures as registry
from lgb_risk import metrics
from lgb_risk._files.atomic import atomic_write, atomic_write_text, read_exact_csv
from lgb_risk.conventions import gain_name

if TYPE_CHECKING:
    import os
    from collections.abc import Callable, Sequence
    from typing import Any

    from lgb_risk._inputs.type_aliases import ArrayLike

__all__ = ["BaselineStore", "FeatureBaseline", "aligned_baselines"]

_FORMAT_VERSION = 1


def _feature_column(column: int | None, letor_feature: int | None, n_features: int) -> int:
    """The 0-based column of X named by ``column`` or by LETOR's 1-based ``letor_feature``."""
    if (column is None) == (letor_feature is None):
        raise TypeError("give the feature as column= (0-based) or letor_feature= (LETOR's "
                        "1-based number), one of the two")
    if column is not None:
        if isinstance(column, bool) or not isinstance(column, (int, np.integer)) or not (
                0 <= column < n_features):
            raise ValueError(f"column must be a column of X from 0 to {n_features - 1}, got "
                             f"{column!r}")
        return int(column)
    if isinstance(letor_feature, bool) or not isinstance(letor_feature, (int, np.integer)) or \
            not (1 <= letor_feature <= n_features):
        raise ValueError(f"letor_feature must be a LETOR feature number from 1 to {n_features}, "
                         f"got {letor_feature!r}")
    return int(letor_feature) - 1


def _ids(query_ids) -> pd.Index:
    ids = pd.Index([str(q) for q in np.asarray(query_ids).ravel()], name="query_id")
    return ids


class BaselineStore:
    """Per-query effectiveness of one or more baseline systems.

    Parameters
    ----------
    table : DataFrame
        Index: query ids (any type; kept as strings). Columns: baseline names. Values: finite
        effectiveness per query.
    measure : str, default "ndcg"
        Measure name, registered in :mod:`lgb_risk.measures` (ndcg, dcg, err, ap, p, ...), with
        the parameters and convention choices its values were computed with
        (``"err(max_label=4)"``, ``"ndcg(label_gain=linear)"``): the store's measure is compared
        with the one an objective or a feval needs by all of them, not by the name alone.
    k : int or None, default 10
        Its cut-off (None: a measure of the whole list, such as ``ap``).
    metadata : dict, optional
        Anything else worth keeping with the values (source, parameters); saved as JSON.
    bounds : (low, high), optional
        The range every value must lie in (``None``: unbounded on that side). Default: the
        measure's range in :mod:`lgb_risk.measures` ([0, 1] for NDCG, [0, ∞) for DCG), so
        that a percentage given for a fraction is refused.

    Examples
    --------
    Per-query NDCG@10 of ranking by column 1 of X (LETOR's feature 2; q2's relevant document
    comes second: 1/log2(3)), for U-CRO:

    >>> X = np.array([[0.1, 0.9], [0.2, 0.4], [0.3, 0.8], [0.5, 0.1]])
    >>> store = BaselineStore.from_feature(X, labels=[1, 0, 0, 2], group=[2, 2],
    ...                                    query_ids=["q1", "q2"], column=1, name="bm25")
    >>> store.table["bm25"].round(4).to_dict()
    {'q1': 1.0, 'q2': 0.6309}
    >>> from lgb_risk import UCRO
    >>> objective = UCRO(alpha=5, baseline=store, query_ids=["q1", "q2"])
    """

    def __init__(self, table: pd.DataFrame, measure: str = "ndcg", k: int | None = 10,
                 metadata: dict | None = None, bounds: tuple | None = None):
        spec = registry.parse(measure if k is None else f"{measure}@{k}")
        low, high = spec.measure.bounds if bounds is None else bounds
        frame = pd.DataFrame(table).copy()
        frame.index = _ids(frame.index)
        frame.columns = [str(c) for c in frame.columns]
        if frame.shape[1] == 0:
            raise ValueError("a BaselineStore needs at least one baseline column")
        if frame.index.has_duplicates:
            dup = frame.index[frame.index.duplicated()][0]
            raise ValueError(f"query id {dup!r} appears twice in the baseline table")
        if len(set(frame.columns)) != frame.shape[1]:
            raise ValueError(f"baseline names must be unique, got {list(frame.columns)}")
        values = frame.to_numpy(dtype=np.float64)
        bad = ~np.isfinite(values)
        if bad.any():
            i, j = (int(v[0]) for v in np.nonzero(bad))
            raise ValueError(f"baseline {frame.columns[j]!r} has no finite value for query "
                             f"{frame.index[i]!r} ({float(values[i, j])})")
        outside = ((values < low) if low is not None else np.zeros_like(bad)) | (
            (values > high) if high is not None else np.zeros_like(bad))
        if outside.any():
            i, j = (int(v[0]) for v in np.nonzero(outside))
            hint = " (a percentage instead of a fraction?)" if high == 1.0 and values[i, j] <= 100 \
                else ""
            raise ValueError(
                f"baseline {frame.columns[j]!r} has {spec.label} = {float(values[i, j])} for "
                f"query {frame.index[i]!r}, outside [{low}, {high}]{hint}; pass bounds= for a "
                "measure with another range")
        self.table = frame.astype(np.float64)
        self.measure = spec.identity.written  # its parameters and value-changing choices kept
        self.k = None if k is None else int(k)
        self.metadata = dict(metadata or {})

    # -- construction --------------------------------------------------------------------------

    @classmethod
    def from_scores(cls, scores: ArrayLike, labels: ArrayLike, group: ArrayLike,
                    query_ids: ArrayLike | None, name: str, *, k: int = 10,
                    label_gain: str | ArrayLike | None = None,
                    ties: str = "stable") -> BaselineStore:
        """NDCG@k per query of the ranking given by ``scores`` (e.g. a model's predictions),
        with gains ``label_gain`` (``"exponential"``, the default, or ``"linear"``, or a table of
        either), which the store's measure names (``ndcg(label_gain=linear)``)."""
        gain = gain_name(label_gain)
        if gain is None:
            raise ValueError(f"label_gain {np.asarray(label_gain).tolist()!r} is neither "
                             "exponential (2**l - 1) nor linear (l): a store names the gain of "
                             "its values, "
                             "and only those two have a name; compute such values with "
                             "lgb_risk.metrics.ndcg and give them to the objective as an array")
        values = metrics.ndcg(labels, scores, group, k, ties=ties, label_gain=label_gain)
        ids = _ids(query_ids)
        if ids.size != values.size:
            raise ValueError(f"query_ids has {ids.size} ids for {values.size} queries")
        return cls(pd.DataFrame({name: values}, index=ids), f"ndcg(label_gain={gain})", k,
                   {name: {"source": "scores", "ties": ties}})

    @classmethod
    def from_feature(cls, X: Any, labels: ArrayLike, group: ArrayLike,
                     query_ids: ArrayLike | None, *legacy: Any, column: int | None = None,
                     letor_feature: int | None = None, name: str | None = None,
                     k: int = 10, label_gain: str | ArrayLike | None = None,
                     ties: str = "stable", **old: Any) -> BaselineStore:
        """NDCG@k per query of ranking by one feature, descending (e.g. BM25).

        The feature is named as everywhere in this library, by its 0-based ``column`` of X
        (:class:`FeatureBaseline`, ``RiskRanker(baseline_feature=...)``), or by the 1-based
        number of the LETOR/SVMlight file as ``letor_feature`` (LETOR 4.0's feature 25 and
        MSLR-WEB's feature 110 are BM25 of the whole document: ``letor_feature=25`` is
        ``column=24``); one of the two, by keyword.

        >>> X = np.array([[0.1, 3.0], [0.9, 1.0], [0.5, 2.0]])
        >>> store = BaselineStore.from_feature(X, [2, 0, 1], [3], ["q1"], column=1, name="bm25")
        >>> store.table["bm25"].to_dict()  # ranked by column 1: labels 2, 1, 0, the ideal
        {'q1': 1.0}
        >>> BaselineStore.from_feature(X, [2, 0, 1], [3], ["q1"], letor_feature=2).names
        ['column1']
        """
        if legacy or "feature" in old:
            given = old.get("feature", legacy[0] if legacy else None)
            raise TypeError(
                f"from_feature names the feature by keyword: column=, 0-based as FeatureBaseline "
                f"and RiskRanker(baseline_feature=) count, or letor_feature=, LETOR's 1-based "
                f"number (the former feature={given!r} was LETOR's number: write "
                f"letor_feature={given!r}, or column="
                f"{given - 1 if isinstance(given, int) else '...'})")
        if old:
            raise TypeError(f"from_feature got an unexpected keyword argument "
                            f"{next(iter(old))!r}")
        column = _feature_column(column, letor_feature, X.shape[1])
        values = X[:, column]
        values = np.asarray(values.toarray() if hasattr(values, "toarray") else values).ravel()
        bad = np.flatnonzero(~np.isfinite(values))
        if bad.size:
            g = np.asarray(group, dtype=np.int64)
            q = int(np.searchsorted(np.cumsum(g), bad[0], side="right"))
            ids = _ids(query_ids)
            raise ValueError(f"column {column} is {float(values[bad[0]])} for a document of "
                             f"query {ids[q] if q < ids.size else q!r} ({bad.size} such "
                             "document(s)); a feature baseline ranks by finite values")
        store = cls.from_scores(values, labels, group, query_ids, name or f"column{column}",
                                k=k, label_gain=label_gain, ties=ties)
        store.metadata[store.names[0]] = {"source": "feature", "column": column, "ties": ties}
        return store

    @classmethod
    def from_table(cls, frame: pd.DataFrame, measure: str = "ndcg", k: int = 10) -> BaselineStore:
        """From a long table with columns ``query_id, system, value``."""
        expected = {"query_id", "system", "value"}
        if set(frame.columns) != expected:
            raise ValueError(f"the table needs columns {sorted(expected)}, got "
                             f"{list(frame.columns)}")
        if frame.duplicated(["query_id", "system"]).any():
            row = frame[frame.duplicated(["query_id", "system"])].iloc[0]
            raise ValueError(f"system {str(row['system'])!r} has two values for query "
                             f"{str(row['query_id'])!r}")
        wide = frame.pivot(index="query_id", columns="system", values="value")
        if wide.isna().any().any():
            q = wide.index[wide.isna().any(axis=1)][0]
            s = wide.columns[wide.loc[q].isna()][0]
            raise ValueError(f"system {str(s)!r} has no value for query {str(q)!r}")
        return cls(wide, measure, k)

    # -- access --------------------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """Baseline names, in column order."""
        return list(self.table.columns)

    @property
    def query_ids(self) -> pd.Index:
        return self.table.index

    def __repr__(self):
        return (f"BaselineStore({self.label}, baselines={self.names}, "
                f"queries={len(self.table)})")

    @property
    def label(self) -> str:
        """The measure with its cut-off, parameters and value-changing choices as
        :mod:`lgb_risk.measures` prints it (``NDCG@10``, ``ERR(max_label=4)@20``)."""
        return registry.parse(self.measure if self.k is None
                              else f"{self.measure}@{self.k}").label

    def require_measure(self, measure: str | registry.MeasureSpec, k: int | None = None) -> None:
        """Raise unless the values are of ``measure@k`` (or ``measure``, written with its
        cut-off, parameters and choices, e.g. ``"err(max_label=2)@20"``, or a parsed measure):
        the same name, cut-off, parameters and value-changing convention choices
        (:attr:`lgb_risk.measures.MeasureSpec.identity`)."""
        spec = measure if isinstance(measure, registry.MeasureSpec) else registry.parse(
            measure if k is None else f"{measure}@{k}")
        needed = spec.identity.label
        if self.label == needed:
            return
        hint = ""
        if spec.measure.name == "err" and self.measure.startswith("err"):
            hint = (" (ERR's grades are (2^y - 1)/2^max_label: the store and its user must "
                    "take one max_label; write it in the measure, e.g. "
                    f"err(max_label=4)@{spec.k})")
        raise ValueError(f"the baselines were computed with {self.label}, but {needed} is "
                         f"needed{hint}")

    def align(self, query_ids: ArrayLike | None, names: Sequence[str] | None = None) -> np.ndarray:
        """Values for ``query_ids`` in that order: array (n_queries, n_baselines).

        Raises ValueError listing the ids the store lacks.
        """
        ids = _ids(query_ids)
        position = self.table.index.get_indexer(ids)
        missing = ids[position < 0]
        if missing.size:
            shown = ", ".join(missing[:10])
            raise ValueError(f"the baseline store has no value for {missing.size} of "
                             f"{ids.size} query ids: {shown}{' ...' if missing.size > 10 else ''}")
        columns = self.names if names is None else list(names)
        return self.select(*columns).table.to_numpy()[position]

    def select(self, *names: str) -> BaselineStore:
        """A store with only the named baselines."""
        unknown = [n for n in names if n not in self.table.columns]
        if unknown or not names:
            raise ValueError(f"unknown baseline(s) {unknown}; the store has {self.names}")
        meta = {n: self.metadata[n] for n in names if n in self.metadata}
        return BaselineStore(self.table[list(names)], self.measure, self.k, meta)

    def merge(self, other: BaselineStore) -> BaselineStore:
        """Both stores' baselines side by side (same measure, same query ids, distinct names)."""
        if self.label != other.label:
            raise ValueError(f"cannot mix baselines computed with {self.label} and "
                             f"{other.label}")
        clash = set(self.names) & set(other.names)
        if clash:
            raise ValueError(f"both stores have a baseline named {sorted(clash)[0]!r}")
        if set(self.query_ids) != set(other.query_ids):
            diff = sorted(set(self.query_ids) ^ set(other.query_ids))[:10]
            raise ValueError(f"the stores cover different queries, e.g. {', '.join(diff)}")
        table = pd.concat([self.table, other.table.loc[self.table.index]], axis=1)
        return BaselineStore(table, self.measure, self.k, {**self.metadata, **other.metadata})

    # -- persistence ---------------------------------------------------------------------------

    def save(self, path: str | os.PathLike) -> None:
        """Write the values (``.csv`` or ``.parquet``) and ``PATH.meta.json`` with the measure.

        CSV values are written with full precision, so :meth:`load` gives back identical floats.
        Both files are written atomically.
        """
        p = Path(path)
        suffix = p.suffix.lower()
        if suffix not in (".csv", ".parquet"):
            raise ValueError(f"save to a .csv or .parquet file, got {p.name!r}")
        frame = self.table.reset_index()
        meta = {"format_version": _FORMAT_VERSION, "measure": self.measure, "k": self.k,
                "baselines": self.names, "metadata": self.metadata}

        def write_values(tmp):
            if suffix == ".csv":
                frame.to_csv(tmp, index=False, float_format="%.17g")
            else:
                frame.to_parquet(tmp, index=False)

        atomic_write(p, write_values)
        atomic_write_text(_meta_path(p), json.dumps(meta, indent=1))

    @classmethod
    def load(cls, path: str | os.PathLike) -> BaselineStore:
        """Read a store written by :meth:`save`."""
        p = Path(path)
        meta_path = _meta_path(p)
        for needed in (p, meta_path):
            if not needed.is_file():
                raise FileNotFoundError(f"no such file: {needed} (a saved BaselineStore has "
                                        "both the values and PATH.meta.json)")
        try:
            meta = json.loads(meta_path.read_text())
        except ValueError as exc:
            raise ValueError(f"{meta_path}: not JSON ({exc})") from None
        keys = {"baselines", "measure", "k", "metadata"}
        if not isinstance(meta, dict) or not keys <= set(meta):
            raise ValueError(f"{meta_path}: not the metadata of a saved BaselineStore (needs "
                             f"the keys {sorted(keys)})")
        if p.suffix.lower() == ".parquet":
            frame = pd.read_parquet(p)
        else:
            frame = read_exact_csv(p, "query_id")
        if list(frame.columns) != ["query_id", *meta["baselines"]]:
            raise ValueError(f"{p}: columns {list(frame.columns)} do not match the metadata's "
                             f"baselines {meta['baselines']}")
        return cls(frame.set_index("query_id"), meta["measure"], meta["k"], meta["metadata"])


class FeatureBaseline:
    """A baseline that ranks each query's documents by feature columns of the training rows.

    For XGBoost, whose ``DMatrix`` keeps its features: ``xgboost_objective`` scores each
    column's ranking of the DMatrix's queries (the objective's target measure, NDCG@k by
    default with LightGBM's gains, ties in row order as :meth:`BaselineStore.from_feature`) and
    uses that as the per-query baseline.
    Under ``xgboost.dask``, where each worker holds some queries in an order no array given
    beforehand can follow, it is the way to give a baseline: each worker scores its own rows.

    Parameters
    ----------
    columns : int or sequence of int
        Column positions in X, from 0 (MQ2008's BM25 is LETOR feature 25: column 24). One for
        ``baseline=``, one or more for ``baselines=``.

    Examples
    --------
    >>> FeatureBaseline(24)
    FeatureBaseline(columns=[24])
    """

    def __init__(self, columns: int | Sequence[int]):
        listed: list[Any] = ([columns] if np.ndim(columns) == 0
                             else list(np.asarray(columns).ravel()))
        if not listed or any(isinstance(c, bool) or not isinstance(c, (int, np.integer))
                             or c < 0 for c in listed):
            raise ValueError(f"columns must be column positions >= 0, got {columns!r}")
        self.columns = [int(c) for c in listed]

    def __repr__(self) -> str:
        return f"FeatureBaseline(columns={self.columns})"

    def values(self, X: Any, labels: ArrayLike, group: ArrayLike,
               measure: Callable[[np.ndarray, ArrayLike, ArrayLike], np.ndarray]) -> np.ndarray:
        """``measure(scores, labels, group)`` per query of ranking by each column (an
        objective's ``target_values``): (n_queries, n_columns)."""
        n_features = X.shape[1]
        if max(self.columns) >= n_features:
            raise ValueError(f"FeatureBaseline column {max(self.columns)} does not exist: the "
                             f"training rows have {n_features} features (columns 0 to "
                             f"{n_features - 1})")
        picked = X[:, self.columns]
        picked = np.asarray(picked.toarray() if hasattr(picked, "toarray") else picked,
                            dtype=np.float64)
        bad = np.argwhere(~np.isfinite(picked))
        if bad.size:
            row, col = (int(i) for i in bad[0])
            raise ValueError(f"FeatureBaseline: column {self.columns[col]} is "
                             f"{picked[row, col]} in training row {row}; a feature baseline "
                             "ranks by finite values")
        return np.column_stack([measure(picked[:, j], labels, group)
                                for j in range(len(self.columns))])


def aligned_baselines(value: Any, n_queries: int, *, query_ids: ArrayLike | None = None,
                      measure: str | registry.MeasureSpec = "ndcg@10", several: bool = True,
                      owner: str = "baselines",
                      parameter: str = "baselines", the_set: str = "the set") -> np.ndarray:
    """Baseline values of ``measure`` (NDCG@k, ERR@k) aligned to a set of ``n_queries``
    queries: (n_queries, n_systems).

    The one place where baselines enter, for the objectives and the fevals alike, with one set of
    checks. ``value`` is an array in the set's query order — (n_queries,) for one baseline,
    (n_queries, n_systems) for several — or a :class:`BaselineStore` holding ``measure``, aligned
    by ``query_ids`` (the set's query ids, in its order). Every value must be finite and in
    [0, 1]; ``several=False`` refuses more than one system. ``owner``, ``parameter`` and
    ``the_set`` name the caller, its parameter and the set in the messages.
    """
    spec = measure if isinstance(measure, registry.MeasureSpec) else registry.parse(measure)
    label = spec.label
    if value is None:
        raise ValueError(f"{owner} needs {parameter}=: per-query baseline {label} of {the_set}'s "
                         "queries (an array in the Dataset's query order, or a BaselineStore with "
                         "query_ids=)")
    if isinstance(value, FeatureBaseline):
        raise ValueError(f"{owner}: a FeatureBaseline is scored on the training rows, which only "
                         "XGBoost's DMatrix keeps (xgboost_objective); for LightGBM give the "
                         "scores as BaselineStore.from_feature(...) with query_ids=")
    if isinstance(value, BaselineStore):
        if query_ids is None:
            raise ValueError(f"{owner}: a BaselineStore needs query_ids= (the queries' ids, in the "
                             "Dataset's query order)")
        try:
            value.require_measure(spec)
        except ValueError as error:
            raise ValueError(f"{owner}: {error}") from None
        matrix = value.align(query_ids)
    else:
        matrix = np.asarray(value, dtype=np.float64)
        if matrix.ndim == 1:
            matrix = matrix[:, None]
    if matrix.ndim != 2 or matrix.shape[0] != n_queries:
        raise ValueError(f"{owner}: {parameter} cover {matrix.shape[0] if matrix.ndim else 0} "
                         f"queries but {the_set} has {n_queries}; they must be aligned to the "
                         "Dataset's query order")
    if not several and matrix.shape[1] != 1:
        raise ValueError(f"{owner} takes one baseline, got {matrix.shape[1]} systems; select one "
                         "(BaselineStore.select(name))")
    low, high = spec.measure.bounds  # the measure's own range (DCG has no upper bound)
    bad = ~np.isfinite(matrix)
    if low is not None:
        bad |= matrix < low
    if high is not None:
        bad |= matrix > high
    if bad.any():
        q = int(np.flatnonzero(bad.any(axis=1))[0])
        where = (f"query {np.asarray(query_ids)[q].item()!r}" if query_ids is not None
                 else f"query index {q}")
        wrong = float(matrix[q][bad[q]][0])
        hint = (" (a percentage instead of a fraction?)"
                if high == 1.0 and 1 < wrong <= 100 else "")
        span = (f"[{'-∞' if low is None else format(low, 'g')}, "
                f"{'∞' if high is None else format(high, 'g')}]")
        raise ValueError(f"{owner}: the baseline {label} of {where} is {wrong}; expected a "
                         f"finite {spec.measure.label or spec.measure.name} in {span}{hint}")
    return matrix


def _meta_path(path: Path) -> Path:
    return path.with_name(path.name + ".meta.json")

